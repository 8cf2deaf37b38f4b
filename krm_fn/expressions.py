"""The one expression language: ``when.expression`` (render) and thresholds (report).

A tiny CEL subset, tokenized, parsed and type-checked by hand (never ``eval``)::

    or      := and ("||" and)*
    and     := compare ("&&" compare)*
    compare := unary (("==" | "!=" | "<" | ">" | "<=" | ">=") unary | "in" list)?
    unary   := "!" unary | primary
    primary := "(" or ")" | literal | variable
    list    := "[" (literal ("," literal)*)? "]"

``&&`` binds tighter than ``||``, as in CEL and C. A :class:`Dialect` says which variables
exist (with their types), which literals, operators and spelled-out words (``and``, ``or``)
are allowed, and the wording of its messages; everything else (tokens, grammar, types,
evaluation, positions) is shared. :data:`WHEN` and :data:`THRESHOLD` are the two dialects.

This module imports nothing from the render or the report, so both can use it; it is on the
function's cold-start path; its values are frozen dataclasses.

Invariants:
    * **Positions are 1-based character columns**, in messages and in
      :attr:`ExpressionError.column` (the first character of the source is column 1; the end of
      the source is ``len(source) + 1``).
    * Every problem raises :class:`ExpressionError` (and nothing else), naming the problem and
      its column; types are checked before evaluation, so a mistake fails on every input.
    * Nesting deeper than 64 levels is an error, never a ``RecursionError``.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "THRESHOLD",
    "WHEN",
    "Dialect",
    "ExpressionError",
    "Node",
    "evaluate",
    "format_number",
    "parse",
    "unparse",
]

_MAX_DEPTH: Final = 64


class ExpressionError(ValueError):
    """An expression that does not tokenize, parse or type-check.

    Attributes:
        what: The problem, without the position.
        column: 1-based character column of the problem.
        source: The expression text.

    """

    def __init__(self, what: str, column: int, source: str) -> None:
        super().__init__(f"{what} (column {column})")
        self.what = what
        self.column = column
        self.source = source


@dataclass(frozen=True, slots=True)
class Dialect:
    """What one use of the language allows, and how its messages read.

    Attributes:
        variables: Variable name -> type (``str``, ``int``, ``float`` or ``bool``).
        number: The type of number literals (``int``: only integers; ``float``: any number).
        strings: Whether string literals (``"..."`` / ``'...'``) are allowed.
        keywords: Whether ``true``, ``false`` and ``in`` are keywords.
        operators: The operator tokens allowed.
        words: Spelled-out operators, e.g. ``{"and": "&&"}``.
        variable_first: Each comparison must read ``variable op literal``.
        unknown_name: Message for an identifier that is neither a variable nor a keyword.
        expect_operand: Message when an operand is missing.
        trailing: Message when a token follows a complete expression.
        name_parens: Report an unclosed ``(`` at the ``(`` and a stray ``)`` by name.

    """

    variables: Mapping[str, type]
    number: type
    strings: bool
    keywords: bool
    operators: frozenset[str]
    unknown_name: Callable[[str], str]
    expect_operand: str
    trailing: str
    words: Mapping[str, str] = field(default_factory=dict)
    variable_first: bool = False
    name_parens: bool = False


_ALL_OPS: Final = ("&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", "[", "]", ",")
_COMPARISONS: Final = ("==", "!=", "<", ">", "<=", ">=")

WHEN: Final = Dialect(
    variables={
        "platform": str,
        "gpuArchitecture": str,
        "workloadKind": str,
        "topologyMode": str,
        "domainCount": int,
    },
    number=int,
    strings=True,
    keywords=True,
    operators=frozenset(_ALL_OPS),
    unknown_name=lambda name: (
        f"unknown variable {name!r}; known variables: "
        "platform, gpuArchitecture, workloadKind, topologyMode, domainCount"
    ),
    expect_operand="expected a value, a variable, '!' or '('",
    trailing="expected an operator such as '&&' or '||'",
)
"""``spec.overrides[].when.expression``: string and integer variables of the render context."""

THRESHOLD: Final = Dialect(
    variables={"value": float},
    number=float,
    strings=False,
    keywords=False,
    operators=frozenset(("&&", "||", *_COMPARISONS, "(", ")")),
    words={"and": "&&", "or": "||"},
    variable_first=True,
    unknown_name=lambda name: f"unknown name {name!r}: only 'value', 'and' and 'or' are allowed",
    expect_operand="expected 'value' or '('",
    trailing="expected '&&', '||' or end of expression",
    name_parens=True,
)
"""``spec.thresholds`` values: ``value <op> number`` joined by ``&&`` / ``||``."""

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")
_ESCAPES: Final[Mapping[str, str]] = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t"}
_HINTS: Final[Mapping[str, str]] = {"=": "==", "&": "&&", "|": "||", "!": "!="}
_TYPE_NAMES: Final[Mapping[type, str]] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a bool",
}


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # "op", "lit", "var", "in", "end"
    text: str
    pos: int  # 0-based offset; messages add 1
    value: Any = None


@dataclass(frozen=True, slots=True)
class Node:
    """A type-checked expression tree node.

    Attributes:
        op: ``lit``, ``var``, ``!``, ``&&``, ``||``, a comparison operator or ``in``.
        typ: The node's type.
        value: The literal, the variable name, or the ``in`` list (a frozenset).
        args: Operands.

    """

    op: str
    typ: type
    value: Any = None
    args: tuple[Node, ...] = ()


class _Source:
    def __init__(self, source: str, dialect: Dialect) -> None:
        self.source = source
        self.d = dialect

    def fail(self, pos: int, what: str) -> ExpressionError:
        return ExpressionError(what, pos + 1, self.source)

    def tokens(self) -> list[_Tok]:
        src, d = self.source, self.d
        out: list[_Tok] = []
        pos = 0
        while pos < len(src):
            ch = src[pos]
            if ch.isspace():
                pos += 1
                continue
            op = next((o for o in _ALL_OPS if src.startswith(o, pos) and o in d.operators), None)
            if op is not None:
                out.append(_Tok("op", op, pos))
                pos += len(op)
                continue
            number = _NUMBER.match(src, pos)
            signed_ok = not out or out[-1].kind == "op"
            if number is not None and (ch not in "+-" or signed_ok):
                out.append(self.number(number.group(), pos, number.end()))
                pos = number.end()
                continue
            name = _NAME.match(src, pos)
            if name is not None:
                out.append(self.name(name.group(), pos))
                pos = name.end()
                continue
            string = _STRING.match(src, pos) if d.strings else None
            if string is not None:
                out.append(_Tok("lit", string.group(), pos, self.unquote(string.group(), pos)))
                pos = string.end()
                continue
            if ch in "\"'" and d.strings:
                raise self.fail(pos, "unterminated string")
            hint = _HINTS.get(ch)
            suffix = f"; did you mean {hint!r}?" if hint and hint in d.operators else ""
            raise self.fail(pos, f"unexpected character {ch!r}{suffix}")
        out.append(_Tok("end", "", len(src)))
        return out

    def number(self, text: str, pos: int, end: int) -> _Tok:
        src = self.source
        if end < len(src) and (src[end].isalnum() or src[end] in "_."):
            junk = re.match(r"[A-Za-z0-9_.]+", src[end:])
            tail = junk.group() if junk else src[end]
            raise self.fail(
                pos,
                f"malformed number: {text!r} is followed by {tail!r} (units are not allowed)",
            )
        if self.d.number is int:
            if not _INTEGER.fullmatch(text):
                raise self.fail(pos, f"number {text!r} is not an integer")
            return _Tok("lit", text, pos, int(text))
        value = float(text)
        if not math.isfinite(value):
            raise self.fail(pos, f"number {text!r} is out of range")
        return _Tok("lit", text, pos, value)

    def name(self, word: str, pos: int) -> _Tok:
        d = self.d
        if word in d.words:
            return _Tok("op", d.words[word], pos)
        if word in d.variables:
            return _Tok("var", word, pos)
        if d.keywords and word in ("true", "false"):
            return _Tok("lit", word, pos, word == "true")
        if d.keywords and word == "in":
            return _Tok("in", word, pos)
        raise self.fail(pos, d.unknown_name(word))

    def unquote(self, text: str, pos: int) -> str:
        out: list[str] = []
        i = 1
        while i < len(text) - 1:
            ch = text[i]
            if ch == "\\":
                esc = text[i + 1]
                if esc not in _ESCAPES:
                    raise self.fail(pos + i, f"unknown escape '\\{esc}'")
                out.append(_ESCAPES[esc])
                i += 2
            else:
                out.append(ch)
                i += 1
        return "".join(out)


class _Parser(_Source):
    """Recursive descent over the grammar in the module docstring, type-checking as it builds."""

    def __init__(self, source: str, dialect: Dialect) -> None:
        super().__init__(source, dialect)
        self.toks = self.tokens()
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def expected(self, what: str, tok: _Tok | None = None) -> ExpressionError:
        t = tok or self.tok
        found = "end of expression" if t.kind == "end" else repr(t.text)
        return self.fail(t.pos, f"{what}, found {found}")

    def take(self, text: str) -> bool:
        if self.tok.kind in ("op", "in") and self.tok.text == text:
            self.i += 1
            return True
        return False

    def parse(self) -> Node:
        if self.tok.kind == "end":
            raise self.fail(0, "empty expression")
        node = self.or_()
        if self.tok.kind != "end":
            if self.d.name_parens and self.tok.text == ")":
                raise self.fail(self.tok.pos, "unbalanced ')'")
            raise self.expected(self.d.trailing)
        if node.typ is not bool:
            raise self.fail(0, f"expression must return a bool, not {_TYPE_NAMES[node.typ]}")
        return node

    def logical(self, op: str, operand: Callable[[], Node]) -> Node:
        start = self.tok
        node = operand()
        while self.tok.kind == "op" and self.tok.text == op:
            tok = self.tok
            self.i += 1
            right = operand()
            for side, t in ((node, start), (right, tok)):
                if side.typ is not bool:
                    raise self.fail(
                        t.pos, f"{op!r} needs bool operands, not {_TYPE_NAMES[side.typ]}"
                    )
            node = Node(op, bool, args=(node, right))
        return node

    def or_(self) -> Node:
        return self.logical("||", self.and_)

    def and_(self) -> Node:
        return self.logical("&&", self.compare)

    def compare(self) -> Node:
        if self.d.variable_first:
            return self.variable_first()
        start = self.tok
        left = self.unary()
        tok = self.tok
        if tok.kind == "in":
            self.i += 1
            return Node("in", bool, value=frozenset(self.list_(left.typ)), args=(left,))
        if tok.kind == "op" and tok.text in _COMPARISONS:
            self.i += 1
            return self.comparison(start, left, tok, self.unary())
        return left

    def comparison(self, start: _Tok, left: Node, tok: _Tok, right: Node) -> Node:
        if left.typ is not right.typ:
            raise self.fail(
                tok.pos,
                f"cannot compare {_TYPE_NAMES[left.typ]} with {_TYPE_NAMES[right.typ]}",
            )
        if tok.text in ("<", ">", "<=", ">=") and left.typ not in (int, float):
            raise self.fail(start.pos, f"{tok.text!r} needs integer operands")
        return Node(tok.text, bool, args=(left, right))

    def variable_first(self) -> Node:
        start = self.tok
        if start.text == "(" and start.kind == "op":
            return self.group()
        if start.kind != "var":
            raise self.expected(self.d.expect_operand)
        self.i += 1
        left = Node("var", self.d.variables[start.text], value=start.text)
        tok = self.tok
        if not (tok.kind == "op" and tok.text in _COMPARISONS):
            raise self.expected("expected a comparison operator (>=, >, <=, <, ==, !=)")
        self.i += 1
        lit = self.tok
        if lit.kind != "lit":
            raise self.expected(f"expected a number after {tok.text!r}")
        self.i += 1
        return self.comparison(start, left, tok, Node("lit", type(lit.value), value=lit.value))

    def unary(self) -> Node:
        tok = self.tok
        if self.take("!"):
            self.enter()
            operand = self.unary()
            self.depth -= 1
            if operand.typ is not bool:
                raise self.fail(tok.pos, f"'!' needs a bool, not {_TYPE_NAMES[operand.typ]}")
            return Node("!", bool, args=(operand,))
        return self.primary()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.fail(self.tok.pos, "expression nested too deeply")

    def group(self) -> Node:
        opening = self.tok
        self.i += 1
        self.enter()
        node = self.or_()
        self.depth -= 1
        if not self.take(")"):
            if self.d.name_parens and self.tok.kind == "end":
                raise self.fail(opening.pos, "unbalanced '(': never closed")
            raise self.expected("expected ')'")
        return node

    def primary(self) -> Node:
        tok = self.tok
        if tok.kind == "op" and tok.text == "(":
            return self.group()
        if tok.kind == "lit":
            self.i += 1
            return Node("lit", type(tok.value), value=tok.value)
        if tok.kind == "var":
            self.i += 1
            return Node("var", self.d.variables[tok.text], value=tok.text)
        raise self.expected(self.d.expect_operand)

    def list_(self, typ: type) -> list[Any]:
        if not self.take("["):
            raise self.expected("expected '[' after 'in'")
        items: list[Any] = []
        if self.take("]"):
            return items
        while True:
            tok = self.tok
            if tok.kind != "lit":
                raise self.expected("expected a literal in the list")
            if type(tok.value) is not typ:
                raise self.fail(
                    tok.pos,
                    f"list item is {_TYPE_NAMES[type(tok.value)]}, "
                    f"but the left side of 'in' is {_TYPE_NAMES[typ]}",
                )
            items.append(tok.value)
            self.i += 1
            if self.take("]"):
                return items
            if not self.take(","):
                raise self.expected("expected ',' or ']'")


def parse(source: str, dialect: Dialect) -> Node:
    """Parse and type-check ``source`` in ``dialect``; the result always has type ``bool``.

    Raises:
        ExpressionError: The text does not tokenize, parse or type-check.

    """
    return _Parser(source, dialect).parse()


_COMPARE: Final[Mapping[str, Callable[[Any, Any], Any]]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
}


def evaluate(node: Node, env: Mapping[str, Any]) -> Any:
    """Evaluate a parsed tree with the variables in ``env``."""
    op = node.op
    if op == "lit":
        return node.value
    if op == "var":
        return env[node.value]
    if op == "!":
        return not evaluate(node.args[0], env)
    if op == "&&":
        return evaluate(node.args[0], env) and evaluate(node.args[1], env)
    if op == "||":
        return evaluate(node.args[0], env) or evaluate(node.args[1], env)
    if op == "in":
        return evaluate(node.args[0], env) in node.value
    left, right = (evaluate(a, env) for a in node.args)
    return bool(_COMPARE[op](left, right))


def format_number(number: float) -> str:
    """Shortest text that reads back as ``number`` (``900`` rather than ``900.0``)."""
    text = repr(number)
    return text[:-2] if text.endswith(".0") else text


def unparse(node: Node, parent: str = "") -> str:
    """Canonical text of a tree: single spaces, parentheses only where precedence needs them."""
    op = node.op
    if op == "lit":
        if isinstance(node.value, bool):
            return "true" if node.value else "false"
        if isinstance(node.value, float):
            return format_number(node.value)
        return repr(node.value) if isinstance(node.value, str) else str(node.value)
    if op == "var":
        return str(node.value)
    if op == "!":
        return "!" + unparse(node.args[0], "!")
    if op == "in":
        items = ", ".join(unparse(Node("lit", type(v), value=v)) for v in sorted(node.value))
        return f"{unparse(node.args[0], 'in')} in [{items}]"
    if op in ("&&", "||"):
        text = f"{unparse(node.args[0], op)} {op} {unparse(node.args[1], op)}"
        return f"({text})" if (op == "||" and parent == "&&") or parent == "!" else text
    return f"{unparse(node.args[0], op)} {op} {unparse(node.args[1], op)}"
