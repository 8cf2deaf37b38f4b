"""Write plain data as block YAML exactly as :func:`krm_fn.io.yamlio.dump` does, several times faster.

The output objects (thousands of TrainJobs for a large fleet) are written without PyYAML's
representer, serializer and emitter: its block layout (indent 2, sequences in mappings not
indented, ``{}``/``[]``) is reproduced here, and each distinct scalar's spelling is proven by
a strict test (plain, or single-quoted when a reader would take it for another type:
``'8'``, ``'1e3'``) or asked from :mod:`krm_fn.io.yamlio` once and cached.

Invariants:
    * ``dump(doc) == yamlio.dump(doc)``, ``dump_item(obj) == yamlio.dump([obj])`` and
      ``dump_all(docs) == yamlio.dump_all(docs)``, byte for byte, for every input.
    * Whatever this module cannot prove it writes identically (floats, non-string keys,
      keys that are not simple keys, scalars that do not fit on one line, types other than
      ``dict``/``list``/``str``/``int``/``bool``/``None``, subclasses of them) is written by
      :mod:`krm_fn.io.yamlio` instead: that scalar when it is a single-line scalar, else the
      whole top-level object. Errors (e.g. an unrepresentable type) are therefore PyYAML's.
    * The only state kept between calls is the cache of scalar spellings, a pure function
      of the scalar.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from krm_fn.io import yamlio

__all__ = ["dump", "dump_all", "dump_item", "scalar_value"]

# A string made only of these characters, not starting with an indicator nor ending with
# ":", can be written plain by libyaml whenever the resolver reads it back as a string
# (",", ":" and "@" inside a scalar only matter in flow context; there are no spaces).
_SIMPLE = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./,=+@:-]*")
_MAX_SIMPLE_KEY = 100  # libyaml writes keys up to 128 characters as simple keys


class _Unsupported(Exception):
    """The object holds something only PyYAML itself can write."""


_VALUES: dict[str, str] = {}
_KEYS: dict[str, str] = {}
_ONLY_STR = {str}


def _simple_spelling(text: str) -> str:
    """How PyYAML writes a :data:`_SIMPLE` string: plain, or single-quoted.

    Single-quoted when plain would read back as another type (a number, a boolean,
    ``null``, a date, ...) in YAML 1.1 or 1.2 (:class:`krm_fn.io.yamlio.OutputResolver`). Such a string has no character that rules out single quotes (no quote, space, line
    break or non-printable character), so PyYAML's emitter picks single quotes, the first
    style it tries after plain.
    """
    return text if yamlio.plain_is_str(text) else f"'{text}'"


def _value(text: str) -> str:
    """The spelling of a string as a block mapping value or sequence entry."""
    spelled = _VALUES.get(text)
    if spelled is not None:
        return spelled
    if _SIMPLE.fullmatch(text) and text[-1] != ":":
        spelled = _simple_spelling(text)
    else:
        out = yamlio.dump([text])
        if not out.startswith("- ") or out.count("\n") != 1:
            raise _Unsupported
        spelled = out[2:-1]
    _VALUES[text] = spelled
    return spelled


def _key(text: str) -> str:
    """The spelling of a string as a simple mapping key."""
    spelled = _KEYS.get(text)
    if spelled is not None:
        return spelled
    if len(text) <= _MAX_SIMPLE_KEY and _SIMPLE.fullmatch(text) and text[-1] != ":":
        spelled = _simple_spelling(text)
    else:
        out = yamlio.dump({text: None})
        if out.startswith("?") or out.count("\n") != 1 or not out.endswith(": null\n"):
            raise _Unsupported
        spelled = out[: -len(": null\n")]
    _KEYS[text] = spelled
    return spelled


def scalar_value(value: Any) -> str:
    """The one-line spelling of a scalar value (``str``, ``int``, ``bool`` or ``None``).

    Raises ``ValueError``: when the scalar does not fit on one line or is of another type.
    """
    try:
        return _scalar(value)
    except _Unsupported:
        raise ValueError(f"not a one-line scalar: {value!r}") from None


def _scalar(value: Any) -> str:
    t = type(value)
    if t is str:
        return _VALUES.get(value) or _value(value)
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return str(value)
    if value is None:
        return "null"
    raise _Unsupported


def _mapping(d: dict[Any, Any], ind: str, out: list[str], inline: bool) -> None:
    """Write a non-empty mapping whose keys sit at indentation ``ind``.

    With ``inline`` the first key continues the line already started (after ``- ``).
    """
    keys = _KEYS
    values = _VALUES
    deeper = ind + "  "
    for k, v in d.items():
        if type(k) is not str:
            raise _Unsupported
        ks = keys.get(k) or _key(k)
        lead = ks if inline else ind + ks
        inline = False
        t = type(v)
        if t is str:
            out.append(f"{lead}: {values.get(v) or _value(v)}\n")
        elif t is dict:
            if v:
                out.append(lead + ":\n")
                _mapping(v, deeper, out, False)
            else:
                out.append(lead + ": {}\n")
        elif t is list:
            if v:
                out.append(lead + ":\n")
                _sequence(v, ind, out, False)
            else:
                out.append(lead + ": []\n")
        else:
            out.append(f"{lead}: {_scalar(v)}\n")


def _sequence(seq: list[Any], ind: str, out: list[str], inline: bool) -> None:
    """Write a non-empty sequence whose ``-`` sit at indentation ``ind``."""
    values = _VALUES
    dash = ind + "- "
    if len(seq) > 2 and set(map(type, seq)) == _ONLY_STR:
        # A list of strings (command lines, host names): one join when all are spelled.
        spelled = list(map(values.get, seq))
        if None not in spelled:
            lines = ("\n" + dash).join(spelled)  # type: ignore[arg-type]  # no None in it
            out.append(("- " if inline else dash) + lines + "\n")
            return
    deeper = ind + "  "
    for v in seq:
        lead = "- " if inline else dash
        inline = False
        t = type(v)
        if t is str:
            out.append(f"{lead}{values.get(v) or _value(v)}\n")
        elif t is dict:
            if v:
                out.append(lead)
                _mapping(v, deeper, out, True)
            else:
                out.append(lead + "{}\n")
        elif t is list:
            if v:
                out.append(lead)
                _sequence(v, deeper, out, True)
            else:
                out.append(lead + "[]\n")
        else:
            out.append(f"{lead}{_scalar(v)}\n")


def dump_item(obj: Any) -> str:
    """``obj`` as an entry of a block sequence at column 0: ``yamlio.dump([obj])``."""
    out: list[str] = []
    try:
        _sequence([obj], "", out, False)
    except _Unsupported:
        return yamlio.dump([obj])
    return "".join(out)


def dump(doc: Any) -> str:
    """One document, as :func:`krm_fn.io.yamlio.dump` writes it."""
    if type(doc) is not dict or not doc:
        return yamlio.dump(doc)
    out: list[str] = []
    try:
        _mapping(doc, "", out, False)
    except _Unsupported:
        return yamlio.dump(doc)
    return "".join(out)


def dump_all(docs: Iterable[Any]) -> str:
    """Documents as a ``---``-separated stream, as :func:`krm_fn.io.yamlio.dump_all` writes it."""
    return "".join(("---\n" if i else "") + dump(doc) for i, doc in enumerate(docs))
