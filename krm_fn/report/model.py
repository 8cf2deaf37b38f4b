"""The report model: what the formats fill, the verdicts judge and every renderer draws.

``-o json`` is :meth:`Report.model_dump_json` and its JSON Schema :func:`report_json_schema`
(``report --json-schema``): both derived from these pydantic classes, so they cannot disagree.

Invariants:
    * JSON keys are the camelCase of the field names; every key is always present, and a
      missing value is ``null``, never ``0``.
    * A group is ``Passed`` only without failures and with measured data: ``status`` is
      computed from the failures, never set.
    * Every failure carries one of NVCRE's three reasons.
    * Derived numbers (peaks, sustained bandwidth, averages) are computed properties of the
      rows they come from: one definition each, used by thresholds and renderers alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field
from pydantic.alias_generators import to_camel

from krm_fn.report.prefixes import same_host

REPORT_API_VERSION: Final = "report.workloadrun-fn.nvcre.nvidia.com/v1alpha1"
Reason = Literal["WorkloadFailed", "ThresholdViolation", "HardwareFailureDetected"]
Status = Literal["Passed", "Failed", "NoData"]
REASON_SEVERITY = {"HardwareFailureDetected": 3, "WorkloadFailed": 2, "ThresholdViolation": 1}
"""Higher is more severe; a node's reason is its most severe failure (:func:`most_severe`)."""
ERRATIC_FLOOR_GBPS = 1.0
"""Bus bandwidths below this are latency-bound noise; they never make a sweep erratic."""


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        serialize_by_alias=True,
        extra="forbid",
        json_schema_serialization_defaults_required=True,
    )


class Measure(_Model):
    """One half of an nccl-tests row: out-of-place or in-place."""

    time_us: float
    alg_bw_g_bps: float
    bus_bw_g_bps: float
    wrong: int | None = Field(description="#wrong (new format); null for N/A or the old format")
    error: float | None = Field(description="the old format's maximum error; null otherwise")


class Row(_Model):
    """One row of an nccl-tests results table."""

    size_bytes: int
    count: int
    type: str
    redop: str
    root: int | None
    out_of_place: Measure
    in_place: Measure
    line: int
    matched_by: Literal["profile", "fallback"]
    source: str = Field(exclude=True)


def _sustained(rows: list[Row], attr: str) -> float | None:
    """The highest bandwidth that two adjacent message sizes both reach (one row: its own)."""
    values = [getattr(r.out_of_place, attr) for r in rows if r.size_bytes > 0]
    if len(values) == 1:
        return float(values[0])
    return max((min(a, b) for a, b in itertools.pairwise(values)), default=None)


def erratic_rows(rows: list[Row]) -> list[Row]:
    """Rows of one sweep that break the shape of a bandwidth curve.

    A row is erratic when its out-of-place busbw is below half of the best busbw at a
    smaller size (a collapse), or above twice both neighbours (an isolated spike); values
    under :data:`ERRATIC_FLOOR_GBPS` on both sides are ignored.
    """
    sized = [r for r in rows if r.size_bytes > 0]
    values = [r.out_of_place.bus_bw_g_bps for r in sized]
    found: list[Row] = []
    best = 0.0
    for index, (row, value) in enumerate(zip(sized, values, strict=True)):
        around = values[max(0, index - 1) : index] + values[index + 1 : index + 2]
        spike = len(around) == 2 and value >= ERRATIC_FLOOR_GBPS and value > 2 * max(around)
        if (best >= ERRATIC_FLOOR_GBPS and value < best / 2) or spike:
            found.append(row)
        best = max(best, value)
    return found


