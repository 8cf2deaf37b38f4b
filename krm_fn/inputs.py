"""Gather WorkloadRuns, Nodes and the function config from items and files.

Invariants:
    * Files are read in sorted order; directories contribute their ``*.yaml``, ``*.yml`` and
      ``*.json`` files, sorted, non-recursively.
    * Each object remembers the file and document index it came from, for error messages.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from krm_fn import yamlio
from krm_fn.output import INDEX_KEYS, PATH_KEYS
from krm_fn.records import field, record
from krm_fn.resourcelist import RL_KIND, check_items
from krm_fn.results import FileRef

YAML_SUFFIXES = (".yaml", ".yml", ".json")


@record
class Loaded:
    """Objects read from files, each with where it came from."""

    items: list[tuple[dict[str, Any], FileRef]] = field(default_factory=list)


def expand_paths(paths: Iterable[str | Path], base: Path | None = None) -> list[Path]:
    """Files named by ``paths`` (directories expanded), relative to ``base``."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if base is not None and not path.is_absolute():
            path = base / path
        if path.is_dir():
            out += sorted(f for f in path.iterdir() if f.suffix in YAML_SUFFIXES and f.is_file())
        else:
            out.append(path)
    return out


def load_files(paths: Sequence[Path], display_base: Path | None = None) -> Loaded:
    """Read every object of every file (``ResourceList`` items are unwrapped).

    Raises:
        FileNotFoundError: When a path does not exist.
        yamlio.YAMLInputError / resourcelist.InputError: On malformed content.

    """
    loaded = Loaded()
    for path in paths:
        name = str(path)
        if display_base is not None:
            with contextlib.suppress(ValueError):
                name = str(path.relative_to(display_base))
        data = path.read_bytes()
        docs = [d for d in yamlio.load_all(data, name) if d is not None]
        if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") == RL_KIND:
            docs = list(docs[0].get("items") or [])
        for i, doc in enumerate(check_items(docs, name)):
            loaded.items.append((doc, FileRef(name, i)))
    return loaded


def file_ref_of(item: dict[str, Any]) -> FileRef | None:
    """The orchestrator-provided file reference of an item, when annotated."""
    meta = item.get("metadata")
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(ann, dict):
        return None
    path = next((ann[k] for k in PATH_KEYS if isinstance(ann.get(k), str)), None)
    if path is None:
        return None
    idx = next((ann[k] for k in INDEX_KEYS if isinstance(ann.get(k), str)), "0")
    try:
        return FileRef(path, int(idx))
    except ValueError:
        return FileRef(path, 0)


def is_workloadrun(item: dict[str, Any]) -> bool:
    """Whether an item is a WorkloadRun (any nvcre.nvidia.com version)."""
    api = item.get("apiVersion")
    return (
        item.get("kind") == "WorkloadRun"
        and isinstance(api, str)
        and (api.startswith("nvcre.nvidia.com/"))
    )


def is_function_config(item: dict[str, Any]) -> bool:
    """Whether an item is our typed function config kind."""
    from krm_fn.api.config import CONFIG_KIND

    return item.get("kind") == CONFIG_KIND
