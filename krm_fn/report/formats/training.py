"""Read training-step logs of any framework declared by a :class:`StepSyntax`.

A framework differs only in how it prints a step line (Megatron ``iteration N/M | key: value
|``, NeMo 2 ``Training epoch E, iteration N/M | key: value``): the regex that finds it, the
fields holding step time, TFLOP/s, loss and tokens, how it says it finished. Warm-up, goodput,
averages and problems are defined here once (the formulas are in docs/report.md). The
LogProfile's ``trainingStep`` regex groups win over the fields; it may also find step lines
of its own.

Invariants:
    * The parser never judges; :func:`judge` turns what it found into failures and notes.
    * Goodput is ``None`` with the reason when the timestamps span less than one sample
      interval (``sampleInterval``, default 60 s) or productive time exceeds the wall time
      by more than :data:`TIMESTAMP_SLACK_S`. Thresholds never read the step-time estimate.
    * Averages use measured iterations only; when every step is warm-up, the warm-up
      averages are reported with ``warmupOnly`` and no threshold reads them.
    * Each iteration counts once: a line repeating an iteration (a restart) adds nothing.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from krm_fn.report.formats import LogFormat, Metric, PhraseRule
from krm_fn.report.load_rendered import GroupSpec
from krm_fn.report.loglines import LogLine
from krm_fn.report.logprofiles import LogProfile
from krm_fn.report.model import Failure, GroupReport, Training
from krm_fn.report.prefixes import strip_host_prefix, strip_prefixes
from krm_fn.report.timestamps import find_timestamp

TIMESTAMP_SLACK_S = 2.0
"""Seconds productive time may exceed wall time (two one-second timestamps) before the
timestamps count as inconsistent; within it, goodput is capped at 1.0."""
DEFAULT_SAMPLE_INTERVAL_S = 60.0
"""The least wall time goodput is computed from when the measurement names no sampleInterval."""

_FIELDS_RE = re.compile(r"([^:|]+?)\s*:\s*([^|]*?)\s*(?:\||$)")
_TOKENS_KEY_RE = re.compile(r"^tokens?\s*(?:per\s*sec(?:ond)?|/\s*s(?:ec)?)$", re.IGNORECASE)
_CHECKPOINT_SAVE_RE = re.compile(r"(?:^|\s)saving checkpoint at iteration\s+\d+\s+to\s+\S")
_ELISION_RE = re.compile(r"^\s*(?:\.{3,}|…)\s*$")


@dataclass(frozen=True)
class StepSyntax:
    """How one framework prints its training-step lines (a format's whole declaration)."""

    name: str  # the format's name: megatron, nemo2
    profile: str  # the built-in LogProfile used when no measurement names one
    literal: str  # text every step line contains (lines without it are not searched)
    header: re.Pattern[str]  # finds a step line; named groups iteration and total
    elapsed: tuple[tuple[str, float], ...]  # (field, factor to ms) of the step time, first wins
    tflops: tuple[str, ...]  # fields holding TFLOP/s per GPU
    loss: tuple[str, ...]  # fields holding the training loss
    nan_fields: tuple[str, ...]  # fields whose 'nan' means the run diverged
    batch: str  # the global batch size field
    tokens_per_gpu: tuple[str, ...] = ()  # fields holding tokens/s per GPU
    step_field: str | None = None  # a step counter across epochs (NeMo's global_step)
    zero_based: bool = False  # the first step is iteration 0
    closed_by_bar: bool = False  # every line ends with '|': one that does not has lost its end
    finish: re.Pattern[str] = re.compile(r"after training is done|exiting program")

    def detect(self, lines: Sequence[LogLine]) -> bool:
        """Whether any line is one of this framework's step lines."""
        search, literal = self.header.search, self.literal
        return any(literal in line.text and search(line.text) for line in lines)


@dataclass(frozen=True, slots=True)
class StepLine:
    """One training-step line (iterations counted from 1, whatever the framework prints)."""

    iteration: int
    train_iters: int | None
    elapsed_ms: float
    tflops: float | None
    loss: float | None
    skipped: int
    nan: int
    nan_value: bool
    global_batch_size: int | None
    seqlen: int | None
    consumed_tokens: int | None
    tokens_per_second: float | None
    tokens_per_gpu: float | None
    timestamp: datetime | None
    host: str | None
    source: str
    line: int
    index: int
    matched_by: Literal["profile", "fallback"]


@dataclass(frozen=True, slots=True)
class StepAccounting:
    """How the iterations of one step line count (covered, new, warm-up, productive)."""

    step: StepLine
    covered: int
    new: int
    warmup: int
    productive: int
    in_window: bool


@dataclass
class TrainingLog:
    """Everything read from a training log, before it is summed up into :class:`Training`."""

    syntax: StepSyntax
    profile: LogProfile
    steps: list[StepLine] = field(default_factory=list)
    accounting: list[StepAccounting] = field(default_factory=list)
    problems: list[Failure] = field(default_factory=list)  # step-like lines that cannot be read
    timestamps: list[tuple[int, datetime]] = field(default_factory=list)
    checkpoint_saves: int = 0
    checkpoint_restores: int = 0
    finish_marker: bool = False
    repeated_lines: int = 0
    elisions: list[tuple[str, int, int | None, int]] = field(default_factory=list)
    min_wall_s: float = DEFAULT_SAMPLE_INTERVAL_S

    @property
    def train_iters(self) -> int | None:
        """The total number of iterations the run was configured for."""
        return next((s.train_iters for s in self.steps if s.train_iters is not None), None)

    @property
    def last_iteration(self) -> int | None:
        """The highest iteration logged."""
        return max((s.iteration for s in self.steps), default=None)

    @property
    def finished(self) -> bool:
        """Training ended: a finish marker, or the last iteration reached the total."""
        total, last = self.train_iters, self.last_iteration
        return self.finish_marker or (total is not None and last is not None and last >= total)

    @property
    def measured(self) -> list[StepAccounting]:
        """Step lines with at least one productive iteration."""
        return [a for a in self.accounting if a.productive > 0]

    @property
    def wall_time_s(self) -> float | None:
        """Last minus first timestamp, seconds; ``None`` without two distinct ones."""
        if not self.timestamps:
            return None
        stamps = [s for _, s in self.timestamps]
        wall = (max(stamps) - min(stamps)).total_seconds()
        return wall if wall > 0 else None

    @property
    def productive_time_s(self) -> float:
        """Productive seconds inside the goodput window."""
        return sum(a.step.elapsed_ms / 1000 * a.productive for a in self.accounting if a.in_window)

    def goodput_problem(self) -> str | None:
        """Why the timestamps give no goodput although there are two of them, or ``None``."""
        wall = self.wall_time_s
        if wall is None or not self.measured:
            return None
        productive = self.productive_time_s
        if productive - wall <= TIMESTAMP_SLACK_S:
            if wall < self.min_wall_s:
                return (
                    f"the log's timestamps span {wall:.0f} s, less than one sample interval "
                    f"({self.min_wall_s:.0f} s): too short to measure goodput"
                )
            return None
        last = max(index for index, _ in self.timestamps)
        after = [a for a in self.measured if a.step.index > last]
        where = (
            f"; {len(after)} measured step line(s), from iteration {after[0].step.iteration} "
            f"({after[0].step.source}:{after[0].step.line}), come after the last timestamp"
            if after
            else ""
        )
        return (
            f"the timestamps are inconsistent with the step lines: productive time "
            f"{productive:.0f} s exceeds the wall time {wall:.0f} s between the first and "
            f"last timestamps{where}"
        )


def _weighted(values: list[tuple[float, int]]) -> float | None:
    weight = sum(w for _, w in values)
    return sum(v * w for v, w in values) / weight if weight else None


def _tokens_rate(step: StepLine, previous: StepLine | None) -> float | None:
    """Tokens/s of a step: printed, or batch x seqlen (or consumed-tokens delta) per step time."""
    if step.tokens_per_second is not None or step.elapsed_ms <= 0:
        return step.tokens_per_second
    tokens: float | None = None
    if step.global_batch_size is not None and step.seqlen is not None:
        tokens = float(step.global_batch_size * step.seqlen)
    elif (
        previous is not None
        and step.consumed_tokens is not None
        and previous.consumed_tokens is not None
        and step.iteration > previous.iteration
    ):
        tokens = (step.consumed_tokens - previous.consumed_tokens) / (
            step.iteration - previous.iteration
        )
    return None if tokens is None else tokens / (step.elapsed_ms / 1000)


def _averages(log: TrainingLog, weight: str) -> tuple[float | None, ...]:
    """Step time (s), TFLOP/s, tokens/s and per GPU, weighted by ``productive``/``covered``."""
    rows = [(a.step, getattr(a, weight)) for a in log.accounting if getattr(a, weight) > 0]
    previous = {id(step): before for before, step in itertools.pairwise(log.steps)}
    tokens = [(_tokens_rate(s, previous.get(id(s))), w) for s, w in rows]
    return (
        _weighted([(s.elapsed_ms / 1000, w) for s, w in rows]),
        _weighted([(s.tflops, w) for s, w in rows if s.tflops is not None]),
        _weighted([(t, w) for t, w in tokens if t is not None]),
        _weighted([(s.tokens_per_gpu, w) for s, w in rows if s.tokens_per_gpu is not None]),
    )


def summarize(log: TrainingLog) -> Training:
    """Sum a parsed log up into the report's :class:`~krm_fn.report.model.Training`."""
    measured = bool(log.measured)
    step_s, tflops, tokens, per_gpu = _averages(log, "productive" if measured else "covered")
    wall, problem = log.wall_time_s, log.goodput_problem()
    raw = log.productive_time_s / wall if wall and measured and problem is None else None
    total = sum(a.step.elapsed_ms / 1000 * a.covered for a in log.accounting)
    useful = sum(a.step.elapsed_ms / 1000 * a.productive for a in log.accounting)
    stamps = sorted(s for _, s in log.timestamps)
    steps = log.steps
    return Training(
        log_profile=log.profile.name,
        format=log.syntax.name,
        warmup_steps=log.profile.spec.warmup_steps,
        step_lines=len(steps),
        first_iteration=steps[0].iteration if steps else None,
        last_iteration=log.last_iteration,
        train_iterations=log.train_iters,
        finished=log.finished,
        measured_iterations=sum(a.productive for a in log.accounting),
        warmup_iterations=sum(a.warmup for a in log.accounting),
        skipped_iterations=sum(s.skipped for s in steps),
        nan_iterations=sum(s.nan for s in steps),
        repeated_lines=log.repeated_lines,
        warmup_only=bool(steps) and not measured,
        avg_step_time_seconds=step_s,
        avg_tflops_per_gpu=tflops,
        tokens_per_second=tokens,
        tokens_per_second_per_gpu=per_gpu,
        last_loss=next((s.loss for s in reversed(steps) if s.loss is not None), None),
        goodput=None if raw is None else min(1.0, raw),
        goodput_estimate=useful / total if total > 0 and measured else None,
        goodput_problem=problem,
        goodput_capped_from=raw if raw is not None and raw > 1.0 else None,
        wall_time_seconds=wall,
        productive_time_seconds=log.productive_time_s if raw is not None else None,
        first_timestamp=stamps[0].isoformat() if stamps else None,
        last_timestamp=stamps[-1].isoformat() if stamps else None,
        checkpoint_saves=log.checkpoint_saves,
        checkpoint_restores=log.checkpoint_restores,
        hosts=list(dict.fromkeys(s.host for s in steps if s.host)),
    )


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.split()[0])
    except (ValueError, IndexError):
        return None


