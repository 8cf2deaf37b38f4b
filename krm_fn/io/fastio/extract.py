"""Extraction: the fields the render reads, straight from an item's text.

For each regular item: ``apiVersion``, ``kind``, ``metadata`` by their lines; for a Node,
the fields of its view (:data:`krm_fn.io.nodes.NODE_FIELDS`), each by the reader of its
shape, decoded as PyYAML would (:mod:`.scalars`).

Invariants:
    * Sound only together with the strict grammar (:func:`krm_fn.io.fastio.grammar.strict_ok`),
      which the caller checks for every item read here before any output is released.
    * Anything unexpected raises :class:`Irregular`; the item is then read by PyYAML
      (:func:`_classify_loaded`, the same rules as the full path).
    * The result of :func:`_classify` for an item depends on that item's text only (so the
      helper process can classify any subset of items).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from krm_fn.io.fastio.edits import _edit_or_none
from krm_fn.io.fastio.grammar import _ENTRY, _FIRST, _FLAT, _KEY, _SEQFLAT, _Patterns
from krm_fn.io.fastio.model import Item, _reset
from krm_fn.io.fastio.scalars import _KEY_CACHE, _STR_CACHE, Irregular, _any, _key, _str
from krm_fn.io.nodes import FIELDS_BY_SECTION, NodeInfo, collect_nodes, node_record
from krm_fn.keys import LABEL_MANAGED_BY, MANAGER, is_workloadrun_kind

if TYPE_CHECKING:
    from krm_fn.io.fastio.reader import FastList


def _classify_or_reset(
    fast: FastList, it: Item, split_list: bool = False, checked: list[tuple[int, int]] | None = None
) -> None:
    try:
        _classify(fast, it, split_list, checked)
    except Irregular:
        _reset(it)


def _blank(text: str, s: int, e: int) -> bool:
    """Whether ``text[s:e]`` holds only empty lines."""
    return s == e or (text[s] == "\n" and text.count("\n", s, e) == e - s)


def _entries(text: str, s: int, e: int, b: int) -> dict[str, re.Match[str]]:
    """The keys of a block mapping at indentation ``b`` spanning ``text[s:e]``."""
    out: dict[str, re.Match[str]] = {}
    match = _ENTRY[b].match
    pos = s
    while pos < e:
        if text[pos] == "\n":
            pos += 1
            continue
        m = match(text, pos, e)
        if m is None:
            raise Irregular
        k = _key(m.group(1))
        if k in out:
            raise Irregular
        out[k] = m
        pos = m.end()
    return out


def _items_of(text: str, m: re.Match[str], b: int) -> dict[str, re.Match[str]] | None:
    """The block mapping under an entry (``None`` for an inline ``{}``)."""
    raw = m.group(2)
    s, e = m.span(3)
    if raw is not None:
        if raw != "{}" or s != e:
            raise Irregular
        return None
    if _blank(text, s, e):
        raise Irregular  # null: let PyYAML decide what it means
    if text.startswith(" " * (b - 2) + "- ", s) or text.startswith(" " * b + "- ", s):
        raise Irregular  # a sequence where a mapping is expected
    return _entries(text, s, e, b)


_LINE_START = {b: "\n" + " " * b for b in (6, 8)}


def _flat_map(text: str, m: re.Match[str], b: int, strings: bool) -> dict[str, Any]:
    """A mapping of one-line scalars at indentation ``b`` (labels, allocatable).

    Strings (labels) take a C-level path: the block is split at line starts and ``": "``
    and both halves go through the caches; any surprise (a ``": "`` inside a value, a
    deeper line, ...) shows as a count mismatch or a bad key and takes the careful path.
    """
    raw = m.group(2)
    s, e = m.span(3)
    if raw is not None or s == e:
        if raw == "{}" and s == e:
            return {}
        raise Irregular  # a scalar, or null: PyYAML says what it is
    n = text.count("\n", s, e)
    if strings:
        parts = text[s - 1 : e - 1].replace(_LINE_START[b], ": ").split(": ")
        if len(parts) == 2 * n + 1 and not parts[0]:
            out = dict(
                zip(
                    map(_KEY_CACHE.__getitem__, parts[1::2]),
                    map(_STR_CACHE.__getitem__, parts[2::2]),
                    strict=True,
                )
            )
            if len(out) != n:
                raise Irregular  # duplicate key
            return out
    pairs = _FLAT[b].findall(text, s - 1, e)
    if len(pairs) != n or not pairs:
        raise Irregular
    keys = _KEY_CACHE
    if strings:
        vals = _STR_CACHE
        out = {keys[k]: vals[v] for k, v in pairs}
    else:
        out = {keys[k]: _any(v) for k, v in pairs}
    if len(out) != len(pairs):
        raise Irregular  # duplicate key
    return out


def _seq_of_maps(text: str, m: re.Match[str], b: int) -> list[dict[str, Any]]:
    """A compact sequence (``-`` at ``b``) of flat mappings of one-line scalars (taints)."""
    raw = m.group(2)
    s, e = m.span(3)
    if raw is not None:
        if raw == "[]" and s == e:
            return []
        raise Irregular
    dash = " " * b + "- "
    if not text.startswith(dash, s):
        raise Irregular
    lines = _SEQFLAT[b].findall(text, s - 1, e)
    if len(lines) != text.count("\n", s, e):
        raise Irregular
    out: list[dict[str, Any]] = []
    cur: dict[str, Any] = {}
    for marker, k, v in lines:
        if marker == dash:
            cur = {}
            out.append(cur)
        key = _key(k)
        if key in cur:
            raise Irregular
        cur[key] = _any(v) if v else None
    return out


def _kept_entries(
    text: str, m: re.Match[str], b: int, keep: tuple[str, ...]
) -> list[dict[str, Any]]:
    """The ``keep`` keys of each entry of a compact sequence (``-`` at ``b``): conditions.

    Other keys are not read: the strict grammar guarantees that their lines (including
    multi-line messages) are deeper than ``b + 2`` or are other ``key:`` lines at ``b + 2``.
    One scan finds every entry start (``- ``) and every line of a kept key.
    """
    raw = m.group(2)
    s, e = m.span(3)
    if raw is not None:
        if raw == "[]" and s == e:
            return []
        raise Irregular
    dash_line = "\n" + " " * b + "- "
    if not text.startswith(dash_line, s - 1):
        raise Irregular
    out: list[dict[str, Any]] = []
    entry: dict[str, Any] = {}
    lines = _kept_line(b, keep).findall(text, s - 1, e)
    if sum(1 for line in lines if line[0]) != text.count(dash_line, s - 1, e):
        raise Irregular  # an entry that is not a mapping (``- Ready``)
    for dash, k1, v1, d1, k2, v2, d2 in lines:
        if dash:
            entry = {}
            out.append(entry)
            if not k1:
                continue
            key, value, deeper = k1, v1, d1
        else:
            key, value, deeper = k2, v2, d2
        if key in entry or deeper:
            raise Irregular  # a duplicate, or a value that spans lines
        entry[key] = _any(value[1:]) if value else None
    return out


_KEPT_LINES: dict[tuple[int, tuple[str, ...]], re.Pattern[str]] = {}


def _kept_line(b: int, keep: tuple[str, ...]) -> re.Pattern[str]:
    """An entry start (``- `` at ``b``, maybe on a kept key's line) or a kept key's line.

    Groups: the dash, then (key, `` value``, deeper next line) for a key on the dash line,
    then the same for a key line at ``b + 2``. Compiled on first use.
    """
    pattern = _KEPT_LINES.get((b, keep))
    if pattern is None:
        key = rf"({'|'.join(map(re.escape, keep))}):( [^\n]*+)?(?=\n(\ {{{b + 3}}})?)"
        pattern = re.compile(rf"\n{' ' * b}(?:(- )(?:{key}|(?={_KEY}:[ \n]))|\ \ {key})")
        _KEPT_LINES[b, keep] = pattern
    return pattern


def _classify(
    fast: FastList, it: Item, split_list: bool = False, checked: list[tuple[int, int]] | None = None
) -> None:
    """Read a regular item (``- `` at column 0, keys at 2).

    ``split_list``: for a ``v1 List``, only its own fields are read here; its Nodes are
    read one by one (:func:`_list_entry`) and set by the caller. ``checked``: see :func:`_node`.
    """
    text = fast.text
    top = _top_entries(text, it.start, it.end, 2)
    api = _str(_need_inline(text, top, "apiVersion"))
    kind = _str(_need_inline(text, top, "kind"))
    it.api_version, it.kind = api, kind
    meta_m = top.get("metadata")
    meta = _items_of(text, meta_m, 4) if meta_m is not None else None
    if api == "v1" and kind == "Node":
        node = _node(text, top, meta, 2, api, kind, checked)
        it.generated = node.labels.get(LABEL_MANAGED_BY) == MANAGER
        it.input_kind = True
        if not it.generated:
            it.nodes = [node]
            it.edit = _edit_or_none(text, it, meta_m, meta)
        return
    if kind == "ResourceSlice" and api.startswith("resource.k8s.io/"):
        # DRA inventory, read by the render and never applied (output.is_input_kind).
        it.input_kind = True
        it.edit = _edit_or_none(text, it, meta_m, meta)
        return
    labels_m = meta.get("labels") if meta else None
    if labels_m is not None:
        labels = _flat_map(text, labels_m, 6, strings=False)
        it.generated = labels.get(LABEL_MANAGED_BY) == MANAGER
    is_run = is_workloadrun_kind(api, kind)
    if it.generated:
        if api == "v1" and kind in ("List", "NodeList"):
            raise Irregular  # whether it is a Node list decides a flag: let PyYAML say
        it.input_kind = it.workloadrun = is_run
        return
    if api == "v1" and kind in ("List", "NodeList"):
        if not split_list:
            raise Irregular  # not in the shape Units cuts into Nodes: PyYAML reads it
        it.input_kind = True
        it.edit = _edit_or_none(text, it, meta_m, meta)
    elif is_run:
        it.workloadrun = it.input_kind = True
        it.edit = _edit_or_none(text, it, meta_m, meta)
        fast.load(it)


def _find_entries(
    text: str, m: re.Match[str], b: int, wanted: tuple[str, ...]
) -> dict[str, re.Match[str]]:
    """Some keys of the block mapping under an entry, found without walking the rest.

    For big sections (``status``: its images are most of a Node) only the wanted keys are
    located, by their exact line start; the strict grammar guarantees that such a line is
    a key of this mapping. Duplicates of a wanted key are refused.
    """
    raw = m.group(2)
    s, e = m.span(3)
    if raw is not None:
        if raw != "{}" or s != e:
            raise Irregular
        return {}
    if (
        _blank(text, s, e)
        or text.startswith(" " * (b - 2) + "- ", s)
        or text.startswith(" " * b + "- ", s)
    ):
        raise Irregular  # null or a sequence: let PyYAML decide
    out: dict[str, re.Match[str]] = {}
    match = _ENTRY[b].match
    for key in wanted:
        needle = "\n" + " " * b + key + ":"
        at = text.find(needle, s - 1, e)
        if at < 0:
            continue
        if text.find(needle, at + 1, e) >= 0:
            raise Irregular  # duplicate key
        found = match(text, at + 1, e)
        if found is None or found.group(1) != key:
            raise Irregular
        out[key] = found
    return out


def _top_entries(text: str, start: int, end: int, b: int) -> dict[str, re.Match[str]]:
    m = _FIRST[b].match(text, start, end)
    if m is None:
        raise Irregular
    out = {_key(m.group(1)): m}
    rest = _entries(text, m.end(), end, b)
    for k, v in rest.items():
        if k in out:
            raise Irregular
        out[k] = v
    return out


def _need_inline(text: str, top: Mapping[str, re.Match[str]], key: str) -> str:
    m = top.get(key)
    if m is None:
        raise Irregular
    return _inline_only(text, m)


def _inline_only(text: str, m: re.Match[str]) -> str:
    """The one-line value of an entry (``"null"`` when empty); Irregular for a block."""
    raw, blank = m.group(2), _blank(text, *m.span(3))
    if not blank:
        raise Irregular  # a block, or a value spanning lines
    return "null" if raw is None else raw


def _node(
    text: str,
    top: Mapping[str, re.Match[str]],
    meta: Mapping[str, re.Match[str]] | None,
    b: int,
    api: str,
    kind: str,
    checked: list[tuple[int, int]] | None = None,
) -> NodeInfo:
    """The NodeInfo of a regular Node whose keys sit at ``b`` (``meta``: its metadata keys).

    Its view holds the fields of :data:`krm_fn.io.nodes.NODE_FIELDS`, each read by the
    reader of its shape (:data:`_SHAPE_READERS`). ``status`` is most of a Node (its images):
    only the wanted keys are located there, not every key walked. ``checked`` gets the
    blocks whose every line a reader checked (labels, allocatable): the grammar need not.

    Raises ``Irregular``: a field the render reads is not in the regular shape, or the Node has
    no usable name.
    """
    view: dict[str, Any] = {"apiVersion": api, "kind": kind}
    for section, fields in _READERS:
        m = top.get(section)
        if m is None:
            continue
        if section == "metadata":
            found = meta
        elif section == "status":
            found = _find_entries(text, m, b + 2, _STATUS_KEYS)
            images = found.get("images")
            if (
                images is not None
                and checked is not None
                and _IMAGES[b].fullmatch(text, *images.span(3))
            ):
                checked.append(images.span(3))
        else:
            found = _items_of(text, m, b + 2)
        sub = view[section] = {}
        for key, read, keep, whole in fields:
            entry = found.get(key) if found else None
            if entry is not None:
                sub[key] = read(text, entry, b, keep)
                if whole and checked is not None and entry.group(2) is None:
                    checked.append(entry.span(3))  # (a block, not an inline {})
    name = view.get("metadata", {}).get("name")
    if type(name) is not str or not name:
        raise Irregular  # the full path reports a Node without a usable name
    return node_record(view, string_labels=True)


def _scalar(text: str, m: re.Match[str], b: int, keep: tuple[str, ...]) -> Any:
    return _any(_inline_only(text, m))


def _entries_of(text: str, m: re.Match[str], b: int, keep: tuple[str, ...]) -> Any:
    return _kept_entries(text, m, b + 2, keep) if keep else _seq_of_maps(text, m, b + 2)


_SHAPE_READERS: Mapping[str, Callable[[str, re.Match[str], int, tuple[str, ...]], Any]] = {
    "scalar": _scalar,
    "strings": lambda text, m, b, keep: _flat_map(text, m, b + 4, strings=True),
    "mapping": lambda text, m, b, keep: _flat_map(text, m, b + 4, strings=False),
    "entries": _entries_of,
}
"""Per shape of :data:`krm_fn.io.nodes.NODE_FIELDS`, how the fast reader reads such a field
(whose key sits at ``b + 2``; entries that keep some keys skip every other line). The
mapping readers check every line of their block."""

_READERS = tuple(
    (
        section,
        tuple(
            (k, _SHAPE_READERS[f.shape], f.keep, f.shape in ("strings", "mapping"))
            for k, f in fields.items()
        ),
    )
    for section, fields in FIELDS_BY_SECTION.items()
)
_STATUS_KEYS = (*FIELDS_BY_SECTION["status"], "images")
_IMAGES = _Patterns(
    lambda b: re.compile(
        rf"(?:{' ' * (b + 2)}- names:\n(?:{' ' * (b + 4)}- [A-Za-z0-9_][A-Za-z0-9_./@:+-]*+(?<!:)\n)++"
        rf"{' ' * (b + 4)}sizeBytes: [0-9]++\n)++"
    )
)
"""kubelet's images (most of a Node's text): a block of this shape (each name a plain
scalar without spaces) is checked by this one pattern instead of the grammar."""


def list_entries(text: str, s: int, e: int) -> list[tuple[int, int]]:
    """The spans of the entries (``  - `` at column 2) of a ``v1 List`` item's ``items`` block.

    Exact for text that passes the strict grammar: an entry's other lines are deeper.
    """
    out = []
    find = text.find
    while s < e:
        nxt = find("\n  - ", s, e)
        end = e if nxt < 0 else nxt + 1
        out.append((s, end))
        s = end
    return out


def _list_entry(
    text: str, s: int, e: int, checked: list[tuple[int, int]] | None = None
) -> NodeInfo | None:
    """The Node of one ``v1 List`` entry; ``None`` unless it is a regular, non-generated Node.

    Raises ``Irregular``: when the entry is not in the regular shape.
    """
    sub = _top_entries(text, s, e, 4)
    api = _str(_need_inline(text, sub, "apiVersion"))
    kind = _str(_need_inline(text, sub, "kind"))
    if api != "v1" or kind != "Node":
        return None
    sub_meta_m = sub.get("metadata")
    sub_meta = _items_of(text, sub_meta_m, 6) if sub_meta_m is not None else None
    node = _node(text, sub, sub_meta, 4, api, kind, checked)
    if node.labels.get(LABEL_MANAGED_BY) == MANAGER:
        return None
    return node


def _classify_loaded(fast: FastList, it: Item) -> None:
    """Classify an item PyYAML read (the same rules and checks as the full path)."""
    from krm_fn.io.output import is_generated, is_input_kind
    from krm_fn.io.resourcelist import InputError, check_items

    obj = fast.load(it)
    try:
        check_items([obj], "")
    except InputError:
        raise Irregular from None  # the full path reports it, with the item's index
    it.api_version, it.kind = api, kind = obj["apiVersion"], obj["kind"]
    it.generated = is_generated(obj)
    it.input_kind = is_input_kind(obj)
    it.workloadrun = is_workloadrun_kind(api, kind)
    it.nodes = [] if it.generated else collect_nodes([obj])
