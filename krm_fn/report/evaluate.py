"""Decide, per group, whether the run passed: the one place where verdicts are assembled.

For each group: scan its logs for failure lines, let every format it asks for or its log
shows (:data:`~krm_fn.report.formats.FORMATS`) read and judge them, check the thresholds
against the formats' metrics, list the failed nodes and suggest the next grouping.

Invariants:
    * Fail closed: ``Passed`` needs a log, no failure, a complete and covering measurement,
      every threshold met by a measured value; nothing failed but nothing measured is
      ``NoData``, not a pass. A missing metric fails its threshold, whatever the expression.
    * A format the log shows is read even when no annotation asks for it (with its built-in
      profile), so thresholds and failures are never skipped for want of an annotation.
    * Nodes failed for the same reason and message are listed once, together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from krm_fn.report.collect_logs import LogIndex, measurement_sources
from krm_fn.report.detect_failures import detect_failures
from krm_fn.report.format_values import metric
from krm_fn.report.formats import FORMATS, format_of_metric
from krm_fn.report.load_rendered import GroupSpec, Rendered
from krm_fn.report.loglines import LogLine, LogSource
from krm_fn.report.model import (
    Bandwidth,
    FailedNode,
    Failure,
    GroupReport,
    Reason,
    Report,
    RunReport,
    ThresholdResult,
    most_severe,
)
from krm_fn.report.regroup import suggest_regrouping
from krm_fn.thresholds import KNOWN_THRESHOLD_KEYS, Threshold

_NOT_ABOUT_NODES = frozenset({
    "no-log", "log-coverage", "collective-mismatch", "training-incomplete", "truncated-step",
    "no-footer", "no-rows", "unparsable-row", "garbled-line", "missing-rows", "bad-footer",
})  # fmt: skip
"""Failures about the log itself: splitting the group's nodes would not tell anything."""
_NO_DATA: tuple[Reason, str] = ("WorkloadFailed", "no measurement data in the log")


def metric_value(key: str, group: GroupReport) -> tuple[float | None, str | None]:
    """The measured value a threshold key reads, or ``None`` and why it is missing."""
    info = KNOWN_THRESHOLD_KEYS[key]
    log_format = format_of_metric(info.metric)
    if log_format is None:
        return None, "C2C bandwidth comes from NVCRE's C2CMeasurement, not from a log"
    return log_format.metrics[info.metric](group)


def _lines(sources: Sequence[LogSource]) -> list[LogLine]:
    return [line for source in sources for line in source.lines]


def _measure(
    group: GroupReport, spec: GroupSpec, sources: list[LogSource], rendered: Rendered
) -> None:
    """Read the logs with every format they show, or the kind's first when the group asks."""
    lines = _lines(sources)
    for kind, configured in (("bandwidth", spec.bandwidth), ("training", spec.goodput)):
        formats = [f for f in FORMATS if f.kind == kind]
        wanted = configured is not None or any(
            (f := format_of_metric(KNOWN_THRESHOLD_KEYS[k].metric)) is not None and f.kind == kind
            for k in spec.thresholds
        )
        log_format = next((f for f in formats if f.detect(lines)), formats[0] if wanted else None)
        if log_format is None:
            continue
        default = rendered.read_with.get(kind) or rendered.profiles[log_format.profile]
        profile = configured.profile if configured else default
        chosen = measurement_sources(sources, profile.spec.worker_strategy.replicated_job_name)
        log_format.measure(group, _lines(chosen) if chosen != sources else lines, profile, spec)
        if configured is None and not spec.from_log:
            group.notes.append(
                f"{log_format.name} log read with the built-in {profile.name} profile"
            )
        elif configured is not None and configured.defaulted:
            what = "bandwidthMeasurement" if kind == "bandwidth" else "goodputMeasurement"
            group.notes.append(f"{what} has no logProfileRef; used {profile.name}")


def _check_thresholds(group: GroupReport, thresholds: Mapping[str, Threshold]) -> None:
    for key, threshold in thresholds.items():
        info = KNOWN_THRESHOLD_KEYS[key]
        value, note = metric_value(key, group)
        note = note if group.logs else "no log"
        passed = threshold.evaluate(value)
        group.thresholds.append(
            ThresholdResult(
                key=key, expression=threshold.expression, value=value, unit=info.unit,
                passed=passed, note=note,
            )
        )  # fmt: skip
        if passed:
            continue
        if value is None:
            message = f"{key}: no value measured ({note}); '{threshold.expression}' fails closed"
        else:
            message = f"{key} = {metric(value, info.unit)} does not meet '{threshold.expression}'"
        group.failures.append(Failure.of("threshold", message, reason="ThresholdViolation"))


