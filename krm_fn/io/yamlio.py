"""Load and dump YAML fast, safely and deterministically.

Invariants:
    * Only the safe loader is used: ``!!python/*`` tags are never constructed.
    * The libyaml C loader/dumper is used when available (5x faster than pure Python).
    * Duplicate mapping keys are an error, not a silent last-wins.
    * Every text is checked against :mod:`krm_fn.io.limits` (size, alias bombs, depth, node
      count) before anything is constructed; a refusal is a :class:`YAMLInputError`.
    * Error messages are one line, naming the input and the line and column.
    * Dumping is block style, keeps key insertion order, never folds long lines and writes
      multi-line strings as literal blocks, so output is byte-stable across runs.
    * Only public APIs of ``re`` and ``yaml`` are used (no entries planted in private caches).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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
    """Safe loader that refuses duplicate keys."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise yaml.constructor.ConstructorError(
                None, None, "mapping keys must be scalars", key_node.start_mark
            )
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen[key] = loader.construct_object(value_node, deep=True)
    return seen


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


class _BlockDumper(_Dumper):  # type: ignore[misc,valid-type]
    """Dumper that writes multi-line strings as literal blocks and never emits aliases."""

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
    """Parse every document of a YAML stream.

    Args:
        text: The YAML text (bytes must be UTF-8).
        source: Name of the input used in error messages.

    Returns:
        The documents, ``None`` for empty ones.

    Raises:
        YAMLInputError: On malformed YAML, non-UTF-8 bytes or duplicate keys.

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
    """Parse a single-document stream, keeping the node graph (with its marks) too.

    Args:
        text: The YAML text.

    Returns:
        The root node (``None`` for an empty stream) and the data built from it, with the
        same strict rules as :func:`load_all`.

    Raises:
        YAMLInputError: On malformed YAML, more than one document or duplicate keys.

    """
    try:
        _check_limits(text, "<input>")
    except yaml.YAMLError as exc:
        raise YAMLInputError(f"malformed YAML: {_describe(exc, text)}") from None
    except RecursionError:
        raise YAMLInputError("YAML nested too deeply") from None
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise YAMLInputError(f"malformed YAML: {_describe(exc, text)}") from None
    except RecursionError:
        raise YAMLInputError("YAML nested too deeply") from None
    finally:
        loader.dispose()
    return node, data


def _describe(exc: yaml.YAMLError, text: str) -> str:
    """One line: what is wrong and where (line and column in ``text``)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return f"{exc.problem or exc.context}{where}"
    if isinstance(exc, yaml.reader.ReaderError):
        pos = max(0, min(int(exc.position), len(text)))
        line = text.count("\n", 0, pos) + 1
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return f"{exc.reason} (line {line}, column {column})"
    return " ".join(str(exc).split())


def dump(doc: Any) -> str:
    """Serialise one document as block YAML with a stable layout."""
    return yaml.dump(
        doc,
        Dumper=_BlockDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )


def dump_all(docs: Iterable[Any]) -> str:
    """Serialise documents as a ``---``-separated stream."""
    return "".join(_iter_docs(docs))


def _iter_docs(docs: Iterable[Any]) -> Iterator[str]:
    for i, doc in enumerate(docs):
        yield ("---\n" if i else "") + dump(doc)
