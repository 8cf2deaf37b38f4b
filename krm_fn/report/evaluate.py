"""Decide, per group, whether the run passed: the one place where verdicts are made.

For each TrainJob: find its logs, scan them for failures, parse the configured measurement
(nccl-tests bandwidth and/or Megatron training), check the thresholds, then list the failed
nodes with a reason and suggest the next grouping.

A group **passes** only when all of these hold:

* at least one log was found for it;
* no failure line was found (any ``NCCL WARN``, ``Test NCCL failure``, ``ncclRemoteError``,
  ``Connection refused``, Python traceback, …);
* every nccl-tests table is complete (has a footer), has rows, every row parses, the
  out-of-bounds count is 0 and no row has ``#wrong`` > 0;
* the nccl-tests log **covers the group**: the ``# Rank … on HOST device N`` lines under
  ``# Using devices`` list exactly as many distinct hosts as the group has nodes, and on each
  host at least as many distinct devices as the group has GPUs per node
  (``numProcPerNode``); a log that lists no ranks, elides some, ran on fewer hosts or devices,
  or on more hosts than the group has nodes (another job's log) fails, naming what is missing;
* the ``testType`` matches the collective the log names, when the log names one;
* a training log has step lines, none cut short, no nan iterations, and says training
  finished (``after training is done``/``exiting program``, or the last iteration reached
  the total);
* every threshold holds for a measured value (a missing value fails);
* it produced measured data (a table row, or a measured training iteration); otherwise its
  status is ``NoData``, which is not a pass either.

Invariants:
    * Fail closed: any doubt is a failure or ``NoData``; the exit code is 0 only when every
      group is ``Passed``.
    * A measurement that is not configured is still parsed when the log carries one (a
      results table, or ``iteration N/M |`` lines), with the built-in profile, so thresholds
      and failures are never skipped for want of an annotation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from krm_fn.report.collect_logs import LogIndex, measurement_sources
from krm_fn.report.detect_failures import Reason, detect_failures
from krm_fn.report.format_values import metric
from krm_fn.report.load_rendered import GroupSpec, Rendered
from krm_fn.report.loglines import LogLine, LogSource
from krm_fn.report.logprofiles import BUILTIN_PROFILES, LogProfile
from krm_fn.report.model import (
    REASON_SEVERITY,
    FailedNode,
    Failure,
    GroupReport,
    Report,
    RunReport,
    ThresholdResult,
)
from krm_fn.report.parse_megatron import MegatronResult, parse_megatron
from krm_fn.report.parse_nccl import NcclProblem, NcclResult, NcclTable, parse_nccl
from krm_fn.report.regroup import suggest_regrouping
from krm_fn.thresholds import KNOWN_THRESHOLD_KEYS

__all__ = ["evaluate", "metric_value"]

# Failures about the log itself: splitting the group's nodes would not tell anything.
_NOT_ABOUT_NODES = {
    "no-log",
    "no-footer",
    "no-rows",
    "unparsable-row",
    "garbled-line",
    "missing-rows",
    "bad-footer",
    "training-incomplete",
    "truncated-step",
    "collective-mismatch",
    "log-coverage",
}

_TABLE_PROBLEM_REASON: dict[str, Reason] = {
    "unparsable-row": "WorkloadFailed",
    "garbled-line": "WorkloadFailed",
    "missing-rows": "WorkloadFailed",
    "no-footer": "WorkloadFailed",
    "no-rows": "WorkloadFailed",
    "bad-footer": "WorkloadFailed",
}


def _lines(sources: Sequence[LogSource]) -> list[LogLine]:
    return [line for source in sources for line in source.lines]


def _looks_like_nccl(lines: Sequence[LogLine], profile: LogProfile) -> bool:
    pattern = profile.pattern("bandwidthResult")
    return any(
        "size" in line.text and "count" in line.text and "type" in line.text and "#" in line.text
        for line in lines
    ) or (
        pattern is not None
        and any(pattern.pattern.search(line.text.split(">:", 1)[-1]) for line in lines)
    )


def _looks_like_training(lines: Sequence[LogLine]) -> bool:
    return any(
        "iteration" in line.text and "elapsed time per iteration" in line.text for line in lines
    )


def _normalise_collective(name: str) -> str:
    return name.replace("_", "").lower()


@dataclass(frozen=True)
class _Metric:
    value: float | None
    note: str | None


def metric_value(key: str, report: GroupReport) -> tuple[float | None, str | None]:
    """The measured value a threshold key reads, and why it is missing when it is.

    Args:
        key: a key of :data:`~krm_fn.thresholds.KNOWN_THRESHOLD_KEYS`.
        report: the group, with its parsed results.

    Returns:
        ``(value, None)``, or ``(None, reason)`` when the log did not yield the metric.

    """
    metric = _metric(key, report)
    return metric.value, metric.note


def _metric(key: str, report: GroupReport) -> _Metric:
    info = KNOWN_THRESHOLD_KEYS[key]
    source = info.source
    key = info.metric
    if source == "c2c":
        return _Metric(None, "C2C bandwidth comes from NVCRE's C2CMeasurement, not from a log")
    if source == "nccl":
        nccl = report.nccl
        tables = [t for t in nccl.tables if t.rows] if nccl is not None else []
        if not tables:
            return _Metric(None, "no nccl-tests results table in the log")
        if key == "busBandwidthGBps":
            values = [t.peak_busbw for t in tables]
        elif key == "algBandwidthGBps":
            values = [t.peak_algbw for t in tables]
        else:
            values = [t.avg_bus_bandwidth for t in tables]
        present = [v for v in values if v is not None]
        return _Metric(min(present), None) if present else _Metric(None, "not in the table")
    training = report.megatron
    if training is None or not training.steps:
        return _Metric(None, "no training-step lines in the log")
    if not training.measured:
        return _Metric(
            None,
            f"no measured iterations (all {len(training.steps)} step lines fall within "
            f"warmupSteps={training.warmup_steps} or were skipped)",
        )
    if key == "goodputRatio":
        if training.goodput is None and training.goodput_problem is not None:
            return _Metric(None, training.goodput_problem)
        if training.goodput is None:
            estimate = training.goodput_estimate
            extra = (
                f"; the step-time estimate {estimate:.3f} is not a measurement" if estimate else ""
            )
            return _Metric(
                None, f"no wall time: the log has fewer than two distinct timestamps{extra}"
            )
        return _Metric(training.goodput, None)
    value = {
        "avgTFLOPsPerGPU": training.avg_tflops,
        "avgStepTimeSec": training.avg_step_time_s,
        "tokensPerSecond": training.avg_tokens_per_second,
    }[key]
    if value is None:
        return _Metric(None, "the step lines do not print it")
    return _Metric(value, None)


def _coverage_gaps(spec: GroupSpec, result: NcclResult) -> list[str]:
    """What the log's ranks leave uncovered of the group: nodes, GPUs per node, rank lines."""
    nodes = len(spec.nodes) if spec.nodes else spec.num_nodes
    per_node = spec.num_proc_per_node if isinstance(spec.num_proc_per_node, int) else None
    gaps: list[str] = []
    if nodes is None:
        gaps.append("the group's node count (no group-nodes annotation, no spec.trainer.numNodes)")
    if per_node is None:
        gaps.append(
            "the group's GPUs per node (spec.trainer.numProcPerNode is "
            f"{spec.num_proc_per_node!r}, not a number)"
        )
    if not result.ranks:
        shape = f" ({nodes} nodes x {per_node} GPUs)" if nodes and per_node else ""
        return [
            *gaps,
            "'# Rank N ... on HOST device D' lines under '# Using devices': the log does not "
            f"show which hosts and GPUs ran the test, so it cannot cover the group{shape}",
        ]
    devices: dict[str, set[int]] = {}
    for rank in result.ranks:
        devices.setdefault(rank.host, set()).add(rank.device)
    listed = {rank.rank for rank in result.ranks}
    highest = max(listed)
    if len(listed) <= highest:
        gaps.append(
            f"rank lines: the log lists {len(listed)} of ranks 0-{highest} (the others are "
            "elided or missing), so the hosts and GPUs of the rest are unknown"
        )
    if nodes is not None and len(devices) < nodes:
        names = ", ".join(devices)
        missing = ""
        if spec.nodes:
            unseen = [n for n in spec.nodes if not any(_node_for_host(h, [n]) for h in devices)]
            if len(unseen) == nodes - len(devices):
                missing = f"; no ranks on {', '.join(unseen)}"
        gaps.append(
            f"{nodes - len(devices)} of the group's {nodes} nodes: the ranks ran on "
            f"{len(devices)} host(s) ({names}){missing}"
        )
    if nodes is not None and len(devices) > nodes:
        gaps.append(
            f"a log of this group: its ranks ran on {len(devices)} hosts "
            f"({', '.join(devices)}) but the group has {nodes} nodes"
        )
    if per_node is not None:
        for host, used in devices.items():
            if len(used) < per_node:
                gaps.append(
                    f"{per_node - len(used)} of {per_node} GPUs on host {host}: its ranks used "
                    f"device(s) {', '.join(str(d) for d in sorted(used))}"
                )
    return gaps


