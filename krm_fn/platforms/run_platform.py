"""Resolve platform, GPU model, per-node counts, NIC resource and overlay for one run.

Invariants:
    * The table is the bundled one with the ``platformCatalog`` files (``load_catalog``);
      detection reads only the eligible nodes; ``platform``/``gpuArch`` options win.
    * GPUs per node: ``spec.gpusPerNode``; else the count the eligible nodes agree on
      (:mod:`krm_fn.platforms.node_gpus`; disagreeing is an error); else the table (shape
      entries, GPU defaults). NICs: GPU defaults, shape entries, ``spec.mlnxPerNode``.
    * NIC resource: ``spec.nicResourceName``; else, where the platform's ``nicDetection``
      names the GPU model and mlnxPerNode is not 0 (the opt-out), the one ``nicResources``
      candidate on every eligible node, with a note saying which or why none.
    * What detection cannot vouch for is a warning: a GPU model outside the table or none, a
      providerID no rule knows, a hostname NVCRE would read.
    * Offline preview: without Nodes and with a forced platform or GPU, ``numNodes``
      synthetic nodes from the table (detection written backwards) stand in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import (
    GPU_PRESENT_LABEL,
    GPU_PRODUCT_LABEL,
    HOSTNAME_LABEL,
    NodeInfo,
    node_info,
)
from krm_fn.io.results import some
from krm_fn.platforms import detect as pdetect
from krm_fn.platforms import gpu as pgpu
from krm_fn.platforms import node_gpus as fleet
from krm_fn.platforms import overlay as poverlay
from krm_fn.platforms.catalog import UNKNOWN_ARCH, Catalog, CatalogError, load_catalog

SYNTHETIC_PREFIX = "synthetic-node-"


def forced_platform(options: FunctionOptions) -> str | None:
    """The ``platform`` option, canonical (checked by :func:`check_forced_names` before)."""
    return options.platform.strip().lower() if options.platform else None


@dataclass(frozen=True, slots=True)
class PlatformPlan:
    """What detection and the catalog resolved for one run."""

    platform: str
    gpu_architecture: str
    gpus_per_node: int
    nics_per_node: int
    mnnvl: bool
    overlay: poverlay.ResolvedOverlay
    model_products: tuple[str, ...] = ()  # what the nodes of the detected model call their GPU
    gpus_from: str = ""  # where gpus_per_node comes from, for the summary
    counts_disagree: bool = False  # the nodes report different GPU counts (already an error)
    nic_resource_name: str | None = None  # spec.nicResourceName, else the detected one


def target_gpu_product(target: models.Target | None) -> str | None:
    """The GPU product a target names (nodeSelector, else an ``In`` expression), as NVCRE."""
    product = target.node_selector.get(GPU_PRODUCT_LABEL) if target else None
    expressions = target.match_expressions if target else []
    return product or next(
        (
            r.values[0]
            for r in expressions
            if r.key == GPU_PRODUCT_LABEL and r.operator == "In" and r.values
        ),
        None,
    )


def _target_labels(target: models.Target | None) -> dict[str, str]:
    """Labels a node needs to satisfy the target's nodeSelector and expressions."""
    labels = dict(target.node_selector) if target else {}
    for r in target.match_expressions if target else []:
        if r.key in labels:
            continue
        if r.operator == "In" and r.values:
            labels[r.key] = r.values[0]
        elif r.operator == "Exists":
            labels[r.key] = "synthetic"
        elif r.operator in ("Gt", "Lt") and r.values and r.values[0].lstrip("-").isdigit():
            labels[r.key] = str(int(r.values[0]) + (1 if r.operator == "Gt" else -1))
    return labels


