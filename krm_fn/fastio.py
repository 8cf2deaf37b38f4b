"""Read a KRM ``ResourceList`` without building Python objects for the Nodes in it.

Job: cut the ResourceList text into its items, read from every Node only the fields the
render uses (its :func:`krm_fn.inventory.node_view`), keep every item's exact text so it is
passed through verbatim, and work out where the ``config.kubernetes.io/local-config``
annotation goes. Items the fast reader does not handle are parsed by PyYAML one at a time;
when even the item boundaries are uncertain, :func:`read_resource_list` returns ``None`` and
the caller parses the whole input with PyYAML (the full path).

How (each step checked, nothing assumed):
    1. Characters: UTF-8 with no tab, CR, control character, BOM, NEL, LS or PS.
    2. Structure: one loose regex pass walks the items (``items:`` at column 0, entries
       ``- key: ...`` at column 0) and the keys of each item at indentation 2; the rest of
       the document is small and parsed by PyYAML, which must find ``items`` on that line.
    3. Classification: for each item, ``apiVersion``/``kind``/``metadata`` by their lines;
       for a Node, ``name``, ``labels``, ``providerID``, ``unschedulable``, ``taints``,
       ``status.allocatable`` and the conditions' ``type``/``status``, decoded exactly as
       PyYAML would (plain scalars through its resolver; anything else is irregular).
    4. Verdict: every item read on the fast path is checked against a strict line grammar
       (:func:`strict_ok`): block mappings indented by two, sequences at their key's
       column, plain/quoted/block scalars whose continuation lines are deeper than the line
       they start on, ``[]``/``{}``, trailing comments; no flow collections, anchors,
       aliases, tags, quoted or complex keys, full-line comments, odd indentation. This is
       what makes step 2 and 3 sound; an item that fails it is read again by PyYAML.

For a large input a forked helper process (:class:`_Helper`) shares the classification
and then the characters check and the grammar with this process: the helper works from the
last item down while this process imports the render and goes on; each job is split where
the two meet, so the split adapts to how long this process was busy. :meth:`FastList.confirm`
does this process's share of the grammar and waits for the rest of the verdict, and the
caller only releases output after it (recomputing when an item had to be read again).

Invariants:
    * For every accepted input the items, their dicts, flags and NodeInfos equal those of
      the full path (``tests/test_fastio_parity.py``); an item's text is its input text.
    * An item read by PyYAML keeps its text too: its annotation is inserted at the place
      PyYAML's marks give (block or flow style), ruamel.yaml's round-trip being the last
      resort, and the edit is verified by parsing it, so user comments survive.
    * Malformed input never raises from here: the result is ``None`` (or an item handed to
      PyYAML) and the full path reports the problem; inputs over
      :data:`FAST_MAX_INPUT_BYTES` go to the full path (and its limits) as well.
    * What the fast path does not detect, by design (both need a full parse of sections it
      never reads): a duplicate key inside such a section, and a ``- entry`` dedented to
      the column of a mapping whose key had a mapping value (the grammar checks each line
      against the next one only). kpt's own parser still rejects them when it reads the
      output; everything the function reads is exact.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import operator
import os
import pickle
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from krm_fn import yamlio
from krm_fn.inventory import NodeInfo, collect_nodes, node_problems
from krm_fn.records import field, record

__all__ = [
    "FastList",
    "Item",
    "insert_local_config",
    "read_resource_list",
    "strict_ok",
]

LOCAL_CONFIG = "config.kubernetes.io/local-config"
_LOCAL_LINE = f"{LOCAL_CONFIG}: 'true'\n"
_MANAGED_BY = "app.kubernetes.io/managed-by"
_MANAGER = "workloadrun-fn"

FORK_MIN_BYTES = 4 << 20
"""Inputs at least this large are read with a forked helper (see :class:`_Helper`)."""

FAST_MAX_INPUT_BYTES = 192 << 20
"""Larger inputs go to the full path, which refuses them (:data:`krm_fn.limits.MAX_INPUT_BYTES`).

