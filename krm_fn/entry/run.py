"""Run the function once: input text → output text, stderr lines and exit code.

Invariants:
    * Exit code 0 on success, 1 when any error result exists; the output then carries the
      input items unchanged (plus results, in ResourceList form), never a partial render.
    * Nothing printed (stdout, stderr, results) contains the registry password except the
      generated Secret's ``.dockerconfigjson``.
    * The output does not depend on which reader read the input: the reader's answer is
      final (:func:`krm_fn.io.resourcelist.parse_input`), so each input is rendered once.
    * Heavy modules (the models, the render) are imported only once the input has been read.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from krm_fn import keys
from krm_fn.entry.inputs import expand_paths, file_ref_of, load_files
from krm_fn.fleet.inventory import NodeInfo
from krm_fn.io import yamlio
from krm_fn.io.output import PATH_KEYS
from krm_fn.io.resourcelist import (
    Chunk,
    Entry,
    FunctionInput,
    InputError,
    chunks_text,
    parse_input,
    write_output_chunks,
)
from krm_fn.io.results import FileRef, ResourceRef, Results, some

if TYPE_CHECKING:
    from krm_fn.api.config import FunctionOptions
    from krm_fn.render import RenderOutput


@dataclass
class RunOutcome:
    """What the process writes and returns.

    ``chunks`` concatenated are standard output; :attr:`stdout` joins them (tests and small
    outputs), the command line writes them one by one.
    """

    chunks: list[Chunk]
    stderr: list[str]
    exit_code: int
    render: RenderOutput | None = None

    @property
    def stdout(self) -> str:
        """The whole standard output."""
        return chunks_text(self.chunks)


_RL_HINT = re.compile(rb"kind:\s*['\"]?ResourceList")
_JSON_RL = re.compile(rb'"kind"\s*:\s*"ResourceList"')


def _says_resource_list(stdin: bytes) -> bool:
    """Whether a refused input looks like a ResourceList (a column-0 ``kind:`` line says so).

    Line by line with ``bytes.find``: a refused input can be hundreds of MiB.
    """
    if stdin[:64].lstrip()[:1] == b"{":
        return _JSON_RL.search(stdin) is not None
    at = 0 if stdin.startswith(b"kind:") else stdin.find(b"\nkind:") + 1
    while at > 0 or stdin.startswith(b"kind:"):
        if _RL_HINT.match(stdin, at) is not None:
            return True
        nxt = stdin.find(b"\nkind:", at)
        if nxt < 0:
            return False
        at = nxt + 1
    return False


PLUGIN_CONFIG_KEYS = ("argsOneLiner", "argsFromFile")
"""Top-level keys kustomize's legacy exec-plugin protocol reads from the plugin config itself
(to build argv); they are not part of the config (a WorkloadRun used as generator config)."""


def run_krm(
    stdin: bytes, config_path: str | None = None, cwd: Path | None = None, fast: bool = True
) -> RunOutcome:
    """The KRM function (and legacy kustomize exec plugin) entry point.

    ``config_path`` is ``argv[1]`` in kustomize's legacy exec-plugin protocol (the config
    file); ``cwd`` the directory relative ``inventory`` paths resolve against; ``fast=False``
    skips the fast reader (tests compare the two).
    """
    # A run builds millions of small acyclic objects; the cyclic collector would walk the
    # growing heap again and again (a third of the time at 10,000 Nodes) for nothing.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(stdin, config_path, cwd, fast)
    finally:
        if was_enabled:
            gc.enable()


def _run(stdin: bytes, config_path: str | None, cwd: Path | None, fast: bool) -> RunOutcome:
    results = Results()
    try:
        inp = parse_input(stdin, fast=fast, meanwhile=_import_render)
    except (InputError, yamlio.YAMLInputError) as exc:
        rs = exc.results if isinstance(exc, InputError) else []
        if not rs:
            results.error(str(exc))
        else:
            results.items.extend(rs)
        echo = exc.echo if isinstance(exc, InputError) else None
        return _failed(results, stdin, echo=echo)
    return _run_once(stdin, inp, results, config_path, cwd)


def _import_render() -> None:
    """Import the render and the models: overlapped with the reader's helper process."""
    import krm_fn.api.config
    import krm_fn.render  # noqa: F401


