"""The ``report`` click command: ``workloadrun-fn report [RENDERED] --logs PATH ...``.

Exit codes:
    * 0: every group passed.
    * 1: any group failed or has no data, or a log cannot be read.
    * 2: usage error, including unusable rendered input, a bad ``--threshold`` or LogProfile.

Invariants:
    * Importing this module costs click and the standard library only; the parsers and
      renderers are imported when the command runs.
    * The report is printed (and ``--plot``/``--results-file`` written) before exiting,
      whatever the verdict.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from krm_fn.report.collect_logs import LogIndex
    from krm_fn.report.load_rendered import Rendered
    from krm_fn.report.logprofiles import LogProfile
    from krm_fn.report.model import Report
    from krm_fn.thresholds import Threshold

_FILE = click.Path(dir_okay=False, writable=True)


def _print_schema(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        from krm_fn.report.model import report_json_schema

        click.echo(json.dumps(report_json_schema(), indent=2))
        ctx.exit(0)


def _thresholds(values: tuple[str, ...]) -> dict[str, Threshold]:
    from krm_fn.thresholds import ThresholdKeyError, ThresholdSyntaxError, parse_thresholds

    pairs: dict[str, object] = {}
    for value in values:
        key, sep, expression = value.partition("=")
        if not sep or any(c in key for c in "<>!"):
            raise click.BadParameter(
                f"{value!r} is not KEY=EXPRESSION, e.g. busBandwidthGBps='value >= 300'",
                param_hint="--threshold",
            )
        pairs[key.strip()] = expression.strip()
    try:
        return dict(parse_thresholds(pairs))
    except (ThresholdKeyError, ThresholdSyntaxError) as err:
        raise click.BadParameter(str(err), param_hint="--threshold") from None


@click.command("report")
@click.argument(
    "rendered", required=False, type=click.Path(exists=True, dir_okay=False, allow_dash=True)
)
@click.option(
    "--logs",
    multiple=True,
    required=True,
    type=click.Path(exists=True, allow_dash=True),
    help="A log file, a directory of logs, or '-' for stdin. Repeatable.",
)
@click.option(
    "--threshold",
    "thresholds",
    multiple=True,
    metavar="KEY=EXPR",
    help="A threshold in NVCRE's keys and language, e.g. busBandwidthGBps='value >= 300', "
    "for every group (over the TrainJobs' own). Repeatable.",
)
@click.option(
    "--log-profile",
    type=click.Path(exists=True, dir_okay=False),
    help="A file of LogProfile objects: added to RENDERED's; without RENDERED, the logs are "
    "read with them.",
)
@click.option(
    "-o", "--output", type=click.Choice(["text", "json", "md"]), default="text", show_default=True
)
@click.option("--plot", type=_FILE, help="Write an SVG plot of busbw over message size.")
@click.option("--results-file", type=_FILE, help="Also write the JSON report to this file.")
@click.option("--workload-run", "workload_runs", multiple=True, help="Only this WorkloadRun.")
@click.option(
    "--boxes/--no-boxes", default=None, help="Box frames in text output (default: on a terminal)."
)
@click.option(
    "--json-schema",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_schema,
    help="Print the JSON Schema of -o json and exit.",
)
def report(
    rendered: str | None,
    logs: tuple[str, ...],
    thresholds: tuple[str, ...],
    log_profile: str | None,
    output: str,
    plot: str | None,
    results_file: str | None,
    workload_runs: tuple[str, ...],
    boxes: bool | None,
) -> None:
    """Judge bandwidth and training logs: per group, Passed, Failed or NoData.

    RENDERED is the render's output (YAML stream, ResourceList or List; '-' for stdin); each
    TrainJob's log is found by name (NAME.log or .txt, a NAME/ directory, pod logs
    NAME-launcher-* / NAME-node-*, a '# trainjob: NAME' line, or the only log of the only
    TrainJob). Without RENDERED every log is judged on its own: the collective, ranks, hosts
    and GPUs it states, and the --threshold options. A group passes only with a complete log,
    no failure, measured data and every threshold met; the exit code is 0 only then.
    """
    from krm_fn.report.evaluate import evaluate

    if [rendered, *logs].count("-") > 1:
        raise click.UsageError("stdin ('-') can be read only once: by RENDERED or one --logs")
    extra = _thresholds(thresholds)
    loaded, index = _inputs(rendered, logs, log_profile)
    runs = {g.run for g in loaded.groups}
    if unknown := [r for r in workload_runs if r not in runs]:
        raise click.BadParameter(
            f"no WorkloadRun {', '.join(unknown)} in RENDERED (has: {', '.join(sorted(runs))})",
            param_hint="--workload-run",
        )
    result = evaluate(loaded, index, workload_runs, extra)
    _write(result, output, plot, results_file, boxes)
    click.get_current_context().exit(0 if result.result == "PASSED" else 1)


def _inputs(
    rendered: str | None, logs: tuple[str, ...], log_profile: str | None
) -> tuple[Rendered, LogIndex]:
    """The groups and their logs: from RENDERED, or one group per log without it."""
    from krm_fn.report.collect_logs import collect_alone, collect_logs
    from krm_fn.report.load_rendered import (
        RenderedInputError,
        groups_from_logs,
        load_profiles,
        load_rendered,
    )
    from krm_fn.report.logprofiles import BUILTIN_PROFILES

    profiles: dict[str, LogProfile] = dict(BUILTIN_PROFILES)
    chosen: list[LogProfile] = []
    if log_profile is not None:
        try:
            profiles, chosen = load_profiles(Path(log_profile).read_text("utf-8"))
        except RenderedInputError as err:
            raise click.BadParameter(str(err), param_hint="--log-profile") from None
    stdin_text = sys.stdin.read() if rendered == "-" or "-" in logs else None
    try:
        if rendered is None:
            index = collect_alone(logs, stdin_text)
            return groups_from_logs(index.by_trainjob, profiles, chosen), index
        text = stdin_text if rendered == "-" else Path(rendered).read_text("utf-8")
        loaded = load_rendered(text or "", {p.name: p for p in chosen})
        names = [g.trainjob for g in loaded.groups]
        return loaded, collect_logs(logs, names, None if rendered == "-" else stdin_text)
    except RenderedInputError as err:
        raise click.BadParameter(str(err), param_hint="RENDERED") from None
    except OSError as err:
        raise click.FileError(str(getattr(err, "filename", "") or err), hint=str(err)) from None


def _write(
    result: Report, output: str, plot: str | None, results_file: str | None, boxes: bool | None
) -> None:
    """Print the report, warn about unmatched logs, write the plot and the results file."""
    from krm_fn.report.plot_svg import plot_report
    from krm_fn.report.render_md import render_md
    from krm_fn.report.render_text import render_text

    as_json = result.model_dump_json(indent=2) + "\n"
    if output == "text":
        shown = render_text(result, boxed=sys.stdout.isatty() if boxes is None else boxes)
    else:
        shown = as_json if output == "json" else render_md(result)
    click.echo(shown, nl=False)
    for log in result.unmatched_logs:
        click.echo(f"warning: log {log} matched no TrainJob", err=True)
    if plot is not None:
        Path(plot).write_text(plot_report(result), encoding="utf-8")
    if results_file is not None:
        Path(results_file).write_text(as_json, encoding="utf-8")