def _int(value: str | None) -> int | None:
    number = _float(value)
    return None if number is None or not math.isfinite(number) else round(number)


def _first(fields: dict[str, str], keys: Sequence[str]) -> float | None:
    return next((v for k in keys if (v := _float(fields.get(k))) is not None), None)


class _Reader:
    def __init__(self, syntax: StepSyntax, profile: LogProfile, min_wall_s: float) -> None:
        self.syntax = syntax
        self.log = TrainingLog(syntax, profile, min_wall_s=min_wall_s)
        self.pattern = profile.patterns.get("trainingStep")
        self.events = [
            (key, p.pattern)
            for key in ("checkpointSave", "checkpointDone", "checkpointRestore")
            if (p := profile.patterns.get(key)) is not None
        ]
        self.pending_elision: tuple[str, int] | None = None

    def feed(self, index: int, line: LogLine) -> None:
        """Read one line: its timestamp, profile events, and a training step if it is one."""
        raw = line.text
        log = self.log
        stamp = find_timestamp(raw) or self.log.profile.layout.search(raw)
        if stamp is not None:
            log.timestamps.append((index, stamp))
        hits = {key for key, pattern in self.events if pattern.search(raw)}
        if hits & {"checkpointSave", "checkpointDone"} or (
            "saving checkpoint" in raw and _CHECKPOINT_SAVE_RE.search(raw)
        ):
            log.checkpoint_saves += 1
        log.checkpoint_restores += "checkpointRestore" in hits
        if len(raw) < 40 and log.steps and _ELISION_RE.match(strip_prefixes(raw).text):
            self.pending_elision = (line.source, line.number)
        if self.syntax.finish.search(raw):
            log.finish_marker = True
        self.step(index, line)

    def step(self, index: int, line: LogLine) -> None:
        """Read a step line (the framework's, or one the profile's regex alone finds)."""
        raw = line.text
        syntax = self.syntax
        header = syntax.header.search(raw) if syntax.literal in raw else None
        match = self.pattern.pattern.search(raw) if self.pattern is not None else None
        if header is None and match is None:
            return
        rest = raw[header.end() :] if header is not None else ""
        fields = {key.strip(): value for key, value in _FIELDS_RE.findall(rest) if value}
        groups = match.groupdict() if match is not None else {}
        elapsed = next(
            (v * f for k, f in syntax.elapsed if (v := _float(fields.get(k))) is not None), None
        )
        if groups.get("elapsedTime") is not None and self.pattern is not None:
            elapsed = float(groups["elapsedTime"]) * self.pattern.scale("elapsedTime")
        cut = header is not None and syntax.closed_by_bar and not rest.rstrip().endswith("|")
        if elapsed is None or cut:
            self.problem(line, cut)
            return
        start = header.start() if header is not None else len(raw)
        self.add(index, line, self.place(header, fields, groups), start, fields, groups, elapsed)

    def place(
        self, header: re.Match[str] | None, fields: dict[str, str], groups: dict[str, str | None]
    ) -> tuple[int, int | None]:
        """The step's number counted from 1, and the run's total when the line tells it."""
        syntax = self.syntax
        if header is None:
            return int(groups["iteration"] or 0), None
        printed, total = int(header.group("iteration")), int(header.group("total"))
        if printed >= total:
            self.log.finish_marker = True  # 'iteration N/N': the last step of the run
        counter = _int(fields.get(syntax.step_field)) if syntax.step_field else None
        if counter is not None and counter != printed:
            return counter + syntax.zero_based, None  # the header counts within an epoch
        return printed + syntax.zero_based, total + syntax.zero_based

    def add(
        self,
        index: int,
        line: LogLine,
        place: tuple[int, int | None],
        start: int,
        fields: dict[str, str],
        groups: dict[str, str | None],
        elapsed: float,
    ) -> None:
        """Record a readable step line; regex groups win over fields for every value."""
        syntax = self.syntax
        iteration, total = place
        own = groups.get("timestamp")
        if own:
            stamp = self.log.profile.layout.search(own) or find_timestamp(own)
        else:
            stamp = find_timestamp(line.text[:start])
        values = {
            k: _float(g) for k in ("tflops", "loss", "tokensPerSecond") if (g := groups.get(k))
        }
        tokens = next((_float(v) for k, v in fields.items() if _TOKENS_KEY_RE.match(k)), None)
        nan_value = any(
            (v := _float(fields.get(k))) is not None and math.isnan(v) for k in syntax.nan_fields
        )
        if self.pending_elision is not None:
            before = self.log.steps[-1].iteration if self.log.steps else None
            self.log.elisions.append((*self.pending_elision, before, iteration))
            self.pending_elision = None
        self.log.steps.append(
            StepLine(
                iteration=iteration,
                train_iters=total,
                elapsed_ms=elapsed,
                tflops=values.get("tflops", _first(fields, syntax.tflops)),
                loss=values.get("loss", _first(fields, syntax.loss)),
                skipped=_int(fields.get("number of skipped iterations")) or 0,
                nan=_int(fields.get("number of nan iterations")) or 0,
                nan_value=nan_value,
                global_batch_size=_int(fields.get(syntax.batch)),
                seqlen=_int(fields.get("actual seqlen")),
                consumed_tokens=_int(fields.get("consumed tokens")),
                tokens_per_second=values.get("tokensPerSecond", tokens),
                tokens_per_gpu=_first(fields, syntax.tokens_per_gpu),
                timestamp=stamp,
                host=strip_host_prefix(strip_prefixes(line.text)).host,
                source=line.source,
                line=line.number,
                index=index,
                matched_by="profile" if groups else "fallback",
            )
        )

    def problem(self, line: LogLine, cut: bool) -> None:
        """Record a step line that lost its end or prints no step time."""
        if cut:
            missing = "is cut short (does not end with '|')"
        else:
            missing = f"has no step time ({' or '.join(k for k, _ in self.syntax.elapsed)})"
        message = f"{self.syntax.name} step line {missing}: {line.text.strip()[:160]!r}"
        self.log.problems.append(Failure.of("truncated-step", message, line.source, line.number))

    def account(self) -> None:
        """Count each step line's iterations: covered, new, warm-up, productive, in window."""
        log, steps = self.log, self.log.steps
        start, first = min(log.timestamps, key=lambda t: (t[1], t[0]), default=(-1, None))
        warmup, interval = log.profile.spec.warmup_steps, log.profile.spec.log_interval
        highest, previous = 0, None
        for step, following in zip(steps, [*steps[1:], None], strict=False):
            if previous is None or step.iteration <= previous:
                after = following.iteration - step.iteration if following else 0
                low = max(0, step.iteration - (after if after > 0 else interval))
            else:
                low = previous
            new_low = max(low, highest)
            new = max(0, step.iteration - new_low)
            log.repeated_lines += step.iteration <= highest
            warm = max(0, min(step.iteration, warmup) - new_low) if new else 0
            in_window = first is not None and step.index > start
            if in_window and step.timestamp is not None and first is not None:
                in_window = step.timestamp > first
            productive = max(0, new - warm - step.skipped - step.nan)
            log.accounting.append(
                StepAccounting(step, step.iteration - low, new, warm, productive, in_window)
            )
            highest, previous = max(highest, step.iteration), step.iteration


