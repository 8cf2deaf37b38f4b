"""Matching a WorkloadRun ``spec.overrides[].when`` (WhenSpec) against the render context.

The one job of this module is :func:`matches` (plus :func:`describe` for status messages).

Invariants:
    * Every matcher that is set must match (AND); an empty ``when`` always matches. A matcher
      whose value is ``None`` counts as unset, so model dumps with ``None`` fields work.
    * Comparisons are case-sensitive and exact.
    * ``expression`` is a tiny CEL subset, parsed and type-checked by hand (never ``eval``):
      ``==``, ``!=``, ``<``, ``>``, ``<=``, ``>=``, ``in [..]``, ``&&``, ``||``, ``!``,
      parentheses, string / integer / ``true`` / ``false`` literals and the variables
      ``platform``, ``gpuArchitecture``, ``workloadKind``, ``topologyMode`` (strings) and
      ``domainCount`` (integer). Types are checked before evaluation, so a mistake such as
      ``domainCount == "2"`` fails on every context, not only on some.
    * Every problem with a ``when`` (bad shape, unknown matcher, expression that does not
      parse or type-check) raises :class:`WhenError`; positions in expression messages are
      1-based character positions.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["WhenContext", "WhenError", "describe", "matches"]

MATCHERS: Final[tuple[str, ...]] = (
    "gpuArchitecture",
    "platform",
    "workloadKind",
    "topology",
    "config",
    "expression",
)
"""WhenSpec fields, in the order :func:`describe` lists them."""

_MAX_DEPTH: Final = 64


class WhenError(ValueError):
    """A ``when`` that cannot be evaluated (bad shape or bad expression)."""


@dataclass(frozen=True, slots=True)
class WhenContext:
    """What a ``when`` is matched against.

    Attributes:
        platform: Detected platform, e.g. ``aws``.
        gpu_architecture: Normalised GPU architecture, e.g. ``gb200``.
        workload_kind: The generated workload kind.
        topology_mode: ``simple`` or ``topology``.
        domain_count: Number of topology domains (0 in simple mode).
        config: The values ``when.config`` is subset-matched against.

    """

    platform: str
    gpu_architecture: str
    workload_kind: str = "TrainJob"
    topology_mode: str = "simple"
    domain_count: int = 0
    config: Mapping[str, Any] = field(default_factory=dict)

    def variables(self) -> dict[str, str | int]:
        """Return the expression variables by name."""
        return {
            "platform": self.platform,
            "gpuArchitecture": self.gpu_architecture,
            "workloadKind": self.workload_kind,
            "topologyMode": self.topology_mode,
            "domainCount": self.domain_count,
        }


def matches(when: Mapping[str, Any], ctx: WhenContext) -> bool:
    """Tell whether every matcher set in ``when`` matches ``ctx``.

    Args:
        when: A WhenSpec as a plain mapping (camelCase keys).
        ctx: The render context.

    Returns:
        ``True`` when all set matchers match (always for an empty ``when``).

    Raises:
        WhenError: ``when`` has an unknown key, a matcher of the wrong shape, or an expression
            that does not parse or type-check.

    """
    spec = _set_fields(when, "when", MATCHERS)
    # Every matcher is evaluated (no short-circuit), so a malformed matcher is reported even
    # when an earlier one does not match.
    results: list[bool] = []
    if "gpuArchitecture" in spec:
        results.append(
            _string_match(spec["gpuArchitecture"], ctx.gpu_architecture, "when.gpuArchitecture")
        )
    if "platform" in spec:
        results.append(_string_match(spec["platform"], ctx.platform, "when.platform"))
    if "workloadKind" in spec:
        kind = spec["workloadKind"]
        if not isinstance(kind, str):
            raise WhenError(f"when.workloadKind must be a string, got {_type(kind)}")
        results.append(kind == ctx.workload_kind)
    if "topology" in spec:
        results.append(_topology_match(spec["topology"], ctx))
    if "config" in spec:
        cfg = spec["config"]
        if not isinstance(cfg, Mapping):
            raise WhenError(f"when.config must be a map, got {_type(cfg)}")
        results.append(_subset(cfg, ctx.config))
    if "expression" in spec:
        tree = parse_expression(spec["expression"])
        results.append(bool(_evaluate(tree, ctx.variables())))
    return all(results)


def describe(when: Mapping[str, Any]) -> str:
    """Summarise a WhenSpec the way NVCRE's AppliedOverride does.

    Args:
        when: A WhenSpec as a plain mapping.

    Returns:
        E.g. ``gpuArchitecture=in [gb200,gb300], platform=aws``; ``always`` when empty.

    """
    parts: list[str] = []
    spec = {k: v for k, v in when.items() if v is not None}
    for name in ("gpuArchitecture", "platform"):
        value = spec.get(name)
        if isinstance(value, Mapping):
            parts.extend(_describe_string_match(name, value))
    if "workloadKind" in spec:
        parts.append(f"workloadKind={spec['workloadKind']}")
    topology = spec.get("topology")
    if isinstance(topology, Mapping):
        if topology.get("mode") is not None:
            parts.append(f"topology.mode={topology['mode']}")
        count = topology.get("domainCount")
        if isinstance(count, Mapping):
            for op, key in (("=", "equals"), (">", "greaterThan"), ("<", "lessThan")):
                if count.get(key) is not None:
                    parts.append(f"topology.domainCount{op}{count[key]}")
    if "config" in spec:
        parts.append("config=" + json.dumps(spec["config"], sort_keys=True, separators=(",", ":")))
    if "expression" in spec:
        parts.append(f"expression={spec['expression']}")
    return ", ".join(parts) if parts else "always"


def _describe_string_match(name: str, value: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    if value.get("equals") is not None:
        out.append(f"{name}={value['equals']}")
    for key in ("in", "notIn"):
        if value.get(key) is not None:
            out.append(f"{name}={key} [{','.join(str(v) for v in value[key])}]")
    return out


def _type(value: Any) -> str:
    return type(value).__name__


def _set_fields(value: Any, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise WhenError(f"{where} must be a map, got {_type(value)}")
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise WhenError(
            f"{where} has unknown field {unknown[0]!r}; known fields: {', '.join(allowed)}"
        )
    return {k: v for k, v in value.items() if v is not None}


def _string_match(spec: Any, actual: str, where: str) -> bool:
    m = _set_fields(spec, where, ("equals", "in", "notIn"))
    if "equals" in m and not isinstance(m["equals"], str):
        raise WhenError(f"{where}.equals must be a string, got {_type(m['equals'])}")
    for key in ("in", "notIn"):
        if key in m and not (isinstance(m[key], list) and all(isinstance(v, str) for v in m[key])):
            raise WhenError(f"{where}.{key} must be a list of strings")
    return (
        ("equals" not in m or actual == m["equals"])
        and ("in" not in m or actual in m["in"])
        and ("notIn" not in m or actual not in m["notIn"])
    )


def _topology_match(spec: Any, ctx: WhenContext) -> bool:
    t = _set_fields(spec, "when.topology", ("mode", "domainCount"))
    if "mode" in t and t["mode"] not in ("simple", "topology"):
        raise WhenError(f"when.topology.mode must be simple or topology, got {t['mode']!r}")
    ok = "mode" not in t or t["mode"] == ctx.topology_mode
    if "domainCount" in t:
        c = _set_fields(
            t["domainCount"], "when.topology.domainCount", ("equals", "greaterThan", "lessThan")
        )
        for key, v in c.items():
            if type(v) is not int:
                raise WhenError(f"when.topology.domainCount.{key} must be an integer")
        n = ctx.domain_count
        ok = (
            ok
            and ("equals" not in c or n == c["equals"])
            and ("greaterThan" not in c or n > c["greaterThan"])
            and ("lessThan" not in c or n < c["lessThan"])
        )
    return ok


def _subset(want: Mapping[str, Any], have: Mapping[str, Any]) -> bool:
    for k, v in want.items():
        if k not in have:
            return False
        actual = have[k]
        if isinstance(v, Mapping):
            if not isinstance(actual, Mapping) or not _subset(v, actual):
                return False
        elif v != actual or type(v) is not type(actual):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------

VARIABLES: Final[Mapping[str, type]] = {
    "platform": str,
    "gpuArchitecture": str,
    "workloadKind": str,
    "topologyMode": str,
    "domainCount": int,
}
"""Expression variables and their types."""

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<op>&&|\|\||==|!=|<=|>=|<|>|!|\(|\)|\[|\]|,)
  | (?P<int>-?\d+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    """,
    re.VERBOSE,
)
_ESCAPES: Final[Mapping[str, str]] = {
    "\\": "\\",
    '"': '"',
    "'": "'",
    "n": "\n",
    "t": "\t",
}
_HINTS: Final[Mapping[str, str]] = {"=": "==", "&": "&&", "|": "||"}


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # "op", "int", "bool", "ident", "str", "end"
    text: str
    pos: int  # 0-based
    value: str | int | bool | None = None


