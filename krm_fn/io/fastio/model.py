"""What the fast reader knows about one item, and how it is sent between processes.

Invariants:
    * An :class:`Item` is a span of the input text; its text is never copied or changed.
    * :data:`_STATE_FIELDS` is everything classification finds; :func:`_apply` sets exactly
      those fields (what the helper process sends back).
    * :func:`_reset` makes an item irregular: PyYAML reads it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from krm_fn.io import yamlio
from krm_fn.io.fastio.scalars import Irregular
from krm_fn.io.nodes import NodeInfo

LOCAL_CONFIG = "config.kubernetes.io/local-config"
_LOCAL_LINE = f"{LOCAL_CONFIG}: 'true'\n"


@dataclass
class Item:
    """One item of the ResourceList as read from its text."""

    start: int  # offset of the item's ``- `` in the input text (-1: the full reader read it)
    end: int  # offset just past the item (its last line's newline)
    prefix: str = ""  # comment and blank lines at column 0 just before the item, verbatim
    regular: bool = True  # whether the fast reader understood the item (else PyYAML read it)
    api_version: Any = None  # ``None`` only before classification
    kind: Any = None
    obj: dict[str, Any] | None = None  # the parsed item, when needed (WorkloadRuns, PyYAML's)
    nodes: list[NodeInfo] = field(default_factory=list)  # a Node: one; a Node ``List``: all
    generated: bool = False  # labelled ``app.kubernetes.io/managed-by: workloadrun-fn``
    input_kind: bool = False  # a WorkloadRun, a v1 Node or a v1 ``List``/``NodeList`` of Nodes
    workloadrun: bool = False
    # For consumed kinds: the local-config edit ``(a, b, new)`` from the line structure
    # (``None``: PyYAML's marks place it).
    edit: tuple[int, int, str] | None = None


def _load_item(text: str) -> dict[str, Any]:
    docs = yamlio.load_all(text)
    if len(docs) != 1 or not isinstance(docs[0], list) or len(docs[0]) != 1:
        raise Irregular
    obj = docs[0][0]
    if not isinstance(obj, dict):
        raise Irregular
    return obj


_State = tuple[Any, ...]
_STATE_FIELDS: tuple[str, ...] = ("regular", "api_version", "kind", "obj", "nodes")
_STATE_FIELDS += ("generated", "input_kind", "workloadrun", "edit")
"""What classification finds about an item (sent from the helper to the parent)."""
_state: Callable[[Item], _State] = operator.attrgetter(*_STATE_FIELDS)


def _apply(it: Item, state: _State) -> None:
    """Set what the helper found about an item (see :data:`_STATE_FIELDS`)."""
    for name, value in zip(_STATE_FIELDS, state, strict=True):
        setattr(it, name, value)


def _reset(it: Item) -> None:
    it.regular = False
    it.obj, it.nodes, it.edit = None, [], None
    it.generated = it.input_kind = it.workloadrun = False