def parse_training(
    lines: Sequence[LogLine],
    syntax: StepSyntax,
    profile: LogProfile,
    min_wall_s: float = DEFAULT_SAMPLE_INTERVAL_S,
) -> TrainingLog:
    """Read a log's ``syntax`` step lines with ``profile``; goodput needs ``min_wall_s`` of wall."""
    reader = _Reader(syntax, profile, min_wall_s)
    for index, line in enumerate(lines):
        reader.feed(index, line)
    reader.account()
    return reader.log


def _failures(log: TrainingLog) -> list[Failure]:
    """Unreadable step lines, an unfinished run, nan iterations or nan values."""
    failures = list(log.problems)
    if log.steps and not log.finished:
        total = f" of {log.train_iters}" if log.train_iters else ""
        message = (
            f"training log ends at iteration {log.last_iteration}{total} and does not say "
            "training finished (run stopped early, or the log is truncated)"
        )
        last = log.steps[-1]
        failures.append(Failure.of("training-incomplete", message, last.source, last.line))
    if nan := [s for s in log.steps if s.nan or s.nan_value]:
        message = (
            f"{len(nan)} step line(s) report nan iterations or print nan "
            f"({', '.join(log.syntax.nan_fields)}), first at iteration {nan[0].iteration} "
            "(the loss diverged)"
        )
        failures.append(Failure.of("nan-iterations", message, nan[0].source, nan[0].line))
    return failures


