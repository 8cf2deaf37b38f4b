"""Load and dump YAML fast, safely and deterministically.

Invariants:
    * Only the safe loader is used: ``!!python/*`` tags are never constructed.
    * The libyaml C loader/dumper is used when available (5x faster than pure Python).
    * Duplicate mapping keys are an error, not a silent last-wins.
    * Every text is checked against :mod:`krm_fn.io.limits` (size, alias bombs, depth, node
      count) before anything is constructed; a refusal is a :class:`YAMLInputError`.
    * Error messages are one line, naming the input and the line and column; a value its
      tag cannot build (``!!int x``, a date that does not exist) is such an error too.
    * Dumping is block style, keeps key insertion order, never folds long lines and writes
      multi-line strings as literal blocks, so output is byte-stable across runs; a string
      YAML 1.1 *or* 1.2 would read as another type is quoted (:class:`OutputResolver`), and
      no document-end marker is written.
    * Only public APIs of ``re`` and ``yaml`` are used (no entries planted in private caches).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

_Loader: type[yaml.SafeLoader]
_Dumper: type[yaml.SafeDumper]
try:
    _Loader = yaml.CSafeLoader  # type: ignore[assignment,unused-ignore]
    _Dumper = yaml.CSafeDumper  # type: ignore[assignment,unused-ignore]
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader = yaml.SafeLoader
    _Dumper = yaml.SafeDumper


class YAMLInputError(ValueError):
    """The input is not valid YAML; the message names the document and position."""


class YAMLLimitError(YAMLInputError):
    """The input crosses one of :mod:`krm_fn.io.limits`' bounds (reading it again cannot help)."""


class _StrictLoader(_Loader):  # type: ignore[misc,valid-type]
    """Safe loader that refuses duplicate keys, and a value its tag cannot build, with its line."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """PyYAML's construction; a constructor's own error (``!!int x``) as a marked one."""
        try:
            return super().construct_object(node, deep)
        except Exception as exc:  # the safe constructors raise many kinds on a bad value
            if isinstance(exc, yaml.YAMLError | RecursionError):
                raise
            what = repr(node.value) if isinstance(node, yaml.ScalarNode) else f"a {node.id}"  # type: ignore[attr-defined]
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            raise yaml.constructor.ConstructorError(
                None, None, f"{what} cannot be read as {tag}", node.start_mark
            ) from None


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """A mapping as PyYAML builds it (merge keys ``<<`` included), refusing a key written twice.

    A key a merge brings in may be overridden by the mapping's own (as PyYAML and ruamel.yaml
    read it); only the mapping's own keys must be unique.
    """
    own = sum(1 for k, _ in node.value if k.tag != _MERGE_TAG)
    loader.flatten_mapping(node)
    merged = len(node.value) - own  # flatten_mapping puts the merged pairs first
    seen: dict[Any, Any] = {}
    own_keys: set[Any] = set()
    for i, (key_node, value_node) in enumerate(node.value):
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise yaml.constructor.ConstructorError(
                None, None, "mapping keys must be scalars", key_node.start_mark
            )
        if i >= merged:
            if key in own_keys:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            own_keys.add(key)
        seen[key] = loader.construct_object(value_node, deep=True)
    return seen


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


class OutputResolver(yaml.resolver.Resolver):
    """PyYAML's resolver (YAML 1.1) and what YAML 1.2 and Go's yaml.v3 read as another type.

    The writers ask it whether a string written plain reads back as a string; one that any
    of PyYAML, ruamel.yaml (YAML 1.2) and yaml.v3 / kyaml (kpt, kustomize) would read as a
    number, boolean or date is quoted. Each entry may match more than its reader does (that
    only quotes more), never less.
    """


for _tag, _pattern, _first in (
    # YAML 1.1 booleans PyYAML leaves out (yaml.org/type/bool.html; yaml.v2 and kyaml keep them)
    ("bool", r"[yYnN]", "yYnN"),
    # integers: YAML 1.2 core (0o, 0x) and yaml.v3 (Go's base prefixes, leading zeros, "_")
    ("int", r"[-+]?(?:[0-9_]+|0[bB][01_]+|0[oO][0-7_]+|0[xX][0-9a-fA-F_]+)", "-+0123456789"),
    # floats: YAML 1.2 core (an exponent without a dot, 1e3), yaml.v3 ("_" anywhere), and
    # the YAML 1.1 spec's own pattern (yaml.org/type/float.html), which reads "1.2.3" too
    (
        "float",
        r"[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9_]+)?",
        "-+.0123456789",
    ),
    ("float", r"[-+]?(?:[0-9][0-9_]*)?\.[0-9.]*(?:[eE][-+][0-9]+)?", "-+.0123456789"),
    # timestamps as yaml.v3 parses them (one-digit fields, a comma before the fraction too)
    (
        "timestamp",
        r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}"
        r"(?:[.,][0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?",
        "0123456789",
    ),
):
    OutputResolver.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_pattern})$"), list(_first)
    )


def plain_is_str(text: str) -> bool:
    """Whether ``text`` written plain reads back as this string in every reader (above)."""
    tag = _OUTPUT_RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return bool(tag == "tag:yaml.org,2002:str")


_OUTPUT_RESOLVER = OutputResolver()


class _BlockDumper(_Dumper):  # type: ignore[misc,valid-type]
    """Dumper that writes multi-line strings as literal blocks and never emits aliases."""

    yaml_implicit_resolvers = OutputResolver.yaml_implicit_resolvers

    def ignore_aliases(self, data: Any) -> bool:
        """Shared sub-objects are written out in full: aliases confuse kpt and readers."""
        return True


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if (
        "\n" in data
        and not any(c in data for c in "\r\t\x85\u2028\u2029")
        and (not data[:1].isspace() and all(line == line.rstrip() for line in data.split("\n")))
    ):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_BlockDumper.add_representer(str, _represent_str)


def load_all(text: str | bytes, source: str = "<stdin>") -> list[Any]:
    """Every document of a YAML stream (``None`` for empty ones).

    ``YAMLInputError`` on malformed YAML, non-UTF-8 bytes, duplicate keys or a limit
    crossed; ``source`` names the input in the message.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YAMLInputError(
                f"{source}: input is not valid UTF-8 (byte {exc.start}); KRM functions read UTF-8"
            ) from None
    try:
        _check_limits(text, source)
        return list(yaml.load_all(text, Loader=_StrictLoader))
    except yaml.YAMLError as exc:
        raise YAMLInputError(f"{source}: malformed YAML: {_describe(exc, text)}") from None
    except RecursionError:
        raise YAMLInputError(f"{source}: YAML nested too deeply") from None


