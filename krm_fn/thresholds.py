"""Parse and evaluate threshold expressions such as ``value >= 900 && value < 2000``.

The language is the one shared with ``when.expression`` (:mod:`krm_fn.expressions`, dialect
``THRESHOLD``). Grammar (whitespace is free between tokens)::

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
      message that names the problem and its 1-based column, ``... at position <column>``
      (the convention of every expression message, :mod:`krm_fn.expressions`).
    * Fail closed: :meth:`Threshold.evaluate` returns ``False`` for a missing (``None``) or
      non-finite value, whatever the expression says.
    * The registry :data:`KNOWN_THRESHOLD_KEYS` is the one list of keys the render and the
      report accept; an unknown key raises :class:`ThresholdKeyError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from krm_fn import expressions

__all__ = [
    "KNOWN_THRESHOLD_KEYS",
    "Threshold",
    "ThresholdKey",
    "ThresholdKeyError",
    "ThresholdSyntaxError",
    "check_threshold_key",
    "parse_threshold",
    "parse_thresholds",
]

MetricSource = Literal["nccl", "megatron", "c2c"]


class ThresholdSyntaxError(ValueError):
    """A threshold expression does not follow the grammar.

    Attributes:
        position: 1-based column of the problem, or ``None`` when not known.
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


Node = expressions.Node
format_number = expressions.format_number


@dataclass(frozen=True)
class Threshold:
    """A parsed threshold expression.

    Attributes:
        expression: the source text, as given.
        tree: the parsed, type-checked expression (:mod:`krm_fn.expressions`).

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
        return bool(expressions.evaluate(self.tree, {"value": value}))

    def __str__(self) -> str:
        return expressions.unparse(self.tree)


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
    try:
        return Threshold(expr, expressions.parse(expr, expressions.THRESHOLD))
    except expressions.ExpressionError as exc:
        raise ThresholdSyntaxError(
            f"{exc.what} at position {exc.column}", exc.column, expr
        ) from None


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