def _notes(log: TrainingLog, summary: Training) -> list[str]:
    """Goodput not computed, elided iterations, warm-up only, lines read field by field."""
    notes: list[str] = []
    if summary.goodput_problem is not None:
        notes.append(f"goodput cannot be computed: {summary.goodput_problem}")
    for source, number, before, after in log.elisions:
        span = f" {before + 1}-{after}" if before is not None else ""
        notes.append(
            f"'...' at {source}:{number}: iterations{span} are elided from the log; they are "
            "counted with the step time of the next step line"
        )
    if summary.goodput_capped_from is not None:
        notes.append(
            f"goodput computed as {summary.goodput_capped_from:.4f} and capped at 1.0 "
            "(timestamps have one-second resolution)"
        )
    if summary.goodput is None and summary.goodput_problem is None and summary.goodput_estimate:
        notes.append(
            f"goodput not measured (fewer than two distinct timestamps); estimate from step "
            f"times: {summary.goodput_estimate:.3f} (ignores startup, checkpoints and restarts; "
            "not used for thresholds)"
        )
    if summary.warmup_only:
        notes.append(
            f"every one of the {len(log.steps)} step lines falls within warmupSteps="
            f"{summary.warmup_steps} or was skipped: the figures shown are warm-up figures, "
            "and no threshold reads them"
        )
    regex = sum(s.matched_by == "profile" for s in log.steps)
    if log.steps and regex < len(log.steps):
        notes.append(
            f"{len(log.steps) - regex} of {len(log.steps)} step lines do not match the "
            f"{log.profile.name} trainingStep regex and were read field by field"
        )
    return notes