def _nccl_failures(group: GroupReport, result: NcclResult) -> None:
    """Record what a parsed nccl-tests log says against the group, and whether it measured.

    Args:
        group: the group; its failures and notes grow, ``has_data`` is set when a table has
            rows.
        result: the parsed log.

    """
    has_rows = any(t.rows for t in result.tables)
    if has_rows:
        _check_coverage(group, result)
    group.failures.extend(_problem_failure(problem) for problem in result.problems)
    hosts = ", ".join(result.hosts) if result.hosts else None
    for table in result.tables:
        group.failures.extend(_table_failures(table, hosts))
        group.notes.extend(_table_notes(table, group.nccl_profile))
    _check_collective(group, result)
    if "Socket" in result.transports and (group.spec.num_nodes or 0) > 1:
        group.notes.append("NCCL used the Socket transport (no RDMA network) on a multi-node group")
    if has_rows:
        group.has_data = True


def _check_coverage(group: GroupReport, result: NcclResult) -> None:
    """Fail the group when the log's ranks do not cover its nodes and GPUs."""
    gaps = _coverage_gaps(group.spec, result)
    if gaps:
        group.failures.append(
            Failure(
                "WorkloadFailed",
                "log-coverage",
                f"the log does not cover group {group.spec.group}; missing: " + "; ".join(gaps),
            )
        )


