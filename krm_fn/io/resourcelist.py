"""Read the function's input (ResourceList or plain stream) and write its output in the same form.

One entry point (:func:`parse_input`) reads every form (a ResourceList, a plain stream, a
``v1 List`` anywhere in them; YAML or JSON). Three readers give the same items: the fast
reader (:mod:`krm_fn.io.fastio`: Nodes never built as objects, every item keeps its text),
``json`` for JSON, and the full reader (PyYAML over the whole input, for anything else; why,
as an info result for large inputs, :data:`FALLBACK_NOTE_BYTES`).

Invariants:
    * The input form decides the output form: a ``ResourceList`` is answered with a
      ``ResourceList`` (``config.kubernetes.io/v1`` or the ``v1beta1`` it came as), a plain
      multi-document stream with a plain stream; JSON input is answered in JSON (one item
      or document per line), which every YAML reader reads too.
    * Items read by the fast reader are written back as their input text (plus the
      local-config annotation for consumed kinds); items read by the full reader are
      written as PyYAML writes them (:mod:`krm_fn.io.fastdump`, byte-identical to it); items
      read by ``json`` as ``json.dumps`` writes them.
    * Nothing here edits an input item's dict except :func:`write_output_chunks` marking consumed
      kinds local-config when asked to.
    * Every malformed document is reported at once, with its index, and nothing is returned
      for a malformed input.
    * What :func:`parse_input` returns is final: the fast reader's checks are done and every
      item but the Nodes is parsed, so nothing read later can change or refuse it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from krm_fn.io import yamlio
from krm_fn.io.fastio.model import Item
from krm_fn.io.results import Result, Results
from krm_fn.keys import is_workloadrun_kind

if TYPE_CHECKING:
    from krm_fn.io.fastio import FastList

RL_KIND = "ResourceList"
RL_API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")

Form = Literal["resourcelist", "stream"]
Encoding = Literal["yaml", "json"]

FALLBACK_NOTE_BYTES = 1 << 20
"""Inputs at least this large get an info result when the full reader reads them (smaller
inputs read as fast either way, and the note would only be noise)."""


class InputError(ValueError):
    """The input cannot be read; ``results`` says why, for every document at once.

    ``echo``: for a ResourceList whose items could be read but not used, the
    ``apiVersion`` to answer with and the items to send back unchanged.
    """

    def __init__(self, results: list[Result], echo: tuple[str, list[Any]] | None = None) -> None:
        """Keep the results that describe the problems."""
        super().__init__("; ".join(r.message for r in results))
        self.results = results
        self.echo = echo


Entry = Item
"""One input item as the pipeline sees it: the fast reader's :class:`~krm_fn.io.fastio.Item`
(its text and what classification found), or the same record of an item the full reader
read (``start`` -1, no text). ``obj`` is ``None`` for a Node the fast reader read until
:meth:`FunctionInput.load` asks for it; a WorkloadRun's is always set."""


