"""The click command group: the function run without a command, plus the subcommands.

Invariants:
    * Imported only when a subcommand (or ``--help``/``--version``) is asked for; the
      function run itself goes through :func:`krm_fn.entry.cli.run_function` without click.
    * ``report`` is registered when its module imports (it is part of the package).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

from krm_fn import __version__
from krm_fn.entry.cli import run_function
from krm_fn.platforms.detect import PLATFORMS
from krm_fn.platforms.gpu import GPU_ARCHITECTURES


class _Group(click.Group):
    """The command group, listing each command's whole summary (click cuts it at ~45 columns)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List every visible command with its full first help sentence."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


EPILOG = """\b
Forms:
  workloadrun-fn < INPUT           KRM function: a ResourceList (kpt) or a plain
                                   YAML stream of WorkloadRuns and Nodes on stdin,
                                   the same form on stdout.
  workloadrun-fn PLUGIN_CONFIG     kustomize legacy exec plugin: PLUGIN_CONFIG is
                                   a WorkloadRunRender (transformer: resources on
                                   stdin) or a WorkloadRun (generator: Nodes from
                                   its fn.nvcre.nvidia.com/inventory annotation).
  workloadrun-fn COMMAND ...       one of the commands above.

\b
Examples:
  NGC_API_KEY=example-api-key workloadrun-fn render fixtures/
  workloadrun-fn render wr.yaml nodes.yaml -o json
  kpt fn eval DIR --exec workloadrun-fn --fn-config fn-config.yaml
  workloadrun-fn install-kustomize-plugin
  kubectl kustomize --enable-alpha-plugins kustomization-examples/basic-mpi

\b
Exit codes:
  0   success
  1   invalid input: every problem is reported, nothing is rendered
      (report: a group failed or has no data)
  2   usage error (unknown option, missing file, no input)
  70  internal error (a bug: rerun with --debug and report it)

\b
Environment:
  WORKLOADRUN_FN_DEBUG=1   same as --debug: show tracebacks of internal errors
  NGC_API_KEY (or the variable registryPasswordEnv names)   registry password

\b
Shell completion (bash, zsh, fish), e.g. in ~/.bashrc:
  eval "$(_WORKLOADRUN_FN_COMPLETE=bash_source workloadrun-fn)"
  zsh: eval "$(_WORKLOADRUN_FN_COMPLETE=zsh_source workloadrun-fn)"
  fish: _WORKLOADRUN_FN_COMPLETE=fish_source workloadrun-fn | source

Every WorkloadRun field: docs/workloadrun-reference.md.
"""


@click.group(
    cls=_Group,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EPILOG,
)
@click.version_option(__version__, "-V", "--version", prog_name="workloadrun-fn")
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Render NVCRE WorkloadRuns into Kubeflow Trainer resources.

    Without a command, runs as a KRM function: a ResourceList (or a plain multi-document
    YAML stream) on stdin, the same form on stdout.
    """
    if ctx.invoked_subcommand is None:
        ctx.exit(run_function(None))


def _complete_from(values: tuple[str, ...]) -> Any:
    """A shell-completion callback offering ``values`` that start with what was typed."""

    def complete(
        ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        return [CompletionItem(v) for v in values if v.startswith(incomplete.lower())]

    return complete


def _flag(alias: str) -> str:
    """``nodeList`` -> ``--node-list``."""
    return "--" + "".join(f"-{c.lower()}" if c.isupper() else c for c in alias)


def _run_flag_options(command: Any) -> Any:
    """``render``'s options for NVCRE's run flags, derived from the function options' fields."""
    from krm_fn.api.config import RUN_FLAGS, FunctionOptions, error_text

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        from pydantic import ValidationError

        alias = FunctionOptions.model_fields[str(param.name)].alias
        if not value:
            return value
        try:
            FunctionOptions.model_validate({alias: value})
        except ValidationError as exc:
            for err in exc.errors():
                if err["loc"] and err["loc"][0] == alias:
                    raise click.BadParameter(error_text(err)) from None
        return value

    for name in reversed(RUN_FLAGS):
        info = FunctionOptions.model_fields[name]
        alias = str(info.alias)
        example = (info.examples or [""])[0]
        command = click.option(
            _flag(alias),
            name,
            metavar=name.upper(),
            callback=check,
            help=f"{info.description} Example: {_flag(alias)} {example}",
        )(command)
    return command


