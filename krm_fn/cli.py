"""Command line entry point: the KRM function (no arguments) or a subcommand.

Invariants:
    * ``workloadrun-fn`` with no arguments reads stdin and writes stdout as a KRM function.
    * ``workloadrun-fn CONFIG_FILE`` (an existing file as the only argument) is kustomize's
      legacy exec-plugin protocol.
    * Those two paths never import click or the subcommands (:mod:`krm_fn.commands`): a
      function run pays only for what it uses.
    * Human-readable lines go to stderr; stdout carries only YAML/JSON.
    * No traceback reaches the user unless ``--debug`` (or ``WORKLOADRUN_FN_DEBUG=1``) is set.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

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


def run_function(config_path: str | None) -> int:
    """Run as a KRM function (or legacy exec plugin): stdin to stdout; the exit code."""
    from krm_fn.run import run_krm

    stdin = sys.stdin.buffer.read()
    outcome = run_krm(stdin, config_path=config_path)
    out = sys.stdout
    for chunk in outcome.chunks:  # not joined: the output of a fleet is over 100 MB
        out.write(chunk)
    out.flush()
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
        if not args or all(a == "--debug" for a in args):
            return sys.exit(run_function(None))
        from krm_fn.commands import cli

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


if __name__ == "__main__":  # pragma: no cover
    main()


__all__ = ["SUBCOMMANDS", "main", "run_function"]