def judge(group: GroupReport, log: TrainingLog) -> None:
    """Record what a training log says against its group, and whether it measured."""
    summary = summarize(log)
    group.training = summary
    group.failures.extend(_failures(log))
    if not log.steps:
        group.notes.append(
            f"no {log.syntax.name} training-step lines in the log (e.g. "
            f"{log.syntax.header.pattern!r})"
        )
    group.notes.extend(_notes(log, summary))
    group.has_data = group.has_data or summary.measured_iterations > 0


def _why_missing(summary: Training, attr: str) -> str:
    """Why a training metric has no value although the log has step lines past warm-up."""
    per_gpu, estimate = summary.tokens_per_second_per_gpu, summary.goodput_estimate
    if attr == "goodput" and summary.goodput_problem is not None:
        return f"cannot be computed: {summary.goodput_problem}"
    if attr == "goodput":
        extra = f"; the step-time estimate {estimate:.3f} is not a measurement" if estimate else ""
        return f"no wall time: the log has fewer than two distinct timestamps{extra}"
    if attr == "tokens_per_second" and per_gpu is not None:
        return f"the log prints tokens/s per GPU ({per_gpu:.1f}), not for the whole job"
    return "the step lines do not print it"


def _reader(attr: str) -> Metric:
    def read(group: GroupReport) -> tuple[float | None, str | None]:
        summary = group.training
        if summary is None or not summary.step_lines:
            return None, "no training-step lines in the log"
        if summary.warmup_only:
            return None, (
                f"every step is within warmupSteps={summary.warmup_steps}: the warm-up average "
                f"step time {summary.avg_step_time_seconds or 0:.4f} s is not a measurement"
            )
        value = getattr(summary, attr)
        return (value, None) if value is not None else (None, _why_missing(summary, attr))

    return read


METRICS: dict[str, Metric] = {
    "goodputRatio": _reader("goodput"),
    "avgTFLOPsPerGPU": _reader("avg_tflops_per_gpu"),
    "avgStepTimeSec": _reader("avg_step_time_seconds"),
    "tokensPerSecond": _reader("tokens_per_second"),
}
"""The training metrics every training format provides, by NVCRE metric name."""


def training_format(syntax: StepSyntax, failure_rules: tuple[PhraseRule, ...] = ()) -> LogFormat:
    """The :class:`~krm_fn.report.formats.LogFormat` of a framework's step syntax."""

    def measure(
        group: GroupReport, lines: Sequence[LogLine], profile: LogProfile, spec: GroupSpec
    ) -> None:
        interval = spec.goodput.sample_interval_s if spec.goodput else None
        judge(group, parse_training(lines, syntax, profile, interval or DEFAULT_SAMPLE_INTERVAL_S))

    return LogFormat(
        syntax.name, "training", syntax.profile, syntax.detect, measure, METRICS, failure_rules
    )
