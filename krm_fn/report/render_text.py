"""Render the report as text (``-o text``): boxes on a terminal, plain ASCII otherwise.

The layout follows NVCRE's ``nvcrectl workloadrun report``: a banner, then (as the Markdown
report does) the one-line-per-group summary and the result, then a section per WorkloadRun
with the run's facts and a block per group, and last the failed nodes, each reason once.

Invariants:
    * The plain form uses only ASCII in its own text (log excerpts are quoted as they are).
    * Every number shown comes from the report model; nothing is recomputed here.
    * The same sections are drawn in both forms; only the frame differs.
"""

from __future__ import annotations

import textwrap

from krm_fn.report.format_values import (
    SUMMARY_COLUMNS,
    human_bytes,
    number,
    ratio,
    seconds,
    summary_row,
    table_row,
    threshold_value,
)
from krm_fn.report.model import Bandwidth, GroupReport, Report, RunReport, Table, Training

_MIN_WIDTH = 64
_MAX_WIDTH = 110


_Section = tuple[str, list[str]]
"""A section: its title and its lines."""


def _table_lines(table: Table, index: int, total: int) -> list[str]:
    lines = [f"Table {index} ({table.source}:{table.start_line}):"] if total > 1 else []
    header = ["Size", "AlgBW GB/s", "BusBW GB/s", table.check_column]
    for size, alg, bus, check in [header, *(table_row(row) for row in table.rows)]:
        lines.append(f"  {size:>10}  {alg:>10}  {bus:>10}  {check:>11}")
    return lines


def _bandwidth_lines(result: Bandwidth) -> list[str]:
    facts = [result.collective or result.test_type, f"profile {result.log_profile}"]
    facts += [f"nccl-tests {result.nccl_tests_version}"] if result.nccl_tests_version else []
    facts += [f"NCCL {result.nccl_version}"] if result.nccl_version else []
    facts += (
        [f"network {', '.join(result.network_transports)}"] if result.network_transports else []
    )
    lines = [f"Bandwidth:  {', '.join(f for f in facts if f)} (out-of-place)"]
    if result.ranks:
        count, listed = result.rank_count, result.ranks_listed
        elided = f" ({listed} listed, the others elided)" if listed < count else ""
        lines.append(
            f"Ranks:      {count}{elided} on {len(result.hosts)} {'listed ' * bool(elided)}"
            f"host(s) ({', '.join(result.hosts)}), {', '.join(result.gpus)}"
        )
    tables = result.measured
    for index, table in enumerate(tables, start=1):
        lines.extend(_table_lines(table, index, len(tables)))
    computed = any(t.avg_source == "computed" for t in tables)
    lines.append(
        f"Avg Bus Bandwidth:        {number(result.avg_bus_bandwidth_g_bps, 2, 'GB/s')}"
        + (" (computed from rows)" if computed else "")
    )
    lines.append(
        f"Sustained Bus Bandwidth:  {number(result.sustained_bus_bandwidth_g_bps, 2, 'GB/s')}"
        " (busBandwidthGBps: reached at two adjacent sizes)"
    )
    peak = result.peak_bus_bandwidth_g_bps
    where = next((r for t in tables for r in t.rows if r.out_of_place.bus_bw_g_bps == peak), None)
    at = f" at {human_bytes(where.size_bytes)}" if where is not None else ""
    lines.append(f"Peak Bus Bandwidth:       {number(peak, 2, 'GB/s')}{at} (raw maximum)")
    return lines


def _training_lines(result: Training) -> list[str]:
    lines = [
        f"Training:   {result.format}, profile {result.log_profile}, warmupSteps "
        f"{result.warmup_steps}"
    ]
    if result.step_lines:
        total = f" of {result.train_iterations}" if result.train_iterations else ""
        lines.append(
            f"Iterations:      {result.first_iteration}-{result.last_iteration}{total} "
            f"({result.step_lines} step lines, {result.measured_iterations} measured)"
        )
    label = " (warm-up only: no step is measured)" if result.warmup_only else ""
    lines.append(f"Avg Step Time:   {seconds(result.avg_step_time_seconds)}{label}")
    if saved := result.checkpoint_saves + result.checkpoint_restores:
        restored = result.checkpoint_restores
        lines.append(f"Checkpoints:     {saved - restored} saved, {restored} restored")
    lines.append(f"Avg TFLOPs/GPU:  {number(result.avg_tflops_per_gpu, 1)}{label}")
    lines.append(f"Tokens/s:        {number(result.tokens_per_second, 1)}")
    if result.tokens_per_second_per_gpu is not None:
        lines.append(f"Tokens/s/GPU:    {number(result.tokens_per_second_per_gpu, 1)}")
    lines.append(f"Last Loss:       {number(result.last_loss, 4)}")
    goodput = ratio(result.goodput)
    if result.goodput is None and result.goodput_problem is not None:
        goodput = "- (cannot be computed; see notes)"
    elif result.goodput is None and result.goodput_estimate is not None:
        goodput = f"- (not measured; estimate {ratio(result.goodput_estimate)} from step times)"
    return [*lines, f"Goodput:         {goodput}"]


