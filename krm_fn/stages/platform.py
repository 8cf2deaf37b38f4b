"""Stage 3, resolve platform: detect platform, GPU model, counts and overlay; capacity filter.

Invariants:
    * The table is the bundled one with the ``platformCatalog`` files; detection reads only
      the eligible nodes; the ``platform``/``gpuArch`` options win. With no eligible node
      nothing is detected (``unknown``, the spec's counts) and the run fails with the reason.
    * GPUs per node: ``spec.gpusPerNode``; else the count the eligible nodes agree on
      (:mod:`krm_fn.platforms.node_gpus`; disagreeing is an error); else the table (shape
      entries, GPU defaults). NICs: GPU defaults, shape entries, ``spec.mlnxPerNode``.
    * NIC resource: ``spec.nicResourceName``; else, where the platform's ``nicDetection``
      names the GPU model and mlnxPerNode is not 0 (the opt-out), the one ``nicResources``
      candidate on every eligible node, with a note saying which or why none.
    * What detection cannot vouch for is a warning: a GPU model outside the table or none, a
      providerID no rule knows, a hostname NVCRE would read.
    * Nodes with fewer GPUs than each pod requests are left out (NVCRE's capacity filter),
      unless the nodes disagree on their counts (already an error).
    * Nodes whose GPUs are only ResourceSlice devices get pods that claim them through DRA, or
      the run is refused with why (:func:`krm_fn.platforms.node_gpus.gpus_by_claim`).
    * Every left-out node is named in one warning (summarised per reason when many).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import (
    GPU_PRESENT_LABEL,
    GPU_PRODUCT_LABEL,
    Exclusion,
    NodeInfo,
    is_default,
)
from krm_fn.io.results import LISTED, some
from krm_fn.platforms import detect as pdetect
from krm_fn.platforms import gpu as pgpu
from krm_fn.platforms import node_gpus as fleet
from krm_fn.platforms import overlay as poverlay
from krm_fn.platforms.catalog import UNKNOWN_ARCH, Catalog, load_catalog
from krm_fn.platforms.run_platform import forced_platform, target_gpu_product
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.nodes import NodeSelection
from krm_fn.stages.parse import InputContext


@dataclass(frozen=True)
class ResolvedPlatform:
    """What detection and the table resolved, and the nodes after the capacity filter."""

    platform: str
    arch: str
    gpus: int  # per node
    nics: int  # RDMA NICs per node (mlnxPerNode)
    mnnvl: bool
    overlay: poverlay.ResolvedOverlay  # of no entry without an eligible node
    nic_resource_name: str | None  # spec.nicResourceName, else the detected one
    unlisted_products: tuple[str, ...] = ()  # the nodes' names of a model outside the table
    gpus_from: str = ""  # where ``gpus`` comes from, for the summary
    eligible: tuple[NodeInfo, ...] = ()  # in name order
    excluded: tuple[Exclusion | fleet.ShortOfGpus, ...] = ()  # each with its reason


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
    eligible, excluded = list(selection.eligible), list(selection.excluded)
    overlay, nic = poverlay.ResolvedOverlay(), spec.nic_resource_name
    resolved = ResolvedPlatform(
        "unknown", UNKNOWN_ARCH, spec.gpus_per_node or 8, 0, bool(spec.enable_mnnvl), overlay, nic
    )
    no_gpus_left: tuple[int, int] | None = None  # (requested, best available)
    if eligible:
        resolved, disagree = _detected(spec, eligible, options, context, diag)
        requested = fleet.requested_gpus(spec, resolved.gpus)
        short = [] if disagree else fleet.short_of_gpus(eligible, requested, context.gpu_slices)
        if short:
            excluded += short
            eligible = [n for n in eligible if n.name not in {x.node for x in short}]
            if not eligible:
                no_gpus_left = (requested, max(x.gpus for x in short))
        resolved = _gpus_claimed(spec, resolved, eligible, context, diag)
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
    return replace(resolved, eligible=tuple(eligible), excluded=tuple(excluded))


def _detected(
    spec: models.WorkloadRunSpec,
    eligible: Sequence[NodeInfo],
    options: FunctionOptions,
    context: InputContext,
    diag: RunDiagnostics,
) -> tuple[ResolvedPlatform, bool]:
    """Detect (forced options win) and size; and whether the nodes disagree on GPU counts."""
    table = load_catalog(options.platform_catalog)
    raws = [n.raw for n in eligible]
    pdet = pdetect.detect_fleet_platform(raws, table)
    if pdet.error and not options.platform:
        diag.error(pdet.error, "spec.target")
    platform = forced_platform(options) or pdet.platform or "unknown"
    gdet = pgpu.detect_gpu_architecture(raws, strict=options.strict_gpu_arch)
    if gdet.error and not options.gpu_arch:
        diag.error(gdet.error, "spec.target")
    elif gdet.warning and not options.gpu_arch:
        diag.warning(gdet.warning, "spec.target")
    arch = pgpu.check_gpu_arch_name(options.gpu_arch) if options.gpu_arch else gdet.architecture
    node_gpus, gpus_from, disagree = _node_gpus(spec, eligible, context.gpu_slices, diag)
    ctx = poverlay.make_context(
        table,
        platform=platform,
        gpu_architecture=arch,
        framework=spec.framework.name,
        nodes=raws,
        gpus_per_node=spec.gpus_per_node if spec.gpus_per_node is not None else node_gpus,
        nics_per_node=spec.mlnx_per_node,
        mnnvl=spec.enable_mnnvl,
    )
    guessed = not gpus_from  # the table sized the run: a shape entry or the GPU defaults
    if guessed:
        by = ctx.gpus_from
        gpus_from = (
            f"catalog entry {by}" if by != "gpu-defaults" else f"the GPU defaults for {arch}"
        )
    overlay = poverlay.resolve(table, ctx)
    _warn_gpu_model(arch, gdet.model_products, ctx, gpus_from, guessed, diag)
    if not options.platform and platform == table.default_platform.name:
        _warn_platform_guesses(raws, overlay, table, diag)
    gpus, nics, mnnvl = ctx.gpus_per_node, ctx.nics_per_node, ctx.mnnvl
    nic = _nic_resource(spec, eligible, table, ctx, diag)
    products = gdet.model_products if arch not in pgpu.architectures() else ()
    resolved = ResolvedPlatform(
        platform, arch, gpus, nics, mnnvl, overlay, nic, products, gpus_from
    )
    return resolved, disagree


def _gpus_claimed(
    spec: models.WorkloadRunSpec,
    resolved: ResolvedPlatform,
    eligible: Sequence[NodeInfo],
    context: InputContext,
    diag: RunDiagnostics,
) -> ResolvedPlatform:
    """The platform whose pods claim their GPUs through DRA where the nodes publish them so."""
    gpus = resolved.gpus
    overlay, problem = fleet.gpus_by_claim(
        resolved.overlay, eligible, context.gpu_slices, spec, gpus
    )
    if problem:
        diag.error(*problem)
    elif overlay is not resolved.overlay:
        diag.info(
            f"the worker pods claim {gpus} GPU(s) of DeviceClass "
            f"{fleet.DRA_GPU_DRIVER} (ResourceClaimTemplate <run>-gpu) instead of requesting "
            f"{fleet.GPU_RESOURCE}: the nodes publish their GPUs only through ResourceSlices"
        )
    return replace(resolved, overlay=overlay)


def _nic_resource(
    spec: models.WorkloadRunSpec,
    eligible: Sequence[NodeInfo],
    table: Catalog,
    ctx: poverlay.PlatformContext,
    diag: RunDiagnostics,
) -> str | None:
    """``spec.nicResourceName``, else the one the platform detects (see the module docstring)."""
    if spec.nic_resource_name or ctx.nics_per_node == 0:  # mlnxPerNode: 0 requests no NIC
        return spec.nic_resource_name
    own = table.platform(ctx.platform)
    if own is None or ctx.gpu_architecture not in (own.nic_detection or ()):
        return None
    name, why = fleet.detect_nic_resource(eligible, own.nic_resources, ctx.nics_per_node)
    diag.info(
        f"nicResourceName {name} detected on every eligible node ({ctx.nics_per_node} per "
        "pod, mlnxPerNode): set spec.nicResourceName to choose another, or "
        "spec.mlnxPerNode: 0 to request none"
        if name
        else why
    )
    return name


def _node_gpus(
    spec: models.WorkloadRunSpec,
    eligible: Sequence[NodeInfo],
    slices: Mapping[str, fleet.SliceGpus],
    diag: RunDiagnostics,
) -> tuple[int | None, str, bool]:
    """(GPUs per node the nodes agree on, where it comes from, whether they disagree)."""
    if spec.gpus_per_node is not None:
        return None, "spec.gpusPerNode", False
    by_count, source = fleet.fleet_gpu_count(eligible, slices)
    if len(by_count) <= 1:
        return next(iter(by_count), None), source, False
    groups = {f"{c} GPU{'' if c == 1 else 's'}": n for c, n in by_count.items()}
    diag.error(
        "the eligible nodes report different numbers of GPUs per node ("
        + pdetect.summarize_node_groups(groups)
        + "), and every worker pod of a run requests the same number; set "
        "spec.gpusPerNode (nodes with fewer are then left out) or narrow spec.target to "
        "nodes with one count (e.g. matchExpressions on nvidia.com/gpu.count)",
        "spec.gpusPerNode",
    )
    return None, "", True


def _warn_gpu_model(
    arch: str,
    products: Sequence[str],
    ctx: poverlay.PlatformContext,
    gpus_from: str,
    guessed: bool,
    diag: RunDiagnostics,
) -> None:
    """Say when the GPU model is unknown or outside the table, and what that means for sizing.

    ``guessed``: the table, not the spec or the nodes, gave the GPUs per node.
    """
    sizing = (
        f"; the job is sized as gpusPerNode={ctx.gpus_per_node} mlnxPerNode={ctx.nics_per_node}: "
        "set spec.gpusPerNode and spec.mlnxPerNode if the nodes differ"
        if guessed
        else f"; {ctx.gpus_per_node} GPU(s) per node from {gpus_from}"
    )
    path = "spec.gpusPerNode" if guessed else "spec.target"
    if arch == UNKNOWN_ARCH:
        diag.warning(
            "no eligible node names its GPU model (label nvidia.com/gpu.product, label "
            "cloud.google.com/gke-accelerator, or a gpu.nvidia.com ResourceSlice in the input), "
            "so no GPU-specific settings apply; set the gpuArch option to choose them" + sizing,
            path,
        )
    elif arch not in pgpu.architectures():
        named = f" ({', '.join(products)})" if products else ""
        diag.warning(
            f"GPU model {arch!r}{named} has no entry in the GPU defaults, so no GPU-specific "
            "settings apply" + sizing,
            path,
        )


def _warn_platform_guesses(
    raws: Sequence[Mapping[str, Any]],
    overlay: poverlay.ResolvedOverlay,
    table: Catalog,
    diag: RunDiagnostics,
) -> None:
    """Name default-platform nodes no rule knows, and those NVCRE gives one by hostname."""
    default = table.default_platform.name
    applied = ", ".join(f"catalog:{name}" for name in overlay.applied)
    settings = (
        f"the {default} settings apply ({applied})" if applied else "no platform settings apply"
    )
    for scheme, names in pdetect.unrecognised_provider_ids(raws, table).items():
        diag.warning(
            f"providerID scheme {scheme!r} (node(s) {some(names)}) is not a platform this "
            f"function knows, so the nodes count as {default}, as in NVCRE, and {settings}; "
            "set the platform option if another platform fits",
            "spec.target",
        )
    for platform, (names, hint, labels) in pdetect.hostname_only(raws, table).items():
        diag.warning(
            f"node(s) {some(names)} have no providerID and a hostname containing {hint!r}: "
            f"NVCRE calls them {platform}, but a hostname never decides the platform here "
            f"(only the label {' or '.join(labels)} does), so they count as {default} and "
            f"{settings}; set the platform option to {platform} if they are {platform} nodes",
            "spec.target",
        )


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
        target = f" (default target: label {GPU_PRESENT_LABEL}=true)" * is_default(spec.target)
        listed = f"; the target includes nodeList {', '.join(options.node_list)}"
        return (
            f"no eligible nodes: no Ready, schedulable Node in the input matches the target"
            f"{target}; {len(nodes)} Node(s) in the input{listed * bool(options.node_list)}"
        )
    have, wanted = nodes[0].labels.get(GPU_PRODUCT_LABEL, ""), target_gpu_product(spec.target)
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
