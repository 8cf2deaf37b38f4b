"""Read a ResourceList or a plain stream: cut it into items, classify and check them.

Invariants:
    * For every accepted input the items, their dicts, flags and NodeInfos equal those of
      the full path (``tests/test_fastio_parity.py``); an item's text is its input text.
    * What :func:`read` returns is final: every item read on the fast path passed the strict
      grammar before it returns, and every other item was read by PyYAML.
    * The envelope is decided by parsing: a ResourceList's header by PyYAML, a plain
      stream's documents by their parsed ``kind`` (one ``ResourceList`` document is not a
      stream); a column-0 ``kind`` line only chooses which reading to try first.
    * Malformed input never raises from here: the result is a :class:`Fallback` (or an item
      handed to PyYAML) and the full path reports the problem; inputs over
      :data:`FAST_MAX_INPUT_BYTES` go to the full path (and its limits) as well.
"""

from __future__ import annotations

import copy
import itertools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from krm_fn.io import yamlio
from krm_fn.io.fastio import helper, streams
from krm_fn.io.fastio.edits import insert_local_config
from krm_fn.io.fastio.extract import _classify_loaded
from krm_fn.io.fastio.grammar import _AMBIGUOUS, _clean_chars
from krm_fn.io.fastio.model import Item, _load_item
from krm_fn.io.fastio.scalars import Irregular
from krm_fn.io.fastio.units import Units
from krm_fn.io.limits import MAX_INPUT_BYTES

FAST_MAX_INPUT_BYTES = MAX_INPUT_BYTES
"""Larger inputs go to the full path, which refuses them (the reader needs ~5x its input)."""


@dataclass
class FastList:
    """A ResourceList (or plain stream) read by :func:`read`.

    Attributes:
        text: The input text (items are slices of it); a plain stream's rewritten as items.
        header: The document without its items (``items`` is ``None`` in it).
        items: The items, in input order.
        stream: The input was a plain multi-document stream (each document an item).
        list_doc: The input is one ``v1 List`` of Nodes read in place: its entries are
            the items (:func:`read`, ``documents``).
        text_bytes: :attr:`text` as bytes, when ASCII: the output is sliced from it.
        documents: A plain stream's items (by start) with where each document lies in
            :attr:`source` (:attr:`.streams.StreamItems.spans`).
        source: A plain stream's input bytes, when ASCII (see :meth:`document_pieces`).

    """

    text: str
    header: dict[str, Any]
    items: list[Item]
    stream: bool = False
    list_doc: bool = False
    text_bytes: bytes | None = None
    documents: dict[int, tuple[int, int, int] | None] | None = None
    source: bytes | None = None

    def item_text(self, item: Item) -> str:
        """The exact input text of an item (without its prefix)."""
        return self.text[item.start : item.end]

    def load(self, item: Item, source: str = "<stdin>") -> dict[str, Any]:
        """The item as a dict (parsed from its text once, then kept).

        ``source`` names the input in messages; the item's index is added to it.
        """
        if item.obj is None:
            try:
                item.obj = _load_item(self.item_text(item))
            except yamlio.YAMLInputError as exc:
                where = "documents" if self.stream else "items"
                msg = str(exc).removeprefix("<stdin>: ")
                at = f"{where}[{self.items.index(item)}] (lines counted from its start)"
                raise type(exc)(f"{source}: {at}: {msg}") from None
        return item.obj

    def edit(self, item: Item, mark: bool = True) -> tuple[int, int, str]:
        """``(a, b, new)``: ``text[a:b]`` becomes ``new`` to mark the item local-config.

        An item the grammar did not vouch for whose text holds a plain scalar YAML 1.1 and
        1.2 read apart (:data:`~.grammar._AMBIGUOUS`) is written from what PyYAML read of it
        (quoted), not echoed; ``mark=False``: that rewrite only.
        """
        if item.regular and item.edit is not None:
            return item.edit if mark else (item.start, item.start, "")
        old = self.item_text(item)
        if _AMBIGUOUS_VALUE.search(old):
            return item.start, item.end, _dumped(self.load(item), mark)
        if not mark:
            return item.start, item.start, ""
        new = insert_local_config(old, self.load(item))
        if new == old:
            return item.start, item.start, ""
        return item.start, item.end, new

    def marked_text(self, item: Item) -> str:
        """The item's text with ``config.kubernetes.io/local-config: "true"`` added."""
        a, b, new = self.edit(item)
        return self.text[item.start : a] + new + self.text[b : item.end]

    def text_slice(self, a: int, b: int) -> str | memoryview:
        """``text[a:b]`` for the output: a slice of :attr:`text_bytes` when there is one."""
        if self.text_bytes is not None:
            return memoryview(self.text_bytes)[a:b]
        return self.text[a:b]

    def document_pieces(self, item: Item, mark: bool) -> list[str | memoryview]:
        """A stream item as the document it was, marked local-config if ``mark``.

        The input's own bytes where it can be sliced (:func:`streams.document_pieces`).
        """
        span = self.documents.get(item.start) if self.documents is not None else None
        edit = self.edit(item, mark) if mark or not item.regular else None
        return streams.document_pieces(self.text, item.start, item.end, edit, self.source, span)