@dataclass(frozen=True, slots=True)
class _Node:
    op: str  # "lit", "var", "!", "&&", "||", "==", "!=", "<", ">", "<=", ">=", "in"
    typ: type
    value: Any = None
    args: tuple[_Node, ...] = ()


def _fail(source: str, pos: int, what: str) -> WhenError:
    return WhenError(f"expression {source!r}, position {pos + 1}: {what}")


def _tokenize(source: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if m is None:
            ch = source[pos]
            if ch in "\"'":
                raise _fail(source, pos, "unterminated string")
            hint = f"; did you mean {_HINTS[ch]!r}?" if ch in _HINTS else ""
            raise _fail(source, pos, f"unexpected character {ch!r}{hint}")
        kind = m.lastgroup or ""
        text = m.group()
        if kind == "str":
            tokens.append(_Tok("str", text, pos, _unquote(source, pos, text)))
        elif kind == "int":
            tokens.append(_Tok("int", text, pos, int(text)))
        elif kind == "ident" and text in ("true", "false"):
            tokens.append(_Tok("bool", text, pos, text == "true"))
        elif kind != "ws":
            tokens.append(_Tok(kind, text, pos))
        pos = m.end()
    tokens.append(_Tok("end", "", len(source)))
    return tokens


def _unquote(source: str, pos: int, text: str) -> str:
    out: list[str] = []
    i = 1
    while i < len(text) - 1:
        ch = text[i]
        if ch == "\\":
            esc = text[i + 1]
            if esc not in _ESCAPES:
                raise _fail(source, pos + i, f"unknown escape '\\{esc}'")
            out.append(_ESCAPES[esc])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_COMPARE: Final[Mapping[str, Callable[[Any, Any], Any]]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
}
_TYPE_NAMES: Final[Mapping[type, str]] = {str: "a string", int: "an integer", bool: "a bool"}


class _Parser:
    """Recursive-descent parser that type-checks as it builds the tree.

    Grammar (lowest precedence first)::

        or      := and ("||" and)*
        and     := compare ("&&" compare)*
        compare := unary (("==" | "!=" | "<" | ">" | "<=" | ">=") unary | "in" list)?
        unary   := "!" unary | primary
        primary := "(" or ")" | literal | variable
        list    := "[" (literal ("," literal)*)? "]"
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = _tokenize(source)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Tok:
        return self.tokens[self.i]

    def fail(self, what: str, tok: _Tok | None = None) -> WhenError:
        t = tok or self.tok
        found = "end of expression" if t.kind == "end" else repr(t.text)
        return _fail(self.source, t.pos, f"{what}, found {found}")

    def take(self, text: str) -> bool:
        if self.tok.kind in ("op", "ident") and self.tok.text == text:
            self.i += 1
            return True
        return False

    def parse(self) -> _Node:
        if self.tok.kind == "end":
            raise _fail(self.source, 0, "empty expression")
        node = self.or_()
        if self.tok.kind != "end":
            raise self.fail("expected an operator such as '&&' or '||'")
        if node.typ is not bool:
            raise _fail(
                self.source, 0, f"expression must return a bool, not {_TYPE_NAMES[node.typ]}"
            )
        return node

    def logical(self, op: str, operand: Callable[[], _Node]) -> _Node:
        start = self.tok
        node = operand()
        while self.tok.text == op and self.tok.kind == "op":
            tok = self.tok
            self.i += 1
            right = operand()
            for side, t in ((node, start), (right, tok)):
                if side.typ is not bool:
                    raise _fail(
                        self.source,
                        t.pos,
                        f"{op!r} needs bool operands, not {_TYPE_NAMES[side.typ]}",
                    )
            node = _Node(op, bool, args=(node, right))
        return node

    def or_(self) -> _Node:
        return self.logical("||", self.and_)

    def and_(self) -> _Node:
        return self.logical("&&", self.compare)

    def compare(self) -> _Node:
        start = self.tok
        left = self.unary()
        tok = self.tok
        if tok.kind == "ident" and tok.text == "in":
            self.i += 1
            items = self.list_(left.typ)
            return _Node("in", bool, value=frozenset(items), args=(left,))
        if tok.kind == "op" and tok.text in ("==", "!=", "<", ">", "<=", ">="):
            self.i += 1
            right = self.unary()
            if left.typ is not right.typ:
                raise _fail(
                    self.source,
                    tok.pos,
                    f"cannot compare {_TYPE_NAMES[left.typ]} with {_TYPE_NAMES[right.typ]}",
                )
            if tok.text in ("<", ">", "<=", ">=") and left.typ is not int:
                raise _fail(self.source, start.pos, f"{tok.text!r} needs integer operands")
            return _Node(tok.text, bool, args=(left, right))
        return left

    def unary(self) -> _Node:
        tok = self.tok
        if self.take("!"):
            self.enter()
            operand = self.unary()
            self.depth -= 1
            if operand.typ is not bool:
                raise _fail(
                    self.source, tok.pos, f"'!' needs a bool, not {_TYPE_NAMES[operand.typ]}"
                )
            return _Node("!", bool, args=(operand,))
        return self.primary()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _fail(self.source, self.tok.pos, "expression nested too deeply")

    def primary(self) -> _Node:
        tok = self.tok
        if self.take("("):
            self.enter()
            node = self.or_()
            self.depth -= 1
            if not self.take(")"):
                raise self.fail("expected ')'")
            return node
        if tok.kind in ("str", "int", "bool"):
            self.i += 1
            return _Node("lit", type(tok.value), value=tok.value)
        if tok.kind == "ident" and tok.text != "in":
            if tok.text not in VARIABLES:
                raise _fail(
                    self.source,
                    tok.pos,
                    f"unknown variable {tok.text!r}; known variables: {', '.join(VARIABLES)}",
                )
            self.i += 1
            return _Node("var", VARIABLES[tok.text], value=tok.text)
        raise self.fail("expected a value, a variable, '!' or '('")

    def list_(self, typ: type) -> list[Any]:
        if not self.take("["):
            raise self.fail("expected '[' after 'in'")
        items: list[Any] = []
        if self.take("]"):
            return items
        while True:
            tok = self.tok
            if tok.kind not in ("str", "int", "bool"):
                raise self.fail("expected a literal in the list")
            if type(tok.value) is not typ:
                raise _fail(
                    self.source,
                    tok.pos,
                    f"list item is {_TYPE_NAMES[type(tok.value)]}, "
                    f"but the left side of 'in' is {_TYPE_NAMES[typ]}",
                )
            items.append(tok.value)
            self.i += 1
            if self.take("]"):
                return items
            if not self.take(","):
                raise self.fail("expected ',' or ']'")


def parse_expression(source: Any) -> _Node:
    """Parse and type-check a ``when.expression``.

    Args:
        source: The expression text.

    Returns:
        An opaque tree for evaluation by :func:`matches`.

    Raises:
        WhenError: The text is not a string, does not parse, or does not return a bool.

    """
    if not isinstance(source, str):
        raise WhenError(f"when.expression must be a string, got {_type(source)}")
    return _Parser(source).parse()


def _evaluate(node: _Node, env: Mapping[str, str | int]) -> Any:
    op = node.op
    if op == "lit":
        return node.value
    if op == "var":
        return env[node.value]
    if op == "!":
        return not _evaluate(node.args[0], env)
    if op == "&&":
        return _evaluate(node.args[0], env) and _evaluate(node.args[1], env)
    if op == "||":
        return _evaluate(node.args[0], env) or _evaluate(node.args[1], env)
    if op == "in":
        return _evaluate(node.args[0], env) in node.value
    left, right = (_evaluate(a, env) for a in node.args)
    return bool(_COMPARE[op](left, right))