class Table(_Model):
    """One nccl-tests results table: column header, rows, footer."""

    source: str
    start_line: int
    has_header: bool
    format: Literal["new", "old"] = "new"
    complete: bool = False
    out_of_bounds: int | None = None
    out_of_bounds_failed: bool = False
    avg_bus_bandwidth_g_bps: float | None = None
    avg_source: Literal["footer", "computed"] | None = None
    avg_check_failed: bool = False
    elisions: int = 0
    rows: list[Row] = Field(default_factory=list)
    has_root: bool | None = Field(None, exclude=True)
    problems: list[Failure] = Field(default_factory=list, exclude=True)
    regex_disagreements: list[int] = Field(default_factory=list, exclude=True)

    @property
    def sweeps(self) -> list[list[Row]]:
        """The rows cut where the data type or reduction changes (``-d all``/``-o all``)."""
        return [list(g) for _, g in itertools.groupby(self.rows, lambda r: (r.type, r.redop))]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def validation(self) -> bool | None:
        """Whether results were checked: ``False`` when every row says ``N/A``."""
        if not self.rows:
            return None
        attr = "error" if self.format == "old" else "wrong"
        return any(getattr(r.out_of_place, attr) is not None for r in self.rows)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def peak_bus_bandwidth_g_bps(self) -> float | None:
        """Highest out-of-place busbw of any row: the raw maximum (NVCRE's value)."""
        return max((r.out_of_place.bus_bw_g_bps for r in self.rows), default=None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sustained_bus_bandwidth_g_bps(self) -> float | None:
        """Highest busbw reached by two adjacent sizes of one sweep (thresholds read it)."""
        found = [_sustained(s, "bus_bw_g_bps") for s in self.sweeps]
        return max((v for v in found if v is not None), default=None)

    @property
    def sustained_alg_bandwidth(self) -> float | None:
        """Highest algbw reached by two adjacent sizes of one sweep."""
        found = [_sustained(s, "alg_bw_g_bps") for s in self.sweeps]
        return max((v for v in found if v is not None), default=None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def erratic_sizes(self) -> list[int]:
        """Sizes of the erratic rows of every sweep (see :func:`erratic_rows`)."""
        return [r.size_bytes for sweep in self.sweeps for r in erratic_rows(sweep)]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def profile_regex_rows(self) -> int:
        """Rows the LogProfile's ``bandwidthResult`` regex read correctly."""
        return sum(r.matched_by == "profile" for r in self.rows)

    @property
    def check_column(self) -> str:
        """The column that checks results: ``#wrong`` (new format) or ``error`` (old)."""
        return "#wrong" if self.format == "new" else "error"

    @property
    def wrong_rows(self) -> list[Row]:
        """Rows with a non-zero ``#wrong`` count, out-of-place or in-place."""
        return [r for r in self.rows if (r.out_of_place.wrong or 0) + (r.in_place.wrong or 0)]


class Rank(_Model):
    """A ``#  Rank N ... on HOST device D [bus] NAME`` line."""

    rank: int
    host: str
    device: int
    gpu: str


def most_severe(failures: Iterable[Failure]) -> Failure | None:
    """The most severe of the failures (the first among equals), or ``None``."""
    return max(failures, key=lambda f: REASON_SEVERITY[f.reason], default=None)


def _lowest(values: list[float | None]) -> float | None:
    return min((v for v in values if v is not None), default=None)


class Bandwidth(_Model):
    """Everything read from an nccl-tests log; with several tables, metrics take the lowest."""

    log_profile: str | None = None
    test_type: str | None = None
    collective: str | None = None
    nccl_tests_version: str | None = None
    nccl_version: str | None = None
    network_transports: list[str] = Field(default_factory=list)
    parameters: dict[str, str] = Field(default_factory=dict)
    tables: list[Table] = Field(default_factory=list)
    ranks: list[Rank] = Field(default_factory=list, exclude=True)
    rank_elisions: int = Field(default=0, exclude=True)
    problems: list[Failure] = Field(default_factory=list, exclude=True)

    @property
    def measured(self) -> list[Table]:
        """The tables with rows."""
        return [t for t in self.tables if t.rows]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def hosts(self) -> list[str]:
        """Distinct hosts of the ``Rank`` lines, in order."""
        return list(dict.fromkeys(r.host for r in self.ranks))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gpus(self) -> list[str]:
        """Distinct device names of the ``Rank`` lines, in order."""
        return list(dict.fromkeys(r.gpu for r in self.ranks))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rank_count(self) -> int:
        """How many ranks the run had as its ``Rank`` lines number them: the highest plus one."""
        return max((r.rank for r in self.ranks), default=-1) + 1

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ranks_listed(self) -> int:
        """How many distinct ranks have a ``Rank`` line (fewer than ``rankCount``: elided)."""
        return len({r.rank for r in self.ranks})

    @computed_field  # type: ignore[prop-decorator]
    @property
    def peak_bus_bandwidth_g_bps(self) -> float | None:
        """The raw maximum busbw (lowest over tables)."""
        return _lowest([t.peak_bus_bandwidth_g_bps for t in self.measured])

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sustained_bus_bandwidth_g_bps(self) -> float | None:
        """The sustained busbw (lowest over tables): what ``busBandwidthGBps`` reads."""
        return _lowest([t.sustained_bus_bandwidth_g_bps for t in self.measured])

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sustained_alg_bandwidth_g_bps(self) -> float | None:
        """The sustained algbw (lowest over tables): what ``algBandwidthGBps`` reads."""
        return _lowest([t.sustained_alg_bandwidth for t in self.measured])

    @computed_field  # type: ignore[prop-decorator]
    @property
    def avg_bus_bandwidth_g_bps(self) -> float | None:
        """nccl-tests' ``Avg bus bandwidth`` (lowest over tables)."""
        return _lowest([t.avg_bus_bandwidth_g_bps for t in self.measured])


class Training(_Model):
    """What a training log says, summed up (the step lines stay with the parser)."""

    log_profile: str
    format: str
    warmup_steps: int
    step_lines: int
    first_iteration: int | None
    last_iteration: int | None
    train_iterations: int | None
    finished: bool
    measured_iterations: int
    warmup_iterations: int
    skipped_iterations: int
    nan_iterations: int
    repeated_lines: int
    warmup_only: bool = Field(description="every step was warm-up: the averages are warm-up's")
    avg_step_time_seconds: float | None
    avg_tflops_per_gpu: float | None = Field(alias="avgTflopsPerGPU")
    tokens_per_second: float | None
    tokens_per_second_per_gpu: float | None = Field(alias="tokensPerSecondPerGPU")
    last_loss: float | None
    goodput: float | None
    goodput_estimate: float | None
    goodput_problem: str | None
    goodput_capped_from: float | None
    wall_time_seconds: float | None
    productive_time_seconds: float | None
    first_timestamp: str | None
    last_timestamp: str | None
    checkpoint_saves: int
    checkpoint_restores: int
    hosts: list[str]


class ThresholdResult(_Model):
    """One threshold checked; ``passed`` is ``False`` for a missing value."""

    key: str
    expression: str
    value: float | None
    unit: str
    passed: bool
    note: str | None = None


class Failure(_Model):
    """Why a group did not pass; the same message from many hosts is one failure."""

    reason: Reason
    kind: str
    message: str
    host: str | None = None
    peer: str | None = None
    source: str | None = None
    line: int | None = None
    count: int = 1
    hosts: list[str] = Field(default_factory=list)

    @classmethod
    def of(
        cls,
        kind: str,
        message: str,
        source: str | None = None,
        line: int | None = None,
        reason: Reason = "WorkloadFailed",
    ) -> Failure:
        """A failure found at ``source:line`` when known; most are ``WorkloadFailed``."""
        return cls(reason=reason, kind=kind, message=message, source=source, line=line)

    @property
    def named_hosts(self) -> list[str]:
        """Every host that printed it (merged findings), else the one it names, if any."""
        return self.hosts or ([self.host] if self.host else [])

    def names(self, node: str) -> bool:
        """Whether a host it names is ``node`` (see :func:`same_host`)."""
        return any(same_host(host, node) for host in self.named_hosts)


class GroupReport(_Model):
    """The verdict on one group (one TrainJob, or one log when there are no TrainJobs)."""

    name: str
    train_job: str
    namespace: str
    overflow: bool
    nodes: list[str] | None
    num_nodes: int | None
    framework: str | None
    logs: list[str] = Field(default_factory=list)
    bandwidth: Bandwidth | None = None
    training: Training | None = None
    thresholds: list[ThresholdResult] = Field(default_factory=list)
    failures: list[Failure] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    suggested_groups: list[list[str]] = Field(default_factory=list)
    has_data: bool = Field(False, exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Status:
        """``Failed`` with any failure, ``NoData`` without measured data, else ``Passed``."""
        if self.failures:
            return "Failed"
        return "Passed" if self.has_data else "NoData"


class FailedNode(_Model):
    """Nodes of a group that did not pass, with one reason (``nodes`` empty when unknown)."""

    nodes: list[str]
    group: str
    train_job: str
    reason: Reason
    message: str


class RunReport(_Model):
    """The verdict on one WorkloadRun."""

    name: str
    namespace: str
    platform: str | None
    gpu: str | None
    nodes: list[str]
    node_count: int | None  # None: a group's size is unknown
    groups: list[GroupReport] = Field(default_factory=list)
    failed_nodes: list[FailedNode] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def result(self) -> Literal["PASSED", "FAILED"]:
        """``PASSED`` when every group passed."""
        return "PASSED" if all(g.status == "Passed" for g in self.groups) else "FAILED"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed_groups(self) -> int:
        """How many groups passed."""
        return sum(g.status == "Passed" for g in self.groups)


class Summary(_Model):
    """Counts over every run."""

    groups: int
    passed_groups: int
    failed_nodes: int


class Report(_Model):
    """The whole report: ``-o json`` and ``--results-file`` write it as it is."""

    api_version: Literal["report.workloadrun-fn.nvcre.nvidia.com/v1alpha1"] = REPORT_API_VERSION
    kind: Literal["WorkloadRunReport"] = "WorkloadRunReport"
    workload_runs: list[RunReport] = Field(default_factory=list)
    unmatched_logs: list[str] = Field(default_factory=list)

    @property
    def groups(self) -> list[GroupReport]:
        """Every group of every run."""
        return [g for run in self.workload_runs for g in run.groups]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def result(self) -> Literal["PASSED", "FAILED"]:
        """``PASSED`` when there is a group and every group passed."""
        groups = self.groups
        return "PASSED" if groups and all(g.status == "Passed" for g in groups) else "FAILED"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def summary(self) -> Summary:
        """Groups, passed groups and failed nodes (a group of unknown nodes counts one)."""
        failed = sum(max(1, len(n.nodes)) for run in self.workload_runs for n in run.failed_nodes)
        passed = sum(run.passed_groups for run in self.workload_runs)
        return Summary(groups=len(self.groups), passed_groups=passed, failed_nodes=failed)


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of ``-o json``, generated from :class:`Report`."""
    schema = Report.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
