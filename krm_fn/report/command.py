"""The ``report`` click command: ``workloadrun-fn report RENDERED --logs PATH ...``.

Register it on the main CLI group with ``main.add_command(report)``.

Exit codes:
    * 0: every group of every selected WorkloadRun passed.
    * 1: any group failed or has no data (missing log, unparsable or truncated log, failure
      line, threshold violation, missing metric for a threshold), or a log cannot be read.
    * 2: usage error, including unusable rendered input (bad YAML, no TrainJob, unknown
      threshold key or ``logProfileRef``, malformed threshold or LogProfile).

Invariants:
    * Importing this module costs click and the standard library only; the parsers and
      renderers are imported when the command runs.
    * The report is printed (and ``--plot``/``--results-file`` written) before exiting,
      whatever the verdict.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

__all__ = ["report"]


@click.command("report")
@click.argument("rendered", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option(
    "--logs",
    "logs",
    multiple=True,
    required=True,
    type=click.Path(exists=True, allow_dash=True),
    help="A log file, a directory of logs, or '-' for stdin. Repeatable.",
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json", "md"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write an SVG plot of bus bandwidth over message size to this file.",
)
@click.option(
    "--results-file",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write the JSON report to this file.",
)
@click.option(
    "--workload-run",
    "workload_runs",
    multiple=True,
    help="Report only this WorkloadRun (repeatable). Default: all in RENDERED.",
)
@click.option(
    "--boxes/--no-boxes",
    default=None,
    help="Draw box frames in text output. Default: only when stdout is a terminal.",
)
def report(
    rendered: str,
    logs: tuple[str, ...],
    output: str,
    plot: str | None,
    results_file: str | None,
    workload_runs: tuple[str, ...],
    boxes: bool | None,
) -> None:
    """Report bandwidth and goodput of rendered TrainJobs from their logs.

    RENDERED is the render's output (YAML stream, ResourceList or List; '-' for stdin). Each
    TrainJob's log is found by name: NAME.log or NAME.txt, a NAME/ directory, pod logs
    NAME-launcher-* / NAME-node-*, or a '# trainjob: NAME' line. A group passes only with a
    complete log, no failure, measured data and every threshold met; the exit code is 0 only
    when every group passed.
    """
    from krm_fn.report.collect_logs import collect_logs
    from krm_fn.report.evaluate import evaluate
    from krm_fn.report.load_rendered import RenderedInputError, load_rendered
    from krm_fn.report.plot_svg import plot_report
    from krm_fn.report.render_json import render_json
    from krm_fn.report.render_md import render_md
    from krm_fn.report.render_text import render_text

    dashes = [rendered, *logs].count("-")
    if dashes > 1:
        raise click.UsageError("stdin ('-') can be read only once: by RENDERED or one --logs")
    rendered_text = sys.stdin.read() if rendered == "-" else Path(rendered).read_text("utf-8")
    try:
        loaded = load_rendered(rendered_text)
    except RenderedInputError as err:
        raise click.BadParameter(str(err), param_hint="RENDERED") from None
    runs = {g.run for g in loaded.groups}
    unknown = [r for r in workload_runs if r not in runs]
    if unknown:
        raise click.BadParameter(
            f"no WorkloadRun {', '.join(unknown)} in RENDERED (has: {', '.join(sorted(runs))})",
            param_hint="--workload-run",
        )
    stdin_text = sys.stdin.read() if "-" in logs else None
    try:
        index = collect_logs(logs, [g.trainjob for g in loaded.groups], stdin_text)
    except OSError as err:
        raise click.FileError(str(getattr(err, "filename", "") or err), hint=str(err)) from None
    result = evaluate(loaded, index, workload_runs)
    if output == "json":
        text = render_json(result)
    elif output == "md":
        text = render_md(result)
    else:
        text = render_text(result, boxed=sys.stdout.isatty() if boxes is None else boxes)
    click.echo(text, nl=False)
    for log in result.unmatched_logs:
        click.echo(f"warning: log {log} matched no TrainJob", err=True)
    if plot is not None:
        Path(plot).write_text(plot_report(result), encoding="utf-8")
    if results_file is not None:
        Path(results_file).write_text(render_json(result), encoding="utf-8")
    click.get_current_context().exit(0 if result.passed else 1)
