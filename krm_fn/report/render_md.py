"""Render the report as a Markdown summary (``-o md``), e.g. for a CI job summary or a PR.

One summary table per WorkloadRun (a row per group, the columns of the text report's
summary), the failed nodes, then per group its thresholds, failures, notes and, for
nccl-tests, the bandwidth table.

Invariants:
    * Pipes and newlines inside cells are escaped, so a log excerpt cannot break a table.
    * Missing values are ``-``; the status column always says Passed, Failed or NoData.
"""

from __future__ import annotations

from krm_fn.report.format_values import SUMMARY_COLUMNS, summary_row, table_row, threshold_value
from krm_fn.report.model import GroupReport, Report, RunReport, Table

_STATUS_MARK = {"Passed": "✅ Passed", "Failed": "❌ Failed", "NoData": "⚠️ NoData"}


def _cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _row(cells: list[object]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _summary_table(run: RunReport) -> list[str]:
    lines = [_row(list(SUMMARY_COLUMNS)), _row(["---"] * len(SUMMARY_COLUMNS))]
    for group in run.groups:
        cells = summary_row(group)
        cells[1] = ", ".join(group.nodes) if group.nodes else f"{cells[1]} (unpinned)"
        cells[2] = _STATUS_MARK[group.status]
        lines.append(_row(list(cells)))
    return lines


def _table(table: Table) -> list[str]:
    lines = [
        f"<details><summary>nccl-tests table, {table.source}:{table.start_line}</summary>",
        "",
        _row(["Size", "AlgBW (GB/s)", "BusBW (GB/s)", table.check_column]),
        _row(["---:"] * 4),
    ]
    lines.extend(_row(list(table_row(r))) for r in table.rows)
    return [*lines, "", "</details>", ""]


def _group_details(group: GroupReport) -> list[str]:
    lines = [f"### {group.name} (`{group.train_job}`): {group.status}", ""]
    if group.logs:
        lines += ["Logs: " + ", ".join(f"`{s}`" for s in group.logs), ""]
    if group.thresholds:
        lines += [_row(["Threshold", "Expression", "Value", "Result"]), _row(["---"] * 4)]
        for t in group.thresholds:
            verdict = "PASS" if t.passed else "FAIL"
            lines.append(_row([t.key, f"`{t.expression}`", threshold_value(t), verdict]))
        lines.append("")
    if group.failures:
        lines += ["Failures:", ""]
        for f in group.failures:
            where = f" (`{f.source}:{f.line}`)" if f.source and f.line else ""
            hosts = f.named_hosts
            host = f" on {', '.join(f'`{h}`' for h in hosts)}" if hosts else ""
            lines.append(f"- **{f.reason}**{host}: {_cell(f.message)}{where}")
        lines.append("")
    if group.suggested_groups:
        groups = "; ".join(", ".join(g) for g in group.suggested_groups)
        lines += [f"Next grouping to isolate the bad node: {groups}", ""]
    if group.notes:
        lines += ["Notes:", "", *(f"- {_cell(n)}" for n in group.notes), ""]
    for table in group.bandwidth.measured if group.bandwidth else []:
        lines.extend(_table(table))
    return lines


def render_md(report: Report) -> str:
    """The report as Markdown text, ending with a newline."""
    lines = ["# WorkloadRun report", "", f"**Result: {report.result}**", ""]
    for run in report.workload_runs:
        lines += [
            f"## workloadrun/{run.name}",
            "",
            f"Platform: {run.platform or '-'} · GPU: {run.gpu or '-'} · "
            f"Nodes: {run.node_count or '?'} · "
            f"Groups passed: {run.passed_groups}/{len(run.groups)}",
            "",
            *_summary_table(run),
            "",
        ]
        if run.failed_nodes:
            lines += ["Failed nodes:", ""]
            for node in run.failed_nodes:
                names = (
                    ", ".join(f"`{n}`" for n in node.nodes)
                    or f"nodes of `{node.train_job}` (unknown)"
                )
                lines.append(f"- {names} ({node.group}): **{node.reason}**: {_cell(node.message)}")
            lines.append("")
        for group in run.groups:
            lines.extend(_group_details(group))
    if report.unmatched_logs:
        lines += ["Unmatched logs: " + ", ".join(f"`{u}`" for u in report.unmatched_logs), ""]
    return "\n".join(lines).rstrip("\n") + "\n"