def synthetic_nodes(
    count: int,
    platform: str | None,
    arch: str | None,
    target: models.Target | None = None,
    catalog: Catalog | None = None,
) -> list[NodeInfo]:
    """Stand-in nodes for an offline preview (``render --platform X [--gpu-arch Y]``).

    The platform's first detection rule written backwards (providerID prefix, label,
    allocatable resource); the table's GFD product of ``arch``, else the target's (as NVCRE);
    the target's nodeSelector, ``In``/``Exists``/``Gt``/``Lt`` expressions, taintSelectors
    (as taints) and nodeNames (as names); every topology label of the table with one value,
    so any topology key partitions them as one domain.
    """
    table = catalog or load_catalog()
    names = list(target.node_names) if target and target.node_names else []
    gpu = table.gpu(arch) if arch else None
    product = (gpu.product if gpu else arch) if arch else target_gpu_product(target)
    own = table.platform(platform) if platform else None
    rule = own.detect[0] if own and own.detect else None
    labels = {key: "synthetic-domain-0" for key in table.topology_keys()}
    labels |= {GPU_PRESENT_LABEL: "true", **_target_labels(target)}
    labels |= {GPU_PRODUCT_LABEL: product} if product else {}
    labels |= {rule.label: "synthetic"} if rule and rule.label else {}
    taints = [
        {
            "key": t.key,
            **({"value": t.value} if t.value else {}),
            "effect": t.effect or "NoSchedule",
        }
        for t in (target.taint_selectors if target else [])
    ]
    nodes = []
    for i, name in enumerate(names or [f"{SYNTHETIC_PREFIX}{i}" for i in range(count)]):
        spec: dict[str, Any] = {"taints": taints} if taints else {}
        if rule and rule.provider_id:
            spec["providerID"] = f"{rule.provider_id}synthetic/{i}"
        obj: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME_LABEL: name, **labels}},
            "spec": spec,
        }
        if rule and rule.allocatable:
            obj["status"] = {"allocatable": {rule.allocatable: "1"}}
        nodes.append(node_info(obj))
    return nodes


def check_forced_names(options: FunctionOptions) -> list[tuple[str, str]]:
    """An invalid ``platformCatalog`` (each problem), unknown ``platform``/``gpuArch`` values."""
    try:
        table = load_catalog(options.platform_catalog)
    except CatalogError as exc:
        return [("platformCatalog", f"{exc.origin}: {p}") for p in exc.problems]
    out = []
    if options.platform:
        try:
            pdetect.check_platform_name(options.platform, table)
        except ValueError as exc:
            out.append(("platform", str(exc)))
    if options.gpu_arch:
        try:
            pgpu.check_gpu_arch_name(options.gpu_arch)
        except ValueError as exc:
            out.append(("gpuArch", str(exc)))
    return out


def resolve_platform(
    spec: models.WorkloadRunSpec,
    eligible: Sequence[NodeInfo],
    options: FunctionOptions,
    err: Any,
    warn: Any,
    slices: Mapping[str, fleet.SliceGpus] | None = None,
    note: Any = None,
) -> PlatformPlan:
    """Detect and resolve; problems go to ``err``/``warn``, what was detected to ``note``."""
    table = load_catalog(options.platform_catalog)
    raws = [n.raw for n in eligible]
    platform, arch, gdet = _detect(raws, options, table, err, warn)
    node_gpus, gpus_from, disagree = _node_gpus(spec, eligible, slices or {}, err)
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
    if not gpus_from:  # the table sized the run: a shape entry or the GPU defaults
        by = ctx.gpus_from
        gpus_from = (
            f"catalog entry {by}" if by != "gpu-defaults" else f"the GPU defaults for {arch}"
        )
    overlay = poverlay.resolve(table, ctx)
    _warn_gpu_model(arch, gdet.model_products, ctx, gpus_from, warn)
    if not options.platform and platform == table.default_platform.name:
        _warn_platform_guesses(raws, overlay, table, warn)
    return PlatformPlan(
        platform=platform,
        gpu_architecture=arch,
        gpus_per_node=ctx.gpus_per_node,
        nics_per_node=ctx.nics_per_node,
        mnnvl=ctx.mnnvl,
        overlay=overlay,
        model_products=tuple(gdet.model_products),
        gpus_from=gpus_from,
        counts_disagree=disagree,
        nic_resource_name=_nic_resource(spec, eligible, table, ctx, note),
    )


def _nic_resource(
    spec: models.WorkloadRunSpec,
    eligible: Sequence[NodeInfo],
    table: Catalog,
    ctx: poverlay.PlatformContext,
    note: Any,
) -> str | None:
    """``spec.nicResourceName``, else the one the platform detects (see the module docstring)."""
    if spec.nic_resource_name or ctx.nics_per_node == 0:  # mlnxPerNode: 0 requests no NIC
        return spec.nic_resource_name
    own = table.platform(ctx.platform)
    if own is None or ctx.gpu_architecture not in (own.nic_detection or ()):
        return None
    name, why = fleet.detect_nic_resource(eligible, own.nic_resources, ctx.nics_per_node)
    if note is not None:
        note(
            f"nicResourceName {name} detected on every eligible node ({ctx.nics_per_node} per "
            "pod, mlnxPerNode): set spec.nicResourceName to choose another, or "
            "spec.mlnxPerNode: 0 to request none"
            if name
            else why
        )
    return name


