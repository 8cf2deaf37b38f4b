"""Stage 3, resolve platform: detect platform and GPU, apply the capacity filter.

Invariants:
    * Detection reads only the eligible nodes (:func:`krm_fn.platforms.run_platform.resolve_platform`);
      with no eligible node nothing is detected and the run fails with the reason.
    * Nodes with fewer GPUs than each pod requests are left out (NVCRE's capacity filter),
      unless the nodes disagree on their counts (already an error).
    * Every left-out node is named in one warning (summarised per reason when many).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import GPU_PRESENT_LABEL, Exclusion, NodeInfo
from krm_fn.platforms import node_gpus as fleet
from krm_fn.platforms.overlay import ResolvedOverlay
from krm_fn.platforms.run_platform import PlatformPlan, resolve_platform
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.nodes import NodeSelection
from krm_fn.stages.parse import InputContext

LEFT_OUT_LISTED = 10
"""Up to this many left-out nodes are listed one by one; more are summarised per reason."""


@dataclass(frozen=True)
class ResolvedPlatform:
    """The run's platform and the nodes left after the capacity filter.

    Attributes:
        plan: What detection and the catalog resolved (``None``: no eligible node).
        eligible: Nodes the run may use, in name order.
        excluded: Every node matching the target that is left out, with its reason.
        gpus: GPUs per node.

    """

    plan: PlatformPlan | None
    eligible: tuple[NodeInfo, ...]
    excluded: tuple[Exclusion | fleet.ShortOfGpus, ...]
    gpus: int

    @property
    def platform(self) -> str:
        """The detected (or forced) platform, ``unknown`` without nodes."""
        return self.plan.platform if self.plan else "unknown"

    @property
    def arch(self) -> str:
        """The GPU architecture, ``unknown`` without nodes."""
        return self.plan.gpu_architecture if self.plan else "unknown"

    @property
    def overlay(self) -> ResolvedOverlay | None:
        """The catalog's overlay for (platform, GPU)."""
        return self.plan.overlay if self.plan else None


def resolve(
    spec: models.WorkloadRunSpec,
    nodes: Sequence[NodeInfo],
    selection: NodeSelection,
    options: FunctionOptions,
    context: InputContext,
    diag: RunDiagnostics,
) -> ResolvedPlatform:
    """Resolve the platform on the selected nodes and drop those short of GPUs."""
    eligible = list(selection.eligible)
    excluded = list(selection.excluded)
    plat: PlatformPlan | None = None
    no_gpus_left: tuple[int, int] | None = None  # (requested, best available)
    if eligible:
        plat = resolve_platform(
            spec, eligible, options, diag.error, diag.warning, context.gpu_slices, diag.info
        )
        requested = fleet.requested_gpus(spec, plat.gpus_per_node)
        short = (
            []
            if plat.counts_disagree
            else fleet.short_of_gpus(eligible, requested, context.gpu_slices)
        )
        if short:
            excluded += short
            eligible = [n for n in eligible if n.name not in {x.node for x in short}]
            if not eligible:
                no_gpus_left = (requested, max(x.gpus for x in short))
    if excluded:
        diag.warning(
            f"{len(excluded)} node(s) matching the target are left out: " + left_out(excluded)
        )
    _no_nodes_error(spec, nodes, eligible, no_gpus_left, context, diag)
    gpus = plat.gpus_per_node if plat else (spec.gpus_per_node or 8)
    return ResolvedPlatform(plat, tuple(eligible), tuple(excluded), gpus)


def _no_nodes_error(
    spec: models.WorkloadRunSpec,
    nodes: Sequence[NodeInfo],
    eligible: Sequence[NodeInfo],
    no_gpus_left: tuple[int, int] | None,
    context: InputContext,
    diag: RunDiagnostics,
) -> None:
    """Report a run left without nodes, with why."""
    if no_gpus_left:
        diag.error(
            f"No node can supply the {no_gpus_left[0]} nvidia.com/gpu the workload requests "
            f"per node; best available is {no_gpus_left[1]}",
            "spec.gpusPerNode",
        )
    elif not eligible:
        diag.error(
            "no eligible nodes: no Ready, schedulable Node in the input matches the target"
            + ("" if spec.target else f" (default target: label {GPU_PRESENT_LABEL}=true)")
            + f"; {len(nodes)} Node(s) in the input"
            + fleet.unlabelled_gpu_hint(nodes, spec.target, context.gpu_slices),
            "spec.target" if spec.target else None,
        )


def left_out(excluded: Sequence[Exclusion | fleet.ShortOfGpus]) -> str:
    """``a: NotReady; b: cordoned`` or, for many nodes, counts and examples per reason."""
    if len(excluded) <= LEFT_OUT_LISTED:
        return "; ".join(f"{x.node}: {x.reason}" for x in excluded)
    by_reason: dict[str, list[str]] = {}
    for x in excluded:
        by_reason.setdefault(x.reason, []).append(x.node)
    parts = []
    for reason, names in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(sorted(names)[:3])
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        parts.append(f"{reason}: {len(names)} ({shown}{more})")
    return "; ".join(parts)
