"""Matching ``spec.overrides[].when`` against the render context, as NVCRE's ``matchesWhen``.

NVIDIA/cluster-readiness-engine ``pkg/controller/workflow_detect.go``; also :func:`describe`.

Invariants:
    * A ``when`` has the shape of :class:`krm_fn.api.models.When`; one that does not validate
      raises :class:`WhenError` naming every bad field.
    * Every matcher set must match (AND); an empty ``when`` always matches. ``None`` is unset,
      and so is an empty ``expression`` (NVCRE: ``Expression != ""``). Strings match exactly.
    * ``expression`` is CEL (:data:`krm_fn.expressions.WHEN`). It is type-checked even when
      another matcher does not match, so a mistake is an error on every render, and evaluated
      last, when the others match; a failed evaluation is a :class:`WhenError` too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_snake

from krm_fn import expressions
from krm_fn.api import models
from krm_fn.api.fields import fields_of, model_at
from krm_fn.api.validate import error_message, field_path

__all__ = ["WhenContext", "WhenError", "describe", "matches"]


class WhenError(ValueError):
    """A ``when`` that cannot be evaluated (bad shape or bad expression)."""


@dataclass(frozen=True, slots=True)
class WhenContext:
    """What a ``when`` is matched against (NVCRE's ``OverrideContext``), e.g. ``aws``, ``gb200``."""

    platform: str
    gpu_architecture: str
    workload_kind: str = "TrainJob"
    topology_mode: str = "simple"
    domain_count: int = 0
    config: Mapping[str, Any] = field(default_factory=dict)

    def variables(self) -> dict[str, str | int]:
        """The expression variables by name (``gpuArchitecture`` is :attr:`gpu_architecture`)."""
        return {n: getattr(self, to_snake(n)) for n, _ in expressions.WHEN.variables}


def matches(when: Mapping[str, Any], ctx: WhenContext) -> bool:
    """Whether every matcher set in ``when`` (camelCase keys) matches; else :class:`WhenError`."""
    try:
        spec = models.When.model_validate(when)
    except ValidationError as exc:
        raise WhenError("; ".join(_problem(e) for e in exc.errors(include_url=False))) from None
    expression = parse_expression(spec.expression) if spec.expression else None
    topology, count = spec.topology, spec.topology.domain_count if spec.topology else None
    hit = (
        _string_match(spec.gpu_architecture, ctx.gpu_architecture)
        and _string_match(spec.platform, ctx.platform)
        and spec.workload_kind in (None, "", ctx.workload_kind)
        and (topology is None or topology.mode in (None, ctx.topology_mode))
        and (count is None or count.equals in (None, ctx.domain_count))
        and (count is None or count.greater_than is None or ctx.domain_count > count.greater_than)
        and (count is None or count.less_than is None or ctx.domain_count < count.less_than)
        and (spec.config is None or _subset(spec.config, ctx.config))
    )
    if not hit or expression is None:
        return bool(hit)
    try:
        return expression.evaluate(ctx.variables())
    except expressions.ExpressionError as exc:
        raise WhenError(f"expression {expression.source!r}: {exc}") from None


def parse_expression(source: Any) -> expressions.Expression | None:
    """Compile a ``when.expression`` (``None`` if empty); else :class:`WhenError`, with carets."""
    if not isinstance(source, str):
        raise WhenError(f"when.expression must be a string, got {type(source).__name__}")
    try:
        return expressions.parse(source, expressions.WHEN) if source else None
    except expressions.ExpressionError as exc:
        raise WhenError(f"expression {source!r}, {exc}") from None


def describe(when: Mapping[str, Any]) -> str:
    """Summarise a WhenSpec as NVCRE's AppliedOverride: ``gpuArchitecture=in [gb200], ...``."""
    parts: list[str] = []
    spec = {k: v for k, v in when.items() if v is not None}
    for name in ("gpuArchitecture", "platform"):
        m: Any = spec.get(name)
        for k in ("equals", "in", "notIn") if isinstance(m, Mapping) else ():
            if (v := m.get(k)) is not None:
                parts.append(
                    f"{name}=" + (v if k == "equals" else f"{k} [{','.join(map(str, v))}]")
                )
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
    if spec.get("expression"):  # an empty one is unset
        parts.append(f"expression={spec['expression']}")
    return ", ".join(parts) if parts else "always"


def _problem(err: Any) -> str:
    """One validation error of a ``when``: its field path, what is wrong, what is allowed."""
    return f"{field_path(('when', *err['loc']))}: {error_message(err, _unknown_field)}"


def _unknown_field(loc: tuple[int | str, ...]) -> str:
    known = ", ".join(f.key for f in fields_of(model_at(models.When, loc) or models.When))
    return f"unknown field {loc[-1]!r}; known fields: {known}"


def _string_match(spec: models.StringMatch | None, actual: str) -> bool:
    """NVCRE's ``matchesStringSpec``: an empty ``equals``, ``in`` or ``notIn`` is unset."""
    return spec is None or (
        spec.equals in (None, "", actual)
        and (not spec.in_ or actual in spec.in_)
        and (not spec.not_in or actual not in spec.not_in)
    )


def _subset(want: Any, have: Any) -> bool:
    """``want`` equals ``have`` with the same type; a map: each key in ``have``, such a value."""
    if isinstance(want, Mapping):
        pairs = want.items()
        return isinstance(have, Mapping) and all(
            k in have and _subset(v, have[k]) for k, v in pairs
        )
    return bool(want == have) and type(want) is type(have)