class FunctionInput:
    """What the orchestrator handed us.

    Attributes:
        function_config: The ``functionConfig`` mapping, if any.
        form: ``resourcelist`` or ``stream``.
        api_version: The ResourceList ``apiVersion`` to answer with.
        fast_list: The fast reader's result (``None`` when the full reader was used).
        encoding: ``yaml`` or ``json`` (the output is written in the input's encoding).
        notes: Info for the results: why the full reader read a large input.

    """

    def __init__(
        self,
        items: list[dict[str, Any]] | None = None,
        function_config: dict[str, Any] | None = None,
        form: Form = "resourcelist",
        api_version: str = RL_API_VERSIONS[0],
        fast_list: FastList | None = None,
        encoding: Encoding = "yaml",
        notes: Sequence[str] = (),
        source: str = "<stdin>",
    ) -> None:
        """Wrap items read by the full reader, or the fast reader's result."""
        self.encoding: Encoding = encoding
        self.notes = list(notes)
        self.source = source
        self.function_config = function_config
        self.form: Form = form
        self.api_version = api_version
        self.fast_list = fast_list
        self._items = items
        self._entries: list[Entry] | None = None

    @property
    def items(self) -> list[dict[str, Any]]:
        """Every item as a dict (the fast reader's items are parsed on first use)."""
        if self._items is None:
            assert self.fast_list is not None
            fl = self.fast_list
            self._items = [fl.load(it) for it in fl.items]
        return self._items

    def entries(self) -> list[Entry]:
        """The items as the pipeline sees them (see :class:`Entry`)."""
        if self._entries is None:
            self._entries = self._make_entries()
        return self._entries

    def _make_entries(self) -> list[Entry]:
        if self.fast_list is not None:
            return self.fast_list.items
        from krm_fn.io.nodes import collect_nodes
        from krm_fn.io.output import is_generated, is_input_kind

        out = []
        for obj in self.items:
            gen = is_generated(obj)
            api = obj.get("apiVersion")
            out.append(
                Item(
                    start=-1,
                    end=-1,
                    obj=obj,
                    nodes=[] if gen else collect_nodes([obj]),
                    generated=gen,
                    input_kind=is_input_kind(obj),
                    workloadrun=is_workloadrun_kind(api, obj.get("kind")),
                )
            )
        return out

    def load(self, entry: Entry) -> dict[str, Any]:
        """The entry's dict (a Node's is parsed from its text, which passed the grammar)."""
        if entry.obj is None:
            assert self.fast_list is not None
            entry.obj = self.fast_list.load(entry, self.source)
        return entry.obj


def parse_input(
    text: str | bytes,
    source: str = "<stdin>",
    fast: bool = True,
    meanwhile: Callable[[], object] | None = None,
    documents: bool = True,
) -> FunctionInput:
    """Parse an input in any form (ResourceList or stream, YAML or JSON): a final answer.

    ``source`` names it in messages; ``fast``: try the fast reader or ``json`` first;
    ``meanwhile`` and ``documents``: see :func:`krm_fn.io.fastio.read`. Raises
    :class:`InputError` (one result per problem) or ``yamlio.YAMLInputError`` (malformed,
    or over a limit).
    """
    from krm_fn.io import limits

    try:
        limits.check_size(len(text))
    except limits.LimitExceeded as exc:
        raise yamlio.YAMLInputError(f"{source}: {exc}") from None
    notes: list[str] = []
    if fast and _looks_like_json(text):
        got_json = _parse_json(text, source)
        if got_json is not None:
            return got_json
        notes.append("the input starts like JSON but is not JSON; read as YAML")
    elif fast:
        got = _parse_fast(text, meanwhile, source, documents)
        if isinstance(got, FunctionInput):
            return got
        notes.append(got)
    if len(text) < FALLBACK_NOTE_BYTES:
        notes = []
    notes = [f"{source}: read with the full YAML reader (slower, more memory): {n}" for n in notes]
    docs = [d for d in yamlio.load_all(text, source) if d is not None]
    if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") == RL_KIND:
        got_rl = _from_resource_list(docs[0], source)
        got_rl.notes = notes
        return got_rl
    return FunctionInput(items=check_items(docs, source), form="stream", notes=notes)


