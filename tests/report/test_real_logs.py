"""Issue 15: the report on real public logs that were never among the shared fixtures.

Every log lives in ``tests/report/data/real/`` with its source on line 1 and in the README
there; the line numbers in the comments are line numbers of those files (``sed -n Np``).
Each test names the item of issue 15 it covers and fails without that item's fix.
"""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from krm_fn.report.collect_logs import collect_logs
from krm_fn.report.detect_failures import detect_failures
from krm_fn.report.evaluate import evaluate
from krm_fn.report.formats.megatron import SYNTAX
from krm_fn.report.formats.nccl_tests import parse_nccl
from krm_fn.report.formats.training import TrainingLog, parse_training, summarize
from krm_fn.report.load_rendered import load_rendered
from krm_fn.report.logprofiles import BUILTIN_PROFILES
from krm_fn.report.model import Bandwidth, GroupReport, Report
from krm_fn.report.plot_svg import CHAR_W, plot_report
from krm_fn.report.render_text import render_text

from .conftest import judge, real_log, source, trainjob_yaml

NCCL = BUILTIN_PROFILES["nccl-bandwidth"]
MEGATRON = BUILTIN_PROFILES["megatron-training"]
SVG = "{http://www.w3.org/2000/svg}"

MPI = real_log("eunomia-nccl-ebpf_rtx5090-2rank-1gpu_all_reduce_perf_mpi.txt")
FLOAT = real_log("spectrum-x-openshift_h200-2node_all_reduce_float.txt")
DTYPE_ALL = real_log("spectrum-x-openshift_h200-2node_all_reduce_datatype-all.txt")
OP_ALL = real_log("nvidia-nccl-tests-issue-167_op-all-sweep-restart.txt")
ROW_FAILURE = real_log("nvidia-nccl-tests-issue-355_h800-2node_alltoall_failure-on-row-line.txt")
SAME_FAILURES = real_log("nvidia-nccl-tests-issue-322_hca-hosts_identical-test-nccl-failures.txt")
PATTERN4 = real_log(
    "nvidia-nccl-tests-issue-287_rtx5090-genoa-06_pattern4-warn-and-test-nccl-failure.txt"
)
INTERLEAVED = real_log(
    "nvidia-nccl-issue-1453_h100-prepend-rank_row-interleaved-with-nccl-info.txt"
)
GPT2 = real_log("hwang2006-large-scale-lm-tutorials_megatron-gpt2-345m-tp4_200-iterations.txt")
ELIDED = real_log("rocm-blogs_megablocks-gpt2-125m-8gpu_megatron_elided.txt")

BW_ALL_REDUCE = '{"testType": "all_reduce", "logProfileRef": "nccl-bandwidth"}'


def nccl(path: Path, text: str | None = None) -> Bandwidth:
    return parse_nccl(source(path, text).lines, NCCL)


def megatron(path: Path, text: str | None = None) -> TrainingLog:
    return parse_training(source(path, text).lines, SYNTAX, MEGATRON)


def one_group(text: str, **job: object) -> GroupReport:
    report = judge(trainjob_yaml(**job), {"run-group-0": text})  # type: ignore[arg-type]
    (group,) = report.workload_runs[0].groups
    return group


def kinds(group: GroupReport) -> list[str]:
    return [f.kind for f in group.failures]


# --- item 1: MPI builds of nccl-tests -------------------------------------------------------


def test_mpi_build_binary_names_the_collective_without_its_mpi_suffix() -> None:
    # line 11: "[1,0]<stdout>:# Collective test starting: all_reduce_perf_mpi"
    assert nccl(MPI).collective == "all_reduce"


def test_mpi_build_log_passes_the_testtype_of_its_collective() -> None:
    # 1 node (host "lab"), 1 GPU per node: the log covers the group, the table is complete
    group = one_group(
        MPI.read_text(), nodes="lab", num_nodes=1, gpus_per_node=1, bandwidth=BW_ALL_REDUCE
    )
    assert "collective-mismatch" not in kinds(group)
    assert group.status == "Passed", group.failures


# --- item 2: --datatype all / --op all sweeps -------------------------------------------------


