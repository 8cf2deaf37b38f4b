"""Read the function's input (ResourceList or plain stream) and write its output in the same form.

Two readers give the same result: the fast reader (:mod:`krm_fn.fastio`, for a ResourceList
in the regular shape kpt writes: Nodes are never turned into Python objects and every item
keeps its text) and the full reader (PyYAML over the whole input, for everything else).

Invariants:
    * The input form decides the output form: a ``ResourceList`` is answered with a
      ``ResourceList`` (``config.kubernetes.io/v1`` or the ``v1beta1`` it came as), a plain
      multi-document stream with a plain stream.
    * Items read by the fast reader are written back as their input text (plus the
      local-config annotation for consumed kinds); items read by the full reader are
      written as PyYAML writes them (:mod:`krm_fn.fastdump`, byte-identical to it).
    * Nothing here edits an input item's dict except :func:`write_output_chunks` marking consumed
      kinds local-config when asked to.
    * Every malformed document is reported at once, with its index, and nothing is returned
      for a malformed input.
    * Output is returned only once the fast reader's check of the items is in
      (:meth:`FunctionInput.confirm`, awaited after the text is built so that the check
      overlaps the writing); a failed check raises :class:`StaleInput` and the caller
      recomputes from the corrected items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from krm_fn import yamlio
from krm_fn.records import field, record
from krm_fn.results import Result, Results

if TYPE_CHECKING:
    from krm_fn.fastio import FastList, Item
    from krm_fn.inventory import NodeInfo

RL_KIND = "ResourceList"
RL_API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")

Form = Literal["resourcelist", "stream"]


class InputError(ValueError):
    """The input cannot be read; ``results`` says why, for every document at once.

    Attributes:
        results: One result per problem.
        echo: For a ResourceList whose items could be read but not used: the
            ``apiVersion`` to answer with and the items to send back unchanged.

    """

    def __init__(self, results: list[Result], echo: tuple[str, list[Any]] | None = None) -> None:
        """Keep the results that describe the problems."""
        super().__init__("; ".join(r.message for r in results))
        self.results = results
        self.echo = echo


class StaleInput(Exception):
    """The fast reader's check found items it must read again: recompute, then write.

    Attributes:
        full: The items cannot be read one by one: read the whole input with PyYAML.

    """

    def __init__(self, full: bool) -> None:
        """Say whether the whole input must be read again."""
        super().__init__("input items changed after the fast reader's check")
        self.full = full


@record
class Entry:
    """One input item as the pipeline sees it.

    Attributes:
        obj: The item's dict; ``None`` for an item the fast reader never had to parse
            (Nodes, pass-through kinds) until :meth:`FunctionInput.load` asks for it.
        nodes: The Nodes the item contributes (a Node: one; a Node ``List``: all of them).
        generated: The item is one of ours from an earlier run (it is replaced).
        input_kind: A WorkloadRun, Node or Node list (marked local-config on output).
        workloadrun: A WorkloadRun (its ``obj`` is always set).
        fast: The fast reader's record of the item (its text), or ``None``.

    """

    obj: dict[str, Any] | None
    nodes: list[NodeInfo] = field(default_factory=list)
    generated: bool = False
    input_kind: bool = False
    workloadrun: bool = False
    fast: Item | None = None


class FunctionInput:
    """What the orchestrator handed us.

    Attributes:
        function_config: The ``functionConfig`` mapping, if any.
        form: ``resourcelist`` or ``stream``.
        api_version: The ResourceList ``apiVersion`` to answer with.
        fast_list: The fast reader's result (``None`` when the full reader was used).

    """

    def __init__(
        self,
        items: list[dict[str, Any]] | None = None,
        function_config: dict[str, Any] | None = None,
        form: Form = "resourcelist",
        api_version: str = RL_API_VERSIONS[0],
        fast_list: FastList | None = None,
    ) -> None:
        """Wrap items read by the full reader, or the fast reader's result."""
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
            return [
                Entry(
                    obj=it.obj,
                    nodes=it.nodes,
                    generated=it.generated,
                    input_kind=it.input_kind,
                    workloadrun=it.workloadrun,
                    fast=it,
                )
                for it in self.fast_list.items
            ]
        from krm_fn.inventory import collect_nodes
        from krm_fn.output import is_generated, is_input_kind

        out = []
        for obj in self.items:
            gen = is_generated(obj)
            api = obj.get("apiVersion")
            out.append(
                Entry(
                    obj=obj,
                    nodes=[] if gen else collect_nodes([obj]),
                    generated=gen,
                    input_kind=is_input_kind(obj),
                    workloadrun=obj.get("kind") == "WorkloadRun"
                    and isinstance(api, str)
                    and api.startswith("nvcre.nvidia.com/"),
                )
            )
        return out

    def load(self, entry: Entry) -> dict[str, Any]:
        """The entry's dict (parsed from its text if it was never needed before).

        Raises:
            StaleInput: With ``full=True`` when the item's text is not what the fast
                reader took it for (the full reader then reports the problem).

        """
        if entry.obj is None:
            assert self.fast_list is not None and entry.fast is not None
            from krm_fn import fastio

            try:
                entry.obj = self.fast_list.load(entry.fast)
            except (fastio.Irregular, yamlio.YAMLInputError, RecursionError):
                raise StaleInput(full=True) from None
        return entry.obj

    def confirm(self) -> None:
        """Make sure the fast reader's check agrees with what was read.

        Raises:
            StaleInput: Some items were misread on the fast path; they have been read
                again (``full=False``: recompute from :meth:`entries`), or cannot be
                (``full=True``: read the whole input with the full reader).

        """
        if self.fast_list is None:
            return
        verdict = self.fast_list.confirm()
        if verdict is True:
            return
        self._entries = None
        self._items = None
        raise StaleInput(full=verdict is None)


