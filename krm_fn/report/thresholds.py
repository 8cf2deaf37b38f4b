"""Parse and evaluate threshold expressions such as ``value >= 900 && value < 2000``.

Grammar (whitespace is free between tokens)::

    expression := disjunction
    disjunction := conjunction (("||" | "or") conjunction)*
    conjunction := primary (("&&" | "and") primary)*
    primary := "(" expression ")" | comparison
    comparison := "value" operator number
    operator := ">=" | ">" | "<=" | "<" | "==" | "!="
    number := ["+" | "-"] (digits ["." digits] | "." digits) [("e" | "E") ["+" | "-"] digits]

``&&`` binds tighter than ``||``, as in CEL and C.

Invariants:
    * No ``eval``, no ``compile``: a recursive-descent parser builds a tiny tree.
    * Every malformed input raises :class:`ThresholdSyntaxError` (and nothing else) with a
      message that names the problem and the 0-based character position.
    * Fail closed: :meth:`Threshold.evaluate` returns ``False`` for a missing (``None``) or
      non-finite value, whatever the expression says.
    * The registry :data:`KNOWN_THRESHOLD_KEYS` is the one list of keys the render and the
      report accept; an unknown key raises :class:`ThresholdKeyError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

__all__ = [
    "KNOWN_THRESHOLD_KEYS",
    "Comparison",
    "Junction",
    "Threshold",
    "ThresholdKey",
    "ThresholdKeyError",
    "ThresholdSyntaxError",
    "check_threshold_key",
    "parse_threshold",
    "parse_thresholds",
]

Operator = Literal[">=", ">", "<=", "<", "==", "!="]
MetricSource = Literal["nccl", "megatron", "c2c"]


class ThresholdSyntaxError(ValueError):
    """A threshold expression does not follow the grammar.

    Attributes:
        position: 0-based character offset of the problem, or ``None`` when not known.
        expression: the expression that failed, or ``None`` when not known.

    """

    def __init__(
        self, message: str, position: int | None = None, expression: str | None = None
    ) -> None:
        super().__init__(message)
        self.position = position
        self.expression = expression


class ThresholdKeyError(ValueError):
    """A threshold key is not in :data:`KNOWN_THRESHOLD_KEYS`."""


@dataclass(frozen=True)
class ThresholdKey:
    """What one threshold key measures.

    Attributes:
        name: the key as written under ``spec.thresholds``.
        source: which log parser produces the metric (``nccl`` or ``megatron``).
        unit: unit of ``value`` in the expression (empty for a ratio).
        description: the exact metric the key reads.
        alias_of: for one of our earlier names, the NVCRE key it reads the same metric as
            (``None`` for NVCRE's own keys and for ours that NVCRE has no equivalent of).

    """

    name: str
    source: MetricSource
    unit: str
    description: str
    alias_of: str | None = None

    @property
    def metric(self) -> str:
        """The key whose metric this key reads (itself, unless it is an alias)."""
        return self.alias_of or self.name


def _registry(*keys: ThresholdKey) -> Mapping[str, ThresholdKey]:
    return MappingProxyType({key.name: key for key in keys})


KNOWN_THRESHOLD_KEYS: Mapping[str, ThresholdKey] = _registry(
    # NVCRE's registry, in its order (NVIDIA/cluster-readiness-engine pkg/threshold/evaluator.go,
    # ``var Registry``): every key a WorkloadRun written for NVCRE may use.
    ThresholdKey(
        "busBandwidthGBps",
        "nccl",
        "GB/s",
        "peak out-of-place bus bandwidth (busbw) over the rows of the nccl-tests table; "
        "with several tables in one log, the lowest of their peaks",
    ),
    ThresholdKey(
        "algBandwidthGBps",
        "nccl",
        "GB/s",
        "peak out-of-place algorithm bandwidth (algbw) over the rows of the nccl-tests table; "
        "with several tables, the lowest of their peaks",
    ),
    ThresholdKey(
        "goodputRatio",
        "megatron",
        "",
        "measured goodput (0-1): productive training time over wall time, from log timestamps; "
        "never the step-time estimate",
    ),
    ThresholdKey(
        "avgTFLOPsPerGPU",
        "megatron",
        "TFLOP/s per GPU",
        "mean of 'throughput per GPU (TFLOP/s/GPU)' or DeepSpeed 'TFLOPs' over measured "
        "(non-warmup, non-skipped) iterations",
    ),
    ThresholdKey(
        "avgStepTimeSec",
        "megatron",
        "s",
        "mean 'elapsed time per iteration' over measured (non-warmup, non-skipped) iterations",
    ),
    ThresholdKey(
        "c2cCPUToGPUBandwidthGBps",
        "c2c",
        "GB/s",
        "CPU-to-GPU coherent-memory bandwidth from NVCRE's C2CMeasurement; no log the report "
        "reads prints it, so it is never measured here and fails closed",
    ),
    ThresholdKey(
        "c2cGPUToCPUBandwidthGBps",
        "c2c",
        "GB/s",
        "GPU-to-CPU coherent-memory bandwidth from NVCRE's C2CMeasurement; never measured here "
        "(fails closed)",
    ),
    ThresholdKey(
        "c2cVerified",
        "c2c",
        "",
        "CPU-GPU coherent-memory correctness (0-1) from NVCRE's C2CMeasurement; never measured "
        "here (fails closed)",
    ),
    # Ours, beyond NVCRE's registry.
    ThresholdKey(
        "avgBusBandwidthGBps",
        "nccl",
        "GB/s",
        "nccl-tests '# Avg bus bandwidth' (mean busbw of every out-of-place and in-place row); "
        "computed from the rows when the footer line is missing; lowest over several tables",
    ),
    ThresholdKey(
        "tokensPerSecond",
        "megatron",
        "tokens/s",
        "mean training throughput in tokens per second over measured iterations, from "
        "'global batch size' x 'actual seqlen' (or the 'consumed tokens' delta) per step time",
    ),
    # Our earlier names, kept as documented aliases of NVCRE's keys.
    ThresholdKey("goodput", "megatron", "", "alias of goodputRatio", alias_of="goodputRatio"),
    ThresholdKey(
        "tflopsPerGPU",
        "megatron",
        "TFLOP/s per GPU",
        "alias of avgTFLOPsPerGPU",
        alias_of="avgTFLOPsPerGPU",
    ),
    ThresholdKey(
        "stepTimeSeconds", "megatron", "s", "alias of avgStepTimeSec", alias_of="avgStepTimeSec"
    ),
)
"""Every threshold key the render and the report accept, by name."""


def check_threshold_key(key: str) -> ThresholdKey:
    """Return the registry entry for ``key``.

    Args:
        key: a key of ``spec.thresholds``.

    Returns:
        The :class:`ThresholdKey` describing the metric.

    Raises:
        ThresholdKeyError: ``key`` is not a known threshold key.

    """
    try:
        return KNOWN_THRESHOLD_KEYS[key]
    except KeyError:
        known = ", ".join(sorted(KNOWN_THRESHOLD_KEYS))
        raise ThresholdKeyError(f"unknown threshold key {key!r}; known keys: {known}") from None


@dataclass(frozen=True)
class Comparison:
    """``value <op> number``."""

    op: Operator
    number: float

    def holds(self, value: float) -> bool:
        """Whether ``value <op> number`` is true."""
        match self.op:
            case ">=":
                return value >= self.number
            case ">":
                return value > self.number
            case "<=":
                return value <= self.number
            case "<":
                return value < self.number
            case "==":
                return value == self.number
            case "!=":
                return value != self.number

    def __str__(self) -> str:
        return f"value {self.op} {format_number(self.number)}"


@dataclass(frozen=True)
class Junction:
    """``left && right`` (``op == "and"``) or ``left || right`` (``op == "or"``)."""

    op: Literal["and", "or"]
    left: Node
    right: Node

    def holds(self, value: float) -> bool:
        """Whether the junction is true for ``value``."""
        if self.op == "and":
            return self.left.holds(value) and self.right.holds(value)
        return self.left.holds(value) or self.right.holds(value)

    def __str__(self) -> str:
        symbol = "&&" if self.op == "and" else "||"
        return f"{_wrap(self.left, self.op)} {symbol} {_wrap(self.right, self.op)}"


Node = Comparison | Junction


def format_number(number: float) -> str:
    """Shortest text that reads back as ``number`` (``900`` rather than ``900.0``)."""
    text = repr(number)
    return text[:-2] if text.endswith(".0") else text


def _wrap(node: Node, parent: Literal["and", "or"]) -> str:
    if isinstance(node, Junction) and node.op == "or" and parent == "and":
        return f"({node})"
    return str(node)


@dataclass(frozen=True)
class Threshold:
    """A parsed threshold expression.

    Attributes:
        expression: the source text, as given.
        tree: the parsed expression.

    """

    expression: str
    tree: Node

    def evaluate(self, value: float | None) -> bool:
        """Whether ``value`` meets the threshold.

        Args:
            value: the measured metric, or ``None`` when the log did not yield it.

        Returns:
            ``False`` for ``None`` or a non-finite value (fail closed), else the truth of the
            expression.

        """
        if value is None or not math.isfinite(value):
            return False
        return self.tree.holds(value)

    def __str__(self) -> str:
        return str(self.tree)


_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_OPERATORS: tuple[Operator, ...] = (">=", "<=", "==", "!=", ">", "<")

TokenKind = Literal["value", "number", "op", "and", "or", "(", ")", "end"]


@dataclass(frozen=True)
class _Token:
    kind: TokenKind
    text: str
    position: int


def _tokenize(expr: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(expr):
        char = expr[pos]
        if char.isspace():
            pos += 1
            continue
        if char in "()":
            kind: TokenKind = "(" if char == "(" else ")"
            tokens.append(_Token(kind, char, pos))
            pos += 1
            continue
        pair = expr[pos : pos + 2]
        if pair in ("&&", "||"):
            tokens.append(_Token("and" if pair == "&&" else "or", pair, pos))
            pos += 2
            continue
        operator = next((op for op in _OPERATORS if expr.startswith(op, pos)), None)
        if operator is not None:
            tokens.append(_Token("op", operator, pos))
            pos += len(operator)
            continue
        number = _NUMBER_RE.match(expr, pos)
        if number is not None:
            after = number.end()
            if after < len(expr) and (expr[after].isalnum() or expr[after] in "_."):
                junk = re.match(r"[A-Za-z0-9_.]+", expr[after:])
                tail = junk.group() if junk else expr[after]
                raise ThresholdSyntaxError(
                    f"malformed number at position {pos}: {number.group()!r} is followed "
                    f"by {tail!r} (units are not allowed)",
                    pos,
                    expr,
                )
            tokens.append(_Token("number", number.group(), pos))
            pos = after
            continue
        name = _NAME_RE.match(expr, pos)
        if name is not None:
            word = name.group()
            if word in ("value", "and", "or"):
                tokens.append(_Token(word, word, pos))  # type: ignore[arg-type]
                pos = name.end()
                continue
            raise ThresholdSyntaxError(
                f"unknown name {word!r} at position {pos}: only 'value', 'and' and 'or' "
                "are allowed",
                pos,
                expr,
            )
        hint = {"&": "'&&'", "|": "'||'", "=": "'=='", "!": "'!='"}.get(char)
        suffix = f" (did you mean {hint}?)" if hint else ""
        raise ThresholdSyntaxError(
            f"unexpected character {char!r} at position {pos}{suffix}", pos, expr
        )
    tokens.append(_Token("end", "", len(expr)))
    return tokens


def _describe(token: _Token) -> str:
    return "end of expression" if token.kind == "end" else repr(token.text)


class _Parser:
    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.tokens = _tokenize(expr)
        self.index = 0

    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def error(self, message: str, token: _Token) -> ThresholdSyntaxError:
        return ThresholdSyntaxError(
            f"{message}, found {_describe(token)} at position {token.position}",
            token.position,
            self.expr,
        )

    def parse(self) -> Node:
        if self.current.kind == "end":
            raise ThresholdSyntaxError("empty expression at position 0", 0, self.expr)
        tree = self.disjunction()
        token = self.current
        if token.kind == ")":
            raise ThresholdSyntaxError(
                f"unbalanced ')' at position {token.position}", token.position, self.expr
            )
        if token.kind != "end":
            raise self.error("expected '&&', '||' or end of expression", token)
        return tree

    def disjunction(self) -> Node:
        node = self.conjunction()
        while self.current.kind == "or":
            self.index += 1
            node = Junction("or", node, self.conjunction())
        return node

    def conjunction(self) -> Node:
        node = self.primary()
        while self.current.kind == "and":
            self.index += 1
            node = Junction("and", node, self.primary())
        return node

    def primary(self) -> Node:
        token = self.current
        if token.kind == "(":
            self.index += 1
            node = self.disjunction()
            closing = self.current
            if closing.kind != ")":
                if closing.kind == "end":
                    raise ThresholdSyntaxError(
                        f"unbalanced '(' at position {token.position}: never closed",
                        token.position,
                        self.expr,
                    )
                raise self.error("expected ')'", closing)
            self.index += 1
            return node
        return self.comparison()

    def comparison(self) -> Node:
        token = self.current
        if token.kind != "value":
            raise self.error("expected 'value' or '('", token)
        self.index += 1
        op = self.current
        if op.kind != "op":
            raise self.error("expected a comparison operator (>=, >, <=, <, ==, !=)", op)
        self.index += 1
        number = self.current
        if number.kind != "number":
            raise self.error(f"expected a number after {op.text!r}", number)
        self.index += 1
        parsed = float(number.text)
        if not math.isfinite(parsed):
            raise ThresholdSyntaxError(
                f"number {number.text!r} at position {number.position} is out of range",
                number.position,
                self.expr,
            )
        return Comparison(op.text, parsed)  # type: ignore[arg-type]


def parse_threshold(expr: str) -> Threshold:
    """Parse one threshold expression.

    Args:
        expr: text such as ``"value >= 900"`` or ``"(value > 1 && value < 2) || value == 0"``.

    Returns:
        The parsed :class:`Threshold`.

    Raises:
        ThresholdSyntaxError: the text does not follow the grammar; the message names the
            problem and its position.

    """
    if not isinstance(expr, str):
        raise ThresholdSyntaxError(
            f"threshold must be a string, got {type(expr).__name__}", None, None
        )
    return Threshold(expr, _Parser(expr).parse())


def parse_thresholds(thresholds: Mapping[str, object]) -> dict[str, Threshold]:
    """Parse a ``spec.thresholds`` mapping, checking every key against the registry.

    Args:
        thresholds: key to expression, e.g. ``{"busBandwidthGBps": "value >= 900"}``.

    Returns:
        Key to parsed :class:`Threshold`, in the input order.

    Raises:
        ThresholdKeyError: a key is not in :data:`KNOWN_THRESHOLD_KEYS`.
        ThresholdSyntaxError: an expression is malformed (the message names the key).

    """
    parsed: dict[str, Threshold] = {}
    for key, expr in thresholds.items():
        check_threshold_key(key)
        if not isinstance(expr, str):
            raise ThresholdSyntaxError(
                f"{key}: threshold must be a string, got {type(expr).__name__}", None, None
            )
        try:
            parsed[key] = parse_threshold(expr)
        except ThresholdSyntaxError as err:
            raise ThresholdSyntaxError(f"{key}: {err}", err.position, expr) from None
    return parsed
