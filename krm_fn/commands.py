"""The click command group: the function run without a command, plus the subcommands.

Invariants:
    * Imported only when a subcommand (or ``--help``/``--version``) is asked for; the
      function run itself goes through :func:`krm_fn.cli.run_function` without click.
    * ``report`` is registered when its module imports (it is part of the package).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from krm_fn import __version__
from krm_fn.cli import run_function


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
        ctx.exit(run_function(None))


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


_register_optional()

__all__ = ["cli"]