The fast reader needs about 5 to 6 times its input in memory, so this keeps a run under the
1 GiB the function is allowed; the full path needs far more per byte, hence its lower limit.
"""

PICKLE_COST = 0.13
"""Pickling a classified item (helper) or unpickling it (parent), relative to classifying it."""


class Irregular(Exception):
    """The item is not in the regular shape: PyYAML reads it."""


# --------------------------------------------------------------------------- patterns

_KEY = r"[A-Za-z0-9_.][A-Za-z0-9_./-]*+"
_KEYC = "[A-Za-z0-9_.]"


def _block(b: int) -> str:
    """The lines that belong to a key at indentation ``b``: deeper, compact entries, blank."""
    ind = " " * b
    return rf"((?:{ind} [^\n]*+\n|{ind}- [^\n]*+\n|\n)*+)"


def _first(b: int) -> re.Pattern[str]:
    """The first line of a sequence entry whose mapping keys are at ``b``, with its block."""
    return re.compile(rf"{' ' * (b - 2)}- ({_KEY}):(?: ([^\n]*+))?\n{_block(b)}")


def _entry(b: int) -> re.Pattern[str]:
    """A mapping key at indentation ``b`` with its inline value and its block."""
    return re.compile(rf"{' ' * b}({_KEY}):(?: ([^\n]*+))?\n{_block(b)}")


def _flat(b: int) -> re.Pattern[str]:
    """One ``key: value`` line at indentation ``b`` (searched from the preceding newline)."""
    return re.compile(rf"\n{' ' * b}({_KEY}): ([^\n]*+)(?=\n)")


def _seqflat(b: int) -> re.Pattern[str]:
    """A line of a compact sequence of flat mappings whose ``-`` sits at ``b``."""
    return re.compile(rf"\n({' ' * b}- |{' ' * (b + 2)})({_KEY}):(?: ([^\n]*+))?(?=\n)")


class _Patterns(dict[int, re.Pattern[str]]):
    """Patterns per indentation, compiled on first use (a start-up cost otherwise)."""

    def __init__(self, make: Callable[[int], re.Pattern[str]]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, b: int) -> re.Pattern[str]:
        pattern = self[b] = self._make(b)
        return pattern


_FIRST = _Patterns(_first)
_ENTRY = _Patterns(_entry)
_FLAT = _Patterns(_flat)
_SEQFLAT = _Patterns(_seqflat)


def _strict_pattern() -> re.Pattern[str]:
    r"""The strict line grammar of one item (see the module docstring).

    Every line after the first is ``(?P<i>indent)`` then a key line or an entry line; the
    lookaheads after each line check the indentation of the next one (a leaf is never
    followed by a deeper line, an opener always by its child at +2 or by a sequence at its
    own column, ...), so indentation errors are caught too.
    """
    plain_first = r"(?:[^\s\-?:,\[\]{}#&*!|>'\"%@`=<]|[-?:](?=[^\s]))"
    plain_body = r"[^:#\n]*+(?:(?::(?=[^\s])|(?<=[^\s])\#)[^:#\n]*+)*+"
    comment = r"(?:\ +\#[^\n]*+)?"
    esc = r"\\(?:[0abtnvfre\ \"/\\N_LP]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})"

    def value(cont: str) -> str:
        sq = rf"'[^'\n]*+(?:(?:''|{cont})[^'\n]*+)*+'{comment}"
        dq = rf'"[^"\\\n]*+(?:(?:{esc}|{cont})[^"\\\n]*+)*+"{comment}'
        pl = rf"{plain_first}{plain_body}(?:{cont}[^\s\#]{plain_body})*+{comment}"
        blk = rf"[|>](?:[-+][1-9]?|[1-9][-+]?)?{comment}(?=\n)(?:\n(?:{cont[2:]}[^\n]*+)?(?=\n))*+"
        # The alternatives are told apart by their first character; common ones first.
        return rf"(?:{dq}|{pl}|{sq}|\[\]{comment}|\{{\}}{comment}|{blk})"

    deeper = r"\n(?P=i)\ +"  # a continuation of a scalar started on a key line at (?P=i)
    deeper3 = r"\n(?P=i)\ \ \ +"  # ... started on "- key:" (its mapping sits at i + 2)
    child = rf"(?=(?P=i)\ \ {_KEYC}|(?P=i)-\ )"
    line = rf"""
        (?P<i>(?:\ \ )++)
        (?:
            {_KEY}:(?:
                \ {value(deeper)}\n(?!(?P=i)\ |(?P=i)-\ )
              | {comment}\n{child}
            )
          | -\ (?:
                {_KEY}:(?:
                    \ {value(deeper3)}\n(?=(?P=i)\ \ {_KEYC}|(?!(?P=i)\ ))
                  | {comment}\n(?=(?P=i)\ \ \ \ {_KEYC}|(?P=i)\ \ -\ )
                )
              | {value(deeper)}\n(?!(?P=i)\ )
            )
        )
    """
    first_value = value(r"\n\ \ \ +")  # the first line's mapping sits at column 2
    first = rf"""
        -\ {_KEY}:(?:
            \ {first_value}\n(?=\ \ {_KEYC}|(?!\ ))
          | {comment}\n(?=\ \ \ \ {_KEYC}|\ \ -\ )
        )
    """
    return re.compile(rf"(?:{first})(?:{line})*+", re.VERBOSE)


_STRICT_RE: re.Pattern[str] | None = None


def strict_ok(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (one item, ``- `` at column 0) passes the strict grammar."""
    global _STRICT_RE
    if _STRICT_RE is None:
        _STRICT_RE = _strict_pattern()
    return _STRICT_RE.fullmatch(text, start, end) is not None


# --------------------------------------------------------------------------- scalars

