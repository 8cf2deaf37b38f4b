"""Read a ResourceList: cut it into items, classify them, hand the verdict to the caller.

Invariants:
    * For every accepted input the items, their dicts, flags and NodeInfos equal those of
      the full path (``tests/test_fastio_parity.py``); an item's text is its input text.
    * Malformed input never raises from here: the result is ``None`` (or an item handed to
      PyYAML) and the full path reports the problem; inputs over
      :data:`FAST_MAX_INPUT_BYTES` go to the full path (and its limits) as well.
    * No output may be released before :meth:`FastList.confirm` (the strict grammar).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import yaml

from krm_fn import yamlio
from krm_fn.fastio import helper
from krm_fn.fastio.edits import insert_local_config
from krm_fn.fastio.extract import _classify_loaded, _classify_or_reset
from krm_fn.fastio.grammar import _ENTRY, _FIRST, _clean_chars, _validate_all
from krm_fn.fastio.model import Item, _apply, _load_item, _reset
from krm_fn.fastio.scalars import Irregular
from krm_fn.records import record

FAST_MAX_INPUT_BYTES = 192 << 20
"""Larger inputs go to the full path, which refuses them (:data:`krm_fn.limits.MAX_INPUT_BYTES`).

The fast reader needs about 5 to 6 times its input in memory, so this keeps a run under the
1 GiB the function is allowed; the full path needs far more per byte, hence its lower limit.
"""


@record
class FastList:
    """A ResourceList read by :func:`read_resource_list`.

    Attributes:
        text: The whole input text (item texts are slices of it).
        header: The document without its items (``items`` is ``None`` in it).
        items: The items, in input order.

    """

    text: str
    header: dict[str, Any]
    items: list[Item]
    _pending: (
        tuple[list[tuple[int, int]], Callable[[], list[int] | None], Callable[[], None]] | None
    ) = None

    def confirm(self) -> bool | None:
        """Wait for the strict-grammar check of the items read on the fast path.

        Returns:
            ``True`` when every item read on the fast path passed (nothing changes);
            ``False`` when some did not and were read again by PyYAML (whatever was
            computed from the items must be computed again); ``None`` when PyYAML cannot
            read them one by one either (the caller must use the full path).

        """
        if self._pending is None:
            return True
        spans, verdict, _ = self._pending
        self._pending = None
        bad = verdict()
        if bad is None:
            return None
        failed = {spans[i][0] for i in bad}
        unchanged = True
        try:
            for it in self.items:
                if it.regular and it.start in failed:
                    # Everything the render uses; obj is parsed from the same text either way.
                    before = (it.nodes, it.generated, it.input_kind, it.workloadrun)
                    _reset(it)
                    _classify_loaded(self, it)
                    after = (it.nodes, it.generated, it.input_kind, it.workloadrun)
                    unchanged = unchanged and before == after
        except (Irregular, yamlio.YAMLInputError, RecursionError):
            return None
        return unchanged

    def abandon(self) -> None:
        """Stop waiting for the check (the input goes to the full path)."""
        if self._pending is not None:
            self._pending[2]()
            self._pending = None

    def item_text(self, item: Item) -> str:
        """The exact input text of an item (without its prefix)."""
        return self.text[item.start : item.end]

    def load(self, item: Item) -> dict[str, Any]:
        """The item as a dict (parsed from its text once, then kept)."""
        if item.obj is None:
            item.obj = _load_item(self.item_text(item))
        return item.obj

    def edit(self, item: Item) -> tuple[int, int, str]:
        """The edit that adds ``config.kubernetes.io/local-config: "true"`` to an item.

        Returns:
            ``(a, b, new)``: replace ``text[a:b]`` (absolute offsets, within the item) by
            ``new``; ``(a, a, "")`` when the annotation is already there.

        """
        if item.regular and item.edit is not None:
            return item.edit
        old = self.item_text(item)
        new = insert_local_config(old, self.load(item))
        if new == old:
            return item.start, item.start, ""
        return item.start, item.end, new

    def marked_text(self, item: Item) -> str:
        """The item's text with ``config.kubernetes.io/local-config: "true"`` added."""
        a, b, new = self.edit(item)
        return self.text[item.start : a] + new + self.text[b : item.end]


