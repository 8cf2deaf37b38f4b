"""Failure lines in the real logs: what each one says, and which host it names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn.report.detect_failures import detect_failures
from krm_fn.report.loglines import LogLine, LogSource
from krm_fn.report.model import Failure

from .conftest import MEGATRON_LOGS, NCCL_LOGS, REAL, logs_in, nccl_log, source


def findings(name: str) -> list[Failure]:
    return detect_failures(source(nccl_log(name)).lines)


def test_ib_completion_error_wrapped_onto_two_lines() -> None:
    [finding] = findings("FAILURE_stas00-ml-engineering_azure-net-ib-completion-error-12.txt")
    # line 2: "node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion
    # from peer 10.2.0.5<33092> with error 12, opcode 0, len" / line 3: "0, vendor err 129 (Recv)"
    assert finding.reason == "HardwareFailureDetected"
    assert finding.kind == "nccl-warn-ib-completion"
    assert (finding.host, finding.peer, finding.line) == ("node-2", "10.2.0.5:33092", 2)
    assert "error 12" in finding.message and "IBV_WC_RETRY_EXC_ERR" in finding.message
    assert "vendor err 129 (Recv)" in finding.message  # the wrapped continuation


def test_connection_refused_names_host_and_peer() -> None:
    [finding] = findings("FAILURE_stas00-ml-engineering_socket-connect-refused.txt")
    # line 2: "r11i6n2:486514:486651 [1] include/socket.h:403 NCCL WARN Connect to
    # 10.148.3.247<56821> failed : Connection refused"
    assert finding.reason == "WorkloadFailed"
    assert (finding.host, finding.peer, finding.line) == ("r11i6n2", "10.148.3.247:56821", 2)
    assert finding.message == "connect to 10.148.3.247:56821 failed: Connection refused"


def test_nccl_tests_failure_macro_folds_its_stack() -> None:
    [finding] = findings("FAILURE_nvidia-cloudai_test-fixture_test-nccl-failure-common-cu.txt")
    # line 2: "node: Test NCCL failure common.cu:303 'remote process exited or there was a
    # network error / '"; lines 3-8: ".. node pid: Test failure ..." stack
    assert finding.kind == "nccl-tests-nccl-failure"
    assert (finding.host, finding.line) == ("node", 2)
    assert "common.cu:303" in finding.message
    assert "remote process exited or there was a network error" in finding.message


def test_efa_unresponsive_receiver_traceback_and_remote_error() -> None:
    found = findings(
        "FAILURE_gnosia93-training-on-eks_eks-efa-ofi-unresponsive-receiver_ncclRemoteError.txt"
    )
    by_kind = {f.kind: f for f in found}
    ofi = by_kind["nccl-warn-ofi-request-error"]
    # lines 8 and 12: "[2026-01-01 12:08:32] llama-3-8b-node-0-0:194:710 [0] ... NCCL WARN
    # NET/OFI Request 0x7f456c222f60 completed with error. RC: 103. Error: 4126 (Unresponsive..."
    assert (ofi.reason, ofi.host, ofi.line, ofi.count) == (
        "HardwareFailureDetected",
        "llama-3-8b-node-0-0",
        8,
        2,
    )
    assert "Error: 4126 (Unresponsive receiver" in ofi.message
    # line 20: "[rank0]: Traceback (most recent call last):"; line 61 is the exception
    traceback = by_kind["python-traceback"]
    assert traceback.line == 20
    assert "torch.distributed.DistBackendError: NCCL error in:" in traceback.message
    remote = by_kind["nccl-result-ncclRemoteError"]  # line 62
    assert (remote.reason, remote.line) == ("WorkloadFailed", 62)


def test_plugin_init_warnings_are_failures_once_per_message() -> None:
    found = findings(
        "WARN_gnosia93-training-on-eks_p4d-aws-ofi-nccl-init-failed_fallback-socket.txt"
    )
    # 9 WARN lines (44-62) from 3 ranks on host ip-172-31-3-153, 3 distinct messages
    assert sum(f.count for f in found) == 9
    assert [(f.kind, f.line, f.count) for f in found] == [
        ("nccl-warn-net-plugin-init", 44, 3),  # "NET/OFI Failed to initialize sendrecv protocol"
        ("nccl-warn-net-plugin-init", 48, 3),  # "NET/OFI aws-ofi-nccl initialization failed"
        ("nccl-warn-net-plugin-init", 52, 3),  # "NET/OFI Initializing plugin failed"
    ]
    assert {f.host for f in found} == {"ip-172-31-3-153"}


@pytest.mark.parametrize(
    "path",
    [p for p in logs_in(NCCL_LOGS) if not p.name.startswith(("FAILURE_", "WARN_"))]
    + logs_in(MEGATRON_LOGS),
    ids=lambda p: p.stem,
)
def test_successful_logs_have_no_failure_lines(path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    assert detect_failures(source(path).lines) == []


@pytest.mark.parametrize(
    ("line", "reason", "kind", "host"),
    [
        pytest.param(
            "gpu-a:1:2 [3] NCCL INFO Call to connect returned Connection refused, retrying",
            None,
            None,
            None,
            id="info-retry-is-not-a-failure",
        ),
        pytest.param(
            "--------------------------------------------------------------------------\n"
            "mpirun noticed that process rank 3 with PID 123 on node gpu-b exited on signal 9 (Killed).",
            "WorkloadFailed",
            "mpirun-rank-signal",
            "gpu-b",
            id="mpirun-rank-killed",
        ),
        pytest.param(
            "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            "WorkloadFailed",
            "cuda-out-of-memory",
            None,
            id="cuda-oom",
        ),
        pytest.param(
            "gpu-c:9:9 [0] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'",
            "HardwareFailureDetected",
            "nccl-warn-hardware",
            "gpu-c",
            id="ecc-error-in-warn",
        ),
        pytest.param(
            "gpu-d:9:9 [0] NCCL WARN Error: no algorithm/protocol available",
            "WorkloadFailed",
            "nccl-warn",
            "gpu-d",
            id="other-warn-is-a-workload-failure",
        ),
    ],
)
def test_single_lines(line: str, reason: str | None, kind: str | None, host: str | None) -> None:
    found = detect_failures(LogSource.from_text("x.log", line).lines)
    if reason is None:
        assert found == []
    else:
        [finding] = found
        assert (finding.reason, finding.kind, finding.host) == (reason, kind, host)


# --- a warning never swallows the record after it ---------------------------------------------


def _lines(*texts: str) -> list[LogLine]:
    return [LogLine("log", number, text) for number, text in enumerate(texts, start=1)]


def test_warnings_from_two_hosts_with_the_version_line_between_are_one_finding() -> None:
    # NVIDIA/nccl#82, comment by rahul-bothra (2021-05-11): two hosts print the same WARN, the
    # first directly followed by "NCCL version 2.9.6+cuda11.2" (not its continuation)
    found = detect_failures(
        _lines(
            "v100-gpu-1:14926:14926 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
            "NCCL version 2.9.6+cuda11.2",
            "",
            "v100-gpu-5:9210:9210 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
        )
    )
    [warn] = found
    assert warn.message == "NCCL WARN Failed to open libibverbs.so[.1]"
    assert (warn.count, warn.hosts) == (2, ["v100-gpu-1", "v100-gpu-5"])


def _failure_lines() -> list[str]:
    """Every line of the real logs that is a finding on its own (with its source file)."""
    lines = []
    for path in sorted(REAL.glob("*.txt")):
        items = source(path).lines
        for finding in detect_failures(items):
            if finding.line is not None and finding.kind != "python-traceback":
                lines.append(items[finding.line - 1].text)
    return sorted(set(lines))


FAILURE_LINES = _failure_lines()
WARN_LINES = [line for line in FAILURE_LINES if "NCCL WARN" in line]


@settings(max_examples=150, deadline=None)
@given(warn=st.sampled_from(WARN_LINES), follow=st.sampled_from(FAILURE_LINES))
def test_a_failure_line_after_a_warning_is_its_own_finding(warn: str, follow: str) -> None:
    alone = {f.kind for f in detect_failures(_lines(follow))}
    after = detect_failures(_lines(warn, follow))
    assert alone <= {f.kind for f in after}
    assert all(follow.strip() not in f.message for f in after if f.line == 1)
