"""Matching a WorkloadRun ``spec.overrides[].when`` (WhenSpec) against the render context.

The one job of this module is :func:`matches` (plus :func:`describe` for status messages).

Invariants:
    * Every matcher that is set must match (AND); an empty ``when`` always matches. A matcher
      whose value is ``None`` counts as unset, so model dumps with ``None`` fields work.
    * Comparisons are case-sensitive and exact.
    * ``expression`` is the shared expression language (:mod:`krm_fn.expressions`, dialect
      ``WHEN``), a tiny CEL subset, parsed and type-checked by hand (never ``eval``):
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from krm_fn import expressions

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
        results.append(bool(expressions.evaluate(tree, ctx.variables())))
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
# Expressions: the shared language (krm_fn.expressions), in its ``WHEN`` dialect
# ---------------------------------------------------------------------------------------------

VARIABLES: Final[Mapping[str, type]] = expressions.WHEN.variables
"""Expression variables and their types."""


def parse_expression(source: Any) -> expressions.Node:
    """Parse and type-check a ``when.expression``.

    Args:
        source: The expression text.

    Returns:
        A tree for :func:`krm_fn.expressions.evaluate`.

    Raises:
        WhenError: The text is not a string, does not parse, or does not return a bool; the
            message reads ``expression '<text>', position <column>: <problem>`` (1-based).

    """
    if not isinstance(source, str):
        raise WhenError(f"when.expression must be a string, got {_type(source)}")
    try:
        return expressions.parse(source, expressions.WHEN)
    except expressions.ExpressionError as exc:
        raise WhenError(f"expression {source!r}, position {exc.column}: {exc.what}") from None