def _problem_failure(problem: NcclProblem) -> Failure:
    """A problem of the log or of one of its tables (unparsable row, missing footer, ...)."""
    return Failure(
        _TABLE_PROBLEM_REASON.get(problem.kind, "WorkloadFailed"),
        problem.kind,
        problem.message,
        source=problem.source,
        line=problem.line,
    )


def _table_failures(table: NcclTable, hosts: str | None) -> list[Failure]:
    """What a table itself reports as failed: its problems, wrong results, the -G check.

    Args:
        table: one results table.
        hosts: the hosts of the log's ranks, joined, or ``None`` when it lists none.

    Returns:
        The failures, in the order the report lists them.

    """
    on_hosts = f" on ranks of {hosts}" if hosts else ""
    failures = [_problem_failure(problem) for problem in table.problems]
    if table.out_of_bounds_failed or (table.out_of_bounds or 0) > 0:
        failures.append(
            Failure(
                "HardwareFailureDetected",
                "nccl-out-of-bounds",
                f"nccl-tests found {table.out_of_bounds} out-of-bounds values (wrong results)"
                + on_hosts,
                source=table.source,
            )
        )
    wrong = table.wrong_rows
    if wrong:
        first = wrong[0]
        count = max(first.out_of_place.wrong or 0, first.in_place.wrong or 0)
        failures.append(
            Failure(
                "HardwareFailureDetected",
                "nccl-wrong-results",
                f"{len(wrong)} of {len(table.rows)} rows report #wrong > 0 (first: size "
                f"{first.size} B, {count} wrong)" + on_hosts,
                source=first.source,
                line=first.line,
            )
        )
    if table.avg_check_failed:
        failures.append(
            Failure(
                "ThresholdViolation",
                "nccl-avg-check",
                "nccl-tests reports 'Avg bus bandwidth' FAILED (below its -G check value)",
                source=table.source,
            )
        )
    return failures