@cli.command(
    "render",
    epilog="""\b
Examples:
  NGC_API_KEY=example-api-key workloadrun-fn render fixtures/
  workloadrun-fn render wr.yaml nodes.yaml --config fn-config.yaml -o json
  kubectl get nodes -o yaml | workloadrun-fn render wr.yaml -
  workloadrun-fn render wr.yaml --platform aws --gpu-arch h100   # no cluster needed
  workloadrun-fn render fixtures/ --topology-domain nn-0001   # one rack of the fleet

Exit codes: 0 rendered; 1 invalid input (nothing printed on stdout); 2 usage error
(unknown option, missing file).""",
)
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
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
    help="Function config file: a ConfigMap or a fn.nvcre.nvidia.com/v1alpha1 "
    "WorkloadRunRender (default: one found among FILES).",
)
@click.option(
    "--platform",
    metavar="NAME",
    shell_complete=_complete_from(PLATFORMS),
    help="Force the platform instead of detecting it from the Nodes (offline preview; "
    f"with no Node in FILES, numNodes synthetic nodes stand in). One of: {', '.join(PLATFORMS)}.",
)
@click.option(
    "--gpu-arch",
    metavar="NAME",
    shell_complete=_complete_from(GPU_ARCHITECTURES),
    help="Force the GPU architecture instead of detecting it (offline preview). One of: "
    f"{', '.join(GPU_ARCHITECTURES)}; a product name such as NVIDIA-H100-80GB-HBM3 is "
    "accepted too.",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="List every group, node and TrainJob in the summary."
)
@_run_flag_options
def render_cmd(
    files: tuple[str, ...],
    fmt: str,
    config_file: str | None,
    platform: str | None,
    gpu_arch: str | None,
    verbose: bool,
    **flags: str | None,
) -> None:
    """Preview the objects rendered from WorkloadRun and Node files (or - for stdin).

    FILES are WorkloadRuns, Nodes (single documents or the List of `kubectl get nodes -o
    yaml`) and directories of *.yaml, *.yml and *.json. Only the generated objects are
    printed; a summary (groups, nodes per group, untested nodes) goes to stderr, with
    counts and the first few names at fleet scale (--verbose: every name).
    """
    from krm_fn.api.config import FunctionOptions
    from krm_fn.entry.preview import preview

    given = {str(FunctionOptions.model_fields[k].alias): v for k, v in flags.items() if v}
    code, out, err = preview(
        list(files), config_file, platform, gpu_arch, fmt, given, verbose=verbose
    )
    if out:
        click.echo(out, nl=False)
    if err:  # one write: a fleet's summary is thousands of lines
        click.echo("\n".join(err), err=True)
    sys.exit(code)


PLUGIN_KINDS = (
    ("fn.nvcre.nvidia.com", "v1alpha1", "WorkloadRunRender"),
    ("nvcre.nvidia.com", "v1alpha1", "WorkloadRun"),
)


@cli.command(
    "install-kustomize-plugin",
    epilog="""\b
Example:
  workloadrun-fn install-kustomize-plugin
  NGC_API_KEY=example-api-key kubectl kustomize --enable-alpha-plugins \\
    kustomization-examples/basic-mpi""",
)
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


@cli.command(
    "schema",
    epilog="""\b
Example:
  workloadrun-fn schema > workloadrun-crd.yaml   # for editors and kubectl apply
Field by field: docs/workloadrun-reference.md""",
)
def schema_cmd() -> None:
    """Print the WorkloadRun CustomResourceDefinition generated from the models."""
    from krm_fn.api.crd import workloadrun_crd
    from krm_fn.io import yamlio

    click.echo(yamlio.dump(workloadrun_crd()), nl=False)