def parse_input(
    text: str | bytes,
    source: str = "<stdin>",
    fast: bool = True,
    meanwhile: Callable[[], object] | None = None,
) -> FunctionInput:
    """Parse stdin into a :class:`FunctionInput`.

    Args:
        text: The raw input.
        source: Name used in messages.
        fast: Try the fast reader first (a ResourceList in the regular shape).
        meanwhile: Work to overlap with the fast reader's helper process (see
            :func:`krm_fn.fastio.read_resource_list`); not called on the full path.

    Raises:
        InputError: With one result per problem found.
        yamlio.YAMLInputError: When the YAML itself is malformed.

    """
    if fast:
        got = _parse_fast(text, meanwhile)
        if got is not None:
            return got
    docs = [d for d in yamlio.load_all(text, source) if d is not None]
    if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") == RL_KIND:
        return _from_resource_list(docs[0], source)
    return FunctionInput(items=check_items(docs, source), form="stream")


FAST_READER_BUGS_RAISE = False
"""Tests set this to see a bug in the fast reader instead of the silent fallback."""


def _parse_fast(text: str | bytes, meanwhile: Callable[[], object] | None) -> FunctionInput | None:
    from krm_fn import fastio

    try:
        fl = fastio.read_resource_list(text, meanwhile)
    except Exception:
        # A bug in the fast reader must never cost a user their render: the full reader
        # gives the same answer, only slower.
        if FAST_READER_BUGS_RAISE:
            raise
        return None
    if fl is None:
        return None
    head = fl.header
    api_version = head.get("apiVersion")
    fc = head.get("functionConfig")
    if (
        head.get("kind") != RL_KIND
        or api_version not in RL_API_VERSIONS
        or (fc is not None and not isinstance(fc, dict))
    ):
        fl.abandon()
        return None  # the full reader reports what is wrong
    return FunctionInput(
        function_config=fc,
        form="resourcelist",
        api_version=str(api_version),
        fast_list=fl,
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
    :func:`krm_fn.inventory.node_problems`.
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
        for message in _node_problems(doc, f"{where}[{i}]"):
            problems.error(message)
    if problems.has_errors:
        raise InputError(problems.items)
    return docs


def _node_problems(doc: dict[str, Any], at: str) -> list[str]:
    from krm_fn.inventory import node_problems

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


def _fast_items(fl: FastList, entries: Sequence[Entry], mark: bool, out: list[str]) -> None:
    """The fast reader's items as their input text: whole runs of it, sliced once."""
    text = fl.text
    seg = end = -1
    for e in entries:
        it = e.fast
        assert it is not None
        start = it.start - len(it.prefix)
        if start != end:  # a gap: items were dropped in between
            if seg >= 0:
                out.append(text[seg:end])
            seg = start
        end = it.end
        if mark and e.input_kind:
            a, b, new = fl.edit(it)
            if new or a != b:
                out.append(text[seg:a])
                out.append(new)
                seg = b
    if seg >= 0:
        out.append(text[seg:end])


def write_output_chunks(
    inp: FunctionInput,
    entries: Sequence[Entry],
    generated: Sequence[dict[str, Any]],
    results: list[Result],
    mark: bool,
) -> list[str]:
    """Serialise the output in the form the input came in, as pieces to write in order.

    At fleet size the output is over 100 MB: writing the pieces one after the other
    saves joining them into one string and encoding that string in one piece (two full
    copies, and on these machines fresh memory costs more than the copying itself).

    Args:
        inp: The input (its form, ResourceList version and fast reader's text).
        entries: The input items to write back, in order.
        generated: New objects, written after the input items.
        results: Results (ResourceList form only).
        mark: Mark consumed kinds (:attr:`Entry.input_kind`) local-config.

    Raises:
        StaleInput: See :meth:`FunctionInput.confirm` (checked before the pieces are
            returned).

    """
    chunks = _write(inp, entries, generated, results, mark)
    inp.confirm()
    return chunks


def _write(
    inp: FunctionInput,
    entries: Sequence[Entry],
    generated: Sequence[dict[str, Any]],
    results: list[Result],
    mark: bool,
) -> list[str]:
    from krm_fn import fastdump
    from krm_fn.output import mark_local_config

    fl = inp.fast_list
    if inp.form == "stream":
        docs: list[Any] = []
        for e in entries:
            obj = inp.load(e)
            if mark and e.input_kind:
                mark_local_config(obj)
            docs.append(obj)
        return [fastdump.dump_all([*docs, *generated])]
    pieces = [f"apiVersion: {fastdump.scalar_value(inp.api_version)}\nkind: {RL_KIND}\n"]
    body: list[str] = []
    if fl is not None:
        _fast_items(fl, entries, mark, body)
    else:
        for e in entries:
            obj = inp.load(e)
            if mark and e.input_kind:
                mark_local_config(obj)
            body.append(fastdump.dump_item(obj))
    body.extend(fastdump.dump_item(obj) for obj in generated)
    if body:
        pieces.append("items:\n")
        pieces.extend(body)
    else:
        pieces.append("items: []\n")
    if results:
        pieces.append(fastdump.dump({"results": [r.to_krm() for r in results]}))
    return pieces