def _table_notes(table: NcclTable, profile: str | None) -> list[str]:
    """What the reader should know about how a table was read (not failures)."""
    where = f"table at {table.source}:{table.start_line}"
    notes: list[str] = []
    if table.validation is False:
        notes.append(
            f"{where}: validation was off (#wrong is N/A, nccl-tests -c 0), so results were not "
            "checked for correctness"
        )
    if table.elisions:
        notes.append(f"{where}: {table.elisions} '...' line(s): rows were elided from this log")
    if table.regex_disagreements:
        notes.append(
            f"{where}: the {profile} bandwidthResult regex misreads "
            f"{len(table.regex_disagreements)} row(s) (old format); their columns were used"
        )
    if table.avg_source == "computed" and table.complete:
        notes.append(
            f"{where}: no '# Avg bus bandwidth' line; the average was computed from the rows"
        )
    return notes


def _check_collective(group: GroupReport, result: NcclResult) -> None:
    """Fail a log of another collective than the testType; note when the log names none."""
    test_type = group.spec.bandwidth.test_type if group.spec.bandwidth else None
    if test_type and result.collective:
        if _normalise_collective(test_type) != _normalise_collective(result.collective):
            group.failures.append(
                Failure(
                    "WorkloadFailed",
                    "collective-mismatch",
                    f"bandwidthMeasurement.testType is {test_type}, but the log is from "
                    f"{result.collective}_perf",
                )
            )
    elif test_type:
        group.notes.append(
            f"the log does not name its collective; testType {test_type} not checked"
        )


def _megatron_failures(group: GroupReport, result: MegatronResult) -> None:
    """Record what a parsed training log says against the group, and whether it measured.

    Args:
        group: the group; its failures and notes grow, ``has_data`` is set when an iteration
            was measured.
        result: the parsed log.

    """
    for problem in result.problems:
        if problem.kind == "no-steps":
            group.notes.append(problem.message)
        else:
            group.failures.append(
                Failure(
                    "WorkloadFailed",
                    problem.kind,
                    problem.message,
                    source=problem.source,
                    line=problem.line,
                )
            )
    if not result.steps:
        return
    group.failures.extend(_training_failures(result))
    if result.measured:
        group.has_data = True
    else:
        group.notes.append(
            f"no measured iterations: all {len(result.steps)} step lines fall within "
            f"warmupSteps={result.warmup_steps} or were skipped"
        )
    group.notes.extend(_training_notes(result))


def _training_failures(result: MegatronResult) -> list[Failure]:
    """A run that did not finish, and nan iterations (the loss diverged)."""
    last = result.steps[-1]
    failures: list[Failure] = []
    if not result.finished:
        total = result.train_iters
        failures.append(
            Failure(
                "WorkloadFailed",
                "training-incomplete",
                f"training log ends at iteration {result.last_iteration}"
                + (f" of {total}" if total else "")
                + " and does not say training finished (run stopped early, or the log is "
                "truncated)",
                source=last.source,
                line=last.line,
            )
        )
    if result.nan_iterations:
        failures.append(
            Failure(
                "WorkloadFailed",
                "nan-iterations",
                f"{result.nan_iterations} nan iteration(s) reported (loss diverged)",
                source=last.source,
            )
        )
    return failures


def _training_notes(result: MegatronResult) -> list[str]:
    """How goodput was (or was not) computed, elided iterations, lines read field by field."""
    notes: list[str] = []
    if result.goodput_problem is not None:
        notes.append(f"goodput not computed: {result.goodput_problem}")
    for source, line, before, after in result.elisions:
        span = f" {before + 1}-{after}" if before is not None and after is not None else ""
        notes.append(
            f"'...' at {source}:{line}: iterations{span} are elided from the log; they are "
            "counted with the step time of the next step line"
        )
    notes.extend(_goodput_value_notes(result))
    profile_rows = sum(s.matched_by == "profile" for s in result.steps)
    if profile_rows < len(result.steps):
        notes.append(
            f"{len(result.steps) - profile_rows} of {len(result.steps)} step lines do not match "
            f"the {result.profile} trainingStep regex and were read field by field"
        )
    return notes