def _run_once(
    stdin: bytes,
    inp: FunctionInput,
    results: Results,
    config_path: str | None,
    cwd: Path | None,
) -> RunOutcome:
    fc = inp.function_config
    if config_path is not None:
        try:
            docs = [d for d in yamlio.load_all(Path(config_path).read_bytes(), config_path) if d]
        except (OSError, yamlio.YAMLInputError) as exc:
            results.error(f"cannot read the plugin config {config_path}: {exc}")
            return _failed(results, stdin, inp)
        fc = docs[0] if docs and isinstance(docs[0], dict) else None
        if fc is not None:
            fc = {k: v for k, v in fc.items() if k not in PLUGIN_CONFIG_KEYS}
            problem = _plugin_config_problem(fc, config_path)
            if problem:
                results.error(problem)
                return _failed(results, stdin, inp)
    return _render(inp, fc, results, cwd or Path.cwd(), config_path)


def _render(
    inp: FunctionInput,
    fc: Mapping[str, Any] | None,
    results: Results,
    cwd: Path,
    config_path: str | None,
) -> RunOutcome:
    """Render the read input with the function config ``fc``; every problem goes to ``results``.

    ``fc`` may be the legacy plugin's config (``config_path``, ``None`` for a KRM function).
    The outcome is the input with the generated objects, or the input unchanged on errors.
    """
    from krm_fn.render import render_all

    for note in inp.notes:
        results.info(note)
    fc_dict = dict(fc) if fc else None
    chosen = _run_options(fc_dict, results)
    if chosen is None:
        return _failed(results, b"", inp)
    options, from_env = chosen
    options = _catalog_paths(options, from_env, fc_dict, cwd)
    entries = inp.entries()
    runs = _workloadruns(inp, entries, fc_dict)
    nodes: list[NodeInfo] = [n for e in entries for n in e.nodes]
    inventory = _read_inventory_option(options, from_env, fc_dict, cwd, nodes, results)
    if inventory is None:
        return _failed(results, b"", inp)
    inventory_nodes, inventory_slices = inventory  # DRA ResourceSlices of the inventory files
    nodes += inventory_nodes
    if not runs:
        results.info("no WorkloadRun in the input; nothing to render")
    offline = options.platform or options.gpu_arch  # a preview on synthetic nodes
    if config_path and fc_dict and keys.is_workloadrun(fc_dict) and not nodes and not offline:
        _generator_without_nodes(fc_dict, config_path, results)
        return _failed(results, b"", inp)
    # Objects runs may refer to (PersistentVolumeClaims, LogProfiles): every input item but
    # the Nodes (already in ``nodes``) and our own earlier output (replaced, so it must not
    # count as input: the second run would differ from the first).
    others = [inp.load(e) for e in entries if not e.generated and not e.nodes]
    others += inventory_slices
    rendered = render_all(runs, nodes, options, results, others)
    if results.has_errors:
        return _failed(results, b"", inp)
    return _write_rendered(inp, entries, rendered, options, config_path is not None, results)


def _run_options(
    fc: dict[str, Any] | None, results: Results
) -> tuple[FunctionOptions, list[str]] | None:
    """The options of ``fc`` and the environment, and the names of those from the environment.

    ``None`` when the options are invalid or ask for a plain Secret (the error is in ``results``).
    """
    from krm_fn.api.config import options_from_config
    from krm_fn.gitops.env_options import ENV_PREFIX, plain_secret_refusal, with_env

    try:
        options, from_env = with_env(options_from_config(fc), os.environ)
    except ValueError as exc:  # one result per problem
        for line in str(exc).splitlines():
            results.error(line, resource=ResourceRef.of(fc) if fc else None)
        return None
    for option in from_env:
        results.info(f"option {option} taken from the environment ({ENV_PREFIX}*)")
    refusal = plain_secret_refusal(options)
    if refusal:
        results.error(refusal, resource=ResourceRef.of(fc) if fc else None)
        return None
    return options, from_env


def _catalog_paths(
    options: FunctionOptions, from_env: list[str], fc: dict[str, Any] | None, cwd: Path
) -> FunctionOptions:
    """``options`` with the ``platformCatalog`` paths resolved as ``inventory`` paths are."""
    if not options.platform_catalog:
        return options
    base = cwd if "platformCatalog" in from_env else inventory_base(fc, cwd) or cwd
    paths = [str(base / p) for p in options.platform_catalog]
    return options.model_copy(update={"platform_catalog": paths})


