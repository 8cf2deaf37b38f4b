"""Command line entry point: the KRM function (no arguments) or a subcommand.

Invariants:
    * ``workloadrun-fn`` with no arguments reads stdin and writes stdout as a KRM function.
    * ``workloadrun-fn CONFIG_FILE`` (an existing file as the only argument) is kustomize's
      legacy exec-plugin protocol.
    * Those two paths never import click or the subcommands (:mod:`krm_fn.entry.commands`): a
      function run pays only for what it uses.
    * Human-readable lines go to stderr; stdout carries only YAML/JSON.
    * No traceback reaches the user unless ``--debug`` (or ``WORKLOADRUN_FN_DEBUG=1``) is set.
    * Never a silent wait and never a silent success: with stdin a terminal the function forms
      print usage (exit 2) instead of waiting for input; an empty stdin is a usage error (exit
      2), except in kustomize's generator form, where kustomize sends nothing.
    * Shell completion is click's (``_WORKLOADRUN_FN_COMPLETE=bash_source|zsh_source|
      fish_source workloadrun-fn``): with that variable set the command line goes to click.
    * The console script (:func:`run`) runs without the cyclic garbage collector (every
      command is short-lived), flushes stdout and stderr, then leaves with
      ``os._exit``: tearing down a fleet-sized heap and the imported modules costs 30 ms of
      every cold start and 0.1 s at 10,000 Nodes, for nothing (as mypy's command line does).
      :func:`main` itself returns or raises ``SystemExit`` as usual, for callers in-process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

SUBCOMMANDS = (
    "render",
    "report",
    "install-kustomize-plugin",
    "schema",
    "inventory",
    "release",
    "discover",
    "flux-layout",
)


def _debug() -> bool:
    return os.environ.get("WORKLOADRUN_FN_DEBUG") == "1" or "--debug" in sys.argv


COMPLETE_VAR = "_WORKLOADRUN_FN_COMPLETE"

USAGE = (
    "usage: workloadrun-fn < INPUT        KRM function: a ResourceList or YAML stream on stdin\n"
    "       workloadrun-fn PLUGIN_CONFIG  kustomize legacy exec plugin (resources on stdin)\n"
    f"       workloadrun-fn COMMAND ...    {', '.join(SUBCOMMANDS)}\n"
    "try:   workloadrun-fn render FILE...   (preview WorkloadRun and Node files)\n"
    "       workloadrun-fn --help\n"
)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):  # closed or replaced stdin
        return False


def run_function(config_path: str | None) -> int:
    """Run as a KRM function (or legacy exec plugin): stdin to stdout; the exit code."""
    if _stdin_is_terminal():
        if config_path is None:
            sys.stderr.write("workloadrun-fn: stdin is a terminal, not a ResourceList\n" + USAGE)
        else:
            sys.stderr.write(
                f"workloadrun-fn: {config_path} given alone is kustomize's exec-plugin form (the "
                "file is the plugin config; kustomize sends the resources on stdin).\n"
                f"To preview, run: workloadrun-fn render {config_path} [FILES...] (the "
                "WorkloadRuns and their Node files)\n"
            )
        return 2
    # The function run keeps the cyclic collector off (see run_krm); turning it off before the
    # imports as well saves the collections the models' import would trigger (~60-100 ms of
    # the cold start, bench/results.md). The process is short-lived: nothing is re-enabled.
    gc.disable()
    from krm_fn.entry.run import run_krm
    from krm_fn.io.resourcelist import write_chunks

    stdin = sys.stdin.buffer.read()
    if config_path is None and (not stdin or stdin.isspace()):  # isspace: no copy
        sys.stderr.write(
            "workloadrun-fn: stdin is empty: expected a ResourceList, or a YAML stream of "
            "WorkloadRuns and Nodes\n" + USAGE
        )
        return 2
    outcome = run_krm(stdin, config_path=config_path)
    sys.stdout.flush()
    write_chunks(outcome.chunks, sys.stdout.buffer)  # not joined: a fleet's output is >100 MB
    for line in outcome.stderr:
        sys.stderr.write(line + "\n")
    return outcome.exit_code


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    try:
        positional = [a for a in args if not a.startswith("-")]
        if positional and positional[0] not in SUBCOMMANDS and Path(positional[0]).is_file():
            return sys.exit(run_function(positional[0]))
        if COMPLETE_VAR in os.environ:  # shell completion: click's protocol
            from krm_fn.entry.commands import cli as group

            return group.main(args=args, prog_name="workloadrun-fn")
        if not args or all(a == "--debug" for a in args):
            return sys.exit(run_function(None))
        from krm_fn.entry.commands import cli

        return cli.main(args=args, prog_name="workloadrun-fn")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        if _debug():
            raise
        sys.stderr.write(
            f"workloadrun-fn: internal error: {type(exc).__name__}: {exc}\n"
            "workloadrun-fn: rerun with --debug for a traceback, and report it\n"
        )
        sys.exit(70)


def run() -> NoReturn:
    """The ``workloadrun-fn`` console script: :func:`main`, then leave without a teardown.

    The exit status and what ``SystemExit`` carries are kept: ``None`` is 0, an ``int`` is
    itself, anything else is printed to stderr and is 1 (as the interpreter does).
    """
    # Every command is a short-lived process building millions of acyclic objects at fleet
    # size: the cyclic collector would walk that heap again and again (1 s of a 10,000-node
    # render) for nothing. (The function run turns it off itself, see run_function.)
    gc.disable()
    code: Any = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):  # the reader went away, or stdout is closed
        code = code or 1
    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()


__all__ = ["SUBCOMMANDS", "main", "run", "run_function"]
