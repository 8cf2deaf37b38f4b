"""Stages 6 and 9, overrides: match every ``when`` once, then apply the matching overrides.

Invariants:
    * Overrides are read from the validated model (never the raw input) and every ``when`` is
      evaluated exactly once, here, against the detected platform, GPU and topology; the
      result is handed to :func:`krm_fn.overrides.apply.apply_overrides`.
    * A ``when`` found bad while parsing is not reported again; an override that matches
      nothing is a warning (it changes nothing).
    * Matching overrides' ``mpiArgs`` and ``preCommand`` come after the platform's, in
      override order; ``applied`` lists the catalog entries then the matching overrides.
    * Applying never mutates its input; any override error fails the run.
    * The :mod:`krm_fn.overrides` package is imported only by a run that has overrides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from krm_fn.api import models
from krm_fn.builders.plan import RunPlan
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.partitioning import Partitioned
from krm_fn.stages.platform import ResolvedPlatform

if TYPE_CHECKING:
    from krm_fn.overrides.when import WhenContext


@dataclass(frozen=True)
class MatchedOverrides:
    """Every override of the run with the outcome of its ``when``."""

    matched: tuple[bool, ...]  # per override of spec.overrides
    mpi_args: tuple[str, ...]  # the matching overrides', in order
    pre_command: tuple[str, ...]  # the platform's preCommand lines, then the matching overrides'
    applied: tuple[str, ...]  # catalog:<entry> for each catalog entry, then spec.overrides[i]


def match(
    spec: models.WorkloadRunSpec,
    platform: ResolvedPlatform,
    partitioned: Partitioned,
    bad_whens: frozenset[int],
    diag: RunDiagnostics,
) -> MatchedOverrides:
    """Evaluate every ``when`` once; collect the matching overrides' arguments."""
    matched: list[bool] = []
    args: list[str] = []
    pre_command = list(platform.overlay.pre_command)
    applied = [f"catalog:{n}" for n in platform.overlay.applied]
    if spec.overrides:
        from krm_fn.overrides.when import WhenContext

        ctx = WhenContext(
            platform=platform.platform,
            gpu_architecture=platform.arch,
            topology_mode=partitioned.topology_mode,
            domain_count=partitioned.domains,
        )
    for i, ov in enumerate(spec.overrides):
        hit = i not in bad_whens and _matches(i, ov.when.as_mapping(), ctx, platform, diag)
        matched.append(hit)
        if hit:
            applied.append(f"spec.overrides[{i}]")
            args += ov.mpi_args or []
            pre_command += ov.pre_command or []
    return MatchedOverrides(tuple(matched), tuple(args), tuple(pre_command), tuple(applied))


def _matches(
    i: int, when: dict[str, Any], ctx: WhenContext, platform: ResolvedPlatform, diag: RunDiagnostics
) -> bool:
    """Whether override ``i`` matches; a non-match is a warning, a bad ``when`` an error."""
    from krm_fn.overrides.when import WhenError, describe, matches

    try:
        hit = matches(when, ctx)
    except WhenError as exc:
        diag.error(str(exc), f"spec.overrides[{i}].when")
        return False
    if not hit:
        diag.warning(
            f"override {i} matched nothing (when: {describe(when)}; platform "
            f"{platform.platform}, GPU {platform.arch}), so it changes nothing",
            f"spec.overrides[{i}].when",
        )
    return hit


def apply(
    matched: MatchedOverrides,
    objects: Sequence[dict[str, Any]],
    spec: models.WorkloadRunSpec,
    plan: RunPlan,
    tolerations: Sequence[dict[str, Any]],
    diag: RunDiagnostics,
) -> list[dict[str, Any]] | None:
    """Apply the matching overrides to the generated objects; ``None`` on an error."""
    if not spec.overrides:
        return list(objects)
    from krm_fn.overrides import jobtemplate as jt
    from krm_fn.overrides.apply import apply_overrides
    from krm_fn.overrides.placement import Expect

    gang = spec.gang_scheduler
    template_ctx = jt.TemplateContext(
        health_monitor=not any(
            t.key == "node.kubernetes.io/unschedulable"
            for t in (spec.target.taint_selectors if spec.target else [])
        ),
        checkpoint=(
            {"pvcName": plan.checkpoint_pvc, "maxRestarts": spec.checkpoint.max_restarts}
            if plan.checkpoint_pvc and spec.checkpoint
            else None
        ),
        gang=gang,
        runtimes=frozenset({plan.runtime_name}),
    )
    expect = Expect(
        framework=spec.framework.name,
        target=plan.target_terms,
        tolerations=tuple(tolerations),
        gang=gang,
    )
    outcome = apply_overrides(
        spec.overrides, objects, None, template_ctx, expect, matched=matched.matched
    )
    for path, msg in outcome.warnings:
        diag.warning(msg, path)
    for path, msg in outcome.errors:
        diag.error(msg, path)
    return None if outcome.errors else outcome.objects
