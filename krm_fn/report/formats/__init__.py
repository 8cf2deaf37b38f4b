"""The log formats the report reads, behind one interface: a registry of :class:`LogFormat`.

A format is one module of this package declaring one :class:`LogFormat`: how to recognise
its logs (``detect``), how to read them and judge what they say into a group
(``measure``), which threshold metrics it provides (``metrics``, keyed by NVCRE's metric
names) and the failure lines only it prints (``failure_rules``). Adding a format is adding
such a module (and its fixtures) and naming it in :data:`FORMATS`; the evaluator, the
thresholds, the failure scan and every renderer take it from here.

Invariants:
    * Formats of one ``kind`` fill the same part of the report (``bandwidth`` or
      ``training``) and provide the same metrics, so a threshold key has one meaning.
    * ``detect`` is cheap and never judges; ``measure`` is the only place a format judges.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from krm_fn.report.load_rendered import GroupSpec
from krm_fn.report.loglines import LogLine
from krm_fn.report.logprofiles import LogProfile
from krm_fn.report.model import GroupReport, Reason

Metric = Callable[[GroupReport], tuple[float | None, str | None]]
"""A metric reader: ``(value, None)``, or ``(None, why it is missing)``."""


@dataclass(frozen=True)
class PhraseRule:
    """A failure one line reports by a phrase anywhere in it (the line follows ``label``)."""

    pattern: re.Pattern[str]
    reason: Reason
    kind: str
    label: str
    hint: tuple[str, ...]  # literals every matching line holds one of; others are not searched


@dataclass(frozen=True)
class LogFormat:
    """One log format."""

    name: str  # nccl-tests, megatron, nemo2
    kind: Literal["bandwidth", "training"]  # the part of the report it fills
    profile: str  # the built-in LogProfile it is read with when no measurement names one
    detect: Callable[[Sequence[LogLine]], bool]  # whether lines are of this format; cheap
    measure: Callable[[GroupReport, Sequence[LogLine], LogProfile, GroupSpec], None]  # read, judge
    metrics: Mapping[str, Metric]  # threshold metric name (NVCRE's) to reader
    failure_rules: tuple[PhraseRule, ...] = ()  # failure lines only this format prints


def _registry() -> tuple[LogFormat, ...]:
    from krm_fn.report.formats import megatron, nccl_tests, nemo2

    return (nccl_tests.FORMAT, megatron.FORMAT, nemo2.FORMAT)


FORMATS: tuple[LogFormat, ...] = _registry()
"""Every format, in detection order."""


def format_of_metric(metric: str) -> LogFormat | None:
    """The first format providing a threshold metric (all of its kind provide the same)."""
    return next((f for f in FORMATS if metric in f.metrics), None)
