"""Gather WorkloadRuns, Nodes and the function config from items and files.

Invariants:
    * Files are read in sorted order; directories contribute their ``*.yaml``, ``*.yml`` and
      ``*.json`` files, sorted, non-recursively.
    * Each object remembers the file and document index it came from, for error messages.
    * Files are read by the same reader as the function's input
      (:func:`krm_fn.io.resourcelist.parse_input`: every form, the fast reader, the same
      limits, a final answer); Nodes arrive as :class:`~krm_fn.fleet.inventory.NodeInfo`
      and are never built as dicts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from krm_fn.fleet.inventory import NodeInfo
from krm_fn.io.output import INDEX_KEYS, PATH_KEYS
from krm_fn.io.resourcelist import Entry, parse_input
from krm_fn.io.results import FileRef

if TYPE_CHECKING:
    from krm_fn.fleet.inventory import NodeInfo

YAML_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class Loaded:
    """Objects read from files, each with where it came from, and the Nodes among them."""

    items: list[tuple[dict[str, Any], FileRef]] = field(default_factory=list)
    nodes: list[NodeInfo] = field(default_factory=list)


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


def load_files(
    paths: Sequence[Path],
    display_base: Path | None = None,
    into: Loaded | None = None,
) -> Loaded:
    """Read every object of every file (``ResourceList`` items are unwrapped).

    Nodes (alone or in a ``v1 List``) go to :attr:`Loaded.nodes`; every other object to
    :attr:`Loaded.items`. ``into``: add to this (the caller keeps it even when reading
    fails half way).

    Raises ``FileNotFoundError``: when a path does not exist. Raises ``yamlio.YAMLInputError /
    resourcelist.InputError``: on malformed content.
    """
    loaded = Loaded() if into is None else into
    for path in paths:
        name = str(path)
        if display_base is not None:
            with contextlib.suppress(ValueError):
                name = str(path.relative_to(display_base))
        add_input(loaded, path.read_bytes(), name)
    return loaded


def add_input(loaded: Loaded, data: bytes, name: str) -> None:
    """Add the objects of one input (a file's bytes, stdin) to ``loaded`` (see :func:`load_files`)."""
    for i, (entry, obj) in enumerate(read_input(data, name)):
        if entry.nodes:
            loaded.nodes += entry.nodes
        elif obj is not None:
            loaded.items.append((obj, FileRef(name, i)))


def read_input(data: bytes, name: str) -> list[tuple[Entry, dict[str, Any] | None]]:
    """Every entry of an input with its dict (``None`` for Nodes).

    Raises ``yamlio.YAMLInputError / resourcelist.InputError``: on malformed content.
    """
    inp = parse_input(data, name, documents=False)
    return [(e, None if e.nodes else inp.load(e)) for e in inp.entries()]


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


def is_function_config(item: dict[str, Any]) -> bool:
    """Whether an item is our typed function config kind."""
    from krm_fn.api.config import CONFIG_KIND

    return item.get("kind") == CONFIG_KIND
