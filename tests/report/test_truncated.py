"""Logs cut short or garbled (made here from real fixtures) never pass."""

from __future__ import annotations

import pytest

from krm_fn.report.model import GroupReport

from .conftest import judge, megatron_log, nccl_log, trainjob_yaml

NCCL = nccl_log("lessizzmore-create-a3mega_gce-a3-mega-vm-2node_all_reduce.txt")
NCCL_LINES = NCCL.read_text("utf-8").splitlines()
TRAINING = megatron_log("microsoft-superbenchmark_megatron-deepspeed_iterations_tflops.txt")
TRAINING_LINES = TRAINING.read_text("utf-8").splitlines()

NCCL_JOB = trainjob_yaml(
    thresholds='{"busBandwidthGBps": "value >= 300"}',
    bandwidth='{"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}',
)
NO_WARMUP_PROFILE = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: LogProfile
metadata: {name: short-run}
spec:
  timestamp: {layout: "2006-01-02 15:04:05.999999"}
  warmupSteps: 0
  patterns:
    trainingStep:
      regex: 'iteration\\s+(?P<iteration>\\d+)/\\s*\\d+\\s*\\|.*elapsed time per iteration \\(ms\\):\\s*(?P<elapsedTime>[\\d.]+)'
---
"""
TRAINING_JOB = NO_WARMUP_PROFILE + trainjob_yaml(
    thresholds='{"goodput": "value >= 0.9", "tflopsPerGPU": "value >= 100"}',
    goodput='{"logProfileRef": "short-run"}',
)


def upto(lines: list[str], last: int, tail: str | None = None) -> str:
    """Lines 1..``last`` of a fixture (1-based, as in the file), plus an optional cut line."""
    kept = lines[:last]
    return "\n".join([*kept, tail] if tail is not None else kept)


def replaced(lines: list[str], number: int, text: str | None) -> str:
    """The fixture with line ``number`` (1-based) replaced by ``text``, or deleted for None."""
    middle = [] if text is None else [text]
    return "\n".join([*lines[: number - 1], *middle, *lines[number:]])


def nccl_group(text: str) -> GroupReport:
    return judge(NCCL_JOB, {"run-group-0": text}).workload_runs[0].groups[0]


def training_group(text: str) -> GroupReport:
    return judge(TRAINING_JOB, {"run-group-0": text}).workload_runs[0].groups[0]


def kinds(group: GroupReport) -> set[str]:
    return {f.kind for f in group.failures}


def test_intact_logs_pass() -> None:
    assert nccl_group("\n".join(NCCL_LINES)).status == "Passed"
    assert training_group("\n".join(TRAINING_LINES)).status == "Passed"


@pytest.mark.parametrize(
    ("text", "expected_kinds"),
    [
        pytest.param(
            # keep lines 1-40: the table stops at 128 KiB (line 39), footer lost
            upto(NCCL_LINES, 40),
            {"no-footer"},
            id="cut-at-a-line-boundary-inside-the-table",
        ),
        pytest.param(
            # line 41 cut after 20 characters: "      524288        "
            upto(NCCL_LINES, 40, NCCL_LINES[40][:20]),
            {"no-footer", "unparsable-row"},
            id="cut-in-the-middle-of-a-row",
        ),
        pytest.param(
            # lines 1-24: the column header, no row yet
            upto(NCCL_LINES, 24),
            {"no-rows", "threshold"},
            id="cut-right-after-the-header",
        ),
        pytest.param(
            # lines 1-21: only the device list, no table at all
            upto(NCCL_LINES, 21),
            {"threshold"},
            id="cut-before-the-table",
        ),
        pytest.param(
            # line 45 (8388608 bytes) replaced by junk that still starts like a row
            replaced(NCCL_LINES, 45, "     8388608  2097152 float sum -1 57#.9 1x.67"),
            {"unparsable-row"},
            id="garbled-row-mid-table",
        ),
        pytest.param(
            # line 45 replaced by binary noise: the 8 MiB row disappears
            replaced(NCCL_LINES, 45, "\x00\x13\ufffd\ufffd\x7f"),
            {"garbled-line", "missing-rows"},
            id="binary-noise-instead-of-a-row",
        ),
        pytest.param(
            # line 45 deleted outright: 4 MiB (line 44) is followed by 16 MiB (line 46)
            replaced(NCCL_LINES, 45, None),
            {"missing-rows"},
            id="row-silently-missing",
        ),
        pytest.param(
            # line 56 "# Out of bounds values : 0 OK" reads 5 FAILED
            replaced(NCCL_LINES, 56, "# Out of bounds values : 5 FAILED"),
            {"nccl-out-of-bounds"},
            id="footer-reports-wrong-results",
        ),
        pytest.param("", {"threshold"}, id="empty-log"),
    ],
)
def test_cut_or_garbled_nccl_log_fails(text: str, expected_kinds: set[str]) -> None:
    group = nccl_group(text)
    assert group.status == "Failed"
    assert expected_kinds <= kinds(group)


def test_cut_nccl_log_without_thresholds_is_never_passed() -> None:
    job = trainjob_yaml(bandwidth='{"logProfileRef": "nccl-bandwidth"}')
    report = judge(job, {"run-group-0": upto(NCCL_LINES, 21)})
    assert report.workload_runs[0].groups[0].status == "NoData"
    assert report.result == "FAILED"


@pytest.mark.parametrize(
    ("text", "expected_kinds"),
    [
        pytest.param(
            # line 18 (iteration 5 of 5) cut after "elapsed time per iteration (ms): 744"
            upto(TRAINING_LINES, 17, TRAINING_LINES[17].split("(ms): ")[0] + "(ms): 744"),
            {"truncated-step"},
            id="last-step-line-cut-mid-number",
        ),
        pytest.param(
            # lines 1-14: iterations 1-3 only, iteration 5/5 never printed
            upto(TRAINING_LINES, 14),
            {"training-incomplete"},
            id="cut-at-a-line-boundary-before-the-end",
        ),
        pytest.param(
            # lines 1-4: startup only, no step line
            upto(TRAINING_LINES, 4),
            {"threshold"},
            id="cut-before-the-first-step",
        ),
        pytest.param(
            # line 9: the elapsed field garbled
            replaced(
                TRAINING_LINES,
                9,
                TRAINING_LINES[8].replace(
                    "elapsed time per iteration (ms)", "elap\x00sed t\ufffdme"
                ),
            ),
            {"truncated-step"},
            id="garbled-elapsed-field",
        ),
    ],
)
def test_cut_or_garbled_training_log_fails(text: str, expected_kinds: set[str]) -> None:
    group = training_group(text)
    assert group.status == "Failed"
    assert expected_kinds <= kinds(group)