_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_SQ = re.compile(r"'((?:[^']|'')*)'")
_DQ = re.compile(r'"([^"\\]*)"')
_BAD_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`=<~ ")
_BOOLS = yaml.constructor.SafeConstructor.bool_values

_ANY_CACHE: dict[str, Any] = {}
_MISSING = object()
_KEY_RE = re.compile(_KEY)


class _StrCache(dict[str, str]):
    """Raw one-line scalar → the string it reads as (a miss decodes; non-strings raise)."""

    def __missing__(self, raw: str) -> str:
        value = _decode(raw)
        if type(value) is not str:
            raise Irregular
        self[raw] = value
        return value


class _KeyCache(dict[str, str]):
    """Raw plain key → itself, once checked to read back as a string (``on:`` does not)."""

    def __missing__(self, raw: str) -> str:
        if not _KEY_RE.fullmatch(raw) or _plain_tag(raw) != _STR_TAG:
            raise Irregular
        self[raw] = raw
        return raw


_STR_CACHE = _StrCache()
_KEY_CACHE = _KeyCache()


def _plain_tag(text: str) -> str:
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return str(tag)


def _decode(raw: str) -> Any:
    """A one-line scalar as PyYAML builds it (str, decimal int, bool, null, ``[]``, ``{}``).

    Raises:
        Irregular: For anything else (escapes, comments, other implicit types, ...).

    """
    c = raw[:1]
    if c == "'":
        m = _SQ.fullmatch(raw)
        if m is None:
            raise Irregular
        return m.group(1).replace("''", "'")
    if c == '"':
        m = _DQ.fullmatch(raw)
        if m is None:
            raise Irregular
        return m.group(1)
    if raw == "[]":
        return []
    if raw == "{}":
        return {}
    if (
        not raw
        or c in _BAD_PLAIN_START
        or raw[-1] in " :"
        or ": " in raw
        or " #" in raw
        or "\t" in raw
    ):
        if raw in ("~",):
            return None
        raise Irregular
    tag = _plain_tag(raw)
    if tag == _STR_TAG:
        return raw
    if tag == "tag:yaml.org,2002:int" and _INT.fullmatch(raw):
        return int(raw)
    if tag == "tag:yaml.org,2002:bool":
        return _BOOLS[raw.lower()]
    if tag == "tag:yaml.org,2002:null":
        return None
    raise Irregular


def _str(raw: str) -> str:
    """A scalar that must decode to a string (label values, names, ...)."""
    return _STR_CACHE[raw]


def _any(raw: str) -> Any:
    """A scalar of any of the types :func:`_decode` builds (cached; lists/dicts copied)."""
    v = _ANY_CACHE.get(raw, _MISSING)
    if v is _MISSING:
        v = _ANY_CACHE[raw] = _decode(raw)
    if type(v) is list or type(v) is dict:
        return type(v)()
    return v


def _key(raw: str) -> str:
    """A plain mapping key: it must read back as a string (``on:`` or ``1:`` do not)."""
    return _KEY_CACHE[raw]


# --------------------------------------------------------------------------- items


@record
class Item:
    """One item of the ResourceList as read from its text.

    Attributes:
        start: Offset of the item's ``- `` in the input text.
        end: Offset just past the item (its last line's newline).
        prefix: Comment and blank lines at column 0 just before the item, verbatim.
        regular: Whether the fast reader understood the item (else PyYAML read it).
        api_version: ``apiVersion`` (``None`` only before classification).
        kind: ``kind``.
        obj: The parsed item, when it was needed (WorkloadRuns, PyYAML-read items).
        nodes: The Nodes the item contributes (a Node: one; a Node ``List``: all).
        generated: Labelled ``app.kubernetes.io/managed-by: workloadrun-fn``.
        input_kind: A WorkloadRun, a v1 Node or a v1 ``List``/``NodeList`` of Nodes.
        workloadrun: A WorkloadRun.
        edit: For regular consumed kinds: the local-config edit ``(a, b, new)`` worked out
            from the line structure (``None``: use PyYAML's marks instead).

    """

    start: int
    end: int
    prefix: str = ""
    regular: bool = True
    api_version: Any = None
    kind: Any = None
    obj: dict[str, Any] | None = None
    nodes: list[NodeInfo] = field(default_factory=list)
    generated: bool = False
    input_kind: bool = False
    workloadrun: bool = False
    edit: tuple[int, int, str] | None = None
    top: list[re.Match[str]] = field(default_factory=list)


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


def _load_item(text: str) -> dict[str, Any]:
    docs = yamlio.load_all(text)
    if len(docs) != 1 or not isinstance(docs[0], list) or len(docs[0]) != 1:
        raise Irregular
    obj = docs[0][0]
    if not isinstance(obj, dict):
        raise Irregular
    return obj


# --------------------------------------------------------------------------- reading


_ALLOWED = bytes(range(0x20, 0x7F)) + b"\n" + bytes(range(0x80, 0x100))
_BAD_UTF8 = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xef\xbb\xbf", b"\xef\xbf\xbe")
_C1 = re.compile(rb"\xc2[\x80-\x9f]|\xef\xbf\xbf")
_NEXT_TOP = re.compile(r"\n(?=[^ \n#])")


def _clean_chars(data: bytes) -> bool:
    if data.translate(None, _ALLOWED):
        return False  # tab, CR or another control character
    if data.isascii():
        return True
    return not any(b in data for b in _BAD_UTF8) and _C1.search(data) is None


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
    big = len(raw) >= FORK_MIN_BYTES and hasattr(os, "fork") and _cpus() >= 2
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
    helper = _Helper.start(fast, raw, regular, spans)
    if big and helper is None and not _clean_chars(raw):
        return None
    if meanwhile is not None:
        meanwhile()
    try:
        if helper is None:
            for i in regular:
                _classify_or_reset(fast, items[i])
        else:
            split = helper.split()
            for i in regular[:split]:
                _classify_or_reset(fast, items[i])
            results = helper.classified()
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
        if helper is not None:
            helper.cancel()
        return None
    if helper is not None:
        fast._pending = (spans, helper.verdict, helper.cancel)
    else:
        fast._pending = (spans, lambda: _validate_all(text, spans), _nothing)
    return fast


def _nothing() -> None:
    pass


def _verdict(raw: bytes, text: str, spans: list[tuple[int, int]]) -> list[int] | None:
    """The items failing the strict grammar.

    ``None`` when the characters rule out the fast path altogether (tab, CR, control
    characters, ...): the whole input then goes to the full path.
    """
    return _validate_all(text, spans) if _clean_chars(raw) else None


def _classify_or_reset(fast: FastList, it: Item) -> None:
    try:
        _classify(fast, it)
    except Irregular:
        _reset(it)


_State = tuple[Any, ...]
_STATE_FIELDS = (
    "regular",
    "api_version",
    "kind",
    "obj",
    "nodes",
    "generated",
    "input_kind",
    "workloadrun",
    "edit",
)
"""What classification finds about an item (sent from the helper to the parent)."""
_state: Callable[[Item], _State] = operator.attrgetter(*_STATE_FIELDS)


def _apply(it: Item, state: _State) -> None:
    """Set what the helper found about an item (see :data:`_STATE_FIELDS`)."""
    for name, value in zip(_STATE_FIELDS, state, strict=True):
        setattr(it, name, value)
    it.top = []


def _reset(it: Item) -> None:
    it.regular = False
    it.obj, it.nodes, it.edit, it.top = None, [], None, []
    it.generated = it.input_kind = it.workloadrun = False


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


# --------------------------------------------------------------------------- validation


def _validate_all(text: str, spans: list[tuple[int, int]]) -> list[int]:
    return [i for i, (s, e) in enumerate(spans) if not strict_ok(text, s, e)]


class _Helper:
    """A forked child that shares the classification, then the grammar check, with us.

    A large input is worth two cores. Both jobs are split the same way: the child works
    through the regular items from the last one down, publishing how far it got in shared
    memory, while this process does other work (the imports, the render); when this
    process turns to the job it reads the child's progress, tells the child where to stop
    (about half of what is left, by size: :meth:`split`) and does the items below that
    point itself. The child then sends what it found (classification states, pickled: the
    strings they share are sent once; the items failing the grammar). So the split adapts
    to however long the other work takes. Whenever anything about the child goes wrong (no
    ``fork``, a crash, a short read, an item it did not cover), this process does that
    work itself: the results never depend on the child.

    Shared memory (four 64-bit counters): the lowest item classified, where to stop
    classifying, the lowest item checked, where to stop checking. Each is written by one
    side only and moves one way; a stale read only makes both sides do an item twice.
    """

    _DONE, _STOP, _CHECKED, _STOP_CHECK = range(4)

    def __init__(
        self,
        pid: int,
        fd: int,
        shared: Any,
        fast: FastList,
        raw: bytes,
        spans: list[tuple[int, int]],
    ) -> None:
        """Remember the child and what it was given."""
        self.pid = pid
        self._file: Any = os.fdopen(fd, "rb")
        self._shared = shared
        self._fast, self._raw, self._spans = fast, raw, spans
        self._cum = list(itertools.accumulate((e - s for s, e in spans), initial=0))
        self._ok = True
        self._reaped = False

    @classmethod
    def start(
        cls, fast: FastList, raw: bytes, regular: list[int], spans: list[tuple[int, int]]
    ) -> _Helper | None:
        """Fork the helper for a large input; ``None`` when the work stays in this process."""
        if len(fast.text) < FORK_MIN_BYTES or not hasattr(os, "fork") or _cpus() < 2:
            return None
        import mmap

        items = fast.items
        n = len(regular)
        try:
            counters = memoryview(mmap.mmap(-1, 32)).cast("q")
            counters[cls._DONE] = counters[cls._CHECKED] = n
            counters[cls._STOP] = counters[cls._STOP_CHECK] = 0
            rfd, wfd = os.pipe()
            pid = os.fork()
        except OSError:
            return None
        if pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                os.close(rfd)
                results = []
                for k in range(n - 1, -1, -1):
                    if k < counters[cls._STOP]:
                        break
                    _classify_or_reset(fast, items[regular[k]])
                    results.append((k, _state(items[regular[k]])))
                    counters[cls._DONE] = k
                _send(wfd, pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))
                clean = _clean_chars(raw)
                bad, low = [], n
                for k in range(n - 1, -1, -1) if clean else ():
                    if k < counters[cls._STOP_CHECK]:
                        break
                    if not strict_ok(fast.text, *spans[k]):
                        bad.append(k)
                    low = counters[cls._CHECKED] = k
                _send(wfd, pickle.dumps((clean, low, bad)))
                code = 0
            finally:
                os._exit(code)
        os.close(wfd)
        return cls(pid, rfd, counters, fast, raw, spans)

    def _meet(self, done: int, stop: int, extra: float) -> int:
        """Where the child must stop: this process takes about half of what is left.

        ``extra``: the child's additional cost per byte it handled (pickling its results),
        as a fraction of the cost of the job; the split evens both sides out.
        """
        shared, cum = self._shared, self._cum
        left = shared[done]
        left = min(max(left, 0), len(cum) - 1)
        rest, handled = cum[left], cum[-1] - cum[left]
        share = min(1.0, ((1 + extra) * rest + extra * handled) / ((2 + extra) * rest or 1))
        at = bisect.bisect_left(cum, rest * share, 0, left)
        shared[stop] = at
        return at

    def split(self) -> int:
        """Tell the child where to stop classifying; this process classifies items below it."""
        self._split = self._meet(self._DONE, self._STOP, PICKLE_COST)
        return self._split

    def _frame(self) -> Any:
        if not self._ok:
            return None
        try:
            head = self._file.read(8)
            size = int.from_bytes(head, "big") if len(head) == 8 else -1
            body = self._file.read(size) if size >= 0 else b""
            if size < 0 or len(body) != size:
                raise EOFError
            return pickle.loads(body)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            self._ok = False
            return None

    def classified(self) -> dict[int, _State]:
        """The child's classification states by index into the regular items.

        Only items from :meth:`split` on are asked for; missing ones (the child failed)
        must be classified here.
        """
        got = self._frame()
        if not isinstance(got, list):
            self._ok = False
            return {}
        return {k: state for k, state in got if k >= self._split}

    def verdict(self) -> list[int] | None:
        """Indices (into the regular items) failing the grammar; ``None``: see :func:`_verdict`."""
        text, spans = self._fast.text, self._spans
        if not self._ok:
            self.cancel()
            return _verdict(self._raw, text, spans)
        at = self._meet(self._CHECKED, self._STOP_CHECK, 0.0)
        mine = [k for k in range(at) if not strict_ok(text, *spans[k])]
        got = self._frame()
        if not self._reap() or not self._ok or not isinstance(got, tuple) or len(got) != 3:
            return _verdict(self._raw, text, spans)
        clean, low, bad = got
        if not clean:
            return None
        rest = range(at, max(at, min(int(low), len(spans))))
        mine += [k for k in rest if not strict_ok(text, *spans[k])]
        return sorted({*mine, *(int(k) for k in bad if k >= at)})

    def cancel(self) -> None:
        """Stop the child (its results are not needed) and wait for it."""
        self._shared[self._STOP] = self._shared[self._STOP_CHECK] = len(self._spans)
        self._ok = False
        self._reap()

    def _reap(self) -> bool:
        """Wait for the child; whether it exited cleanly."""
        if self._reaped:
            return False
        self._reaped = True
        self._file.close()
        _, status = os.waitpid(self.pid, 0)
        return status == 0


def _send(fd: int, payload: bytes) -> None:
    view = memoryview(len(payload).to_bytes(8, "big") + payload)
    while view:
        view = view[os.write(fd, view) :]


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# --------------------------------------------------------------------------- classification


def _blank(text: str, s: int, e: int) -> bool:
    """Whether ``text[s:e]`` holds only empty lines."""
    return s == e or (text[s] == "\n" and text.count("\n", s, e) == e - s)


def _inline(text: str, m: re.Match[str]) -> str | None:
    """The one-line value of an entry (``"null"`` when empty); ``None`` when it has a block.

    Raises:
        Irregular: When the value spans lines (or has both a value and a block).

    """
    raw = m.group(2)
    blank = _blank(text, *m.span(3))
    if raw is not None:
        if not blank:
            raise Irregular
        return raw
    return "null" if blank else None


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
    if raw is not None:
        if raw == "{}" and s == e:
            return {}
        raise Irregular
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


def _conditions(text: str, m: re.Match[str], b: int) -> list[dict[str, Any]]:
    """``type`` and ``status`` of each entry of a compact sequence (``-`` at ``b``).

    Other keys are not read: the strict grammar guarantees that their lines (including
    multi-line messages) are deeper than ``b + 2`` or are other ``key:`` lines at ``b + 2``.
    One scan finds every entry start (``- ``) and every ``type``/``status`` line.
    """
    raw = m.group(2)
    s, e = m.span(3)
    if raw is not None:
        if raw == "[]" and s == e:
            return []
        raise Irregular
    if not text.startswith("\n" + " " * b + "- ", s - 1):
        raise Irregular
    out: list[dict[str, Any]] = []
    entry: dict[str, Any] = {}
    for dash, k1, v1, d1, k2, v2, d2 in _COND_LINE[b].findall(text, s - 1, e):
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


def _cond_line(b: int) -> re.Pattern[str]:
    """An entry start (``- `` at ``b``, maybe on a ``type``/``status`` line) or such a line.

    Groups: the dash, then (key, `` value``, deeper next line) for a key on the dash line,
    then the same for a key line at ``b + 2``.
    """
    key = rf"(type|status):( [^\n]*+)?(?=\n(\ {{{b + 3}}})?)"
    return re.compile(rf"\n{' ' * b}(?:(- )(?:{key})?|\ \ {key})")


_COND_LINE = _Patterns(_cond_line)


def _classify(fast: FastList, it: Item) -> None:
    """Read a regular item (``- `` at column 0, keys at 2)."""
    text = fast.text
    top: dict[str, re.Match[str]] = {}
    for m in it.top:
        k = _key(m.group(1))
        if k in top:
            raise Irregular  # duplicate key
        top[k] = m
    api = _str(_need_inline(text, top, "apiVersion"))
    kind = _str(_need_inline(text, top, "kind"))
    it.api_version, it.kind = api, kind
    meta_m = top.get("metadata")
    meta = _items_of(text, meta_m, 4) if meta_m is not None else None
    if api == "v1" and kind == "Node":
        node = _node(text, top, meta, 2, api, kind)
        it.generated = node.labels.get(_MANAGED_BY) == _MANAGER
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
        it.generated = labels.get(_MANAGED_BY) == _MANAGER
    is_run = kind == "WorkloadRun" and api.startswith("nvcre.nvidia.com/")
    if it.generated:
        if api == "v1" and kind in ("List", "NodeList"):
            raise Irregular  # whether it is a Node list decides a flag: let PyYAML say
        it.input_kind = it.workloadrun = is_run
        return
    if api == "v1" and kind in ("List", "NodeList"):
        nodes = _node_list(text, top)
        if nodes is None:
            raise Irregular  # not a list of regular Nodes: PyYAML reads it
        it.nodes = nodes
        it.input_kind = True
        it.edit = _edit_or_none(text, it, meta_m, meta)
    elif is_run:
        it.workloadrun = it.input_kind = True
        it.edit = _edit_or_none(text, it, meta_m, meta)
        fast.load(it)


_STATUS_KEYS = ("allocatable", "conditions")


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
    """:func:`_inline`, where a block value makes the item irregular."""
    raw = _inline(text, m)
    if raw is None:
        raise Irregular
    return raw


def _node(
    text: str,
    top: Mapping[str, re.Match[str]],
    meta: Mapping[str, re.Match[str]] | None,
    b: int,
    api: str,
    kind: str,
) -> NodeInfo:
    """The NodeInfo of a regular Node whose keys sit at ``b`` (``meta``: its metadata keys)."""
    view: dict[str, Any] = {"apiVersion": api, "kind": kind}
    name: Any = ""
    labels: dict[str, str] = {}
    if "metadata" in top:
        mview: dict[str, Any] = {}
        if meta:
            for k, sub in meta.items():
                if k == "name":
                    name = mview["name"] = _any(_inline_only(text, sub))
                elif k == "labels":
                    labels = mview["labels"] = _flat_map(text, sub, b + 4, strings=True)
        view["metadata"] = mview
    spec_m = top.get("spec")
    provider: Any = None
    unsched: Any = None
    taints: Any = None
    if spec_m is not None:
        spec = _items_of(text, spec_m, b + 2)
        sview: dict[str, Any] = {}
        if spec:
            for k, sub in spec.items():
                if k == "providerID":
                    provider = sview["providerID"] = _any(_inline_only(text, sub))
                elif k == "unschedulable":
                    unsched = sview["unschedulable"] = _any(_inline_only(text, sub))
                elif k == "taints":
                    taints = sview["taints"] = _seq_of_maps(text, sub, b + 2)
        view["spec"] = sview
    status_m = top.get("status")
    ready: bool | None = None
    alloc: Any = None
    if status_m is not None:
        stview: dict[str, Any] = {}
        for k, sub in _find_entries(text, status_m, b + 2, _STATUS_KEYS).items():
            if k == "allocatable":
                alloc = stview["allocatable"] = _flat_map(text, sub, b + 4, strings=False)
            else:
                conds = stview["conditions"] = _conditions(text, sub, b + 2)
                for c in conds:
                    if c.get("type") == "Ready":
                        ready = str(c.get("status")) == "True"
        view["status"] = stview
    if type(name) is not str or not name:
        raise Irregular  # the full path reports a Node without a usable name
    gpu = alloc.get("nvidia.com/gpu") if isinstance(alloc, dict) else None
    gpus: int | None
    try:
        gpus = int(str(gpu)) if gpu is not None else None
    except ValueError:
        gpus = None
    return NodeInfo(
        name=str(name),
        labels=labels,
        provider_id=str(provider or ""),
        unschedulable=bool(unsched),
        ready=ready,
        taints=tuple(t for t in (taints or ()) if isinstance(t, Mapping)),
        allocatable_gpus=gpus,
        raw=view,
    )


def _node_list(text: str, top: Mapping[str, re.Match[str]]) -> list[NodeInfo] | None:
    """The Nodes of a regular ``v1 List``; ``None`` unless every entry is a regular Node."""
    m = top.get("items")
    if m is None:
        return None
    raw = m.group(2)
    s, e = m.span(3)
    if raw is not None:
        return None
    if not text.startswith("  - ", s):
        return None
    out: list[NodeInfo] = []
    sub_start = s
    find = text.find
    while sub_start < e:
        nxt = find("\n  - ", sub_start, e)
        sub_end = e if nxt < 0 else nxt + 1
        sub = _top_entries(text, sub_start, sub_end, 4)
        api = _str(_need_inline(text, sub, "apiVersion"))
        kind = _str(_need_inline(text, sub, "kind"))
        if api != "v1" or kind != "Node":
            return None
        sub_meta_m = sub.get("metadata")
        sub_meta = _items_of(text, sub_meta_m, 6) if sub_meta_m is not None else None
        node = _node(text, sub, sub_meta, 4, api, kind)
        if node.labels.get(_MANAGED_BY) == _MANAGER:
            return None
        out.append(node)
        sub_start = sub_end
    return out


def _classify_loaded(fast: FastList, it: Item) -> None:
    """Classify an item PyYAML read (the same rules as the full path)."""
    from krm_fn.output import is_generated, is_input_kind

    obj = fast.load(it)
    api, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str):
        raise Irregular  # the full path reports it
    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise Irregular
    if api == "v1" and (
        (kind == "Node" and node_problems(obj))
        or (kind in ("List", "NodeList") and not _usable_node_list(obj))
    ):
        raise Irregular  # the full path reports the Node by name and item index
    it.api_version, it.kind = api, kind
    it.generated = is_generated(obj)
    it.input_kind = is_input_kind(obj)
    it.workloadrun = kind == "WorkloadRun" and api.startswith("nvcre.nvidia.com/")
    it.nodes = [] if it.generated else collect_nodes([obj])


def _usable_node_list(obj: dict[str, Any]) -> bool:
    subs = obj.get("items")
    if subs is None:
        return True
    if not isinstance(subs, list):
        return False
    return not any(
        isinstance(sub, dict) and sub.get("kind", "Node") == "Node" and node_problems(sub)
        for sub in subs
    )


# --------------------------------------------------------------------------- the edit


class _EditFallback(Exception):
    """The line-structure edit is not certain: the marks-based edit is used instead."""


def _edit_or_none(
    text: str,
    it: Item,
    meta_m: re.Match[str] | None,
    meta: Mapping[str, re.Match[str]] | None,
) -> tuple[int, int, str] | None:
    try:
        return _insert_regular(text, it, meta_m, meta)
    except _EditFallback:
        return None


def _insert_regular(
    text: str,
    it: Item,
    meta_m: re.Match[str] | None,
    meta: Mapping[str, re.Match[str]] | None,
) -> tuple[int, int, str]:
    """The local-config edit of a regular item (keys at 2), from its line structure.

    The new key goes where ``mark_local_config`` puts it in the dict: last in
    ``metadata.annotations`` (a new ``annotations`` last in ``metadata``, a new
    ``metadata`` last in the item), spelled ``'true'`` as PyYAML writes it.

    Raises:
        _EditFallback: When the line structure does not say for certain where it goes.

    """
    if meta_m is None:
        return it.end, it.end, "  metadata:\n    annotations:\n      " + _LOCAL_LINE
    if meta is None:  # metadata: {}
        new = "\n    annotations:\n      " + _LOCAL_LINE
        return meta_m.start(2) - 1, meta_m.end(3), new
    ann = meta.get("annotations")
    if ann is None:
        at = meta_m.end(3)
        return at, at, "    annotations:\n      " + _LOCAL_LINE
    raw = ann.group(2)
    s3, e3 = ann.span(3)
    if raw is not None:
        if raw == "{}" and s3 == e3:
            return ann.start(2) - 1, ann.end(3), "\n      " + _LOCAL_LINE
        raise _EditFallback
    at = text.find("\n      " + LOCAL_CONFIG + ":", s3 - 1, e3)
    if at < 0:
        return e3, e3, "      " + _LOCAL_LINE
    line = _FLAT[6].match(text, at, e3)
    if line is None or line.group(1) != LOCAL_CONFIG:
        raise _EditFallback
    if text.startswith("       ", line.end() + 1):
        raise _EditFallback  # the value spans lines
    try:
        if _decode(line.group(2)) == "true":
            return at, at, ""
    except Irregular:
        pass
    return line.start(2), line.end(2), "'true'"


def insert_local_config(text: str, obj: dict[str, Any]) -> str:
    """``text`` (one ``- `` entry, parsed as ``obj``) with the local-config annotation.

    The annotation is inserted into the text at the position PyYAML's marks give, keeping
    every comment and all formatting; the result is parsed again and must equal ``obj``
    with the annotation set. Otherwise ruamel.yaml's round-trip writes the item, and as a
    last resort the item is written from ``obj``.
    """
    from krm_fn.fastdump import dump_item
    from krm_fn.output import mark_local_config

    want = copy.deepcopy(obj)
    mark_local_config(want)
    if want == obj:
        return text
    for attempt in (_insert_by_marks, _insert_by_ruamel):
        try:
            new = attempt(text)
        except Exception:  # any failure just means "try the next way"
            continue
        if new is not None and _parses_to(new, want):
            return new
    return dump_item(want)


def _parses_to(text: str, want: dict[str, Any]) -> bool:
    try:
        return _load_item(text) == want
    except (Irregular, yamlio.YAMLInputError, RecursionError):
        return False


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _insert_by_marks(text: str) -> str | None:
    """The annotation inserted where PyYAML's marks say, block or flow style alike."""
    node, _ = yamlio.compose_and_load(text)
    if not isinstance(node, yaml.SequenceNode) or len(node.value) != 1:
        return None
    item = node.value[0]
    if not isinstance(item, yaml.MappingNode) or not item.value:
        return None
    lines = _line_starts(text)

    def at(mark: Any) -> int:
        return int(lines[mark.line] + mark.column) if mark.line < len(lines) else len(text)

    def after(n: yaml.Node) -> int:
        """Offset of the line after the one node ``n`` ends on."""
        mk = n.end_mark
        if mk.column == 0:
            return lines[mk.line] if mk.line < len(lines) else len(text)
        return lines[mk.line + 1] if mk.line + 1 < len(lines) else len(text)

    def flow_add(mapping: yaml.MappingNode, entry: str) -> str | None:
        """``entry`` added last inside a flow mapping ``{...}``."""
        end = at(mapping.end_mark)
        if end == 0 or text[end - 1] != "}":
            return None
        sep = ", " if mapping.value else ""
        return text[: end - 1] + sep + entry + text[end - 1 :]

    local = f"{LOCAL_CONFIG}: 'true'"
    if item.flow_style:
        meta = next((v for k, v in item.value if getattr(k, "value", None) == "metadata"), None)
        if meta is None:
            return flow_add(item, f"metadata: {{annotations: {{{local}}}}}")
    col = int(item.value[0][0].start_mark.column)
    pad = " " * col
    meta = next((v for k, v in item.value if getattr(k, "value", None) == "metadata"), None)
    if meta is None:
        end = after(item.value[-1][1])
        body = f"{pad}metadata:\n{pad}  annotations:\n{pad}    {_LOCAL_LINE}"
        return text[:end] + body + text[end:]
    if not isinstance(meta, yaml.MappingNode):
        return None
    ann_pair = next((p for p in meta.value if getattr(p[0], "value", None) == "annotations"), None)
    if meta.flow_style:
        if ann_pair is None:
            return flow_add(meta, f"annotations: {{{local}}}")
        ann = ann_pair[1]
        if not isinstance(ann, yaml.MappingNode) or not ann.flow_style:
            return None
        for k, v in ann.value:
            if getattr(k, "value", None) == LOCAL_CONFIG:
                return _replace_scalar(text, v, at)
        return flow_add(ann, local)
    if not meta.value:
        return None
    mcol = int(meta.value[0][0].start_mark.column)
    if ann_pair is None:
        end = after(meta.value[-1][1])
        body = f"{' ' * mcol}annotations:\n{' ' * (mcol + 2)}{_LOCAL_LINE}"
        return text[:end] + body + text[end:]
    ann = ann_pair[1]
    if not isinstance(ann, yaml.MappingNode) or not ann.value:
        return None
    for k, v in ann.value:
        if getattr(k, "value", None) == LOCAL_CONFIG:
            return _replace_scalar(text, v, at)
    if ann.flow_style:
        return flow_add(ann, local)
    acol = int(ann.value[0][0].start_mark.column)
    end = after(ann.value[-1][1])
    return text[:end] + " " * acol + _LOCAL_LINE + text[end:]


def _replace_scalar(text: str, v: yaml.Node, at: Callable[[Any], int]) -> str | None:
    """``text`` with the one-line scalar ``v`` replaced by ``'true'``."""
    if not isinstance(v, yaml.ScalarNode) or v.start_mark.line != v.end_mark.line:
        return None
    return text[: at(v.start_mark)] + "'true'" + text[at(v.end_mark) :]


def _insert_by_ruamel(text: str) -> str | None:
    import io

    from ruamel.yaml import YAML

    from krm_fn.output import mark_local_config

    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 1 << 30
    rt.indent(mapping=2, sequence=2, offset=0)
    data = rt.load(text)
    if not isinstance(data, list) or len(data) != 1 or not isinstance(data[0], dict):
        return None
    mark_local_config(data[0])
    out = io.StringIO()
    rt.dump(data, out)
    return str(out.getvalue())