_AMBIGUOUS_VALUE = re.compile(rf"(?:^|[\s\[{{,])(?:{_AMBIGUOUS})(?=[ \t]*(?:[,\]}}#\n]|$))", re.M)
"""A plain scalar YAML 1.1 and 1.2 read apart, anywhere in an item (quoted text too: only
rewriting more)."""


def _dumped(obj: dict[str, Any], mark: bool) -> str:
    from krm_fn.io.fastdump import dump_item
    from krm_fn.io.output import mark_local_config

    want = copy.deepcopy(obj)
    if mark:
        mark_local_config(want)
    return dump_item(want)


_NEXT_TOP = re.compile(r"\n(?=[^ \n#])")


@dataclass
class Fallback:
    """Why the whole input goes to the full reader (PyYAML), for the info result."""

    reason: str


_MIB = 1 << 20
_KIND_LINE = re.compile(r"\n[\"']?kind[\"']?[ \t]*:")


def _says_resource_list(text: str) -> bool:
    """Whether a column-0 ``kind`` key names ``ResourceList`` on its line or the next one.

    Only a hint of which reading to try first (the parsed header decides); one regular
    expression search for those lines, as a plain stream has one per document.
    """
    first = _KIND_LINE.match("\n" + text[:16])
    head = [first.end() - 1] if first is not None else []
    for at in itertools.chain(head, (m.end() for m in _KIND_LINE.finditer(text))):
        end = text.find("\n", at)
        if text.startswith(" ", end + 1):
            end = text.find("\n", end + 1)
        if "ResourceList" in text[at:end]:
            return True
    return False


def read(
    data: bytes | str,
    meanwhile: Callable[[], object] | None = None,
    documents: bool = True,
) -> FastList | Fallback:
    """Read a YAML ResourceList or plain stream in the regular shape; or why not.

    A ResourceList is read as it is (its header parsed by PyYAML); any other input is read as
    a plain stream, each document one item (:func:`krm_fn.io.fastio.streams.stream_as_items`).
    ``meanwhile``: work for this process while the helper reads (importing the render),
    called at most once. ``documents=False`` (the caller writes nothing back: ``render``
    files, the inventory option): a single ``v1 List`` of Nodes (``kubectl get nodes -o
    yaml``) is read in place, its entries as the items.
    """
    if len(data) > FAST_MAX_INPUT_BYTES:
        return Fallback(f"the input is over the fast reader's {FAST_MAX_INPUT_BYTES // _MIB} MiB")
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    big = len(raw) >= helper.FORK_MIN_BYTES and hasattr(os, "fork") and helper._cpus() >= 2
    if not big and not _clean_chars(raw):
        return _UNCLEAN  # (a large input's characters are checked by the helper)
    try:
        text = raw.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        return Fallback("the input is not UTF-8")
    if not text.endswith("\n"):
        text += "\n"
    if _says_resource_list(text):
        return _with_bytes(_read_items(text, raw, big, meanwhile, stream=False), raw)
    if not documents and "\n---" not in text and not text.startswith("---"):
        got = _read_items(text, raw, big, meanwhile, stream=False)
        if isinstance(got, FastList) and _node_list_doc(got):
            got.list_doc = True
            return _with_bytes(got, raw)
        del got
    items = streams.stream_as_items(text)
    del text  # (the rewrite is as large: one of them at a time)
    return _read_stream(items, raw, big, meanwhile)


def _read_stream(
    items: streams.StreamItems | str, raw: bytes, big: bool, meanwhile: Callable[[], object] | None
) -> FastList | Fallback:
    """A plain stream, rewritten as the items of a ResourceList, read (see :func:`read`)."""
    if isinstance(items, str):
        return Fallback(items)
    got = _read_items(items.text, raw, big, meanwhile, stream=True)
    if not isinstance(got, FastList):
        return got
    if len(got.items) == 1 and got.items[0].kind == "ResourceList":
        return Fallback("a ResourceList in a shape the fast reader does not read")
    if len(got.items) == len(items.spans) and raw.isascii():
        got.documents = {it.start: span for it, span in zip(got.items, items.spans, strict=True)}
        got.source = raw
    return got


def _with_bytes(got: FastList | Fallback, raw: bytes) -> FastList | Fallback:
    """``got`` knowing :attr:`FastList.text_bytes` when ``raw`` is its text in ASCII."""
    if isinstance(got, FastList) and len(raw) == len(got.text) and raw.isascii():
        got.text_bytes = raw
    return got