def test_datatype_all_restarts_the_sweep_per_type_without_missing_rows() -> None:
    (table,) = nccl(DTYPE_ALL).tables
    assert table.problems == []
    assert [s[0].type for s in table.sweeps] == [
        "int8", "uint8", "int32", "uint32", "int64", "uint64",
        "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2",
    ]  # fmt: skip
    # line 60: 21474836480 float, out-of-place busbw 487.34; line 75: avg 433.477
    assert (table.peak_bus_bandwidth_g_bps, table.avg_bus_bandwidth_g_bps) == (487.34, 433.477)


def test_datatype_all_log_passes_a_covered_group() -> None:
    group = one_group(DTYPE_ALL.read_text(), bandwidth=BW_ALL_REDUCE)
    assert group.status == "Passed", group.failures


def test_op_all_restarts_the_sweep_per_reduction_without_missing_rows() -> None:
    # lines 2-7 "max" 199680..204800 B, lines 8-12 "min" from 196608 B again
    (table,) = nccl(OP_ALL).tables
    assert [p.kind for p in table.problems] == ["no-footer"]  # the excerpt has no footer
    assert [(s[0].redop, len(s)) for s in table.sweeps] == [("max", 6), ("min", 5)]


# --- item 3: goodput from inconsistent timestamps ---------------------------------------------


def test_goodput_from_consistent_timestamps_is_measured() -> None:
    # datetime lines 3 (19:37:42) and 399 (19:39:16, after training is done): wall 94 s.
    # Step lines of iterations 20..200 (lines 350-389) count 10 iterations each at their
    # elapsed time, less the 5 skipped iterations of line 350 (iteration 20); line 349
    # (iteration 10) lies within warmupSteps=10.
    result = megatron(GPT2)
    assert result.goodput_problem() is None
    assert result.wall_time_s == 94.0
    assert result.productive_time_s == pytest.approx(71.3915)
    assert summarize(result).goodput == pytest.approx(71.3915 / 94.0)


def test_goodput_from_timestamps_that_stop_early_is_no_value_and_fails_closed() -> None:
    # The same log as saved before its end (lines 1-398): the only timestamps are 19:37:42
    # and 19:37:43, so wall time is 1 s against 73 s of step time.
    lines = GPT2.read_text().splitlines()
    cut = "\n".join(lines[:398]) + "\n"
    result = summarize(megatron(GPT2, cut))
    assert result.goodput is None
    assert result.goodput_problem is not None
    assert "exceeds the wall time 1 s" in result.goodput_problem
    group = one_group(cut, thresholds='{"goodput": "value >= 0.5"}')
    (threshold,) = group.thresholds
    assert (threshold.value, threshold.passed) == (None, False)
    assert threshold.note is not None and "inconsistent" in threshold.note


# --- item 4: a failure on the same line as a table row ----------------------------------------


def test_failure_on_a_row_line_is_a_failure_with_its_host_not_a_column_count() -> None:
    # line 21: "2097152 32768 float none -1 node0: Test CUDA failure common.cu:389 '...'"
    (finding,) = detect_failures(source(ROW_FAILURE).lines)
    assert (finding.kind, finding.host, finding.line) == ("nccl-tests-cuda-failure", "node0", 21)
    assert "an illegal memory access was encountered" in finding.message
    result = nccl(ROW_FAILURE)
    assert not any(p.kind == "unparsable-row" for t in result.tables for p in t.problems)


def test_stack_lines_after_a_test_failure_are_folded_into_it() -> None:
    # lines 51-56: "GENOA-06: Test NCCL failure common.cu:392 ..." and five " .. GENOA-06 pid
    # 4766: Test failure FILE:LINE" lines
    found = [f for f in detect_failures(source(PATTERN4).lines) if f.kind.startswith("nccl-tests")]
    (failure,) = found
    assert (failure.host, failure.line, failure.count) == ("GENOA-06", 51, 1)
    assert failure.message.endswith(
        "(stack: common.cu:590, all_reduce.cu:90, common.cu:623, common.cu:1078, common.cu:891)"
    )


# --- item 5: the log must cover the group -----------------------------------------------------


