"""Issue 28: each class of wrong answer, shown on a real public log (data/real, README there).

Line numbers in the comments are lines of those files (line 1 is the SOURCE line).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from krm_fn.report.command import report
from krm_fn.report.model import GroupReport

from .conftest import judge, real_log, trainjob_yaml
from .test_real_log_table import judge_alone

UNQUOTED = real_log(
    "nvidia-nccl-tests-issue-323_l40s-2node-2gpu_unquoted-test-cuda-failure-and-mpirun-exit.txt"
)
NO_HASH = real_log(
    "nvidia-nccl-tests-issue-323_l40s-2node-1gpu_rank-and-header-lines-without-hash.txt"
)
BARE_STACK = real_log(
    "nvidia-nccl-tests-issue-369_gh200-2node-2rank_v2.17.8_wrong-results-then-bare-stack-lines.txt"
)
NEMO_FINISHED = real_log(
    "search-index-5513486081_nemo-25.09-llama3-8b_iterations-97-99-of-99_finished.txt"
)
NEMO_TFLOPS = real_log(
    "search-index-39769813321_nemo2-llama3-8b-8xb200_iterations-45-49-of-99_tflops-per-gpu.txt"
)
NEMO_WARMUP = real_log(
    "search-index-65969569710_nemo-25.07-llama-nemotron-nano-4b_iterations-0-1-of-99_warmup-only.txt"
)
ERRATIC = real_log(
    "search-index-52914185530_2node-16rank_alltoall_v2.18.3_nccl-2.30.3_erratic-collapse.txt"
)
BW = '{"testType": "all_reduce"}'


def one_group(path: object, **job: object) -> GroupReport:
    text = real_log(str(path)).read_text() if isinstance(path, str) else path.read_text()  # type: ignore[attr-defined]
    report = judge(trainjob_yaml(**job), {"run-group-0": text})  # type: ignore[arg-type]
    (group,) = report.groups
    return group


# --- 1: a failure line anywhere fails the group and is listed ----------------------------------


def test_unquoted_test_cuda_failure_and_mpirun_exit_fail_the_group_and_are_listed() -> None:
    # lines 6-7: "nvidiatools-29-workload: Test CUDA failure common.cu:1030 invalid device
    # ordinal" and its stack line without " .. "; lines 10 and 13: Open MPI's "Primary job
    # terminated normally, but 1 process returned" and "mpirun detected ... non-zero status"
    group = one_group(UNQUOTED, nodes="nvidiatools-29-workload,nvidiatools-30-workload")
    assert group.status == "Failed"
    (cuda,) = [f for f in group.failures if f.kind == "nccl-tests-cuda-failure"]
    mpirun = [f for f in group.failures if f.kind == "mpirun-nonzero-exit"]
    assert (cuda.kind, cuda.host, cuda.line) == (
        "nccl-tests-cuda-failure",
        "nvidiatools-29-workload",
        7,
    )
    assert cuda.message == (
        "Test CUDA failure at common.cu:1030: invalid device ordinal (stack: common.cu:937)"
    )
    assert [f.line for f in mpirun] == [10, 13]
    assert mpirun[0].message.startswith("Open MPI: a process exited with non-zero status")
    assert "Primary job  terminated normally" in mpirun[0].message


def test_stack_lines_without_their_message_line_are_a_failure_on_their_hosts() -> None:
    # lines 42-43: " .. gpu-1-1 pid 662195: Test failure common.cu:1189", and gpu-1-7's
    group = judge_alone(BARE_STACK)
    (stack,) = [f for f in group.failures if f.kind == "nccl-tests-failure"]
    assert (stack.hosts, stack.count) == (["gpu-1-1", "gpu-1-7"], 2)


# --- 2: NeMo 2 step lines ------------------------------------------------------------------------


def test_nemo2_step_lines_are_read_not_reported_cut_short() -> None:
    group = judge_alone(NEMO_FINISHED)
    training = group.training
    assert training is not None and training.format == "nemo2"
    # lines 2-4: iterations 97-99 of 99 are steps 98-100 of 100; the last is "iteration 99/99"
    assert (training.first_iteration, training.last_iteration, training.finished) == (98, 100, True)
    assert training.avg_step_time_seconds == pytest.approx((12.22 + 12.21 + 12.21) / 3)
    assert training.tokens_per_second_per_gpu == pytest.approx((10730 + 10740 + 10730) / 3)
    assert training.last_loss == pytest.approx(6.218)
    assert not [f for f in group.failures if f.kind == "truncated-step"]
    assert group.status == "Passed"


def test_nemo2_tflops_per_gpu_reads_the_throughput_callback_under_a_rendered_measurement() -> None:
    # lines 14-18: TFLOPS_per_GPU 1.249e+03, 1.252e+03, 1.248e+03, 1.25e+03, 1.253e+03; the
    # annotation names Megatron's profile, whose warmupSteps (10) is kept
    group = one_group(
        NEMO_TFLOPS,
        goodput='{"logProfileRef": "megatron-training"}',
        thresholds='{"avgTFLOPsPerGPU": "value >= 1200"}',
    )
    assert group.training is not None and group.training.format == "nemo2"
    ((tflops),) = group.thresholds
    assert tflops.value == pytest.approx(1250.4) and tflops.passed
    assert {f.kind for f in group.failures} == {"training-incomplete"}  # stops at 50 of 100


# --- 3: an erratic sweep, and a threshold no lone row can carry ----------------------------------


def test_a_collapsing_sweep_is_flagged_and_its_isolated_peak_carries_no_threshold() -> None:
    # line 49: 30.22 GB/s at 8 MiB, then 1.60 ... 11.12 to 2 GiB (lines 50-57); 24.19 and
    # 34.17 at 4 and 8 GiB (lines 58-59): only 24.19 is reached by two adjacent sizes
    group = one_group(
        ERRATIC,
        nodes="R6KD-CX8aaS-GPU-14,R6KD-CX8aaS-GPU-15",
        bandwidth='{"testType": "alltoall"}',
        thresholds='{"busBandwidthGBps": "value >= 30"}',
    )
    (threshold,) = group.thresholds
    assert (threshold.value, threshold.passed) == (24.19, False)
    assert group.bandwidth is not None and group.bandwidth.peak_bus_bandwidth_g_bps == 34.17
    (note,) = [n for n in group.notes if "erratic sweep" in n]
    assert "16 MiB, 32 MiB, 64 MiB, 128 MiB, 256 MiB, 512 MiB, 1 GiB, 2 GiB" in note


# --- 4: goodput from too short a span ------------------------------------------------------------


def test_goodput_from_24_seconds_of_timestamps_cannot_be_computed_and_says_why() -> None:
    # lines 2-4: 14:55:23, 14:55:35, 14:55:47: 24 s, less than one 60 s sample interval
    group = one_group(NEMO_FINISHED, thresholds='{"goodputRatio": "value >= 0.5"}')
    (goodput,) = group.thresholds
    assert goodput.value is None and not goodput.passed
    assert goodput.note == (
        "cannot be computed: the log's timestamps span 24 s, less than one sample interval "
        "(60 s): too short to measure goodput"
    )


def test_a_shorter_sample_interval_lets_the_same_span_measure_goodput() -> None:
    group = one_group(NEMO_FINISHED, goodput='{"sampleInterval": "20s"}')
    assert group.training is not None and group.training.goodput is not None


# --- 5: every step within warm-up ----------------------------------------------------------------


def test_warmup_only_logs_report_their_warmup_figures_labelled_and_thresholds_fail_closed() -> None:
    # lines 20-21: iterations 0 and 1 (steps 1 and 2 of warmupSteps 5): 5.276 s and 2.008 s
    group = one_group(NEMO_WARMUP, thresholds='{"avgStepTimeSec": "value < 10"}')
    training = group.training
    assert training is not None and training.warmup_only
    assert training.avg_step_time_seconds == pytest.approx(3.642)
    (step,) = group.thresholds
    assert step.value is None and "warm-up average step time 3.6420 s" in (step.note or "")
    assert any("warm-up figures" in n for n in group.notes)


# --- 6: Rank lines without '#' -------------------------------------------------------------------


def test_rank_and_header_lines_without_hash_cover_the_group() -> None:
    # lines 6-7: " Rank  0 ... on nvidiatools-29-workload device 0", "  Rank  1 ... -30-..."
    group = one_group(
        NO_HASH,
        nodes="nvidiatools-29-workload,nvidiatools-30-workload",
        gpus_per_node=1,
        bandwidth=BW,
    )
    assert group.bandwidth is not None and group.bandwidth.hosts == [
        "nvidiatools-29-workload",
        "nvidiatools-30-workload",
    ]
    assert {f.kind for f in group.failures} == {"no-footer"}  # the paste ends at 16 MiB


# --- rank lines: elided or repeated ---------------------------------------------------------


def test_elided_rank_lines_give_the_rank_count_and_no_node_count() -> None:
    # search index file 51884305790, lines 6-9: Rank 0, 1, "...", Rank 126, 127 on 2 of 32 hosts
    log = real_log(
        "search-index-51884305790_oci-gb300-32node-128rank_all_reduce_nccl-2.28.7_rank-lines-elided.txt"
    )
    group = judge_alone(log)
    assert group.bandwidth is not None
    assert (group.bandwidth.rank_count, group.bandwidth.ranks_listed) == (128, 4)
    assert (group.nodes, group.num_nodes) == (None, None)
    assert "the log lists 4 of its 128 ranks (Rank lines elided)" in " ".join(group.notes)
    # line 15: "# Truncated  smaller message sizes"; the header says minBytes 524288
    assert "the results start at 8 GiB, above minBytes 512 KiB" in " ".join(group.notes)
    result = CliRunner().invoke(report, ["--logs", str(log)], catch_exceptions=False)
    assert result.exit_code == 0
    assert "Ranks:      128 (4 listed, the others elided) on 2 listed host(s)" in result.output


def test_rank_zero_on_every_host_is_separate_runs_not_one() -> None:
    # nccl-tests#107, lines 8-9: "Rank  0 Pid 1320 on ip-172-31-20-228" and "Rank  0 Pid 2066
    # on ip-172-31-22-230" under one "# Using devices": mpirun -np 2 ran two 1-rank tests
    group = judge_alone(
        real_log("nvidia-nccl-tests-issue-107_v100-2node_two-separate-1-rank-runs.txt")
    )
    (repeated,) = [f for f in group.failures if f.kind == "repeated-ranks"]
    assert repeated.message.startswith(
        "rank 0 is listed 2 times (on ip-172-31-20-228, ip-172-31-22-230): the log holds 2 "
        "separate runs"
    )
    assert group.status == "Failed"


def test_sequential_runs_in_one_log_are_not_repeated_ranks(tmp_path: Path) -> None:
    # two complete runs one after the other each list their own Rank 0: not a repeat
    log = real_log(
        "nvidia-nccl-tests-issue-309_h100-4node-32rank_all_reduce_perf_mpi.txt"
    ).read_text()
    body = "\n".join(log.splitlines()[1:])
    (tmp_path / "twice.log").write_text(body + "\n" + body)
    group = judge_alone(tmp_path / "twice.log")
    assert not [f for f in group.failures if f.kind == "repeated-ranks"]
