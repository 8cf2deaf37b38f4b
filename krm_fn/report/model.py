"""The report: what every renderer (text, Markdown, JSON, SVG) draws from.

Invariants:
    * A :class:`GroupReport` is ``Passed`` only when it has no failure and holds measured
      data; ``status`` is computed from the failures, never set independently.
    * Every failure carries one of the three NVCRE reasons: ``WorkloadFailed``,
      ``ThresholdViolation``, ``HardwareFailureDetected``.
    * The report holds parsed results, not text: renderers format, they do not compute
      verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from krm_fn.report.detect_failures import Reason
from krm_fn.report.load_rendered import GroupSpec
from krm_fn.report.parse_megatron import MegatronResult
from krm_fn.report.parse_nccl import NcclResult

__all__ = [
    "REASON_SEVERITY",
    "FailedNode",
    "Failure",
    "GroupReport",
    "Report",
    "RunReport",
    "Status",
    "ThresholdResult",
]

Status = Literal["Passed", "Failed", "NoData"]

REASON_SEVERITY: dict[str, int] = {
    "HardwareFailureDetected": 3,
    "WorkloadFailed": 2,
    "ThresholdViolation": 1,
}
"""Higher is more severe; a node's reason is its most severe failure."""


@dataclass(frozen=True)
class Failure:
    """Why a group did not pass.

    Attributes:
        reason: the NVCRE node failure reason.
        kind: a stable short label (``no-log``, ``nccl-warn-ib-completion``, ``threshold``…).
        message: one line for people.
        host: the host the log names, or ``None``.
        peer: the remote address the log names, or ``None``.
        source: the log file, or ``None`` when not about a line.
        line: the 1-based line, or ``None``.
        count: how many lines said the same.
        hosts: every host that said it (``host`` is the first), empty when none is named.

    """

    reason: Reason
    kind: str
    message: str
    host: str | None = None
    peer: str | None = None
    source: str | None = None
    line: int | None = None
    count: int = 1
    hosts: tuple[str, ...] = ()


@dataclass(frozen=True)
class ThresholdResult:
    """One threshold checked.

    Attributes:
        key: the threshold key.
        expression: the expression as written.
        value: the measured metric, ``None`` when missing.
        unit: the metric's unit.
        passed: whether the value met the expression (``False`` when missing).
        note: why the value is missing, when it is.

    """

    key: str
    expression: str
    value: float | None
    unit: str
    passed: bool
    note: str | None = None


@dataclass
class GroupReport:
    """The verdict on one group (one TrainJob).

    Attributes:
        spec: the group as rendered.
        log_sources: the logs read.
        nccl: the nccl-tests results, when parsed.
        nccl_profile: the LogProfile used for them.
        megatron: the training results, when parsed.
        megatron_profile: the LogProfile used for them.
        thresholds: the thresholds checked.
        failures: why it did not pass.
        notes: facts worth knowing that are not failures.
        suggestion: the next grouping of its nodes, when it failed.

    """

    spec: GroupSpec
    log_sources: list[str] = field(default_factory=list)
    nccl: NcclResult | None = None
    nccl_profile: str | None = None
    megatron: MegatronResult | None = None
    megatron_profile: str | None = None
    thresholds: list[ThresholdResult] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    suggestion: list[list[str]] = field(default_factory=list)
    has_data: bool = False

    @property
    def status(self) -> Status:
        """``Failed`` with any failure, ``NoData`` without measured data, else ``Passed``."""
        if self.failures:
            return "Failed"
        return "Passed" if self.has_data else "NoData"

    @property
    def primary_failure(self) -> Failure | None:
        """The most severe failure (first among equals)."""
        if not self.failures:
            return None
        return max(self.failures, key=lambda f: REASON_SEVERITY[f.reason])


@dataclass(frozen=True)
class FailedNode:
    """A node of a group that did not pass.

    Attributes:
        node: the node name; ``None`` when the group's nodes are unknown (Unpinned).
        group: the group name.
        trainjob: the TrainJob name.
        reason: the NVCRE reason.
        message: why.
        run: the WorkloadRun of the group.

    """

    node: str | None
    group: str
    trainjob: str
    reason: Reason
    message: str
    run: str


@dataclass
class RunReport:
    """The verdict on one WorkloadRun.

    Attributes:
        name: the WorkloadRun name.
        namespace: its namespace.
        platform: detected platform(s).
        gpu: detected GPU architecture(s).
        nodes: every node of its groups, in order.
        node_count: how many nodes (from ``numNodes`` when names are unknown).
        groups: the groups.
        failed_nodes: nodes of groups that did not pass.

    """

    name: str
    namespace: str
    platform: str | None
    gpu: str | None
    nodes: list[str]
    node_count: int
    groups: list[GroupReport] = field(default_factory=list)
    failed_nodes: list[FailedNode] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every group passed."""
        return all(g.status == "Passed" for g in self.groups)

    @property
    def passed_groups(self) -> int:
        """How many groups passed."""
        return sum(g.status == "Passed" for g in self.groups)


@dataclass
class Report:
    """The whole report.

    Attributes:
        runs: one per WorkloadRun.
        unmatched_logs: logs that matched no TrainJob.

    """

    runs: list[RunReport] = field(default_factory=list)
    unmatched_logs: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every group of every run passed (and there is at least one group)."""
        groups = [g for run in self.runs for g in run.groups]
        return bool(groups) and all(g.status == "Passed" for g in groups)