@pytest.mark.parametrize(
    ("job", "missing"),
    [
        pytest.param(
            {"nodes": "node-a,node-b", "num_nodes": 2, "gpus_per_node": 1},
            "1 of the group's 2 nodes: the ranks ran on 1 host(s) (lab)",
            id="two-node-group-but-one-host",
        ),
        pytest.param(
            {"nodes": "lab", "num_nodes": 1, "gpus_per_node": 2},
            "1 of 2 GPUs on host lab: its ranks used device(s) 0",
            id="two-gpus-per-node-but-one-device",
        ),
    ],
)
def test_ranks_on_one_host_and_device_do_not_cover_a_bigger_group(
    job: dict[str, object], missing: str
) -> None:
    # lines 15-16: ranks 0 and 1 both "on lab device 0"
    group = one_group(MPI.read_text(), bandwidth=BW_ALL_REDUCE, **job)
    assert group.status == "Failed"
    (coverage,) = [f for f in group.failures if f.kind == "log-coverage"]
    assert missing in coverage.message


def test_two_hosts_of_eight_devices_cover_two_nodes_but_not_three() -> None:
    # lines 12-27: ranks 0-7 on nvidiatools-dell-h200-2-workload, 8-15 on ...-3-workload
    assert one_group(FLOAT.read_text(), bandwidth=BW_ALL_REDUCE).status == "Passed"
    group = one_group(FLOAT.read_text(), nodes="a,b,c", num_nodes=3, bandwidth=BW_ALL_REDUCE)
    (coverage,) = [f for f in group.failures if f.kind == "log-coverage"]
    assert "1 of the group's 3 nodes: the ranks ran on 2 host(s)" in coverage.message


def test_a_log_without_rank_lines_fails_closed_naming_them() -> None:
    group = one_group(OP_ALL.read_text())
    (coverage,) = [f for f in group.failures if f.kind == "log-coverage"]
    assert "'# Rank N ... on HOST device D' lines under '# Using devices'" in coverage.message
    assert "(2 nodes x 8 GPUs)" in coverage.message


# --- item 6: logs as users save them ----------------------------------------------------------


def _ansi(text: str) -> str:
    """Colour every line as terminal log viewers do (green text, reset at the end)."""
    return "".join(f"\x1b[32m{line}\x1b[0m\n" for line in text.splitlines())


def _kubectl_prefix(text: str, pod: str) -> str:
    """``kubectl logs --prefix``: ``[pod/<name>/<container>] `` before every line."""
    return "".join(f"[pod/{pod}/node] {line}\n" for line in text.splitlines())


@pytest.mark.parametrize(
    ("name", "content"),
    [
        pytest.param(
            "run-group-0-launcher.log", lambda t: t.encode(), id="launcher-without-suffix"
        ),
        pytest.param("run-group-0.log.gz", lambda t: gzip.compress(t.encode()), id="log-gz"),
        pytest.param("run-group-0.log", lambda t: gzip.compress(t.encode()), id="gzip-in-dot-log"),
        pytest.param("run-group-0.log", lambda t: _ansi(t).encode(), id="ansi-colour-codes"),
        pytest.param(
            "run-group-0.log",
            lambda t: _kubectl_prefix(t, "run-group-0-launcher-0-0-x7k2p").encode(),
            id="kubectl-logs-prefix",
        ),
    ],
)
def test_saved_log_shapes_read_like_the_plain_log(
    tmp_path: Path, name: str, content: object
) -> None:
    text = MPI.read_text()
    path = tmp_path / name
    path.write_bytes(content(text))  # type: ignore[operator]
    index = collect_logs([str(tmp_path)], ["run-group-0"], None)
    assert index.unmatched == []
    (log,) = index.by_trainjob["run-group-0"]
    result = parse_nccl(log.lines, NCCL)
    (table,) = result.tables
    # lines 21-28: 8 rows 1 MiB..128 MiB; line 30: avg 1.57614
    assert (len(table.rows), table.avg_bus_bandwidth_g_bps, table.problems) == (8, 1.57614, [])
    assert (result.collective, [r.host for r in result.ranks]) == ("all_reduce", ["lab", "lab"])
    rendered = trainjob_yaml(nodes="lab", num_nodes=1, gpus_per_node=1, bandwidth=BW_ALL_REDUCE)
    report = evaluate(load_rendered(rendered), index)
    assert report.workload_runs[0].groups[0].status == "Passed"