@cli.command("inventory")
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@click.option(
    "-o",
    "--output",
    "out_path",
    type=click.Path(dir_okay=False),
    help="Write the inventory to this file (atomically) instead of stdout.",
)
@click.option(
    "--keep-label",
    multiple=True,
    metavar="KEY|PREFIX*",
    help="Also keep this label (or every label starting with PREFIX); repeatable.",
)
@click.option(
    "--for",
    "for_files",
    multiple=True,
    type=click.Path(exists=True),
    help="WorkloadRun file or directory: keep every label its target names; repeatable.",
)
@click.option(
    "--platform-catalog",
    "catalogs",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Site platform catalog (the platformCatalog option): keep the labels its platforms "
    "detect and partition by; repeatable.",
)
def inventory_cmd(
    files: tuple[str, ...],
    out_path: str | None,
    keep_label: tuple[str, ...],
    for_files: tuple[str, ...],
    catalogs: tuple[str, ...],
) -> None:
    """Compact `kubectl get nodes -o yaml|json` (FILE... or - / nothing for stdin).

    Keeps only what the render reads, sorted, with no volatile fields, so the inventory can
    live in git and a diff shows only real fleet changes. For DRA-only nodes, `kubectl get
    nodes,resourceslices -o yaml` keeps their gpu.nvidia.com slices too.
    """
    from krm_fn.gitops import compact_inventory as ci
    from krm_fn.platforms.catalog import load_catalog

    extra = list(keep_label)
    if for_files:
        from krm_fn.entry.inputs import expand_paths, load_files
        from krm_fn.keys import is_workloadrun

        runs = [o for o, _ in load_files(expand_paths(for_files)).items if is_workloadrun(o)]
        if not runs:
            raise click.ClickException(f"no WorkloadRun in {', '.join(for_files)} (--for)")
        extra += sorted(ci.target_label_keys(runs))
    sources: list[tuple[bytes, str]] = []
    for f in files or ("-",):
        if f == "-":
            sources.append((sys.stdin.buffer.read(), "<stdin>"))
        else:
            try:
                sources.append((Path(f).read_bytes(), f))
            except OSError as exc:
                raise click.ClickException(f"cannot read {f}: {exc.strerror}") from None
    try:  # a CatalogError is a ValueError
        nodes, problems = ci.compact(sources, ci.LabelPolicy(extra, load_catalog(catalogs)))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if problems:
        for p in problems:
            click.echo(f"[error] {p}", err=True)
        raise click.ClickException(f"{len(problems)} problem(s); nothing written")
    text = ci.dump(nodes)
    if out_path:
        target = Path(out_path)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(text)
        tmp.replace(target)
    else:
        click.echo(text, nl=False)
    slices = sum(1 for o in nodes if o["kind"] == "ResourceSlice")
    tail = f", {slices} GPU ResourceSlice(s)" if slices else ""
    click.echo(f"inventory: {len(nodes) - slices} node(s){tail}", err=True)


@cli.command("release")
@click.argument("run")
@click.option("-n", "--namespace", help="Namespace of the run's TrainJobs.")
@click.option(
    "--poll", default=30.0, show_default=True, help="Seconds between two looks at the TrainJobs."
)
@click.option(
    "--timeout",
    default="24h",
    show_default=True,
    help="Give up after this long (Go duration: 90m, 24h).",
)
@click.option(
    "--kubectl",
    default="kubectl",
    show_default=True,
    help="The kubectl command (also $WORKLOADRUN_FN_KUBECTL); every cluster access goes through it.",
)
@click.option("--once", is_flag=True, help="Look once, release what is due, and exit.")
def release_cmd(
    run: str, namespace: str | None, poll: float, timeout: str, kubectl: str, once: bool
) -> None:
    """Release the waves of RUN: when wave n completed, unsuspend wave n+1; until all ran.

    Exit 0 when every wave completed, 1 when a TrainJob failed (later waves stay suspended),
    2 when kubectl cannot reach the cluster (or is missing), 3 on timeout.
    """
    from krm_fn.api.durations import parse_go_duration
    from krm_fn.gitops import release

    try:
        limit = parse_go_duration(timeout)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--timeout") from None
    cmd = os.environ.get("WORKLOADRUN_FN_KUBECTL") or kubectl
    kube = release.Kubectl(cmd.split(), namespace)
    code = release.release_loop(kube, run, poll, limit, once, lambda m: click.echo(m, err=True))
    sys.exit(code)