def _evaluate_group(spec: GroupSpec, sources: list[LogSource], rendered: Rendered) -> GroupReport:
    group = GroupReport(
        name=spec.group,
        train_job=spec.trainjob,
        namespace=spec.namespace,
        overflow=spec.overflow,
        nodes=list(spec.nodes) if spec.nodes is not None else None,
        num_nodes=spec.num_nodes,
        framework=spec.framework,
        logs=[s.name for s in sources],
    )
    if spec.bandwidth is not None:  # measured for bandwidth, whatever the log will hold
        group.bandwidth = Bandwidth(log_profile=spec.bandwidth.profile.name)
    if not sources:
        name = spec.trainjob
        message = (
            f"no log found for TrainJob {name}: expected {name}.log or .txt (also .gz), a "
            f"{name}/ directory, pod logs {name}-launcher[-*] or -node[-*], or a "
            f"'# trainjob: {name}' line"
        )
        group.failures.append(Failure.of("no-log", message))
    group.failures.extend(detect_failures(_lines(sources)))
    if sources:
        _measure(group, spec, sources, rendered)
    hosts = (group.bandwidth and group.bandwidth.hosts) or (group.training and group.training.hosts)
    bw = group.bandwidth
    elided = bw is not None and bw.ranks_listed < bw.rank_count  # its Rank lines cut: size unknown
    if spec.from_log and hosts and not elided:  # a log read alone: its nodes are the hosts named
        group.nodes, group.num_nodes = list(hosts), len(hosts)
    _check_thresholds(group, spec.thresholds)
    return group


def _failed_nodes(group: GroupReport) -> list[FailedNode]:
    """The group's nodes with their reason: a node the log names gets its own failure."""
    if group.status == "Passed":
        return []
    primary = most_severe(group.failures)
    merged: dict[tuple[Reason, str], list[str]] = {}
    for node in group.nodes or [""]:
        worst = most_severe(f for f in group.failures if node and f.names(node)) or primary
        key = (worst.reason, worst.message) if worst else _NO_DATA
        merged.setdefault(key, []).extend([node] if node else [])
    return [
        FailedNode(nodes=nodes, group=group.name, train_job=group.train_job, reason=r, message=m)
        for (r, m), nodes in merged.items()
    ]


def _run_report(name: str, groups: list[GroupReport], specs: list[GroupSpec]) -> RunReport:
    counts = [len(g.nodes or ()) or g.num_nodes for g in groups]  # None: a size unknown
    run = RunReport(
        name=name,
        namespace=groups[0].namespace,
        platform=", ".join(dict.fromkeys(s.platform for s in specs if s.platform)) or None,
        gpu=", ".join(dict.fromkeys(s.gpu for s in specs if s.gpu)) or None,
        nodes=list(dict.fromkeys(n for g in groups for n in g.nodes or ())),
        node_count=None if None in counts else sum(counts),
        groups=groups,
    )
    good = [n for g in groups if g.status == "Passed" for n in g.nodes or ()]
    for group in groups:
        failed = _failed_nodes(group)
        run.failed_nodes.extend(failed)
        if group.nodes and any(f.kind not in _NOT_ABOUT_NODES for f in group.failures):
            named = {n for n in group.nodes if any(f.names(n) for f in group.failures)}
            suspects = [n for f in failed for n in f.nodes if n in named]
            group.suggested_groups = suggest_regrouping(group.nodes, good, suspects)
    return run


def evaluate(
    rendered: Rendered,
    logs: LogIndex,
    runs: Sequence[str] = (),
    thresholds: Mapping[str, Threshold] | None = None,
) -> Report:
    """Judge every group of the rendered input (or of the logs read alone) against its logs.

    ``thresholds`` (``--threshold``) apply to every group, over its TrainJob's own; ``runs``
    selects WorkloadRuns.
    """
    specs = [g for g in rendered.groups if not runs or g.run in runs]
    by_run: dict[str, list[GroupReport]] = {}
    for spec in specs:
        if thresholds:
            spec = replace(spec, thresholds={**spec.thresholds, **thresholds})
        group = _evaluate_group(spec, logs.by_trainjob.get(spec.trainjob, []), rendered)
        by_run.setdefault(spec.run, []).append(group)
    reports = [
        _run_report(name, groups, [s for s in specs if s.run == name])
        for name, groups in by_run.items()
    ]
    return Report(workload_runs=reports, unmatched_logs=list(logs.unmatched))