def test_corrupt_gzip_is_a_read_error_not_an_empty_log(tmp_path: Path) -> None:
    data = gzip.compress(MPI.read_bytes())
    (tmp_path / "run-group-0.log.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(OSError, match="unreadable gzip data"):
        collect_logs([str(tmp_path)], ["run-group-0"], None)


# --- item 7: the smaller ones -----------------------------------------------------------------


def test_row_interleaved_with_nccl_info_fails_instead_of_being_dropped() -> None:
    # line 10: "[0]         8192          2048     float     sum      -1[0] h100clust-..."
    result = nccl(INTERLEAVED)
    garbled = [p for p in result.problems if p.kind == "garbled-line"]
    assert [p.line for p in garbled] == [10]
    group = one_group(INTERLEAVED.read_text(), bandwidth=BW_ALL_REDUCE)
    assert "garbled-line" in kinds(group) and group.status == "Failed"


def test_fragment_of_a_row_inside_a_table_is_unparsable() -> None:
    # The GENOA-06 table (header lines 36-38, then NCCL INFO lines) continues with the fragment of the first row
    # as printed before the failure in nccl#1453 line 9; appended here to an open table.
    text = PATTERN4.read_text().splitlines()[:42]
    fragment = INTERLEAVED.read_text().splitlines()[8]  # "[0]     75.38    0.05    0.10      0"
    result = nccl(PATTERN4, "\n".join([*text, fragment]) + "\n")
    problems = [p for t in result.tables for p in t.problems]
    assert [(p.kind, p.line) for p in problems] == [("unparsable-row", 43)]


def test_megatron_elisions_are_noted_with_the_iterations_they_hide() -> None:
    # lines 27 and 33 are "..." between the step lines of iterations 100, 1000 and 2000
    result = megatron(ELIDED)
    assert [(line, before, after) for _, line, before, after in result.elisions] == [
        (27, 100, 1000),
        (33, 1000, 2000),
    ]
    group = one_group(ELIDED.read_text(), goodput='{"logProfileRef": "megatron-training"}')
    notes = [n for n in group.notes if "elided" in n]
    assert len(notes) == 2 and "iterations 101-1000 are elided" in notes[0]


def test_checkpoint_saves_without_a_timestamp_prefix_are_found() -> None:
    # lines 358, 372, 381, 395, 400: "saving checkpoint at iteration N to checkpoints/..."
    assert megatron(GPT2).checkpoint_saves == 5
    # lines 39 and 44 of the ROCm blog log
    assert megatron(ELIDED).checkpoint_saves == 2


def test_pattern_4_fallback_warn_is_benign_but_the_cuda_failure_is_not() -> None:
    # lines 4, 6, 9, 11: "... NCCL WARN Could not find a path for pattern 4|1, falling back
    # to simple order"; line 46: "... NCCL WARN Cuda failure 1 'invalid argument'"
    found = detect_failures(source(PATTERN4).lines)
    assert not any("pattern" in f.message for f in found)
    assert [(f.kind, f.line) for f in found] == [
        ("nccl-warn", 46),
        ("nccl-tests-nccl-failure", 51),
    ]


def test_identical_failures_of_several_hosts_are_counted_once() -> None:
    # lines 8, 10, 12, 14: the same "Test NCCL failure common.cu:1204" from HCA-128, HCA-108,
    # HCA-107 and HCA-108 again
    (finding,) = detect_failures(source(SAME_FAILURES).lines)
    assert (finding.count, finding.hosts, finding.line) == (4, ["HCA-128", "HCA-108", "HCA-107"], 8)
    report = judge(
        trainjob_yaml(nodes="HCA-128,HCA-108", bandwidth=BW_ALL_REDUCE),
        {"run-group-0": SAME_FAILURES.read_text()},
    )
    text = render_text(report)
    assert text.count("Test NCCL failure at common.cu:1204") == 2  # group, both nodes at once
    assert "hosts HCA-128, HCA-108, HCA-107: Test NCCL failure at common.cu:1204" in text
    assert "(x4)" in text


def test_failed_node_lines_name_the_workload_run() -> None:
    report = judge(
        trainjob_yaml(nodes="HCA-128,HCA-108", bandwidth=BW_ALL_REDUCE),
        {"run-group-0": SAME_FAILURES.read_text()},
    )
    failed = render_text(report).split("\nFailed Nodes\n", 1)[1]
    assert "HCA-128, HCA-108 (run/group-0): WorkloadFailed: Test NCCL failure" in failed


# --- item 7: the plot ---------------------------------------------------------------------------


def _multi_run_report() -> Report:
    """Three WorkloadRuns with long names; the last group of the first has no log at all."""
    names = [
        "nccl-allreduce-h200-spectrum-x-pairs",
        "nccl-allreduce-rtx5090-mpi-build",
        "nccl-alltypes-h200-spectrum-x",
    ]
    rendered = "---\n".join(
        [
            trainjob_yaml(f"{names[0]}-group-0", run=names[0], bandwidth=BW_ALL_REDUCE),
            trainjob_yaml(
                f"{names[0]}-group-1-overflow",
                run=names[0],
                group="group-1-overflow",
                bandwidth=BW_ALL_REDUCE,
            ),
            trainjob_yaml(
                f"{names[1]}-group-0",
                run=names[1],
                nodes="lab",
                num_nodes=1,
                gpus_per_node=1,
                bandwidth=BW_ALL_REDUCE,
            ),
            trainjob_yaml(f"{names[2]}-group-0", run=names[2], bandwidth=BW_ALL_REDUCE),
        ]
    )
    logs = {
        f"{names[0]}-group-0": FLOAT.read_text(),
        f"{names[1]}-group-0": MPI.read_text(),
        f"{names[2]}-group-0": DTYPE_ALL.read_text(),
    }
    return judge(rendered, logs)


def _svg() -> ET.Element:
    return ET.fromstring(plot_report(_multi_run_report()))


def test_plot_legend_fits_inside_the_picture() -> None:
    root = _svg()
    width = float(root.attrib["width"])
    height = float(root.attrib["height"])
    for text in root.iter(f"{SVG}text"):
        if text.attrib.get("text-anchor") in ("middle", "end") or "transform" in text.attrib:
            continue
        right = float(text.attrib["x"]) + CHAR_W * len(text.text or "")
        assert right <= width, text.text
        assert float(text.attrib["y"]) <= height, text.text


def test_plot_title_counts_many_runs_instead_of_listing_them() -> None:
    title = _svg().find(f"{SVG}title")
    assert title is not None
    assert title.text == "NCCL bus bandwidth by message size: 3 WorkloadRuns"


def test_plot_legend_lists_groups_without_rows() -> None:
    texts = [t.text for t in _svg().iter(f"{SVG}text")]
    assert "nccl-allreduce-h200-spectrum-x-pairs/group-1-overflow (Failed, no rows)" in texts


def test_plot_draws_one_monotonic_line_per_datatype_of_a_datatype_all_group() -> None:
    root = _svg()
    labels = [t.text or "" for t in root.iter(f"{SVG}text")]
    dtype_labels = [lab for lab in labels if lab.startswith("nccl-alltypes-h200-spectrum-x/")]
    assert len(dtype_labels) == 12
    assert "nccl-alltypes-h200-spectrum-x/group-0 bfloat16 (Passed)" in dtype_labels
    for line in root.iter(f"{SVG}polyline"):
        xs = [float(p.split(",")[0]) for p in line.attrib["points"].split()]
        assert xs == sorted(xs) and len(set(xs)) == len(xs)


def test_real_log_fixtures_cite_their_source_on_line_one() -> None:
    for path in sorted(real_log("README.md").parent.glob("*.txt")):
        first = path.read_text().splitlines()[0]
        assert re.match(
            r"# SOURCE: (https://github\.com/\S+|public Markdown guide |search index file \d+ )",
            first,
        ), path


def test_four_hosts_cover_a_four_node_group_but_not_a_two_node_one() -> None:
    # nccl-tests#309, lines 6-37: ranks 0-31 on pt01, spt01, spt02, pt02, devices 0-7 each
    log = real_log("nvidia-nccl-tests-issue-309_h100-4node-32rank_all_reduce_perf_mpi.txt")
    job = {"nodes": "n1,n2,n3,n4", "num_nodes": 4, "bandwidth": BW_ALL_REDUCE}
    assert one_group(log.read_text(), **job).status == "Passed"
    group = one_group(log.read_text(), bandwidth=BW_ALL_REDUCE)  # 2 nodes x 8
    (coverage,) = [f for f in group.failures if f.kind == "log-coverage"]
    assert "ran on 4 hosts (pt01, spt01, spt02, pt02) but the group has 2 nodes" in coverage.message
