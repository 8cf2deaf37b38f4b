"""Command line: the KRM function (no arguments), ``render`` (preview) and helpers.

Invariants:
    * ``workloadrun-fn`` with no arguments reads stdin and writes stdout as a KRM function.
    * ``workloadrun-fn CONFIG_FILE`` (an existing file as the only argument) is kustomize's
      legacy exec-plugin protocol.
    * Human-readable lines go to stderr; stdout carries only YAML/JSON.
    * No traceback reaches the user unless ``--debug`` (or ``WORKLOADRUN_FN_DEBUG=1``) is set.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from krm_fn import __version__

SUBCOMMANDS = ("render", "report", "install-kustomize-plugin", "schema")


def _debug() -> bool:
    return os.environ.get("WORKLOADRUN_FN_DEBUG") == "1" or "--debug" in sys.argv


def _run_function(config_path: str | None) -> int:
    from krm_fn.run import run_krm

    stdin = sys.stdin.buffer.read()
    outcome = run_krm(stdin, config_path=config_path)
    sys.stdout.write(outcome.stdout)
    sys.stdout.flush()
    for line in outcome.stderr:
        sys.stderr.write(line + "\n")
    return outcome.exit_code


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="workloadrun-fn")
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Render NVCRE WorkloadRuns into Kubeflow Trainer resources.

    Without a command, runs as a KRM function: a ResourceList (or a plain multi-document
    YAML stream) on stdin, the same form on stdout.
    """
    if ctx.invoked_subcommand is None:
        ctx.exit(_run_function(None))


@cli.command("render")
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "-o",
    "--output",
    "fmt",
    type=click.Choice(["yaml", "json"]),
    default="yaml",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Function config (ConfigMap or WorkloadRunRender) file.",
)
@click.option("--platform", help="Force the platform (offline preview).")
@click.option("--gpu-arch", help="Force the GPU architecture (offline preview).")
def render_cmd(
    files: tuple[str, ...],
    fmt: str,
    config_file: str | None,
    platform: str | None,
    gpu_arch: str | None,
) -> None:
    """Preview the objects rendered from WorkloadRun and Node files (or - for stdin)."""
    from krm_fn.preview import preview

    code, out, err = preview(list(files), config_file, platform, gpu_arch, fmt)
    if out:
        click.echo(out, nl=False)
    for line in err:
        click.echo(line, err=True)
    sys.exit(code)


PLUGIN_KINDS = (
    ("fn.nvcre.nvidia.com", "v1alpha1", "WorkloadRunRender"),
    ("nvcre.nvidia.com", "v1alpha1", "WorkloadRun"),
)


@cli.command("install-kustomize-plugin")
@click.option(
    "--plugin-home",
    type=click.Path(file_okay=False),
    help="Plugin root (default: $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin, "
    "else ~/.config/kustomize/plugin).",
)
def install_plugin_cmd(plugin_home: str | None) -> None:
    """Install the legacy exec plugin so `kubectl kustomize --enable-alpha-plugins` runs us.

    Installs two entry points: kind WorkloadRunRender (transformer: resources hold the
    WorkloadRuns and Nodes) and kind WorkloadRun (generator: the WorkloadRun is the config).
    """
    import shutil

    exe = Path(sys.executable).with_name("workloadrun-fn")
    target = str(exe) if exe.exists() else shutil.which("workloadrun-fn") or ""
    if not target:
        raise click.ClickException(
            "cannot find the workloadrun-fn executable to point the plugin at"
        )
    if plugin_home:
        home = Path(plugin_home)
    elif os.environ.get("KUSTOMIZE_PLUGIN_HOME"):
        home = Path(os.environ["KUSTOMIZE_PLUGIN_HOME"])
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        home = Path(xdg) / "kustomize" / "plugin"
    quoted = "'" + target.replace("'", "'\\''") + "'"
    script = (
        "#!/bin/sh\n"
        "# kustomize legacy exec plugin, installed by `workloadrun-fn install-kustomize-plugin`.\n"
        f'exec {quoted} "$@"\n'
    )
    for group, version, kind in PLUGIN_KINDS:
        path = home / group / version / kind.lower() / kind
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(script)
        path.chmod(0o755)
        click.echo(f"installed {path} -> {target}")
    click.echo(
        "use it with: kubectl kustomize --enable-alpha-plugins DIR "
        f"(kustomize must find the plugin root {home})"
    )


@cli.command("schema")
def schema_cmd() -> None:
    """Print the WorkloadRun CustomResourceDefinition generated from the models."""
    from krm_fn import yamlio
    from krm_fn.api.crd import workloadrun_crd

    click.echo(yamlio.dump(workloadrun_crd()), nl=False)


def _register_optional() -> None:
    import importlib

    try:
        mod = importlib.import_module("krm_fn.report.command")
    except ImportError:  # pragma: no cover - report not installed
        return
    cli.add_command(mod.report)


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    try:
        positional = [a for a in args if not a.startswith("-")]
        if positional and positional[0] not in SUBCOMMANDS and Path(positional[0]).is_file():
            return sys.exit(_run_function(positional[0]))
        if not args or all(a == "--debug" for a in args):
            return sys.exit(_run_function(None))
        _register_optional()
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


__all__ = ["cli", "main"]