def _workloadruns(
    inp: FunctionInput, entries: list[Entry], fc: dict[str, Any] | None
) -> list[tuple[dict[str, Any], FileRef | None]]:
    """Each WorkloadRun to render with its file: the input's, then ``fc`` if it is another."""
    runs: list[tuple[dict[str, Any], FileRef | None]] = []
    for e in entries:
        if e.workloadrun:
            obj = inp.load(e)
            runs.append((obj, file_ref_of(obj)))
    if fc and keys.is_workloadrun(fc):
        key = _key(fc)
        if not any(_key(r) == key for r, _ in runs):
            runs.append((fc, file_ref_of(fc)))
    return runs


def _read_inventory_option(
    options: FunctionOptions,
    from_env: list[str],
    fc: dict[str, Any] | None,
    cwd: Path,
    nodes: list[NodeInfo],
    results: Results,
) -> tuple[list[NodeInfo], list[dict[str, Any]]] | None:
    """The Nodes and DRA ResourceSlices of the files the ``inventory`` option names.

    Relative paths resolve against ``fc``'s package path, else ``cwd`` (always ``cwd`` for an
    option from the environment, ``from_env``). ``None`` when a file cannot be read or a Node
    of ``nodes`` (the input's) comes again (the error is in ``results``).
    """
    from krm_fn.io.output import is_resource_slice

    if not options.inventory:
        return [], []
    config_dir = None if "inventory" in from_env else inventory_base(fc, None)
    base = config_dir or cwd
    try:
        loaded = load_files(expand_paths(options.inventory, base), base)
    except FileNotFoundError as exc:
        results.error(
            f"the inventory option ({', '.join(options.inventory)}) leads to {exc.filename}, "
            f"which does not exist: relative paths are relative to {_led_from(config_dir, cwd, from_env)}",
            resource=ResourceRef.of(fc) if fc else None,
        )
        return None
    except (OSError, InputError, yamlio.YAMLInputError) as exc:
        results.error(f"cannot read the inventory named by the inventory option: {exc}")
        return None
    twice = sorted({n.name for n in nodes} & {n.name for n in loaded.nodes})
    if twice:
        results.error(
            f"Node {some(twice, 5)} reached the function both as input resources and from the "
            f"inventory option ({', '.join(options.inventory)}): each node must come from "
            "one place; in a kpt package list the inventory file in .krmignore so kpt does "
            'not read it as resources (docs/gitops.md: "kpt: a fleet in a package")',
            resource=ResourceRef.of(fc) if fc else None,
        )
        return None
    return loaded.nodes, [o for o, _ in loaded.items if is_resource_slice(o)]


def _led_from(config_dir: Path | None, cwd: Path, from_env: list[str]) -> str:
    """Where relative ``inventory`` paths led from and why (for a file that is not there)."""
    if config_dir is not None:
        return f"the directory of the functionConfig file ({config_dir}), where kpt fn render says the file is"
    return f"the working directory ({cwd}), because " + (
        "they come from WORKLOADRUN_FN_INVENTORY"
        if "inventory" in from_env
        else "nothing says where the functionConfig file is (kpt fn eval --fn-config and "
        "kustomize do not; kpt fn render does): run from the directory they are relative to "
        "(cd PACKAGE && kpt fn eval . --exec workloadrun-fn --fn-config fn-config.yaml), use "
        "kpt fn render, or give an absolute path"
    )


def _write_rendered(
    inp: FunctionInput,
    entries: list[Entry],
    rendered: RenderOutput,
    options: FunctionOptions,
    legacy: bool,
    results: Results,
) -> RunOutcome:
    """Write the kept input items and the generated objects (with their results).

    ``legacy``: kustomize's legacy exec plugin, which returns only what it generated or
    transformed, without file paths.
    """
    from krm_fn.io.output import place_generated

    keep = [e for e in entries if not e.generated]
    if legacy:
        keep = [e for e in keep if not e.input_kind and not _is_local(inp.load(e))]
    generated = place_generated(rendered.objects, options.output_dir, with_paths=not legacy)
    chunks = write_output_chunks(inp, keep, generated, results.safe_items(), mark=True)
    return RunOutcome(chunks, _stderr(results), 0, rendered)


PACKAGE_PATH_KEY = "internal.config.kubernetes.io/package-path"


