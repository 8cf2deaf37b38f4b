"""``workloadrun-fn render``: the offline preview of what the function would generate.

Invariants:
    * Prints only the generated objects (no inputs, no orchestrator annotations), as YAML or
      JSON; the summary (groups, nodes per group, untested nodes) goes to stderr.
    * The same validation as the function: any error prints nothing on stdout and exits 1;
      a file that does not exist is a usage error (exit 2).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from krm_fn import keys
from krm_fn.api.config import CONFIG_KIND, FunctionOptions, options_from_config, with_options
from krm_fn.entry.inputs import (
    Loaded,
    add_input,
    expand_paths,
    is_function_config,
    load_files,
)
from krm_fn.fleet.inventory import collect_nodes
from krm_fn.gitops.env_options import GITOPS_ENV, plain_secret_refusal, with_env
from krm_fn.io import fastdump, yamlio
from krm_fn.io.resourcelist import InputError
from krm_fn.io.results import Results
from krm_fn.render import render_all
from krm_fn.stages.summary import summary_lines


def preview(
    files: list[str],
    config_file: str | None,
    platform: str | None,
    gpu_arch: str | None,
    fmt: str,
    flags: Mapping[str, str] | None = None,
    verbose: bool = False,
) -> tuple[int, str, list[str]]:
    """Render ``files``; returns (exit code, stdout text, stderr lines).

    ``platform``, ``gpu_arch`` and ``flags`` (option name -> value: the run flags) replace
    the function config's options; an empty value is an option not given.
    """
    stdin = sys.stdin.buffer.read() if "-" in files else None
    given = {"platform": platform or "", "gpuArch": gpu_arch or "", **(flags or {})}
    given = {k: v for k, v in given.items() if v}
    return _preview(files, stdin, config_file, given, (fmt, verbose), Loaded())


_Outcome = tuple[int, str, list[str]]
"""A preview's exit code, standard output and standard error lines."""

_NOTHING_RENDERED = "workloadrun-fn render: nothing rendered"


def _preview(
    files: list[str],
    stdin: bytes | None,
    config_file: str | None,
    given: dict[str, str],
    output: tuple[str, bool],
    loaded: Loaded,
) -> _Outcome:
    """:func:`preview`: read into ``loaded``, take the options, render.

    ``given``: the command line's options; ``output``: ``json`` or ``yaml``, and whether the
    summary lists every name (``--verbose``); the rest as :func:`_read_preview_inputs`.
    """
    fc = _read_preview_inputs(files, stdin, config_file, loaded)
    if isinstance(fc, tuple):
        return fc
    try:
        options, _ = with_env(options_from_config(fc), os.environ)
        options = with_options(options, given, "and command line") if given else options
    except ValueError as exc:  # one line per problem
        problems = [f"[error] {line}" for line in str(exc).splitlines()]
        return (
            1,
            "",
            [*problems, f"workloadrun-fn render: {len(problems)} error(s); nothing rendered"],
        )
    refusal = plain_secret_refusal(options) if os.environ.get(GITOPS_ENV) == "1" else None
    if refusal:  # the output goes to a GitOps engine (the Argo CD plugin, the Flux script)
        return 1, "", [f"[error] {refusal}", _NOTHING_RENDERED]
    return _render_preview(loaded, options, *output)


def _read_preview_inputs(
    files: list[str], stdin: bytes | None, config_file: str | None, loaded: Loaded
) -> dict[str, Any] | _Outcome | None:
    """Read ``files`` (``-``: ``stdin``) into ``loaded``; the function config or a failure.

    The config is ``config_file``'s, else the first among the inputs (``None``: there is
    none); the outcome is a failure when an input cannot be read or the config is no mapping.
    """
    try:
        paths = [p for p in files if p != "-"]
        load_files(expand_paths(paths), into=loaded)
        if stdin is not None:
            add_input(loaded, stdin, "<stdin>")
        if not config_file:
            fcs = [o for o, _ in loaded.items if is_function_config(o)]
            return fcs[0] if fcs else None
        cdocs = [d for d in yamlio.load_all(Path(config_file).read_bytes(), config_file) if d]
    except FileNotFoundError as exc:  # a usage error, as click reports a missing argument
        return 2, "", [f"workloadrun-fn render: no such file: {exc.filename}"]
    except IsADirectoryError as exc:
        return 1, "", [f"workloadrun-fn render: {exc.filename} is a directory"]
    except (InputError, yamlio.YAMLInputError) as exc:
        rs = exc.results if isinstance(exc, InputError) else []
        lines = [r.human() for r in rs] or [str(exc)]
        return 1, "", [*lines, _NOTHING_RENDERED]
    fc = cdocs[0] if cdocs else None
    if fc is not None and not isinstance(fc, dict):
        return (
            1,
            "",
            [
                f"[error] {config_file}: the function config must be a ConfigMap or "
                f"WorkloadRunRender mapping, not a {type(fc).__name__}",
                _NOTHING_RENDERED,
            ],
        )
    return fc


def _no_run_hint(loaded: Loaded) -> str:
    """How to give ``render`` a WorkloadRun, from what the inputs hold instead."""
    if any(o.get("kind") == "Kustomization" for o, _ in loaded.items):
        return (
            ": a kustomization is among them; build it with `kubectl kustomize "
            "--enable-alpha-plugins DIR` (it runs this function), or name the WorkloadRun's file"
        )
    if loaded.nodes:
        return f" (only {len(loaded.nodes)} Node(s)): add its file, `render run.yaml nodes.yaml`"
    return ""


def _render_preview(loaded: Loaded, options: FunctionOptions, fmt: str, verbose: bool) -> _Outcome:
    """Render the WorkloadRuns of ``loaded`` on its Nodes; print the objects as ``fmt``.

    Exit code 0 with the objects and the summary (every name when ``verbose``), or 1 with
    every error and no output.
    """
    results = Results()
    items = loaded.items
    runs = [(o, f) for o, f in items if keys.is_workloadrun(o)]
    if not runs:
        results.error("no WorkloadRun found in the input files" + _no_run_hint(loaded))
    nodes = [*loaded.nodes, *collect_nodes([o for o, _ in items])]
    out = render_all(runs, nodes, options, results, [o for o, _ in items])
    err = [r.human() for r in results.safe_items() if r.severity != "info"]
    if results.has_errors:
        n = sum(1 for r in results.items if r.severity == "error")
        return 1, "", [*err, f"workloadrun-fn render: {n} error(s); nothing rendered"]
    objs = [o for o, _ in out.objects]
    text = json.dumps(objs, indent=2) + "\n" if fmt == "json" else fastdump.dump_all(objs)
    return 0, text, [*err, *summary_lines(out.summaries, verbose)]


__all__ = ["CONFIG_KIND", "preview"]