_NEXT_TOP = re.compile(r"\n(?=[^ \n#])")


def read_resource_list(
    data: bytes | str,
    meanwhile: Callable[[], object] | None = None,
) -> FastList | None:
    """Read a ResourceList in the regular shape; ``None`` when the full path must read it.

    Args:
        data: The raw input.
        meanwhile: Work for this process while a helper classifies items (e.g. importing
            the render); called at most once, never when the input is not regular. The
            helper's share of the work adapts to however long it takes (see
            :class:`_Helper`).

    Returns:
        The header and the items, Nodes already extracted, or ``None``.

    """
    if len(data) > FAST_MAX_INPUT_BYTES:
        return None
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    big = len(raw) >= helper.FORK_MIN_BYTES and hasattr(os, "fork") and helper._cpus() >= 2
    if not big and not _clean_chars(raw):
        return None  # (a large input's characters are checked by the helper)
    try:
        text = raw.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        return None
    if not text.endswith("\n"):
        text += "\n"
    if text.startswith("items:\n"):
        items_line = 0
    else:
        items_line = text.find("\nitems:\n") + 1
        if items_line == 0:
            return None
    pos = items_start = items_line + len("items:\n")
    n = len(text)
    items: list[Item] = []
    first = _FIRST[2].match
    entry = _ENTRY[2].match
    prefix_start = pos
    while pos < n:
        c = text[pos]
        if c == "-" and text.startswith("- ", pos):
            m = first(text, pos)
            end = m.end() if m is not None else pos
            top = []
            if m is not None:
                top.append(m)
                while True:
                    m2 = entry(text, end)
                    if m2 is None:
                        break
                    top.append(m2)
                    end = m2.end()
            item = Item(start=pos, end=end, prefix=text[prefix_start:pos], top=top)
            if end == pos or (end < n and text[end] == " "):
                item.regular = False
                nxt = _NEXT_TOP.search(text, pos)
                item.end = end = nxt.end() if nxt is not None else n
            items.append(item)
            pos = prefix_start = end
        elif c in "#\n":
            nl = text.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        else:
            break
    tail = pos
    header_text = text[:items_start] + text[tail:]
    header = _header(header_text, text.count("\n", 0, items_line))
    if header is None:
        return None
    fast = FastList(text=text, header=header, items=items)
    regular = [i for i, it in enumerate(items) if it.regular]
    spans = [(items[i].start, items[i].end) for i in regular]
    child = helper._Helper.start(fast, raw, regular, spans)
    if big and child is None and not _clean_chars(raw):
        return None
    if meanwhile is not None:
        meanwhile()
    try:
        if child is None:
            for i in regular:
                _classify_or_reset(fast, items[i])
        else:
            split = child.split()
            for i in regular[:split]:
                _classify_or_reset(fast, items[i])
            results = child.classified()
            for k in range(split, len(regular)):
                state = results.get(k)
                if state is None:  # the helper failed: do it here
                    _classify_or_reset(fast, items[regular[k]])
                else:
                    _apply(items[regular[k]], state)
        for it in items:
            if not it.regular:
                _classify_loaded(fast, it)
    except (Irregular, yamlio.YAMLInputError, RecursionError):
        if child is not None:
            child.cancel()
        return None
    if child is not None:
        fast._pending = (spans, child.verdict, child.cancel)
    else:
        fast._pending = (spans, lambda: _validate_all(text, spans), _nothing)
    return fast


def _nothing() -> None:
    pass


def _header(text: str, items_line: int) -> dict[str, Any] | None:
    """The document without its items; PyYAML must see ``items`` on the line we saw it."""
    try:
        node, doc = yamlio.compose_and_load(text)
    except (yamlio.YAMLInputError, RecursionError):
        return None
    if not isinstance(node, yaml.MappingNode) or not isinstance(doc, dict):
        return None
    lines = [k.start_mark.line for k, _ in node.value if getattr(k, "value", None) == "items"]
    if lines != [items_line] or doc.get("items") is not None:
        return None
    return doc
