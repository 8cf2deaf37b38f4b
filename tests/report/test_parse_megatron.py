"""The Megatron-LM step syntax on every real log in shared/fixtures/megatron-logs.

Expected numbers were read by hand from the fixture; the comment names the line (line 1 of
every fixture is its `# SOURCE:` line).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from krm_fn.report.formats.megatron import SYNTAX
from krm_fn.report.formats.training import TrainingLog, parse_training, summarize
from krm_fn.report.loglines import LogSource
from krm_fn.report.logprofiles import BUILTIN_PROFILES, LogProfile, compile_profile
from krm_fn.report.model import Training

from .conftest import MEGATRON_LOGS, logs_in, megatron_log, source

TRAINING = BUILTIN_PROFILES["megatron-training"]
# A user profile that counts every iteration (no warm-up), to measure the short fixtures.
NO_WARMUP = compile_profile(
    "no-warmup",
    {
        "timestamp": {"layout": "2006-01-02 15:04:05.999999"},
        "warmupSteps": 0,
        "logInterval": 1,
        "patterns": {
            "trainingStep": {
                "regex": r"iteration\s+(?P<iteration>\d+)/\s*\d+\s*\|.*"
                r"elapsed time per iteration \(ms\):\s*(?P<elapsedTime>[\d.]+)",
                "units": {"elapsedTime": "ms"},
            }
        },
    },
    "input",
)

EKS = "aws-awsome-distributed-training_eks-pytorchjob-gpt3_megatron-lm_iterations.txt"
RANKED = "aws-awsome-distributed-training_slurm-gpt3_megatron-lm_iterations_rank-prefixed.txt"
STARTUP = "aws-awsome-distributed-training_slurm-gpt3_megatron-lm_startup-and-iterations.txt"
FLAGAI = "flagai-open-openseek_megatron_iteration_tflops-per-gpu.txt"
DEEPSPEED = "microsoft-superbenchmark_megatron-deepspeed_iterations_tflops.txt"
MOE = "unattributed_megatron-core-moe-ep8_iterations_tflops-per-gpu.txt"


def parse(name: str, profile: LogProfile = TRAINING) -> TrainingLog:
    return parse_training(source(megatron_log(name)).lines, SYNTAX, profile)


def summary(name: str, profile: LogProfile = TRAINING) -> Training:
    return summarize(parse(name, profile))


def test_every_megatron_fixture_is_covered() -> None:
    covered = {EKS, RANKED, STARTUP, FLAGAI, DEEPSPEED, MOE}
    assert covered == {p.name for p in logs_in(MEGATRON_LOGS) if p.is_file()}


@pytest.mark.parametrize(
    ("name", "lines", "iterations", "total", "elapsed_ms"),
    [
        # lines 2-4: "iteration 1/ 508626 ... elapsed time per iteration (ms): 255940.5" etc.
        pytest.param(
            EKS,
            [2, 3, 4],
            [1, 2, 3],
            508626,
            [255940.5, 243438.3, 243344.4],
            id="no-timestamp-no-throughput",
        ),
        # lines 2-4: "1:  iteration 25/73242187 ... elapsed time per iteration (ms): 87.0"
        pytest.param(
            RANKED, [2, 3, 4], [25, 26, 27], 73242187, [87.0, 86.5, 88.4], id="srun-rank-prefix"
        ),
        # lines 31-33 repeat the EKS iterations after the startup noise
        pytest.param(
            STARTUP,
            [31, 32, 33],
            [1, 2, 3],
            508626,
            [255940.5, 243438.3, 243344.4],
            id="startup-noise-before-steps",
        ),
        # line 2: "[default0]: [2025-05-27 15:23:07] iteration 1/ 24000 ... (ms): 271607.0"
        pytest.param(FLAGAI, [2], [1], 24000, [271607.0], id="torchrun-prefix-and-timestamp"),
        # lines 6, 9, 12, 15, 18: "vm-07-14:  iteration N/ 5 ... (ms): 76015.3" ...
        pytest.param(
            DEEPSPEED,
            [6, 9, 12, 15, 18],
            [1, 2, 3, 4, 5],
            5,
            [76015.3, 75254.0, 75249.6, 75182.4, 74494.9],
            id="deepspeed-host-prefix",
        ),
        # lines 8, 15-18: " [2024-10-24 09:49:45] iteration 20/ 40000 ... (ms): 3367.6" ...
        pytest.param(
            MOE,
            [8, 15, 16, 17, 18],
            [20, 40, 60, 80, 100],
            40000,
            [3367.6, 1688.1, 1646.4, 1646.4, 1623.0],
            id="moe-with-warnings-interleaved",
        ),
    ],
)
def test_step_lines(
    name: str, lines: list[int], iterations: list[int], total: int, elapsed_ms: list[float]
) -> None:
    result = parse(name)
    assert [s.line for s in result.steps] == lines
    assert [s.iteration for s in result.steps] == iterations
    assert result.train_iters == total
    assert [s.elapsed_ms for s in result.steps] == pytest.approx(elapsed_ms)
    assert result.problems == []


@pytest.mark.parametrize(
    ("name", "tflops"),
    [
        pytest.param(FLAGAI, [40.4], id="throughput-per-gpu"),  # line 2
        pytest.param(DEEPSPEED, [147.61, 149.10, 149.11, 149.24, 150.62], id="deepspeed-tflops"),
        pytest.param(MOE, [5.8, 11.5, 11.8, 11.8, 12.0], id="moe-throughput-per-gpu"),
        pytest.param(EKS, [None, None, None], id="not-printed"),
    ],
)
def test_tflops_per_gpu(name: str, tflops: list[float | None]) -> None:
    assert [s.tflops for s in parse(name).steps] == tflops


def test_loss_skipped_and_prefixes() -> None:
    ranked = parse(RANKED)
    # lines 2 and 4: "lm loss: 1.086954E+01" ... "lm loss: 1.087129E+01"
    assert ranked.steps[0].loss == pytest.approx(10.86954)
    assert summarize(ranked).last_loss == pytest.approx(10.87129)
    eks = parse(EKS)
    # lines 2-4: "number of skipped iterations:   1" on each (fp16 loss-scale warm-up)
    assert [s.skipped for s in eks.steps] == [1, 1, 1]
    assert summarize(eks).skipped_iterations == 3
    assert summarize(eks).last_loss is None
    assert {s.host for s in parse(DEEPSPEED).steps} == {"vm-07-14"}


def test_moe_goodput_from_timestamps() -> None:
    result = parse(MOE)
    totals = summarize(result)
    # line 8 09:49:45 is the first timestamp, line 18 09:51:57 the last: 132 s of wall time
    assert totals.first_timestamp == "2024-10-24T09:49:45+00:00"
    assert totals.last_timestamp == "2024-10-24T09:51:57+00:00"
    assert result.wall_time_s == 132.0
    # line 8's work happened before its timestamp: outside the window. Lines 15-18 cover 20
    # iterations each: 20 x (1688.1 + 1646.4 + 1646.4 + 1623.0) ms = 132.078 s
    assert [a.in_window for a in result.accounting] == [False, True, True, True, True]
    assert result.productive_time_s == pytest.approx(132.078)
    assert totals.goodput_capped_from == pytest.approx(132.078 / 132)
    assert totals.goodput == 1.0  # capped: one-second timestamps
    # warmupSteps 10 removes iterations 1-10 from line 8's 20
    assert [a.productive for a in result.accounting] == [10, 20, 20, 20, 20]
    assert totals.avg_step_time_seconds == pytest.approx((10 * 3.3676 + 20 * 6.6039) / 90)
    assert totals.avg_tflops_per_gpu == pytest.approx(
        (10 * 5.8 + 20 * (11.5 + 11.8 + 11.8 + 12.0)) / 90
    )
    assert [s.matched_by for s in result.steps] == ["profile"] * 5
    assert not result.finished  # iteration 100 of 40000


def test_deepspeed_goodput_tokens_and_completion() -> None:
    result = parse(DEEPSPEED, NO_WARMUP)
    # line 4 "[before the start of training step] datetime: 2023-11-29 08:51:14" to line 17
    # "[2023-11-29 08:57:30,611]": 376.611 s
    assert result.wall_time_s == pytest.approx(376.611)
    elapsed = [76015.3, 75254.0, 75249.6, 75182.4, 74494.9]
    assert result.productive_time_s == pytest.approx(sum(elapsed) / 1000)
    totals = summarize(result)
    assert totals.goodput == pytest.approx(sum(elapsed) / 1000 / 376.611)
    # "global batch size: 2048 | ... | actual seqlen: 2048": 4194304 tokens per iteration
    assert totals.tokens_per_second == pytest.approx(sum(4194304 / (e / 1000) for e in elapsed) / 5)
    assert totals.avg_tflops_per_gpu == pytest.approx(
        (147.61 + 149.10 + 149.11 + 149.24 + 150.62) / 5
    )
    assert result.finished  # line 18: iteration 5/ 5


def test_warmup_only_runs_report_their_warmup_figures_labelled() -> None:
    result = parse(DEEPSPEED)  # megatron-training: warmupSteps 10, the run has 5 iterations
    assert result.measured == []
    totals = summarize(result)
    # lines 6-18: every iteration is warm-up; its figures are shown as such, never measured
    assert totals.warmup_only and totals.measured_iterations == 0
    elapsed = [76015.3, 75254.0, 75249.6, 75182.4, 74494.9]
    assert totals.avg_step_time_seconds == pytest.approx(sum(elapsed) / 5000)
    assert totals.avg_tflops_per_gpu == pytest.approx(149.136)
    assert totals.goodput is None and totals.goodput_estimate is None


def test_skipped_iterations_are_not_productive() -> None:
    result = parse(EKS, NO_WARMUP)
    assert [a.productive for a in result.accounting] == [0, 0, 0]  # 1 skipped of 1 each


def test_without_two_timestamps_goodput_is_only_an_estimate() -> None:
    ranked = summary(RANKED)  # no timestamp at all
    assert ranked.goodput is None
    assert ranked.goodput_estimate == pytest.approx(1.0)
    startup = summary(STARTUP, NO_WARMUP)
    # line 21: the only timestamp, "[after megatron is initialized] datetime: 2024-07-16 22:14:01"
    assert startup.first_timestamp == startup.last_timestamp == "2024-07-16T22:14:01+00:00"
    assert startup.wall_time_seconds is None and startup.goodput is None


def test_flagai_line_matches_the_builtin_regex() -> None:
    [step] = parse(FLAGAI).steps
    assert step.matched_by == "profile"
    assert step.timestamp == datetime(2025, 5, 27, 15, 23, 7, tzinfo=UTC)
    assert step.loss == pytest.approx(11.92634)


def test_restart_repeats_are_not_counted_twice() -> None:
    text = "\n".join(
        f"[2024-01-01 00:0{minute}:00] iteration {it}/ 100 | elapsed time per iteration (ms): "
        f"1000.0 | number of skipped iterations: 0 | number of nan iterations: 0 |"
        for minute, it in enumerate([20, 30, 20, 30, 40])
    )
    result = parse_training(LogSource.from_text("restart.log", text).lines, SYNTAX, NO_WARMUP)
    assert result.repeated_lines == 2
    assert [a.new for a in result.accounting] == [10, 10, 0, 0, 10]


def test_elapsed_time_unit_of_a_user_profile_is_applied() -> None:
    profile = compile_profile(
        "seconds",
        {
            "timestamp": {"layout": "2006-01-02 15:04:05"},
            "patterns": {
                "trainingStep": {
                    "regex": r"step (?P<iteration>\d+) took (?P<elapsedTime>[\d.]+)s",
                    "units": {"elapsedTime": "s"},
                }
            },
        },
        "input",
    )
    lines = LogSource.from_text("custom.log", "step 1 took 2.5s\nstep 2 took 2.0s").lines
    result = parse_training(lines, SYNTAX, profile)
    assert [s.elapsed_ms for s in result.steps] == [2500.0, 2000.0]
    assert result.train_iters is None