def _verdict_lines(group: GroupReport) -> list[str]:
    body: list[str] = []
    if group.thresholds:
        body.append("Thresholds:")
        key_w = max(len(t.key) for t in group.thresholds)
        expr_w = max(len(t.expression) for t in group.thresholds)
        for t in group.thresholds:
            verdict = "PASS" if t.passed else "FAIL"
            body.append(
                f"  {t.key:<{key_w}}  {t.expression:<{expr_w}}  {verdict}  {threshold_value(t)}"
            )
    if group.failures:
        body.append("Failures:")
        for f in group.failures:
            where = f" [{f.source}:{f.line}]" if f.source and f.line else ""
            times = f" (x{f.count})" if f.count > 1 else ""
            hosts = f.named_hosts
            host = f" host{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}:" if hosts else ""
            body.append(f"  {f.reason}:{host} {f.message}{times}{where}")
    if group.notes:
        body.append("Notes:")
        body.extend(f"  - {note}" for note in group.notes)
    if group.suggested_groups:
        groups = " ".join(f"[{', '.join(g)}]" for g in group.suggested_groups)
        body.append(f"Next grouping to isolate the bad node: {groups}")
    return body


def _group_lines(group: GroupReport) -> list[str]:
    if group.nodes:
        nodes = f"{len(group.nodes)} nodes: {', '.join(group.nodes)}"
    else:
        nodes = f"{group.num_nodes} nodes, unpinned" if group.num_nodes else "nodes unknown"
    lines = [
        f"{group.name} ({nodes})",
        f"  TrainJob:   {group.train_job}",
        f"  Status:     {group.status}",
    ]
    lines.extend(f"  Log:        {source}" for source in group.logs or ["- (none found)"])
    body = _bandwidth_lines(group.bandwidth) if group.bandwidth and group.bandwidth.measured else []
    body += _training_lines(group.training) if group.training else []
    body += _verdict_lines(group)
    return lines + [f"  {line}" for line in body]


def _summary(report: Report) -> _Section:
    """The one-line-per-group table the report opens with, and the result."""
    rows = [list(SUMMARY_COLUMNS)]
    several = len(report.workload_runs) > 1
    for run in report.workload_runs:
        for group in run.groups:
            cells = summary_row(group)
            cells[0] = f"{run.name}/{cells[0]}" if several else cells[0]
            rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(SUMMARY_COLUMNS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    groups = report.summary
    lines.append(f"Result: {report.result} ({groups.passed_groups}/{groups.groups} groups passed)")
    return "Summary", lines


def _run_section(run: RunReport) -> _Section:
    lines = [
        f"Namespace: {run.namespace}",
        f"Platform:  {run.platform or '-'}",
        f"GPU:       {run.gpu or '-'}",
        f"Nodes:     {run.node_count or '?'}",
        f"Result:    {run.result}",
        f"Groups:    {run.passed_groups}/{len(run.groups)} passed",
    ]
    for group in run.groups:
        lines.extend(["", *_group_lines(group)])
    return f"workloadrun/{run.name}", lines


def _failed_nodes(report: Report) -> _Section:
    lines = []
    for run in report.workload_runs:
        for failed in run.failed_nodes:
            names = ", ".join(failed.nodes) or f"(nodes of {failed.train_job} unknown)"
            lines.append(f"{names} ({run.name}/{failed.group}): {failed.reason}: {failed.message}")
    lines.extend(f"Unmatched log: {log}" for log in report.unmatched_logs)
    lines.append(f"Result: {report.result}")
    return "Failed Nodes" if len(lines) > 1 else "Failed Nodes: none", lines


def _plain(sections: list[_Section]) -> str:
    out = ["WorkloadRun Report", ""]
    for title, lines in sections:
        out.extend([title, *lines, ""])
    return "\n".join(out)


def _wrap(line: str, width: int) -> list[str]:
    """Fold a line to ``width``, continuing under its own indentation plus two spaces."""
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(
        line, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False
    ) or [line[:width]]


def _boxed(sections: list[_Section]) -> str:
    longest = max(
        [len(line) + 4 for _, lines in sections for line in lines]
        + [len(t) + 6 for t, _ in sections]
    )
    width = max(_MIN_WIDTH, min(longest, _MAX_WIDTH))
    out = [
        "╔" + "═" * width + "╗",
        "║" + "WorkloadRun Report".center(width) + "║",
        "╚" + "═" * width + "╝",
        "",
    ]
    for title, lines in sections:
        head = "│  " + title[: width - 2].ljust(width - 2) + "│"
        out.extend(["┌" + "─" * width + "┐", head, "├" + "─" * width + "┤"])
        for line in lines:
            out.extend("│  " + part.ljust(width - 3) + " │" for part in _wrap(line, width - 3))
        out.extend(["└" + "─" * width + "┘", ""])
    return "\n".join(out)


def render_text(report: Report, *, boxed: bool = False) -> str:
    """The report as text, ending with a newline; ``boxed`` draws frames (for a terminal)."""
    runs = [_run_section(run) for run in report.workload_runs]
    sections = [_summary(report), *runs, _failed_nodes(report)]
    text = _boxed(sections) if boxed else _plain(sections)
    return text.rstrip("\n") + "\n"
