"""Threshold keys and expressions: ``spec.thresholds`` such as ``busBandwidthGBps: value >= 900``.

An expression is CEL over the measured metric ``value`` (:data:`krm_fn.expressions.THRESHOLD`,
as NVCRE's ``pkg/threshold/evaluator.go``); the keys are ``krm_fn/data/thresholds.yaml``.

Invariants:
    * A malformed expression raises :class:`ThresholdSyntaxError`, naming each problem.
    * Fail closed: :meth:`Threshold.evaluate` is ``False`` for a missing (``None``) or
      non-finite value, and for an evaluation that fails, whatever the expression says.
    * :data:`KNOWN_THRESHOLD_KEYS` is the one list of keys the render and the report accept;
      an unknown key raises :class:`ThresholdKeyError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import yaml

from krm_fn import expressions


class ThresholdSyntaxError(ValueError):
    """A threshold expression CEL refuses; ``position`` is its first problem's 1-based column."""

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
    """What one threshold key measures (its fields: ``krm_fn/data/thresholds.yaml``)."""

    name: str
    source: Literal["nccl", "megatron", "c2c"]
    unit: str
    description: str
    alias_of: str | None = None

    @property
    def metric(self) -> str:
        """The key whose metric this key reads (itself, unless it is an alias)."""
        return self.alias_of or self.name


_DATA = (Path(__file__).parent / "data" / "thresholds.yaml").read_text()
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, when PyYAML has it
KNOWN_THRESHOLD_KEYS: Mapping[str, ThresholdKey] = MappingProxyType(
    {e["name"]: ThresholdKey(**e) for e in yaml.load(_DATA, _LOADER)}
)


def check_threshold_key(key: str) -> ThresholdKey:
    """The registry entry for ``key``; :class:`ThresholdKeyError` listing the known keys."""
    if key not in KNOWN_THRESHOLD_KEYS:
        known = ", ".join(sorted(KNOWN_THRESHOLD_KEYS))
        raise ThresholdKeyError(f"unknown threshold key {key!r}; known keys: {known}")
    return KNOWN_THRESHOLD_KEYS[key]


@dataclass(frozen=True)
class Threshold:
    """A threshold: its text as given, and the type-checked CEL expression."""

    expression: str
    compiled: expressions.Expression

    def evaluate(self, value: float | None) -> bool:
        """Whether ``value`` meets the threshold: never for ``None``, NaN, inf or a failure."""
        if value is None or not math.isfinite(value):
            return False
        try:
            return self.compiled.evaluate({"value": float(value)})
        except expressions.ExpressionError:
            return False


def parse_threshold(expr: str) -> Threshold:
    """Parse ``value >= 900 && value < 2000``; :class:`ThresholdSyntaxError` if CEL refuses it."""
    if not isinstance(expr, str):
        raise ThresholdSyntaxError(f"threshold must be a string, got {type(expr).__name__}")
    try:
        return Threshold(expr, expressions.parse(expr, expressions.THRESHOLD))
    except expressions.ExpressionError as exc:
        raise ThresholdSyntaxError(str(exc), exc.column, expr) from None


def parse_thresholds(thresholds: Mapping[str, object]) -> dict[str, Threshold]:
    """Parse ``spec.thresholds``: each key to its :class:`Threshold`, in order.

    :class:`ThresholdKeyError` for the first unknown key, else one :class:`ThresholdSyntaxError`
    naming every refused expression by its key.
    """
    for key in thresholds:
        check_threshold_key(key)
    parsed: dict[str, Threshold] = {}
    errors: list[ThresholdSyntaxError] = []
    for key, expr in thresholds.items():
        try:
            parsed[key] = parse_threshold(expr)  # type: ignore[arg-type]  # checked inside
        except ThresholdSyntaxError as err:
            errors.append(ThresholdSyntaxError(f"{key}: {err}", err.position, err.expression))
    if errors:
        first = errors[0]
        raise ThresholdSyntaxError("\n".join(map(str, errors)), first.position, first.expression)
    return parsed