def _node_list_doc(fast: FastList) -> bool:
    """Whether ``fast`` (read in place) is a ``v1 List`` of Nodes, all read as Nodes."""
    head = fast.header
    return (
        head.get("apiVersion") == "v1"
        and head.get("kind") in ("List", "NodeList")
        and all(it.kind == "Node" and it.api_version == "v1" and it.nodes for it in fast.items)
    )


_UNCLEAN = Fallback("the input has tabs, carriage returns or other control characters")


def _read_items(
    text: str,
    raw: bytes,
    big: bool,
    meanwhile: Callable[[], object] | None,
    stream: bool,
) -> FastList | Fallback:
    """Cut ``text`` (a ResourceList's, or a stream rewritten as one) into items, read them all.

    ``raw``: the input bytes, whose characters the helper checks when ``big``.
    """
    if text.startswith("items:\n"):
        items_line = 0
    else:
        items_line = text.find("\nitems:\n") + 1
        if items_line == 0:
            return Fallback("the ResourceList has no 'items:' line at column 0")
    items_start = items_line + len("items:\n")
    items, tail = _cut_items(text, items_start)
    header = _header(text[:items_start] + text[tail:], text.count("\n", 0, items_line))
    if header is None:
        return Fallback("the ResourceList around its items is not in the regular shape")
    fast = FastList(text=text, header=header, items=items, stream=stream)
    units = Units(fast, [i for i, it in enumerate(items) if it.regular])
    child = helper._Helper.start(units, raw, len(text))
    if big and child is None and not _clean_chars(raw):
        return _UNCLEAN
    if meanwhile is not None:
        meanwhile()
    try:
        clean = _read_units(fast, units, child, raw)
    except (Irregular, yamlio.YAMLInputError, RecursionError):
        if child is not None:
            child.cancel()
        return Fallback("an item cannot be read on its own (it is not a Kubernetes object)")
    if not clean:
        return _UNCLEAN
    if not stream and _anchor_twice(fast, (0, items_start), (tail, len(text))):
        return Fallback("an anchor is defined twice in the document")
    return fast


_ANCHOR = re.compile(r"(?<![^\s\[{,])&([^\s\[\]{},]+)")


def _anchor_twice(fast: FastList, *header: tuple[int, int]) -> bool:
    """Whether two items read by PyYAML (or one and the header) may define the same anchor.

    PyYAML refuses an anchor defined twice in a document; read one at a time, the items
    would not see each other's. Anchors are only ever in what PyYAML reads (the strict
    grammar has none); anything that looks like one counts, so this can only say yes more.
    """
    seen: set[str] = set()
    spans = [*header, *((it.start, it.end) for it in fast.items if not it.regular)]
    for s, e in spans:
        names = set(_ANCHOR.findall(fast.text, s, e))
        if names & seen:
            return True
        seen |= names
    return False


def _cut_items(text: str, items_start: int) -> tuple[list[Item], int]:
    """The items from ``items_start`` (the line after ``items:``), and where the list ends.

    Only the boundaries: an item runs from its ``- `` at column 0 to the next column-0 line
    that is neither blank nor a comment, less the comment lines at its end (and what
    follows them), which are the next item's prefix. Its keys are read by
    :func:`~krm_fn.io.fastio.extract._classify`, in either process.
    """
    pos = prefix_start = items_start
    n = len(text)
    items: list[Item] = []
    while pos < n:
        c = text[pos]
        if c == "-" and text.startswith("- ", pos):
            nxt = _NEXT_TOP.search(text, pos)
            end = stop = nxt.end() if nxt is not None else n
            while True:  # back over the blank and comment lines at the end
                line = text.rfind("\n", pos, stop - 1) + 1
                if line <= pos or text[line] not in "#\n":
                    break
                stop = line
                if text[line] == "#":
                    end = line
            items.append(Item(start=pos, end=end, prefix=text[prefix_start:pos]))
            pos = prefix_start = end
        elif c in "#\n":
            nl = text.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        else:
            break
    return items, pos


def _read_units(fast: FastList, units: Units, child: helper._Helper | None, raw: bytes) -> bool:
    """Read every unit (here and in the helper); hand the others and the failures to PyYAML.

    Returns whether the input's characters are clean (the helper checks a large one's).
    Raises :class:`Irregular`, ``YAMLInputError`` or ``RecursionError`` for an item that
    PyYAML cannot read on its own.
    """
    count = len(units.sizes)
    split = count if child is None else child.split()
    failed = [k for k in range(split) if not units.read(k)[1]]
    got = child.results() if child is not None else (True, {})
    if got is None:  # the helper failed: do its work here
        got = (_clean_chars(raw), {})
    clean, theirs = got
    if not clean:
        return False
    for k in range(split, count):
        state, ok = theirs[k] if k in theirs else units.read(k)
        if k in theirs:
            units.apply(k, state)
        if not ok:
            failed.append(k)
    units.finish(failed)
    for it in fast.items:
        if not it.regular:
            _classify_loaded(fast, it)
    return True


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