def _goodput_value_notes(result: MegatronResult) -> list[str]:
    """A goodput capped at 1.0, or only estimated from step times."""
    notes: list[str] = []
    uncapped = result.goodput_uncapped
    if uncapped is not None and uncapped > 1.0 and result.goodput is not None:
        notes.append(
            f"goodput computed as {uncapped:.4f} and capped at 1.0 (timestamps have one-second "
            "resolution)"
        )
    if (
        result.goodput is None
        and result.goodput_problem is None
        and result.goodput_estimate is not None
    ):
        notes.append(
            f"goodput not measured (fewer than two distinct timestamps); estimate from step "
            f"times: {result.goodput_estimate:.3f} (ignores startup, checkpoints and restarts; "
            "not used for thresholds)"
        )
    return notes


def _node_for_host(host: str | None, nodes: Sequence[str]) -> str | None:
    if not host:
        return None
    for node in nodes:
        if host == node or node.split(".")[0] == host or host.split(".")[0] == node:
            return node
    return None


def _names_node(failure: Failure, node: str) -> bool:
    hosts = failure.hosts or ((failure.host,) if failure.host else ())
    return any(_node_for_host(host, [node]) == node for host in hosts)


def _evaluate_group(spec: GroupSpec, sources: list[LogSource]) -> GroupReport:
    group = GroupReport(spec, [s.name for s in sources])
    if not sources:
        group.failures.append(
            Failure(
                "WorkloadFailed",
                "no-log",
                f"no log found for TrainJob {spec.trainjob}: expected {spec.trainjob}.log or .txt "
                f"(also .gz), a {spec.trainjob}/ directory, pod logs {spec.trainjob}-launcher[-*] "
                f"or -node[-*], or a '# trainjob: {spec.trainjob}' line",
            )
        )
    all_lines = _lines(sources)
    for finding in detect_failures(all_lines):
        group.failures.append(
            Failure(
                finding.reason,
                finding.kind,
                finding.message,
                finding.host,
                finding.peer,
                finding.source,
                finding.line,
                finding.count,
                finding.hosts,
            )
        )
    if sources:
        _measure(group, sources, all_lines)
    _check_thresholds(group)
    return group


def _measure(group: GroupReport, sources: list[LogSource], all_lines: list[LogLine]) -> None:
    spec = group.spec
    wants_nccl = any(KNOWN_THRESHOLD_KEYS[k].source == "nccl" for k in spec.thresholds)
    wants_training = any(KNOWN_THRESHOLD_KEYS[k].source == "megatron" for k in spec.thresholds)
    nccl_profile = spec.bandwidth.profile if spec.bandwidth else BUILTIN_PROFILES["nccl-bandwidth"]
    if spec.bandwidth or wants_nccl or _looks_like_nccl(all_lines, nccl_profile):
        chosen = measurement_sources(sources, nccl_profile.replicated_job_name)
        group.nccl_profile = nccl_profile.name
        group.nccl = parse_nccl(_lines(chosen), nccl_profile)
        if spec.bandwidth is None:
            group.notes.append(f"bandwidth read with the built-in {nccl_profile.name} profile")
        elif spec.bandwidth.defaulted:
            group.notes.append(
                f"bandwidthMeasurement has no logProfileRef; used {nccl_profile.name}"
            )
        _nccl_failures(group, group.nccl)
        if spec.bandwidth and not any(t.rows for t in group.nccl.tables):
            group.notes.append(
                "bandwidthMeasurement is configured but the log has no results table"
            )
    training_profile = (
        spec.goodput.profile if spec.goodput else BUILTIN_PROFILES["megatron-training"]
    )
    if spec.goodput or wants_training or _looks_like_training(all_lines):
        chosen = measurement_sources(sources, training_profile.replicated_job_name)
        group.megatron_profile = training_profile.name
        group.megatron = parse_megatron(_lines(chosen), training_profile)
        if spec.goodput is None:
            group.notes.append(f"training read with the built-in {training_profile.name} profile")
        elif spec.goodput.defaulted:
            group.notes.append(
                f"goodputMeasurement has no logProfileRef; used {training_profile.name}"
            )
        _megatron_failures(group, group.megatron)


