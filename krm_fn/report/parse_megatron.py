"""Read Megatron-LM (and Megatron-DeepSpeed) training logs: steps, throughput and goodput.

A training-step line looks like (prefixes such as ``1:  ``, ``[default0]: `` or
``vm-07-14: `` and the ``[timestamp]`` are optional)::

    [2024-10-24 09:49:45] iteration 20/ 40000 | consumed samples: 1280 | elapsed time per
    iteration (ms): 3367.6 | throughput per GPU (TFLOP/s/GPU): 5.8 | ... | lm loss: 1.155786E+01
    | ... | number of skipped iterations: 0 | number of nan iterations: 0 |

The LogProfile's ``trainingStep`` regex is tried first; its named groups (``iteration``,
``elapsedTime`` with its unit, ``tflops``, ``loss``, ``timestamp``, ``tokensPerSecond``) are
the values of record. The built-in regexes require a timestamp, and ``megatron-training``
also a TFLOP/s field and an ``lm loss``, which many real logs lack; every line with
``iteration N/M |`` is therefore also read field by field (``key: value`` between ``|``),
which is where skipped/nan counts, batch size and DeepSpeed's ``TFLOPs`` come from.

Goodput (all times in seconds)::

    goodput = productive / wall
    productive = sum over step lines inside the window of
                 elapsed_per_iteration x productive_iterations
    productive_iterations = iterations the line covers, less those <= warmupSteps,
                 less "number of skipped iterations" and "number of nan iterations"
                 (assumed disjoint, so the count errs low), less iterations already
                 logged before a restart
    wall = last timestamp - first timestamp anywhere in the log (the earliest timestamp
           stands for the application start, whose Megatron line carries no time)
    window = step lines after the line carrying the first timestamp whose own timestamp,
             when they have one, is later than it (the work of a line is done before it
             is printed, so the line carrying the first timestamp lies outside)

A step line covers the iterations since the previous step line; the first covers
``min(iteration, gap to the next step line)`` (or ``logInterval`` when it is alone). The
value is capped at 1.0 only when productive time exceeds wall time by no more than
:data:`TIMESTAMP_SLACK_S` (one-second timestamps can make it exceed 1 by rounding). With
fewer than two distinct timestamps there is no wall time: ``goodput`` is ``None`` and
``goodput_estimate`` = productive / (sum of elapsed time of every logged iteration) is given
instead, labelled an estimate; it ignores startup, checkpoints and restarts.

Goodput is also ``None`` when the timestamps contradict the step lines
(``goodput_problem`` says how): the productive time exceeds the wall time by more than the
slack, typically because the timestamps stop early (only Megatron's ``[before the start of
training step] datetime:`` lines carry a time, the step lines none). A value computed from
inconsistent data is no value.

Megatron's own ``saving checkpoint at iteration N to PATH`` line carries no timestamp; it is
counted as a checkpoint save whether or not the profile's ``checkpointSave`` pattern (which
requires one) matches. ``...`` lines between step lines (elided log) are kept in ``elisions``:
the iterations behind them are counted with the next step line's time, which the report notes.

Invariants:
    * The parser never judges; truncated step lines and a log without step lines are listed
      as problems for the evaluator. A line in Megatron's own format (``iteration N/M |``)
      must end with ``|``, as Megatron-LM prints it, or it counts as cut short.
    * Averages (step time, TFLOP/s, tokens/s) use measured iterations only (past warm-up,
      not skipped), weighted by the iterations each line covers; with none they are ``None``.
    * Each iteration is counted once: a line repeating an iteration already logged (a restart
      from a checkpoint) adds no productive time and is counted in ``repeated_lines``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from krm_fn.report.loglines import LogLine
from krm_fn.report.logprofiles import LogProfile
from krm_fn.report.prefixes import strip_host_prefix, strip_prefixes
from krm_fn.report.timestamps import find_timestamp

__all__ = ["TIMESTAMP_SLACK_S", "MegatronProblem", "MegatronResult", "StepLine", "parse_megatron"]

TIMESTAMP_SLACK_S = 2.0
"""Seconds productive time may exceed wall time before the timestamps count as inconsistent:
two timestamps of one-second resolution."""


@dataclass(frozen=True)
class StepLine:
    """One training-step line.

    Attributes:
        iteration: the iteration number.
        train_iters: the total after the slash, ``None`` when the profile regex alone read it.
        elapsed_ms: elapsed time per iteration, averaged over the log interval, ms.
        tflops: TFLOP/s per GPU, ``None`` when not printed.
        loss: ``lm loss``, ``None`` when not printed.
        skipped: ``number of skipped iterations`` in the interval.
        nan: ``number of nan iterations`` in the interval.
        global_batch_size: ``global batch size``.
        seqlen: DeepSpeed ``actual seqlen``.
        consumed_tokens: DeepSpeed ``consumed tokens``.
        tokens_per_second: an explicit tokens/s value (profile group or field).
        timestamp: the line's own timestamp, ``None`` when it has none.
        host: the host prefix (pdsh), or ``None``.
        rank: the rank prefix, or ``None``.
        source: the log file.
        line: 1-based line number.
        index: position in the line stream (orders lines across sources).
        matched_by: ``profile`` when the LogProfile regex matched, else ``fallback``.

    """

    iteration: int
    train_iters: int | None
    elapsed_ms: float
    tflops: float | None
    loss: float | None
    skipped: int
    nan: int
    global_batch_size: int | None
    seqlen: int | None
    consumed_tokens: int | None
    tokens_per_second: float | None
    timestamp: datetime | None
    host: str | None
    rank: str | None
    source: str
    line: int
    index: int
    matched_by: Literal["profile", "fallback"]


@dataclass(frozen=True)
class MegatronProblem:
    """A line that looks like a training step but cannot be read.

    Attributes:
        kind: ``truncated-step`` or ``no-steps``.
        message: what is wrong.
        source: the log file.
        line: 1-based line number (0 for the whole log).

    """

    kind: str
    message: str
    source: str
    line: int


@dataclass(frozen=True)
class StepAccounting:
    """How the iterations of one step line are counted.

    Attributes:
        step: the line.
        covered: iterations the line covers.
        new: of those, iterations not logged before.
        warmup: of the new ones, iterations within ``warmupSteps``.
        productive: new iterations less warm-up, skipped and nan ones.
        in_window: whether the line lies inside the goodput window.

    """

    step: StepLine
    covered: int
    new: int
    warmup: int
    productive: int
    in_window: bool


@dataclass
class MegatronResult:
    """Everything read from a training log.

    Attributes:
        profile: the LogProfile name used.
        steps: the step lines in order.
        accounting: per step line, how its iterations count.
        problems: unreadable step lines, or no step lines.
        first_timestamp: earliest timestamp in the log.
        last_timestamp: latest timestamp in the log.
        application_start_line: the line the ``applicationStart`` pattern matched.
        checkpoint_saves: lines matching ``checkpointSave``/``checkpointDone``.
        checkpoint_restores: lines matching ``checkpointRestore``.
        finished: the log says training ended (``after training is done``, ``exiting
            program``) or the last iteration reached the total.
        repeated_lines: step lines that repeat an iteration already logged.

    """

    profile: str
    warmup_steps: int
    steps: list[StepLine] = field(default_factory=list)
    accounting: list[StepAccounting] = field(default_factory=list)
    problems: list[MegatronProblem] = field(default_factory=list)
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None
    application_start_line: int | None = None
    checkpoint_saves: int = 0
    checkpoint_restores: int = 0
    finish_marker: bool = False
    repeated_lines: int = 0
    last_timestamp_index: int | None = None
    elisions: list[tuple[str, int, int | None, int | None]] = field(default_factory=list)
    """``...`` lines: (source, line, iteration before, iteration after)."""

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

    def _weighted(self, values: list[tuple[float, int]]) -> float | None:
        weight = sum(w for _, w in values)
        return sum(v * w for v, w in values) / weight if weight else None

    @property
    def avg_step_time_s(self) -> float | None:
        """Mean elapsed time per measured iteration, seconds."""
        return self._weighted([(a.step.elapsed_ms / 1000.0, a.productive) for a in self.measured])

    @property
    def avg_tflops(self) -> float | None:
        """Mean TFLOP/s per GPU over measured iterations that print it."""
        return self._weighted(
            [(a.step.tflops, a.productive) for a in self.measured if a.step.tflops is not None]
        )

    @property
    def avg_tokens_per_second(self) -> float | None:
        """Mean tokens/s over measured iterations where it can be known."""
        values: list[tuple[float, int]] = []
        previous: StepLine | None = None
        for acc in self.accounting:
            step = acc.step
            rate = step.tokens_per_second
            if rate is None and step.elapsed_ms > 0:
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
                if tokens is not None:
                    rate = tokens / (step.elapsed_ms / 1000.0)
            if rate is not None and acc.productive > 0:
                values.append((rate, acc.productive))
            previous = step
        return self._weighted(values)

    @property
    def last_loss(self) -> float | None:
        """The last ``lm loss`` printed."""
        return next((s.loss for s in reversed(self.steps) if s.loss is not None), None)

    @property
    def skipped_iterations(self) -> int:
        """Sum of ``number of skipped iterations`` over the step lines."""
        return sum(s.skipped for s in self.steps)

    @property
    def nan_iterations(self) -> int:
        """Sum of ``number of nan iterations`` over the step lines."""
        return sum(s.nan for s in self.steps)

    @property
    def wall_time_s(self) -> float | None:
        """Last minus first timestamp, seconds; ``None`` without two distinct timestamps."""
        if self.first_timestamp is None or self.last_timestamp is None:
            return None
        wall = (self.last_timestamp - self.first_timestamp).total_seconds()
        return wall if wall > 0 else None

    @property
    def productive_time_s(self) -> float:
        """Productive seconds inside the goodput window."""
        return sum(
            a.step.elapsed_ms / 1000.0 * a.productive for a in self.accounting if a.in_window
        )

    @property
    def goodput_uncapped(self) -> float | None:
        """Productive over wall time before the 1.0 cap; ``None`` without wall time or data."""
        wall = self.wall_time_s
        if wall is None or not self.measured:
            return None
        return self.productive_time_s / wall

    @property
    def goodput_problem(self) -> str | None:
        """Why the timestamps cannot give a goodput although there are two of them, or ``None``."""
        wall = self.wall_time_s
        if wall is None or not self.measured:
            return None
        productive = self.productive_time_s
        if productive - wall <= TIMESTAMP_SLACK_S:
            return None
        last = self.last_timestamp_index
        after = [a for a in self.measured if last is not None and a.step.index > last]
        where = (
            f"; {len(after)} measured step line(s), from iteration {after[0].step.iteration} "
            f"({after[0].step.source}:{after[0].step.line}), come after the last timestamp"
            if after
            else ""
        )
        return (
            f"the timestamps are inconsistent with the step lines: productive time "
            f"{productive:.0f} s exceeds the wall time {wall:.0f} s between the first and last "
            f"timestamps ({self.first_timestamp} to {self.last_timestamp}){where}"
        )
        return None

    @property
    def goodput(self) -> float | None:
        """Measured goodput in [0, 1], or ``None``.

        ``None`` without two timestamps or productive steps, or when the timestamps
        contradict the step lines (:attr:`goodput_problem`).
        """
        value = self.goodput_uncapped
        if value is None or self.goodput_problem is not None:
            return None
        return min(1.0, value)

    @property
    def goodput_estimate(self) -> float | None:
        """Productive over logged step time: an estimate that ignores time between steps."""
        total = sum(a.step.elapsed_ms / 1000.0 * a.covered for a in self.accounting)
        if total <= 0 or not self.measured:
            return None
        productive = sum(a.step.elapsed_ms / 1000.0 * a.productive for a in self.accounting)
        return productive / total


_ITERATION_RE = re.compile(r"\biteration\s+(?P<iteration>\d+)\s*/\s*(?P<total>\d+)\s*\|")
_FINISH_RE = re.compile(r"after training is done|exiting program")
_CHECKPOINT_SAVE_RE = re.compile(r"(?:^|\s)saving checkpoint at iteration\s+\d+\s+to\s+\S")
_ELISION_RE = re.compile(r"^\s*(?:\.{3,}|…)\s*$")
_FIELD_RE = re.compile(r"^\s*(?P<key>[^:|]+?)\s*:\s*(?P<value>\S.*?)\s*$")
_TOKENS_KEY_RE = re.compile(r"^tokens?\s*(?:per\s*sec(?:ond)?|/\s*s(?:ec)?)$", re.IGNORECASE)


def _fields(text: str) -> tuple[dict[str, str], bool]:
    """Split ``key: value |`` fields; the bool says the line was cut short.

    Megatron-LM ends every field, the last one included, with `` |``; a line in that format
    that does not end with ``|`` lost its end, however complete its last field looks.
    """
    fields: dict[str, str] = {}
    for part in text.split("|"):
        found = _FIELD_RE.match(part)
        if found is not None:
            fields[found.group("key").strip()] = found.group("value").strip()
    return fields, not text.rstrip().endswith("|")


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.split()[0])
    except (ValueError, IndexError):
        return None


def _int(value: str | None) -> int | None:
    number = _float(value)
    return None if number is None else round(number)


def _step_values(
    fields: dict[str, str], groups: dict[str, str]
) -> tuple[float | None, float | None, float | None]:
    """TFLOP/s per GPU, loss and tokens per second of a step line: regex groups win.

    Args:
        fields: the line's ``key: value |`` fields.
        groups: what the profile's ``trainingStep`` regex captured (empty when it missed).

    Returns:
        ``(tflops, loss, tokens_per_second)``, each ``None`` when the line has none.

    """
    tflops = _float(fields.get("throughput per GPU (TFLOP/s/GPU)") or fields.get("TFLOPs"))
    if groups.get("tflops") is not None:
        tflops = float(groups["tflops"])
    loss = _float(fields.get("lm loss"))
    if groups.get("loss") is not None:
        loss = float(groups["loss"])
    tokens_rate = next((_float(v) for k, v in fields.items() if _TOKENS_KEY_RE.match(k)), None)
    if groups.get("tokensPerSecond") is not None:
        tokens_rate = float(groups["tokensPerSecond"])
    return tflops, loss, tokens_rate


class _Reader:
    def __init__(self, profile: LogProfile) -> None:
        self.profile = profile
        self.result = MegatronResult(profile.name, profile.warmup_steps)
        self.timestamps: list[tuple[int, datetime]] = []
        self.pending_elision: tuple[str, int] | None = None

    def timestamp_of(self, text: str) -> datetime | None:
        return find_timestamp(text) or self.profile.layout.search(text)

    def feed(self, index: int, line: LogLine) -> None:
        """Read one line: timestamps, profile events, and a training step if it is one."""
        raw = line.text
        stamp = self.timestamp_of(raw)
        if stamp is not None:
            self.timestamps.append((index, stamp))
        profile = self.profile
        for key in ("checkpointSave", "checkpointDone"):
            pattern = profile.pattern(key)
            if pattern is not None and pattern.pattern.search(raw):
                self.result.checkpoint_saves += 1
                break
        else:
            if _CHECKPOINT_SAVE_RE.search(raw):
                self.result.checkpoint_saves += 1
        if _ELISION_RE.match(strip_host_prefix(strip_prefixes(raw)).text) and self.result.steps:
            self.pending_elision = (line.source, line.number)
        restore = profile.pattern("checkpointRestore")
        if restore is not None and restore.pattern.search(raw):
            self.result.checkpoint_restores += 1
        start = profile.pattern("applicationStart")
        if (
            start is not None
            and self.result.application_start_line is None
            and start.pattern.search(raw)
        ):
            self.result.application_start_line = line.number
        if _FINISH_RE.search(raw):
            self.result.finish_marker = True
        self.step(index, line, stamp)

    def step(self, index: int, line: LogLine, stamp: datetime | None) -> None:
        """Read a training-step line, if this is one; a cut one is a ``truncated-step`` problem.

        The profile's ``trainingStep`` regex wins over the ``key: value |`` fields for every
        value it captures; a line that only the built-in ``iteration N/M |`` header finds is
        read field by field.
        """
        raw = line.text
        pattern = self.profile.pattern("trainingStep")
        match = pattern.pattern.search(raw) if pattern is not None else None
        header = _ITERATION_RE.search(raw)
        if match is None and header is None:
            return
        stripped = strip_host_prefix(strip_prefixes(raw))
        fields, cut = _fields(raw[header.end() :]) if header is not None else ({}, False)
        groups = match.groupdict() if match is not None else {}
        elapsed = _float(fields.get("elapsed time per iteration (ms)"))
        if groups.get("elapsedTime") is not None and pattern is not None:
            elapsed = float(groups["elapsedTime"]) * pattern.scale("elapsedTime")
        iteration = int(groups["iteration"]) if groups.get("iteration") else None
        if iteration is None and header is not None:
            iteration = int(header.group("iteration"))
        if elapsed is None or iteration is None or cut:
            self.truncated(line, cut)
            return
        tflops, loss, tokens_rate = _step_values(fields, groups)
        own_stamp: datetime | None = None
        if groups.get("timestamp"):
            own_stamp = self.profile.layout.search(groups["timestamp"]) or find_timestamp(
                groups["timestamp"]
            )
        elif header is not None:
            own_stamp = find_timestamp(raw[: header.start()])
        if self.pending_elision is not None:
            self.close_elision(*self.pending_elision, iteration)
        self.result.steps.append(
            StepLine(
                iteration=iteration,
                train_iters=int(header.group("total")) if header is not None else None,
                elapsed_ms=elapsed,
                tflops=tflops,
                loss=loss,
                skipped=_int(fields.get("number of skipped iterations")) or 0,
                nan=_int(fields.get("number of nan iterations")) or 0,
                global_batch_size=_int(fields.get("global batch size")),
                seqlen=_int(fields.get("actual seqlen")),
                consumed_tokens=_int(fields.get("consumed tokens")),
                tokens_per_second=tokens_rate,
                timestamp=own_stamp,
                host=stripped.host,
                rank=stripped.rank,
                source=line.source,
                line=line.number,
                index=index,
                matched_by="profile" if match is not None else "fallback",
            )
        )

    def truncated(self, line: LogLine, cut: bool) -> None:
        """Record a step line that lost its end or has no step time."""
        missing = (
            "is cut short (does not end with '|')"
            if cut
            else "has no 'elapsed time per iteration (ms)'"
        )
        self.result.problems.append(
            MegatronProblem(
                "truncated-step",
                f"training-step line {missing}: {line.text.strip()[:160]!r}",
                line.source,
                line.number,
            )
        )

    def close_elision(self, source: str, number: int, iteration: int) -> None:
        """Record the pending ``...`` line with the iterations it hides (up to ``iteration``)."""
        before = self.result.steps[-1].iteration if self.result.steps else None
        self.result.elisions.append((source, number, before, iteration))
        self.pending_elision = None

    def account(self) -> None:
        result = self.result
        steps = result.steps
        if self.timestamps:
            start_index, first = min(self.timestamps, key=lambda item: (item[1], item[0]))
            result.first_timestamp = first
            result.last_timestamp = max(stamp for _, stamp in self.timestamps)
            result.last_timestamp_index = max(index for index, _ in self.timestamps)
        else:
            start_index, first = -1, None
        warmup = self.profile.warmup_steps
        highest = 0
        previous: int | None = None
        interval = self.profile.log_interval
        for position, step in enumerate(steps):
            if previous is None or step.iteration <= previous:
                following = (
                    steps[position + 1].iteration - step.iteration
                    if (position + 1 < len(steps))
                    else 0
                )
                span = following if following > 0 else interval
                low = max(0, step.iteration - span)
            else:
                low = previous
                interval = step.iteration - previous
            covered = step.iteration - low
            new_low = max(low, highest)
            new = max(0, step.iteration - new_low)
            if step.iteration <= highest:
                result.repeated_lines += 1
            warm = max(0, min(step.iteration, warmup) - new_low) if new else 0
            productive = max(0, new - warm - step.skipped - step.nan)
            in_window = first is not None and step.index > start_index
            if in_window and step.timestamp is not None and first is not None:
                in_window = step.timestamp > first
            result.accounting.append(
                StepAccounting(step, covered, new, warm, productive, in_window)
            )
            highest = max(highest, step.iteration)
            previous = step.iteration

    def finish(self, sources: list[str]) -> MegatronResult:
        self.account()
        if not self.result.steps:
            self.result.problems.append(
                MegatronProblem(
                    "no-steps",
                    "no training-step lines ('iteration N/M | ... elapsed time per iteration') "
                    "in the log",
                    sources[0] if sources else "<none>",
                    0,
                )
            )
        return self.result


def parse_megatron(lines: Iterable[LogLine], profile: LogProfile) -> MegatronResult:
    """Parse a Megatron-LM / Megatron-DeepSpeed training log.

    Args:
        lines: the log lines, in order (several sources may follow one another).
        profile: the LogProfile (``trainingStep`` and the checkpoint/start patterns,
            ``warmupSteps``, ``logInterval``).

    Returns:
        Steps, their accounting, timestamps and problems.

    """
    reader = _Reader(profile)
    sources: list[str] = []
    for index, line in enumerate(lines):
        if not sources or sources[-1] != line.source:
            sources.append(line.source)
        reader.feed(index, line)
    return reader.finish(sources)
