"""Render the report as text (``-o text``): boxes on a terminal, plain ASCII otherwise.

The layout follows NVCRE's ``nvcrectl workloadrun report``: a banner, the run's facts (Name,
Platform, GPU, Nodes), a section per WorkloadRun with a block per group, and a Summary with
the failed nodes and the result.

Invariants:
    * The plain form uses only ASCII in its own text (log excerpts are quoted as they are).
    * Every number shown comes from the report model; nothing is recomputed here.
    * The same sections are drawn in both forms; only the frame differs.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from krm_fn.report.evaluate import metric_value
from krm_fn.report.format_values import count, human_bytes, metric, number, ratio, seconds
from krm_fn.report.model import GroupReport, Report, RunReport
from krm_fn.report.parse_nccl import NcclResult, NcclTable

__all__ = ["render_text"]

_MIN_WIDTH = 64
_MAX_WIDTH = 110


@dataclass
class _Section:
    title: str
    lines: list[str] = field(default_factory=list)


def _table_lines(table: NcclTable, index: int, total: int) -> list[str]:
    lines: list[str] = []
    label = "#wrong" if table.format == "new" else "error"
    if total > 1:
        lines.append(f"Table {index} ({table.source}:{table.start_line}):")
    lines.append(f"  {'Size':>10}  {'AlgBW GB/s':>10}  {'BusBW GB/s':>10}  {label:>11}")
    for row in table.rows:
        measure = row.out_of_place
        if table.format == "new":
            marker = count(measure.wrong)
        else:
            marker = "N/A" if measure.error is None else f"{measure.error:g}"
        lines.append(
            f"  {human_bytes(row.size):>10}  {measure.algbw:>10.2f}  {measure.busbw:>10.2f}"
            f"  {marker:>11}"
        )
    return lines


def _bandwidth_lines(group: GroupReport, result: NcclResult) -> list[str]:
    facts = [
        result.collective or (group.spec.bandwidth.test_type if group.spec.bandwidth else None)
    ]
    facts.append(f"profile {group.nccl_profile}")
    if result.tests_version:
        facts.append(f"nccl-tests {result.tests_version}")
    if result.nccl_version:
        facts.append(f"NCCL {result.nccl_version}")
    if result.transports:
        facts.append(f"network {', '.join(result.transports)}")
    lines = [f"Bandwidth:  {', '.join(f for f in facts if f)} (out-of-place)"]
    tables = [t for t in result.tables if t.rows]
    for index, table in enumerate(tables, start=1):
        lines.extend(_table_lines(table, index, len(tables)))
    avg = metric_value("avgBusBandwidthGBps", group)[0]
    computed = any(t.avg_source == "computed" for t in tables)
    lines.append(
        f"Avg Bus Bandwidth:   {number(avg, 2, 'GB/s')}"
        + (" (computed from rows)" if computed else "")
    )
    peak = metric_value("busBandwidthGBps", group)[0]
    peak_row = next(
        (r for t in tables for r in t.rows if peak is not None and r.out_of_place.busbw == peak),
        None,
    )
    where = f" at {human_bytes(peak_row.size)}" if peak_row is not None else ""
    lines.append(f"Peak Bus Bandwidth:  {number(peak, 2, 'GB/s')}{where}")
    return lines


def _training_lines(group: GroupReport) -> list[str]:
    result = group.megatron
    if result is None:
        return []
    steps = result.steps
    lines = [f"Training:   profile {group.megatron_profile}, warmupSteps {result.warmup_steps}"]
    if steps:
        total = f" of {result.train_iters}" if result.train_iters else ""
        measured = sum(a.productive for a in result.accounting)
        lines.append(
            f"Iterations:      {steps[0].iteration}-{result.last_iteration}{total} "
            f"({len(steps)} step lines, {measured} measured iterations)"
        )
    lines.append(f"Avg Step Time:   {seconds(result.avg_step_time_s)}")
    if result.checkpoint_saves or result.checkpoint_restores:
        lines.append(
            f"Checkpoints:     {result.checkpoint_saves} saved, "
            f"{result.checkpoint_restores} restored"
        )
    lines.append(f"Avg TFLOPs/GPU:  {number(result.avg_tflops, 1)}")
    lines.append(f"Tokens/s:        {number(result.avg_tokens_per_second, 1)}")
    if result.goodput is not None:
        lines.append(f"Goodput:         {ratio(result.goodput)}")
    elif result.goodput_problem is not None:
        lines.append("Goodput:         - (timestamps inconsistent with the step lines; see notes)")
    elif result.goodput_estimate is not None:
        lines.append(
            f"Goodput:         - (not measured; estimate {ratio(result.goodput_estimate)} "
            "from step times)"
        )
    else:
        lines.append("Goodput:         -")
    return lines


def _group_lines(group: GroupReport) -> list[str]:
    spec = group.spec
    nodes = f"{len(spec.nodes)} nodes: {', '.join(spec.nodes)}" if spec.nodes else "nodes unknown"
    if not spec.nodes and spec.num_nodes:
        nodes = f"{spec.num_nodes} nodes, unpinned"
    lines = [
        f"{spec.group} ({nodes})",
        f"  TrainJob:   {spec.trainjob}",
        f"  Status:     {group.status}",
    ]
    for source in group.log_sources or ["- (none found)"]:
        lines.append(f"  Log:        {source}")
    body: list[str] = []
    if group.nccl is not None and any(t.rows for t in group.nccl.tables):
        body.extend(_bandwidth_lines(group, group.nccl))
    body.extend(_training_lines(group))
    if group.thresholds:
        body.append("Thresholds:")
        key_w = max(len(t.key) for t in group.thresholds)
        expr_w = max(len(t.expression) for t in group.thresholds)
        for t in group.thresholds:
            value = metric(t.value, t.unit) if t.value is not None else f"- ({t.note})"
            verdict = "PASS" if t.passed else "FAIL"
            body.append(f"  {t.key:<{key_w}}  {t.expression:<{expr_w}}  {verdict}  {value}")
    if group.failures:
        body.append("Failures:")
        for f in group.failures:
            where = f" [{f.source}:{f.line}]" if f.source and f.line else ""
            times = f" (x{f.count})" if f.count > 1 else ""
            hosts = f.hosts or ((f.host,) if f.host else ())
            host = f" host{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}:" if hosts else ""
            body.append(f"  {f.reason}:{host} {f.message}{times}{where}")
    if group.notes:
        body.append("Notes:")
        body.extend(f"  - {note}" for note in group.notes)
    if group.suggestion:
        body.append(
            "Next grouping to isolate the bad node: "
            + " ".join(f"[{', '.join(g)}]" for g in group.suggestion)
        )
    lines.extend(f"  {line}" for line in body)
    return lines


def _run_sections(run: RunReport) -> list[_Section]:
    info = _Section(
        "",
        [
            f"Name:      {run.name}",
            f"Namespace: {run.namespace}",
            f"Platform:  {run.platform or '-'}",
            f"GPU:       {run.gpu or '-'}",
            f"Nodes:     {run.node_count}",
        ],
    )
    body = _Section(
        f"workloadrun/{run.name}",
        [
            f"Result:    {'PASSED' if run.passed else 'FAILED'}",
            f"Groups:    {run.passed_groups}/{len(run.groups)} passed",
        ],
    )
    for group in run.groups:
        body.lines.append("")
        body.lines.extend(_group_lines(group))
    return [info, body]


def _summary(report: Report) -> _Section:
    groups = [g for run in report.runs for g in run.groups]
    passed = sum(g.status == "Passed" for g in groups)
    lines = [f"Groups:       {passed}/{len(groups)} passed"]
    failed = [n for run in report.runs for n in run.failed_nodes]
    if not failed:
        lines.append("Failed Nodes: none")
    else:
        lines.append("Failed Nodes:")
        for node in failed:
            name = node.node or f"(nodes of {node.trainjob} unknown)"
            lines.append(f"  {name} ({node.run}/{node.group}): {node.reason}: {node.message}")
    for log in report.unmatched_logs:
        lines.append(f"Unmatched log: {log}")
    lines.append(f"Result:       {'PASSED' if report.passed else 'FAILED'}")
    return _Section("Summary", lines)


def _plain(sections: list[_Section]) -> str:
    out = ["WorkloadRun Report", ""]
    for section in sections:
        if section.title:
            out.append(section.title)
            out.extend(section.lines)
        else:
            out.extend(f"  {line}" for line in section.lines)
        out.append("")
    return "\n".join(out)


def _wrap(line: str, width: int) -> list[str]:
    """Fold a line to ``width``, continuing under its own indentation plus two spaces."""
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(
        line,
        width,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
        drop_whitespace=True,
    ) or [line[:width]]


def _boxed(sections: list[_Section]) -> str:
    longest = max(
        [len(line) + 4 for s in sections for line in s.lines] + [len(s.title) + 6 for s in sections]
    )
    width = max(_MIN_WIDTH, min(longest, _MAX_WIDTH))
    title = "WorkloadRun Report"
    out = [
        "╔" + "═" * width + "╗",
        "║" + title.center(width) + "║",
        "╚" + "═" * width + "╝",
        "",
    ]
    for section in sections:
        if not section.title:
            out.extend(f"  {line}" for line in section.lines)
            out.append("")
            continue
        out.append("┌" + "─" * width + "┐")
        out.append("│  " + section.title[: width - 2].ljust(width - 2) + "│")
        out.append("├" + "─" * width + "┤")
        for line in section.lines:
            out.extend("│  " + part.ljust(width - 3) + " │" for part in _wrap(line, width - 3))
        out.append("└" + "─" * width + "┘")
        out.append("")
    return "\n".join(out)


def render_text(report: Report, *, boxed: bool = False) -> str:
    """The report as text.

    Args:
        report: the evaluated report.
        boxed: draw box frames (for a terminal); plain ASCII otherwise.

    Returns:
        The text, ending with a newline.

    """
    sections: list[_Section] = []
    for run in report.runs:
        sections.extend(_run_sections(run))
    sections.append(_summary(report))
    text = _boxed(sections) if boxed else _plain(sections)
    return text.rstrip("\n") + "\n"