def _check_thresholds(group: GroupReport) -> None:
    for key, threshold in group.spec.thresholds.items():
        info = KNOWN_THRESHOLD_KEYS[key]
        value, note = metric_value(key, group)
        if not group.log_sources:
            note = "no log"
        passed = threshold.evaluate(value)
        group.thresholds.append(
            ThresholdResult(key, threshold.expression, value, info.unit, passed, note)
        )
        if passed:
            continue
        if value is None:
            message = f"{key}: no value measured ({note}); '{threshold.expression}' fails closed"
        else:
            message = f"{key} = {metric(value, info.unit)} does not meet '{threshold.expression}'"
        group.failures.append(Failure("ThresholdViolation", "threshold", message))


def _failed_nodes(group: GroupReport) -> list[FailedNode]:
    spec = group.spec
    if group.status == "Passed":
        return []
    primary = group.primary_failure
    if primary is not None:
        default_reason: Reason = primary.reason
        default_message = primary.message
    else:
        default_reason = "WorkloadFailed"
        default_message = "no measurement data in the log"
    if not spec.nodes:
        return [
            FailedNode(None, spec.group, spec.trainjob, default_reason, default_message, spec.run)
        ]
    failed: list[FailedNode] = []
    for node in spec.nodes:
        own = [f for f in group.failures if _names_node(f, node)]
        if own:
            worst = max(own, key=lambda f: REASON_SEVERITY[f.reason])
            failed.append(
                FailedNode(node, spec.group, spec.trainjob, worst.reason, worst.message, spec.run)
            )
        else:
            failed.append(
                FailedNode(
                    node, spec.group, spec.trainjob, default_reason, default_message, spec.run
                )
            )
    return failed


def _run_reports(groups: list[GroupReport]) -> list[RunReport]:
    runs: dict[str, RunReport] = {}
    for group in groups:
        spec = group.spec
        run = runs.get(spec.run)
        if run is None:
            run = RunReport(spec.run, spec.namespace, None, None, [], 0)
            runs[spec.run] = run
        run.groups.append(group)
    for run in runs.values():
        specs = [g.spec for g in run.groups]
        platforms = list(dict.fromkeys(s.platform for s in specs if s.platform))
        gpus = list(dict.fromkeys(s.gpu for s in specs if s.gpu))
        run.platform = ", ".join(platforms) or None
        run.gpu = ", ".join(gpus) or None
        run.nodes = list(dict.fromkeys(n for s in specs for n in (s.nodes or ())))
        run.node_count = sum(len(s.nodes) if s.nodes else (s.num_nodes or 0) for s in specs)
        good = [n for g in run.groups if g.status == "Passed" for n in (g.spec.nodes or ())]
        for group in run.groups:
            failed = _failed_nodes(group)
            run.failed_nodes.extend(failed)
            about_nodes = any(f.kind not in _NOT_ABOUT_NODES for f in group.failures)
            if failed and group.spec.nodes and about_nodes:
                suspects = [
                    n.node
                    for n in failed
                    if n.node is not None and any(_names_node(f, n.node) for f in group.failures)
                ]
                group.suggestion = suggest_regrouping(group.spec.nodes, good, suspects)
    return list(runs.values())


def evaluate(rendered: Rendered, logs: LogIndex, runs: Sequence[str] = ()) -> Report:
    """Judge every group of the rendered input against its logs.

    Args:
        rendered: the groups and profiles (:func:`~krm_fn.report.load_rendered.load_rendered`).
        logs: the logs matched to TrainJobs (:func:`~krm_fn.report.collect_logs.collect_logs`).
        runs: only these WorkloadRuns, when given.

    Returns:
        The report.

    """
    chosen = [g for g in rendered.groups if not runs or g.run in runs]
    groups = [_evaluate_group(spec, logs.by_trainjob.get(spec.trainjob, [])) for spec in chosen]
    return Report(_run_reports(groups), list(logs.unmatched))
