"""One-line scalars and keys decoded exactly as PyYAML's safe loader builds them.

Invariants:
    * :func:`_decode` returns what PyYAML would construct for the raw scalar (str, decimal
      int, bool, null, ``[]``, ``{}``) or raises :class:`Irregular`; it never guesses.
    * The caches map raw text to decoded values; lists and dicts are copied on every use.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from krm_fn.io.fastio.grammar import _KEY


class Irregular(Exception):
    """The item is not in the regular shape: PyYAML reads it."""


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


_RESOLVED_FIRST = frozenset(_RESOLVER.yaml_implicit_resolvers)
"""First characters of a plain scalar PyYAML may read as something else than a string."""


def _plain_tag(text: str) -> str:
    if text[:1] not in _RESOLVED_FIRST:
        return _STR_TAG
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return str(tag)


def _decode(raw: str) -> Any:
    """A one-line scalar as PyYAML builds it (str, decimal int, bool, null, ``[]``, ``{}``).

    Raises ``Irregular``: for anything else (escapes, comments, other implicit types, ...).
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
