"""Stage 3, resolve platform: detect platform and GPU, apply the capacity filter.

Invariants:
    * Detection reads only the eligible nodes (:func:`krm_fn.platforms.run_platform.resolve_platform`);
      with no eligible node nothing is detected and the run fails with the reason.
    * Nodes with fewer GPUs than each pod requests are left out (NVCRE's capacity filter),
      unless the nodes disagree on their counts (already an error).
    * Nodes whose GPUs are only ResourceSlice devices get pods that claim them through DRA, or
      the run is refused with why (:func:`krm_fn.platforms.node_gpus.gpus_by_claim`).
    * Every left-out node is named in one warning (summarised per reason when many).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import GPU_PRESENT_LABEL, GPU_PRODUCT_LABEL, Exclusion, NodeInfo
from krm_fn.io.results import LISTED, some
from krm_fn.platforms import node_gpus as fleet
from krm_fn.platforms.overlay import ResolvedOverlay
from krm_fn.platforms.run_platform import PlatformPlan, resolve_platform, target_gpu_product
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.nodes import NodeSelection
from krm_fn.stages.parse import InputContext


@dataclass(frozen=True)
class ResolvedPlatform:
    """The run's platform and its nodes after the capacity filter (as :class:`NodeSelection`)."""

    plan: PlatformPlan | None  # what detection and the table resolved; None: no eligible node
    eligible: tuple[NodeInfo, ...]
    excluded: tuple[Exclusion | fleet.ShortOfGpus, ...]
    gpus: int  # per node

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
    stand_ins: bool,
) -> ResolvedPlatform:
    """Resolve the platform on the selected nodes and drop those short of GPUs.

    ``stand_ins``: ``nodes`` are the offline preview's synthetic nodes (no Node in the input).
    """
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
        plat = _gpus_claimed(spec, plat, eligible, context, diag)
    if excluded:
        diag.warning(
            f"{len(excluded)} node(s) matching the target are left out: " + left_out(excluded)
        )
    if no_gpus_left:
        diag.error(
            f"No node can supply the {no_gpus_left[0]} nvidia.com/gpu the workload requests "
            f"per node; best available is {no_gpus_left[1]}",
            "spec.gpusPerNode",
        )
    elif not eligible:
        diag.error(
            _no_eligible(spec, nodes, options, stand_ins, diag.file.path if diag.file else "")
            + fleet.unlabelled_gpu_hint(nodes, spec.target, context.gpu_slices),
            "spec.target" if spec.target else None,
        )
    gpus = plat.gpus_per_node if plat else (spec.gpus_per_node or 8)
    return ResolvedPlatform(plat, tuple(eligible), tuple(excluded), gpus)


def _gpus_claimed(
    spec: models.WorkloadRunSpec,
    plat: PlatformPlan,
    eligible: Sequence[NodeInfo],
    context: InputContext,
    diag: RunDiagnostics,
) -> PlatformPlan:
    """The plan whose pods claim their GPUs through DRA where the nodes publish them so."""
    overlay, problem = fleet.gpus_by_claim(
        plat.overlay, eligible, context.gpu_slices, spec, plat.gpus_per_node
    )
    if problem:
        diag.error(*problem)
    elif overlay is not plat.overlay:
        diag.info(
            f"the worker pods claim {plat.gpus_per_node} GPU(s) of DeviceClass "
            f"{fleet.DRA_GPU_DRIVER} (ResourceClaimTemplate <run>-gpu) instead of requesting "
            f"{fleet.GPU_RESOURCE}: the nodes publish their GPUs only through ResourceSlices"
        )
    return replace(plat, overlay=overlay)


def _no_eligible(
    spec: models.WorkloadRunSpec,
    nodes: Sequence[NodeInfo],
    options: FunctionOptions,
    stand_ins: bool,
    run_file: str,
) -> str:
    """Why no node is eligible, and how to pass (or preview without) nodes."""
    if not nodes:
        run = run_file or "RUN.yaml"
        return (
            "no eligible nodes: the input holds no Node. Pass the inventory with the run: a "
            f"file (workloadrun-fn render {run} nodes.yaml), a cluster's (kubectl get nodes "
            f"-o yaml | workloadrun-fn render {run} -), or in kpt and kustomize the inventory "
            "option or Node resources; or preview without a cluster on synthetic nodes: "
            "--platform NAME and/or --gpu-arch NAME (options platform, gpuArch)"
        )
    if not stand_ins:
        return (
            "no eligible nodes: no Ready, schedulable Node in the input matches the target"
            + ("" if spec.target else f" (default target: label {GPU_PRESENT_LABEL}=true)")
            + f"; {len(nodes)} Node(s) in the input"
        )
    have, wanted = nodes[0].gpu_product, target_gpu_product(spec.target)
    why = (
        f": they carry {GPU_PRODUCT_LABEL}={have} (from --gpu-arch {options.gpu_arch}) but the "
        f"target selects {wanted}; leave out --gpu-arch to preview the target's GPU"
        if wanted and have and wanted != have and options.gpu_arch
        else ""
    )
    return (
        f"no eligible nodes: the input holds no Node, and none of the {len(nodes)} synthetic "
        f"node(s) standing in for it (offline preview: --platform/--gpu-arch, options "
        f"platform/gpuArch) matches spec.target{why}; to render on real nodes, pass Node files"
    )


def left_out(excluded: Sequence[Exclusion | fleet.ShortOfGpus]) -> str:
    """``a: NotReady; b: cordoned`` or, for many nodes, counts and examples per reason."""
    if len(excluded) <= LISTED:
        return "; ".join(f"{x.node}: {x.reason}" for x in excluded)
    by_reason: dict[str, list[str]] = {}
    for x in excluded:
        by_reason.setdefault(x.reason, []).append(x.node)
    ranked = sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return "; ".join(f"{reason}: {len(names)} ({some(sorted(names))})" for reason, names in ranked)
