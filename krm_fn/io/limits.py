"""Bounds on the input, checked before any YAML is constructed into Python objects.

A KRM function reads whatever the orchestrator hands it, and a package can hold files from
anyone. Inputs that cost far more than their size suggests: alias bombs ("billion laughs":
1 KiB of anchors that expand to billions of nodes when dumped or walked), deep nesting (Python
stack in the constructor, validators and dumper), sheer size (~0.5 KiB and 10 µs per node
constructed). Tiny input asking for huge output (``repeatCount: 10000000``) is bounded where
the groups are known (``krm_fn.render.MAX_TRAINJOBS``).

Invariants:
    * Pure functions over the raw text or over a stream of ``yaml.Event`` objects: nothing is
      constructed, so a bomb costs only the time to scan its text.
    * Every refusal is a :class:`LimitExceeded` whose message names the limit, the position
      (line and column) where it was crossed, and what to do instead.
    * An input within the limits is never refused, and the checks never change the data.
    * :func:`check_yaml` raises ``yaml.YAMLError`` for malformed text, as ``yaml.load_all``
      would (:func:`krm_fn.io.yamlio.load_all` calls it before loading). The fast reader
      calls :func:`check_size` on the raw bytes; its strict grammar has no anchors, aliases
      or flow collections, so only what it hands to PyYAML goes through :func:`check_yaml`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import yaml

MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Largest input accepted in any form: 256 MiB. ``kubectl get nodes -o json`` of 10,000 real
GPU nodes is 110 to 180 MB (``-o yaml`` about 115 MB); the fast reader and ``json`` need
about 5 times the input in memory, which keeps such a run within 1 GiB."""

MAX_FULL_YAML_BYTES = 64 * 1024 * 1024
"""Largest input the full YAML reader (PyYAML over the whole text) accepts: 64 MiB.

It reads only what the fast reader cannot (flow style, anchors, tabs, ...) and needs about
20 times the input in memory; a fleet-sized inventory in the shape kubectl, kpt or
kustomize write never reaches it."""

MAX_NODES = 1_000_000
"""Most YAML nodes (scalars, sequences, mappings; aliases at their expanded size) accepted."""

MAX_ALIAS_NODES = 100_000
"""Most nodes that may be reached only through aliases, summed over every alias."""

MAX_DEPTH = 100
"""Deepest nesting of sequences and mappings accepted, aliases expanded (Kubernetes objects
rarely exceed 20 levels; Python's recursion limit is reached near 250)."""

_MIB = 1024 * 1024


class LimitExceeded(ValueError):
    """The input crosses one of the bounds above; the message says which, where and why."""


@dataclass
class _Open:
    """A sequence or mapping whose end event has not been seen yet."""

    anchor: str | None
    nodes: int = 1
    height: int = 1


def _where(event: yaml.Event) -> str:
    mark = event.start_mark
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def check_size(size: int, limit: int | None = None) -> None:
    """:class:`LimitExceeded` for ``size`` bytes (or characters) over ``limit``.

    The default limit is :data:`MAX_INPUT_BYTES`; :data:`MAX_FULL_YAML_BYTES` is the full
    YAML reader's.
    """
    bound = MAX_INPUT_BYTES if limit is None else limit
    if size > bound:
        reader = " of the full YAML reader" if bound == MAX_FULL_YAML_BYTES else ""
        hint = (
            " (it reads inputs not in the block style kubectl, kpt and kustomize write: "
            "flow style, anchors, tabs, ...; write the inventory in that style)"
            if reader
            else ""
        )
        raise LimitExceeded(
            f"input is {size / _MIB:.1f} MiB, over the {bound // _MIB} MiB limit{reader}"
            f"{hint}; split the package, or trim the Node inventory (only metadata, spec and "
            "status of the GPU nodes are read)"
        )


def check_events(events: Iterable[yaml.Event]) -> None:
    """Scan a YAML event stream for alias bombs, deep nesting and too many nodes.

    Each alias counts as the full size and height of the node its anchor names, as if the
    document had been written out without anchors. Anchors are scoped to their document.
    :class:`LimitExceeded` at the first event (of ``yaml.parse(text)``, say) that crosses
    :data:`MAX_DEPTH`, :data:`MAX_ALIAS_NODES` or :data:`MAX_NODES`.
    """
    anchors: dict[str, tuple[int, int]] = {}
    stack: list[_Open] = []
    total = 0
    via_alias = 0
    for event in events:
        if isinstance(event, yaml.DocumentStartEvent):
            anchors = {}
            continue
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append(_Open(event.anchor))
            total += 1
            if len(stack) > MAX_DEPTH:
                raise _too_deep(event)
            _check_total(total, event)
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            done = stack.pop()
            nodes, height, anchor = done.nodes, done.height, done.anchor
        elif isinstance(event, yaml.ScalarEvent):
            nodes, height, anchor = 1, 0, event.anchor
            total += 1
            _check_total(total, event)
        elif isinstance(event, yaml.AliasEvent):
            # An unknown anchor is the parser's error to report, when the document is loaded.
            nodes, height = anchors.get(event.anchor or "", (1, 0))
            anchor = None
            total += nodes
            via_alias += nodes
            if via_alias > MAX_ALIAS_NODES:
                raise _alias_bomb(event)
            if len(stack) + height > MAX_DEPTH:
                raise _alias_too_deep(event)
            _check_total(total, event)
        else:
            continue
        if anchor is not None:
            anchors[anchor] = (nodes, height)
        if stack:
            parent = stack[-1]
            parent.nodes += nodes
            parent.height = max(parent.height, height + 1)


def _too_deep(event: yaml.Event) -> LimitExceeded:
    return LimitExceeded(
        f"YAML nested deeper than {MAX_DEPTH} levels{_where(event)}; "
        "Kubernetes objects do not nest this deep"
    )


def _alias_bomb(event: yaml.Event) -> LimitExceeded:
    return LimitExceeded(
        f"YAML aliases expand to more than {MAX_ALIAS_NODES} nodes{_where(event)}: "
        f"refusing a possible alias bomb ('billion laughs'); write the repeated "
        "values out instead of using anchors and aliases"
    )


def _alias_too_deep(event: yaml.AliasEvent) -> LimitExceeded:
    return LimitExceeded(
        f"YAML alias *{event.anchor} nests deeper than {MAX_DEPTH} levels once "
        f"expanded{_where(event)}; Kubernetes objects do not nest this deep"
    )


def _check_total(total: int, event: yaml.Event) -> None:
    if total > MAX_NODES:
        raise LimitExceeded(
            f"input has more than {MAX_NODES} YAML nodes{_where(event)}; split the package, "
            "or trim the Node inventory (only metadata, spec and status of the GPU nodes are "
            "read)"
        )


def check_yaml(text: str | bytes) -> None:
    """Every bound on one YAML stream, unconstructed: :class:`LimitExceeded` or YAMLError."""
    check_size(len(text))
    check_size(len(text), MAX_FULL_YAML_BYTES)
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    check_events(yaml.parse(text, Loader=loader))
