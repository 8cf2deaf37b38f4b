"""The fast reader's grammar: structural patterns, the strict line grammar, the character rule.

Invariants:
    * Every pattern is a pure function of the indentation it is compiled for and is
      compiled on first use (:class:`_Patterns`), never at import.
    * :func:`strict_ok` accepts only the block-style subset the extraction understands:
      block mappings indented by two, sequences at their key's column, plain, quoted or
      block scalars whose continuation lines are deeper than the line they start on,
      ``[]``/``{}`` and trailing comments. No flow collections, anchors, aliases, tags,
      quoted or complex keys, full-line comments or odd indentation. It is what makes the
      extraction (:mod:`krm_fn.io.fastio.extract`) sound.
    * :func:`_clean_chars` is true only for UTF-8 text without tab, CR, other control
      characters, BOM, NEL, LS or PS (characters whose meaning PyYAML decides).
    * :func:`strict_ok_lines` checks a span of indented lines (the Nodes of a ``v1 List``):
      at a span's end a lookahead sees nothing, which can only refuse more, never accept more.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_KEY = r"[A-Za-z0-9_.][A-Za-z0-9_./-]{0,1023}+"
"""A plain key as the grammar accepts it: at most 1,024 characters, YAML's simple-key limit."""
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


_AMBIGUOUS = (
    r"(?=[-+.0-9yYnNoO])(?:[-+]?(?:0[0-9_]+|0[oObB][0-9_]*|0[xX][0-9a-fA-F]*_[0-9a-fA-F_]*|"
    r"[0-9_.]*[eE][-+]?[0-9]+|[0-9.]*_[0-9_.]*|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|"
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9:.,]*[ \t]*(?:[Zz]|[-+][0-9:]*)?)?)|"
    r"[-+]\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?|[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF)"
)
"""Plain scalars YAML 1.1 (PyYAML) and 1.2 (ruamel.yaml, Go's yaml.v3) read as different
values (``08``, ``0o17``, ``1e3``, ``1_000``, ``0x_1``, ``1:20``, ``yes``, ``on``), and dates
(PyYAML refuses ``0000-00-00``): an item holding one is handed to PyYAML, which writes it as
it read it (quoted) or refuses it as the full reader does, instead of echoing it."""


def _strict_pattern(lines_only: bool = False) -> re.Pattern[str]:
    r"""The strict line grammar of one item (see the module docstring).

    Every line after the first is ``(?P<i>indent)`` then a key line or an entry line; the
    lookaheads after each line check the indentation of the next one (a leaf is never
    followed by a deeper line, an opener always by its child at +2 or by a sequence at its
    own column, ...), so indentation errors are caught too.
    """
    comment = r"(?:\ +\#[^\n]*+)?"
    plain_first = rf"(?!{_AMBIGUOUS}{comment}\n)(?:[^\s\-?:,\[\]{{}}#&*!|>'\"%@`=<]|[-?:](?=[^\s]))"
    plain_body = r"[^:#\n]*+(?:(?::(?=[^\s])|(?<=[^\s])\#)[^:#\n]*+)*+"
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
    if lines_only:
        return re.compile(rf"(?:{line})++", re.VERBOSE)
    return re.compile(rf"(?:{first})(?:{line})*+", re.VERBOSE)


_STRICT = _Patterns(lambda lines_only: _strict_pattern(bool(lines_only)))


def strict_ok(
    text: str,
    start: int,
    end: int,
    checked: Sequence[tuple[int, int]] = (),
    lines: bool = False,
) -> bool:
    """Whether ``text[start:end]`` (one item, ``- `` at column 0) passes the strict grammar.

    ``lines``: the span is indented lines of an item (the parts of a ``v1 List`` item: each
    Node entry ``  - ...``, the keys after ``items``); at ``end`` a lookahead sees nothing,
    which can only refuse more. ``checked``: blocks whose lines the extraction already
    checked with a stricter rule than this grammar's; only their first lines (up to one
    that is not an opener ``key:``) are matched here, against the line before them.
    """
    pattern, at = _STRICT[lines], start
    for s, e in sorted(checked):
        cut = text.index("\n", s) + 1
        while text[cut - 2] == ":" and cut < e:  # an opener needs its next line in view
            cut = text.index("\n", cut) + 1
        if pattern.fullmatch(text, at, cut) is None:
            return False
        pattern, at = _STRICT[1], e
    return at >= end or pattern.fullmatch(text, at, end) is not None


_ALLOWED = bytes(range(0x20, 0x7F)) + b"\n" + bytes(range(0x80, 0x100))
_BAD_UTF8 = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xef\xbb\xbf", b"\xef\xbf\xbe")
_C1 = re.compile(rb"\xc2[\x80-\x9f]|\xef\xbf\xbf")


def _clean_chars(data: bytes) -> bool:
    if data.translate(None, _ALLOWED):
        return False  # tab, CR or another control character
    if data.isascii():
        return True
    return not any(b in data for b in _BAD_UTF8) and _C1.search(data) is None