def _check_limits(text: str, source: str) -> None:
    from krm_fn.io import limits

    try:
        limits.check_yaml(text)
    except limits.LimitExceeded as exc:
        raise YAMLLimitError(f"{source}: {exc}") from None


def compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """A one-document stream's root node (``None``: empty) and its data, as :func:`load_all`."""
    loader = None
    try:
        _check_limits(text, "<input>")
        loader = _StrictLoader(text)
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise YAMLInputError(f"malformed YAML: {_describe(exc, text)}") from None
    except RecursionError:
        raise YAMLInputError("YAML nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def _describe(exc: yaml.YAMLError, text: str) -> str:
    """One line: what is wrong and where (line and column in ``text``)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [(exc.problem, exc.problem_mark)]
        if isinstance(exc, yaml.composer.ComposerError) and exc.context:  # both occurrences
            parts.insert(0, (exc.context, exc.context_mark))
        return "; ".join(
            f"{what}{f' (line {m.line + 1}, column {m.column + 1})' if m else ''}"
            for what, m in parts
            if what
        ) or str(exc.context)
    if isinstance(exc, yaml.reader.ReaderError):
        pos = max(0, min(int(exc.position), len(text)))
        line = text.count("\n", 0, pos) + 1
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return f"{exc.reason} (line {line}, column {column})"
    return " ".join(str(exc).split())


def dump(doc: Any) -> str:
    """Serialise one document as block YAML with a stable layout.

    Never a document-end marker: PyYAML ends a stream after an open-ended scalar (a ``|+``
    block) with ``...``; the documents written here are joined into one stream, where that
    marker would end it in the middle (and nothing written here needs it: no directives).
    """
    out = yaml.dump(
        doc,
        Dumper=_BlockDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )
    return out[:-4] if out.endswith("\n...\n") else out


def dump_all(docs: Iterable[Any]) -> str:
    """Serialise documents as a ``---``-separated stream."""
    return "".join(("---\n" if i else "") + dump(doc) for i, doc in enumerate(docs))
