"""The units of work of a fast read: whole items, and the parts of ``v1 List`` items.

A ``v1 List`` item (``kubectl get nodes -o yaml``) can hold every Node of the fleet; as one
unit it would keep one core busy while the other waits. So it is cut into its head (the
keys before ``items``), one unit per Node entry and its tail (keys after ``items``), and
those units are shared with the helper process like items are.

Invariants:
    * Every regular item is covered by its units exactly once; a unit's result depends on
      its own text only (:meth:`Units.classify` may run in either process).
    * A ``v1 List`` is split only when its ``items`` line is exactly ``  items:`` after an
      ``apiVersion: v1`` first line and a ``kind: List`` (or ``NodeList``) line, and its
      block starts with an entry (any other List is read by PyYAML); the strict grammar of
      every part is what makes the cut exact.
    * A unit is used only once it passed the strict grammar (:meth:`Units.read`); the item
      of one that did not is read by PyYAML, a ``v1 List`` as a whole (:meth:`Units.finish`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from krm_fn.io.fastio.extract import _classify_or_reset, _list_entry, _top_entries, list_entries
from krm_fn.io.fastio.grammar import strict_ok
from krm_fn.io.fastio.model import Item, _apply, _reset, _state
from krm_fn.io.fastio.scalars import Irregular
from krm_fn.io.nodes import NodeInfo

if TYPE_CHECKING:
    from krm_fn.io.fastio.reader import FastList

WHOLE, LIST_HEAD, LIST_ENTRY, LIST_TAIL = range(4)
_LIST_KINDS = ("List", "NodeList")


def _list_parts(text: str, it: Item) -> tuple[int, list[tuple[int, int]], int] | None:
    """``(end of the head, entry spans, start of the tail)`` of a splittable ``v1 List`` item.

    Only an item whose second line is not a ``kind`` of another kind has its keys read
    here (before the helper starts): a Node's is ``  kind: Node``.
    """
    if not text.startswith("- apiVersion: v1\n", it.start):
        return None
    second = it.start + len("- apiVersion: v1\n")
    if text.startswith("  kind: ", second) and not text.startswith(
        ("  kind: List\n", "  kind: NodeList\n"), second
    ):
        return None
    try:
        by_key = _top_entries(text, it.start, it.end, 2)
    except Irregular:
        return None
    kind, items = by_key.get("kind"), by_key.get("items")
    if (
        kind is None
        or kind.group(2) not in _LIST_KINDS
        or items is None
        or items.group(2) is not None
    ):
        return None
    s, e = items.span(3)
    if not text.startswith("  - ", s):
        return None
    return items.start(), list_entries(text, s, e), e


class Units:
    """The regular items of a fast read as units of work (see the module docstring)."""

    def __init__(self, fast: FastList, regular: list[int]) -> None:
        """Cut the regular items of ``fast`` into units."""
        self.fast = fast
        self.kinds: list[int] = []  # per unit, WHOLE, LIST_HEAD, LIST_ENTRY or LIST_TAIL
        self.owners: list[int] = []  # per unit, the index of its item in ``fast.items``
        self.spans: list[tuple[int, int]] = []  # per unit, its text span
        self.lists: dict[int, list[int]] = {}
        self.nodes: dict[int, NodeInfo | None] = {}
        text = fast.text
        for i in regular:
            it = fast.items[i]
            parts = _list_parts(text, it)
            if parts is None:
                self._add(WHOLE, i, it.start, it.end)
                continue
            head_end, entries, tail = parts
            self._add(LIST_HEAD, i, it.start, head_end)
            first = len(self.kinds)
            for s, e in entries:
                self._add(LIST_ENTRY, i, s, e)
            self.lists[i] = list(range(first, len(self.kinds)))
            if tail < it.end:
                self._add(LIST_TAIL, i, tail, it.end)
        self.sizes = [e - s for s, e in self.spans]  # how the work is split between processes

    def _add(self, kind: int, owner: int, s: int, e: int) -> None:
        self.kinds.append(kind)
        self.owners.append(owner)
        self.spans.append((s, e))

    def classify(self, k: int, checked: list[tuple[int, int]] | None = None) -> Any:
        """Read unit ``k`` (setting its item's fields); what the other process needs of it.

        ``checked`` gets the blocks the extraction checked line by line (see :func:`_node`).
        """
        kind = self.kinds[k]
        if kind == LIST_ENTRY:
            try:
                node = _list_entry(self.fast.text, *self.spans[k], checked)
            except Irregular:
                node = None
            self.nodes[k] = node
            return node
        if kind == LIST_TAIL:
            return None
        it = self.fast.items[self.owners[k]]
        _classify_or_reset(self.fast, it, kind == LIST_HEAD, checked)
        return _state(it)

    def apply(self, k: int, state: Any) -> None:
        """Set what the other process found about unit ``k``."""
        kind = self.kinds[k]
        if kind == LIST_ENTRY:
            self.nodes[k] = state
        elif kind != LIST_TAIL:
            _apply(self.fast.items[self.owners[k]], state)

    def read(self, k: int) -> tuple[Any, bool]:
        """Classify unit ``k`` (:meth:`classify`) and check its grammar; both for the other process.

        A unit the classification already handed to PyYAML (an irregular item, a List entry
        that is not a regular Node) is not checked: its text is not used.
        """
        checked: list[tuple[int, int]] = []
        state = self.classify(k, checked)
        kind = self.kinds[k]
        if kind == LIST_ENTRY and state is None:
            return state, True
        whole = kind in (WHOLE, LIST_HEAD)
        if whole and not self.fast.items[self.owners[k]].regular:
            return state, True
        return state, strict_ok(self.fast.text, *self.spans[k], checked, lines=not whole)

    def finish(self, failed: list[int]) -> None:
        """Hand the items of ``failed`` units to PyYAML; give each split ``v1 List`` its Nodes.

        A List whose head or any entry is not a regular Node is read by PyYAML as a whole.
        """
        items = self.fast.items
        for k in failed:
            _reset(items[self.owners[k]])
        for i, entry_units in self.lists.items():
            it = items[i]
            nodes = [self.nodes.get(k) for k in entry_units]
            if not it.regular or it.kind not in _LIST_KINDS or any(n is None for n in nodes):
                _reset(it)
            else:
                it.nodes = [n for n in nodes if n is not None]