_JSON_START = re.compile(r"\ufeff?[ \t\r\n]*+\{")
_JSON_START_BYTES = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*+\{")


def _looks_like_json(text: str | bytes) -> bool:
    """Whether the input starts like a JSON object (after any whitespace and a BOM)."""
    if isinstance(text, bytes):
        return _JSON_START_BYTES.match(text) is not None
    return _JSON_START.match(text) is not None


class _DuplicateKey(ValueError):
    """A JSON object has the same key twice (YAML refuses that; so does JSON here)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(repr(k))
            seen.add(k)
    return obj


_SURROGATE, _SURROGATE_BYTES = re.compile(r"\\u[dD][89a-fA-F]"), re.compile(rb"\\u[dD][89a-fA-F]")


class _BadNumber(ValueError):
    """A JSON number YAML cannot hold (``NaN``, ``Infinity``, an overflow): its token."""


def _number(token: str) -> float:
    if math.isfinite(value := float(token)):
        return value
    raise _BadNumber(token)


def _line_of(text: str | bytes, token: str) -> str:
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if (found := re.search(rf"[:\[,]\s*({re.escape(token)})", raw)) is None:
        return ""
    at = found.start(1)
    return f" (line {raw.count(chr(10), 0, at) + 1}, column {at - raw.rfind(chr(10), 0, at)})"


def _parse_json(text: str | bytes, source: str) -> FunctionInput | None:
    """Read a JSON input with ``json``; ``None`` when it is not JSON (YAML reads it then).

    Bounds: the size limit of every input; nesting is bounded by ``json``'s recursion
    check; there are no aliases to expand.
    """
    import json

    try:
        doc = json.loads(
            text, object_pairs_hook=_no_duplicates, parse_float=_number, parse_constant=_number
        )
    except _BadNumber as exc:  # YAML reads such a token as a string
        at = _line_of(text, str(exc))
        raise yamlio.YAMLInputError(f"{source}: JSON number {exc} is not finite{at}") from None
    except (_DuplicateKey, RecursionError) as exc:  # YAML reads JSON: it says where
        list(yamlio.load_all(text, source))
        what = f"duplicate key {exc}" if isinstance(exc, _DuplicateKey) else "nested too deeply"
        raise yamlio.YAMLInputError(f"{source}: malformed JSON: {what}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    # a surrogate escape, in one pass (0.1 s at 10,000 Nodes): YAML refuses a lone one, at its place
    escape = _SURROGATE_BYTES.search(text) if isinstance(text, bytes) else _SURROGATE.search(text)
    if escape is not None:
        list(yamlio.load_all(text, source))
    if isinstance(doc, dict) and doc.get("kind") == RL_KIND:
        got = _from_resource_list(doc, source)
        got.encoding = "json"
        return got
    return FunctionInput(items=check_items([doc], source), form="stream", encoding="json")


def _parse_fast(
    text: str | bytes, meanwhile: Callable[[], object] | None, source: str, documents: bool
) -> FunctionInput | str:
    """The fast reader's result, or why the full reader must read the input."""
    from krm_fn.io import fastio

    fl = fastio.read(text, meanwhile, documents)
    if isinstance(fl, fastio.Fallback):
        return fl.reason
    try:  # every item but the Nodes (and an edit PyYAML's marks must place) is needed anyway
        for it in fl.items:
            if not (it.nodes or it.generated) or (documents and it.input_kind and not it.edit):
                fl.load(it, source)
            if it.input_kind and it.edit is None and _metadata_shape(fl.load(it, source)):
                return "an item's metadata.labels or .annotations is no mapping"
    except (fastio.Irregular, yamlio.YAMLInputError, RecursionError) as exc:
        return f"an item cannot be read on its own ({exc or 'not a mapping'})"
    if fl.stream or fl.list_doc:
        return FunctionInput(form="stream", fast_list=fl, source=source)
    head = fl.header
    api_version = head.get("apiVersion")
    fc = head.get("functionConfig")
    if (
        head.get("kind") != RL_KIND
        or api_version not in RL_API_VERSIONS
        or (fc is not None and not isinstance(fc, dict))
    ):
        return "the ResourceList header is not a regular one"  # the full reader says why
    return FunctionInput(
        function_config=fc,
        form="resourcelist",
        api_version=str(api_version),
        fast_list=fl,
        source=source,
    )


def _from_resource_list(rl: dict[str, Any], source: str) -> FunctionInput:
    problems = Results()
    api_version = rl.get("apiVersion")
    if api_version not in RL_API_VERSIONS:
        problems.error(
            f"{source}: ResourceList apiVersion {api_version!r} is not supported; "
            f"expected one of {', '.join(RL_API_VERSIONS)}"
        )
    if "items" not in rl:
        problems.error(f"{source}: ResourceList has no 'items' (required by the KRM spec)")
        raise InputError(problems.items)
    items = rl.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        problems.error(f"{source}: ResourceList 'items' must be a list, got {type(items).__name__}")
        raise InputError(problems.items)
    fc = rl.get("functionConfig")
    if fc is not None and not isinstance(fc, dict):
        problems.error(f"{source}: ResourceList 'functionConfig' must be a mapping")
    try:
        checked = check_items(items, f"{source} items")
    except InputError as exc:
        problems.items.extend(exc.results)
        checked = []
    if problems.has_errors:
        echo = (
            (str(api_version), list(items))
            if api_version in RL_API_VERSIONS and not isinstance(fc, str)
            else None
        )
        raise InputError(problems.items, echo)
    return FunctionInput(
        items=checked,
        function_config=fc if isinstance(fc, dict) else None,
        form="resourcelist",
        api_version=str(api_version),
    )


def check_items(docs: list[Any], where: str) -> list[dict[str, Any]]:
    """Check that every document is a Kubernetes object (mapping with apiVersion and kind).

    Nodes (and the Nodes of a ``v1`` ``List``) must also be usable as inventory: see
    :func:`krm_fn.io.nodes.node_problems`.
    """
    problems = Results()
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            problems.error(
                f"{where}[{i}]: document is a {type(doc).__name__}, not a Kubernetes object mapping"
            )
            continue
        missing = [k for k in ("apiVersion", "kind") if not isinstance(doc.get(k), str)]
        if missing:
            problems.error(f"{where}[{i}]: object has no string {' or '.join(missing)}")
            continue
        meta = doc.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            problems.error(f"{where}[{i}]: metadata of {doc['kind']} must be a mapping")
            continue
        if bad := _metadata_shape(doc):  # never replaced by a mapping: refused
            problems.error(f"{where}[{i}]: {bad}")
        for message in _node_problems(doc, f"{where}[{i}]"):
            problems.error(message)
    if problems.has_errors:
        raise InputError(problems.items)
    return docs


def _metadata_shape(doc: dict[str, Any]) -> str | None:
    """Why ``metadata.labels`` or ``.annotations`` of an object is no mapping, if it is not."""
    meta = got if isinstance(got := doc.get("metadata"), dict) else {}
    for key in ("labels", "annotations"):
        if (got := meta.get(key)) is not None and not isinstance(got, dict):
            what = f"{doc.get('kind')} {meta.get('name')}: metadata.{key}"
            return f"{what} must be a mapping of strings, not a {type(got).__name__}"
    return None


def _node_problems(doc: dict[str, Any], at: str) -> list[str]:
    from krm_fn.io.nodes import node_problems

    if doc.get("apiVersion") != "v1":
        return []
    kind = doc.get("kind")
    if kind == "Node":
        return [f"{at}: Node{_named(doc)}: {p}" for p in node_problems(doc)]
    if kind not in ("List", "NodeList"):
        return []
    subs = doc.get("items")
    if subs is not None and not isinstance(subs, list):
        return [f"{at}: {kind} items must be a list, got {type(subs).__name__}"]
    out = []
    for j, sub in enumerate(subs or ()):
        if isinstance(sub, dict) and sub.get("kind", "Node") == "Node":
            out += [f"{at}.items[{j}]: Node{_named(sub)}: {p}" for p in node_problems(sub)]
    return out


def _named(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return f" {name}" if isinstance(name, str) and name else ""


def _fast_items(fl: FastList, entries: Sequence[Entry], mark: bool, out: list[Chunk]) -> None:
    """The fast reader's items as their input text: whole runs of it, sliced once."""
    text = fl.text_slice
    seg = end = -1
    for e in entries:
        it = e
        start = it.start - len(it.prefix)
        if start != end:  # a gap: items were dropped in between
            if seg >= 0:
                out.append(text(seg, end))
            seg = start
        end = it.end
        if (mark and e.input_kind) or not it.regular:  # marked, or an irregular item rewritten
            a, b, new = fl.edit(it, mark and e.input_kind)
            if new or a != b:
                out.append(text(seg, a))
                out.append(new)
                seg = b
    if seg >= 0:
        out.append(text(seg, end))


Chunk = str | memoryview
"""A piece of output: text, or a slice of the input's bytes (ASCII) written as it was."""

_BATCH_BYTES = 1 << 20


def chunks_text(chunks: Sequence[Chunk]) -> str:
    """The pieces joined as one string (tests, small outputs)."""
    return "".join(c if isinstance(c, str) else str(c, "ascii") for c in chunks)


def write_chunks(chunks: Sequence[Chunk], out: BinaryIO) -> None:
    """Write the pieces to a binary stream, joined in batches of about a megabyte.

    Measured on 120 MB of output through a pipe: writing the pieces one by one through
    the text layer took 0.2-0.5 s; batches of bytes, 0.04 s (one copy, few system calls).
    """
    batch: list[bytes | memoryview] = []
    size = 0
    for chunk in chunks:
        # a lone surrogate (JSON's "\ud800") goes out as that escape: the output is UTF-8
        piece = chunk.encode("utf-8", "backslashreplace") if isinstance(chunk, str) else chunk
        batch.append(piece)
        size += len(piece)
        if size >= _BATCH_BYTES:
            out.write(b"".join(batch))
            batch.clear()
            size = 0
    if batch:
        out.write(b"".join(batch))
    out.flush()


def write_output_chunks(
    inp: FunctionInput,
    entries: Sequence[Entry],
    generated: Sequence[dict[str, Any]],
    results: list[Result],
    mark: bool,
) -> list[Chunk]:
    """Serialise the output in the form the input came in, as pieces to write in order.

    ``entries`` (the input items to write back) then ``generated``, ``results`` in the
    ResourceList form; ``mark`` marks consumed kinds local-config. Pieces, not one string:
    at fleet size joining and encoding 100 MB costs two full copies.
    """
    from krm_fn.io import fastdump

    fl = inp.fast_list
    if inp.encoding == "json":
        return _write_json(inp, entries, generated, results, mark)
    if inp.form == "stream":
        docs: list[list[Chunk]] = [
            fl.document_pieces(e, mark and e.input_kind)
            if fl is not None and e.start >= 0
            else [fastdump.dump(_loaded(inp, e, mark))]
            for e in entries
        ]
        docs += ([fastdump.dump(obj)] for obj in generated)
        out: list[Chunk] = []
        for i, doc in enumerate(docs):
            if i:
                out.append("---\n")
            out += doc
        return out
    pieces: list[Chunk] = [
        f"apiVersion: {fastdump.scalar_value(inp.api_version)}\nkind: {RL_KIND}\n"
    ]
    body: list[Chunk] = []
    if fl is not None:
        _fast_items(fl, entries, mark, body)
    else:
        body.extend(fastdump.dump_item(_loaded(inp, e, mark)) for e in entries)
    body.extend(fastdump.dump_item(obj) for obj in generated)
    if body:
        pieces.append("items:\n")
        pieces.extend(body)
    else:
        pieces.append("items: []\n")
    if results:
        pieces.append(fastdump.dump({"results": [r.to_krm() for r in results]}))
    return pieces


def _loaded(inp: FunctionInput, e: Entry, mark: bool) -> dict[str, Any]:
    """The entry's object, marked local-config when it is an input kind being written back."""
    from krm_fn.io.output import mark_local_config

    obj = inp.load(e)
    if mark and e.input_kind:
        mark_local_config(obj)
    return obj


_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufffe\uffff]")
"""Characters YAML does not print, or reads as a line break: escaped in JSON output."""


def _write_json(
    inp: FunctionInput,
    entries: Sequence[Entry],
    generated: Sequence[dict[str, Any]],
    results: list[Result],
    mark: bool,
) -> list[Chunk]:
    """The output of a JSON input in JSON: one item (or document) per line."""
    import json

    def dumps(obj: Any) -> str:
        text = json.dumps(obj, ensure_ascii=False)
        if text.isascii() and "\x7f" not in text:
            return text
        return _UNPRINTABLE.sub(lambda c: f"\\u{ord(c.group()):04x}", text)

    objs = [_loaded(inp, e, mark) for e in entries]
    objs.extend(generated)
    if inp.form == "stream":
        return [("---\n" if i else "") + dumps(o) + "\n" for i, o in enumerate(objs)]
    pieces: list[Chunk] = [
        f'{{"apiVersion": {dumps(inp.api_version)}, "kind": "{RL_KIND}", "items": ['
    ]
    pieces.extend(("\n" if i == 0 else ",\n") + dumps(o) for i, o in enumerate(objs))
    pieces.append("\n]" if objs else "]")
    if results:
        pieces.append(', "results": ' + dumps([r.to_krm() for r in results]))
    pieces.append("}\n")
    return pieces