def _detect(
    raws: Sequence[Mapping[str, Any]],
    options: FunctionOptions,
    table: Catalog,
    err: Any,
    warn: Any,
) -> tuple[str, str, pgpu.GpuDetection]:
    """Platform and GPU architecture of the nodes (forced options win), and the detection."""
    pdet = pdetect.detect_fleet_platform(raws, table)
    if pdet.error and not options.platform:
        err(pdet.error, "spec.target")
    platform = forced_platform(options) or pdet.platform or "unknown"
    gdet = pgpu.detect_gpu_architecture(raws, strict=options.strict_gpu_arch)
    if gdet.error and not options.gpu_arch:
        err(gdet.error, "spec.target")
    elif gdet.warning and not options.gpu_arch:
        warn(gdet.warning, "spec.target")
    arch = pgpu.check_gpu_arch_name(options.gpu_arch) if options.gpu_arch else gdet.architecture
    return platform, arch, gdet


def _node_gpus(
    spec: models.WorkloadRunSpec,
    eligible: Sequence[NodeInfo],
    slices: Mapping[str, fleet.SliceGpus],
    err: Any,
) -> tuple[int | None, str, bool]:
    """(GPUs per node the nodes agree on, where it comes from, whether they disagree)."""
    if spec.gpus_per_node is not None:
        return None, "spec.gpusPerNode", False
    by_count, source = fleet.fleet_gpu_count(eligible, slices)
    if len(by_count) <= 1:
        return next(iter(by_count), None), source, False
    groups = {f"{c} GPU{'' if c == 1 else 's'}": n for c, n in by_count.items()}
    err(
        "the eligible nodes report different numbers of GPUs per node ("
        + pdetect.summarize_node_groups(groups)
        + "), and every worker pod of a run requests the same number; set "
        "spec.gpusPerNode (nodes with fewer are then left out) or narrow spec.target to "
        "nodes with one count (e.g. matchExpressions on nvidia.com/gpu.count)",
        "spec.gpusPerNode",
    )
    return None, "", True


_FROM_TABLE = ("the GPU defaults for ", "catalog entry ")


def _warn_gpu_model(
    arch: str, products: Sequence[str], ctx: poverlay.PlatformContext, gpus_from: str, warn: Any
) -> None:
    """Say when the GPU model is unknown or outside the table, and what that means for sizing."""
    guessed = gpus_from.startswith(_FROM_TABLE)
    sizing = (
        f"; the job is sized as gpusPerNode={ctx.gpus_per_node} mlnxPerNode={ctx.nics_per_node}: "
        "set spec.gpusPerNode and spec.mlnxPerNode if the nodes differ"
        if guessed
        else f"; {ctx.gpus_per_node} GPU(s) per node from {gpus_from}"
    )
    path = "spec.gpusPerNode" if guessed else "spec.target"
    if arch == UNKNOWN_ARCH:
        warn(
            "no eligible node names its GPU model (label nvidia.com/gpu.product, label "
            "cloud.google.com/gke-accelerator, or a gpu.nvidia.com ResourceSlice in the input), "
            "so no GPU-specific settings apply; set the gpuArch option to choose them" + sizing,
            path,
        )
    elif arch not in pgpu.architectures():
        named = f" ({', '.join(products)})" if products else ""
        warn(
            f"GPU model {arch!r}{named} has no entry in the GPU defaults, so no GPU-specific "
            "settings apply" + sizing,
            path,
        )


def _warn_platform_guesses(
    raws: Sequence[Mapping[str, Any]],
    overlay: poverlay.ResolvedOverlay,
    table: Catalog,
    warn: Any,
) -> None:
    """Name default-platform nodes no rule knows, and those NVCRE gives one by hostname."""
    default = table.default_platform.name
    applied = ", ".join(f"catalog:{name}" for name in overlay.applied)
    settings = (
        f"the {default} settings apply ({applied})" if applied else "no platform settings apply"
    )
    for scheme, names in pdetect.unrecognised_provider_ids(raws, table).items():
        warn(
            f"providerID scheme {scheme!r} (node(s) {some(names)}) is not a platform this "
            f"function knows, so the nodes count as {default}, as in NVCRE, and {settings}; "
            "set the platform option if another platform fits",
            "spec.target",
        )
    for platform, (names, hint, labels) in pdetect.hostname_only(raws, table).items():
        warn(
            f"node(s) {some(names)} have no providerID and a hostname containing {hint!r}: "
            f"NVCRE calls them {platform}, but a hostname never decides the platform here "
            f"(only the label {' or '.join(labels)} does), so they count as {default} and "
            f"{settings}; set the platform option to {platform} if they are {platform} nodes",
            "spec.target",
        )
