"""Run the function once: input text → output text, stderr lines and exit code.

Invariants:
    * Exit code 0 on success, 1 when any error result exists; the output then carries the
      input items unchanged (plus results, in ResourceList form), never a partial render.
    * Nothing printed (stdout, stderr, results) contains the registry password except the
      generated Secret's ``.dockerconfigjson``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from krm_fn import yamlio
from krm_fn.api.config import options_from_config
from krm_fn.inputs import expand_paths, file_ref_of, is_workloadrun, load_files
from krm_fn.inventory import NodeInfo, collect_nodes
from krm_fn.output import assemble
from krm_fn.render import RenderOutput, render_all
from krm_fn.resourcelist import FunctionInput, InputError, parse_input, write_output
from krm_fn.results import FileRef, ResourceRef, Results


@dataclass
class RunOutcome:
    """What the process writes and returns."""

    stdout: str
    stderr: list[str]
    exit_code: int
    render: RenderOutput | None = None


KUSTOMIZE_PLUGIN_FIELDS = ("argsOneLiner", "argsFromFile")

_RL_HINT = re.compile(r"^kind:\s*['\"]?ResourceList", re.MULTILINE)


def run_krm(stdin: bytes, config_path: str | None = None, cwd: Path | None = None) -> RunOutcome:
    """The KRM function (and legacy kustomize exec plugin) entry point.

    Args:
        stdin: Everything read from standard input.
        config_path: ``argv[1]`` in kustomize's legacy exec-plugin protocol: the config file.
        cwd: Directory relative ``inventory`` paths resolve against.

    """
    results = Results()
    try:
        inp = parse_input(stdin)
    except (InputError, yamlio.YAMLInputError) as exc:
        rs = exc.results if isinstance(exc, InputError) else []
        if not rs:
            results.error(str(exc))
        else:
            results.items.extend(rs)
        return _failed(results, stdin)
    fc = inp.function_config
    if config_path is not None:
        try:
            docs = [d for d in yamlio.load_all(Path(config_path).read_bytes(), config_path) if d]
        except (OSError, yamlio.YAMLInputError) as exc:
            results.error(f"cannot read the plugin config {config_path}: {exc}")
            return _failed(results, stdin, inp)
        fc = docs[0] if docs and isinstance(docs[0], dict) else None
    return _render(inp, fc, results, cwd or Path.cwd(), legacy=config_path is not None)


def _render(
    inp: FunctionInput,
    fc: Mapping[str, Any] | None,
    results: Results,
    cwd: Path,
    legacy: bool,
) -> RunOutcome:
    fc_dict = dict(fc) if fc else None
    try:
        options = options_from_config(fc_dict)
    except ValueError as exc:
        ref = ResourceRef.of(fc_dict) if fc_dict else None
        results.error(str(exc), resource=ref)
        return _failed(results, b"", inp)
    runs: list[tuple[dict[str, Any], FileRef | None]] = [
        (it, file_ref_of(it)) for it in inp.items if is_workloadrun(it)
    ]
    if fc_dict and is_workloadrun(fc_dict):
        # kustomize generator mode: the WorkloadRun is the plugin config; kustomize's own
        # plugin fields are not part of the WorkloadRun API.
        wr_fc = {k: v for k, v in fc_dict.items() if k not in KUSTOMIZE_PLUGIN_FIELDS}
        key = _key(wr_fc)
        if not any(_key(r) == key for r, _ in runs):
            runs.append((wr_fc, file_ref_of(wr_fc)))
    nodes: list[NodeInfo] = collect_nodes(inp.items)
    if options.inventory:
        try:
            loaded = load_files(expand_paths(options.inventory, cwd), cwd)
        except (OSError, InputError, yamlio.YAMLInputError) as exc:
            results.error(f"cannot read the inventory named by the inventory option: {exc}")
            return _failed(results, b"", inp)
        nodes += collect_nodes([o for o, _ in loaded.items])
    if not runs:
        results.info("no WorkloadRun in the input; nothing to render")
    rendered = render_all(runs, nodes, options, results, inp.items)
    if results.has_errors:
        return _failed(results, b"", inp)
    items = assemble(inp.items, rendered.objects, options.output_dir, with_paths=not legacy)
    if legacy:
        items = [it for it in items if not _is_local(it)]
    text = write_output(inp, items, results.safe_items())
    return RunOutcome(text, _stderr(results), 0, rendered)


def _key(obj: Mapping[str, Any]) -> tuple[Any, Any]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace"), meta.get("name")


def _is_local(item: Mapping[str, Any]) -> bool:
    ann = (item.get("metadata") or {}).get("annotations") or {}
    return str(ann.get("config.kubernetes.io/local-config", "")).lower() == "true"


def _stderr(results: Results) -> list[str]:
    return [r.human() for r in results.safe_items() if r.severity != "info"]


def _failed(results: Results, stdin: bytes, inp: FunctionInput | None = None) -> RunOutcome:
    errors = sum(1 for r in results.items if r.severity == "error")
    lines = [*_stderr(results), f"workloadrun-fn: {errors} error(s); nothing rendered"]
    if inp is not None:
        text = (
            write_output(inp, inp.items, results.safe_items()) if inp.form == "resourcelist" else ""
        )
    elif _RL_HINT.search(stdin.decode("utf-8", "replace")):
        text = yamlio.dump(
            {
                "apiVersion": "config.kubernetes.io/v1",
                "kind": "ResourceList",
                "items": [],
                "results": [r.to_krm() for r in results.safe_items()],
            }
        )
    else:
        text = ""
    return RunOutcome(text, lines, 1)
