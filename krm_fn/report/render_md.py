"""Render the report as a Markdown summary (``-o md``), e.g. for a CI job summary or a PR.

One summary table per WorkloadRun (a row per group), then per group its thresholds,
failures, notes and, for nccl-tests, the bandwidth table.

Invariants:
    * Pipes and newlines inside cells are escaped, so a log excerpt cannot break a table.
    * Missing values are ``-``; the status column always says Passed, Failed or NoData.
"""

from __future__ import annotations

from krm_fn.report.evaluate import metric_value
from krm_fn.report.format_values import count, human_bytes, metric, number, ratio, seconds
from krm_fn.report.model import GroupReport, Report, RunReport

__all__ = ["render_md"]

_STATUS_MARK = {"Passed": "✅ Passed", "Failed": "❌ Failed", "NoData": "⚠️ NoData"}


def _cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _row(cells: list[object]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _summary_table(run: RunReport) -> list[str]:
    lines = [
        _row(
            [
                "Group",
                "Nodes",
                "Status",
                "Avg busbw (GB/s)",
                "Peak busbw (GB/s)",
                "Step time",
                "TFLOP/s/GPU",
                "Tokens/s",
                "Goodput",
            ]
        ),
        _row(["---"] * 9),
    ]
    for group in run.groups:
        spec = group.spec
        nodes = ", ".join(spec.nodes) if spec.nodes else f"{spec.num_nodes or '?'} (unpinned)"
        training = group.megatron
        lines.append(
            _row(
                [
                    spec.group,
                    nodes,
                    _STATUS_MARK[group.status],
                    number(metric_value("avgBusBandwidthGBps", group)[0]),
                    number(metric_value("busBandwidthGBps", group)[0]),
                    seconds(training.avg_step_time_s) if training else "-",
                    number(training.avg_tflops, 1) if training else "-",
                    number(training.avg_tokens_per_second, 1) if training else "-",
                    ratio(training.goodput) if training else "-",
                ]
            )
        )
    return lines


def _group_details(group: GroupReport) -> list[str]:
    spec = group.spec
    lines = [f"### {spec.group} (`{spec.trainjob}`): {group.status}", ""]
    if group.log_sources:
        lines.append("Logs: " + ", ".join(f"`{s}`" for s in group.log_sources))
        lines.append("")
    if group.thresholds:
        lines.append(_row(["Threshold", "Expression", "Value", "Result"]))
        lines.append(_row(["---"] * 4))
        for t in group.thresholds:
            value = metric(t.value, t.unit) if t.value is not None else f"- ({t.note})"
            lines.append(_row([t.key, f"`{t.expression}`", value, "PASS" if t.passed else "FAIL"]))
        lines.append("")
    if group.failures:
        lines.append("Failures:")
        lines.append("")
        for f in group.failures:
            where = f" (`{f.source}:{f.line}`)" if f.source and f.line else ""
            hosts = f.hosts or ((f.host,) if f.host else ())
            host = f" on {', '.join(f'`{h}`' for h in hosts)}" if hosts else ""
            lines.append(f"- **{f.reason}**{host}: {_cell(f.message)}{where}")
        lines.append("")
    if group.suggestion:
        groups = "; ".join(", ".join(g) for g in group.suggestion)
        lines.append(f"Next grouping to isolate the bad node: {groups}")
        lines.append("")
    if group.notes:
        lines.append("Notes:")
        lines.append("")
        lines.extend(f"- {_cell(n)}" for n in group.notes)
        lines.append("")
    if group.nccl is not None:
        for table in (t for t in group.nccl.tables if t.rows):
            lines.append(
                f"<details><summary>nccl-tests table, {table.source}:{table.start_line}</summary>"
            )
            lines.append("")
            label = "#wrong" if table.format == "new" else "error"
            lines.append(_row(["Size", "AlgBW (GB/s)", "BusBW (GB/s)", label]))
            lines.append(_row(["---:"] * 4))
            for r in table.rows:
                error = r.out_of_place.error
                marker = count(r.out_of_place.wrong) if error is None else f"{error:g}"
                lines.append(
                    _row(
                        [
                            human_bytes(r.size),
                            f"{r.out_of_place.algbw:.2f}",
                            f"{r.out_of_place.busbw:.2f}",
                            marker,
                        ]
                    )
                )
            lines.append("")
            lines.append("</details>")
            lines.append("")
    return lines


def render_md(report: Report) -> str:
    """The report as Markdown.

    Args:
        report: the evaluated report.

    Returns:
        Markdown text, ending with a newline.

    """
    lines = [
        "# WorkloadRun report",
        "",
        f"**Result: {'PASSED' if report.passed else 'FAILED'}**",
        "",
    ]
    for run in report.runs:
        lines.append(f"## workloadrun/{run.name}")
        lines.append("")
        lines.append(
            f"Platform: {run.platform or '-'} · GPU: {run.gpu or '-'} · Nodes: {run.node_count} · "
            f"Groups passed: {run.passed_groups}/{len(run.groups)}"
        )
        lines.append("")
        lines.extend(_summary_table(run))
        lines.append("")
        if run.failed_nodes:
            lines.append("Failed nodes:")
            lines.append("")
            for node in run.failed_nodes:
                name = f"`{node.node}`" if node.node else f"nodes of `{node.trainjob}` (unknown)"
                lines.append(f"- {name} ({node.group}): **{node.reason}**: {_cell(node.message)}")
            lines.append("")
        for group in run.groups:
            lines.extend(_group_details(group))
    if report.unmatched_logs:
        lines.append("Unmatched logs: " + ", ".join(f"`{u}`" for u in report.unmatched_logs))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