def inventory_base(fc: Mapping[str, Any] | None, cwd: Path | None) -> Path | None:
    """The directory relative ``inventory`` paths of the functionConfig ``fc`` lead from.

    kpt runs an ``exec`` function in kpt's own working directory, not the package's. ``kpt fn
    render`` annotates a functionConfig read from the package (``configPath``) with the
    package's absolute directory (``internal.config.kubernetes.io/package-path``) and the
    file's path in it (``config.kubernetes.io/path``), so a path in that file means the same
    wherever kpt is started: it leads from the file's directory, as kustomize resolves the
    paths of a kustomization. ``kpt fn eval --fn-config FILE`` passes the file's content alone
    (kpt's runfn reads it with no path annotation), as kustomize does: then ``cwd``.
    """
    meta = fc.get("metadata") if fc else None
    ann = meta.get("annotations") if isinstance(meta, Mapping) else None
    pkg = ann.get(PACKAGE_PATH_KEY) if isinstance(ann, Mapping) else None
    if not isinstance(pkg, str) or not pkg or not isinstance(ann, Mapping):
        return cwd
    rel = next((ann[k] for k in PATH_KEYS if isinstance(ann.get(k), str)), "")
    return Path(pkg) / Path(rel).parent


def _generator_without_nodes(fc: Mapping[str, Any], config_path: str, results: Results) -> None:
    """Report a generator (WorkloadRun as plugin config) that has no Node to render on."""
    from krm_fn.api.config import OPTION_ANNOTATION_PREFIX as PREFIX

    results.error(
        "no Node to render on: in kustomize's generator form (the WorkloadRun is the plugin "
        "config) kustomize passes no resources, so name the Node files in the WorkloadRun's "
        f"annotation {PREFIX}inventory (e.g. {PREFIX}inventory: nodes.yaml, relative to the "
        f"kustomization); to preview the file instead, run: workloadrun-fn render {config_path} "
        "NODE_FILES",
        resource=ResourceRef.of(dict(fc)),
        field_path=f"metadata.annotations[{PREFIX}inventory]",
    )


_NODE_KINDS = ("Node", "NodeList", "List")


def _plugin_config_problem(fc: Mapping[str, Any], config_path: str) -> str | None:
    """Why a legacy plugin config is an inventory rather than a config (``None``: it is not)."""
    kind = fc.get("kind")
    if kind not in _NODE_KINDS:
        return None
    return (
        f"{config_path} holds {kind} objects, but a file given alone is kustomize's "
        "exec-plugin config (a fn.nvcre.nvidia.com/v1alpha1 WorkloadRunRender, or a WorkloadRun "
        "in generator mode), with the resources on stdin. To preview, run: workloadrun-fn "
        f"render WORKLOADRUN_FILE {config_path}; in a kustomization, list the Nodes under "
        "resources: (transformer) or name them in the WorkloadRun's annotation "
        "fn.nvcre.nvidia.com/inventory (generator)"
    )


def _key(obj: Mapping[str, Any]) -> tuple[Any, Any]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace"), meta.get("name")


def _is_local(item: Mapping[str, Any]) -> bool:
    ann = (item.get("metadata") or {}).get("annotations") or {}
    return str(ann.get("config.kubernetes.io/local-config", "")).lower() == "true"


def _stderr(results: Results) -> list[str]:
    return [r.human() for r in results.safe_items() if r.severity != "info"]


def _failed(
    results: Results,
    stdin: bytes,
    inp: FunctionInput | None = None,
    echo: tuple[str, list[Any]] | None = None,
) -> RunOutcome:
    errors = sum(1 for r in results.items if r.severity == "error")
    lines = [*_stderr(results), f"workloadrun-fn: {errors} error(s); nothing rendered"]
    safe = results.safe_items()
    if echo is None and inp is not None:
        rl_form = inp.form == "resourcelist"
        text = (
            chunks_text(write_output_chunks(inp, inp.entries(), [], safe, False)) if rl_form else ""
        )
    elif echo is not None or _says_resource_list(stdin):  # echo: items read, then refused
        from krm_fn.io import fastdump

        api, items = echo or ("config.kubernetes.io/v1", [])
        rl = {"apiVersion": api, "kind": "ResourceList", "items": items}
        text = fastdump.dump({**rl, "results": [r.to_krm() for r in safe]})
    else:
        text = ""
    return RunOutcome([text], lines, 1)