@cli.command("argocd-env", hidden=True)
def argocd_env_cmd() -> None:
    """Print the Argo CD plugin's ARGOCD_ENV_<OPTION> variables as WORKLOADRUN_FN_ exports.

    The plugin's generate step runs `eval "$(workloadrun-fn argocd-env)"`, so the options it
    accepts are the function's own (minus those Argo CD must not set), not a list in YAML.
    """
    from krm_fn.gitops.env_options import argocd_exports

    exports, problems = argocd_exports(os.environ)
    if problems:
        for p in problems:
            click.echo(f"workloadrun-fn plugin: {p}", err=True)
        sys.exit(1)
    click.echo("\n".join(exports))


@cli.command("discover")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
def discover_cmd(directory: str) -> None:
    """Exit 0 and print the file when DIRECTORY (or a base it builds on) holds a WorkloadRun.

    The Argo CD plugin's discovery: overlays whose WorkloadRun lives in a base match too;
    hidden files are never read.
    """
    import os.path

    from krm_fn.gitops.discover import find

    hit = find(Path(directory))
    if hit is None:
        click.echo(
            f"discover: no WorkloadRun or WorkloadRunRender in {directory} (its non-hidden "
            "*.yaml, *.yml, *.json files, or a base its kustomization builds on)",
            err=True,
        )
        sys.exit(1)
    click.echo(os.path.relpath(hit, Path(directory).resolve()))


@cli.command("flux-layout")
@click.argument("rendered", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--name", "prefix", required=True, help="Prefix of the Flux Kustomization names.")
@click.option(
    "--path-prefix",
    required=True,
    help="Path of OUT_DIR inside the Flux source (./rendered/x for git, . for an OCI artifact).",
)
@click.option(
    "--source",
    default="GitRepository/flux-system",
    show_default=True,
    help="The Flux source the Kustomizations read: KIND/NAME.",
)
def flux_layout_cmd(
    rendered: str, out_dir: str, prefix: str, path_prefix: str, source: str
) -> None:
    """Split RENDERED into per-wave directories and the Flux Kustomizations that apply them.

    OUT_DIR/dependencies, OUT_DIR/wave-<k> and OUT_DIR/flux/kustomizations.yaml (dependsOn,
    wait and a TrainJob health check, so wave k+1 starts after wave k completed).

    OUT_DIR must not exist (render-in-ci.sh moves it into place).
    """
    from krm_fn.gitops import flux
    from krm_fn.io import yamlio

    kind, _, name = source.partition("/")
    if not name:
        raise click.BadParameter(
            "write KIND/NAME, e.g. OCIRepository/gpu-validation", param_hint="--source"
        )
    text = sys.stdin.buffer.read() if rendered == "-" else Path(rendered).read_bytes()
    objs = [d for d in yamlio.load_all(text, rendered) if isinstance(d, dict)]
    try:
        dirs = flux.layout(objs, prefix, path_prefix, kind, name)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    flux.write(Path(out_dir), dirs)
    warning = flux.plain_secret_warning(dirs["dependencies"])
    if warning:
        click.echo(warning, err=True)
    waves = sum(1 for k in dirs if k.startswith("wave-"))
    click.echo(f"flux-layout: dependencies + {waves} wave(s) in {out_dir}", err=True)


def _register_optional() -> None:
    import importlib

    try:
        mod = importlib.import_module("krm_fn.report.command")
    except ImportError:  # pragma: no cover - report not installed
        return
    cli.add_command(mod.report)


_register_optional()

__all__ = ["cli"]
