"""Resolve platform, GPU architecture, per-node counts and the platform overlay for one run.

Invariants:
    * Detection reads only the run's eligible nodes; ``platform``/``gpuArch`` options win.
    * Counts follow NVCRE's layering: GPU defaults, then the catalog's shape entries, then
      ``spec.gpusPerNode`` / ``spec.mlnxPerNode`` (an explicit 0 NICs opts out of the request).
    * Offline preview: with no Node in the input and a forced platform or GPU architecture,
      ``numNodes`` synthetic nodes stand in, so partitioning and every override are still
      exercised; the caller says so in an info result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.inventory import GPU_PRESENT_LABEL, GPU_PRODUCT_LABEL, NodeInfo, node_info
from krm_fn.platforms import catalog as pcat
from krm_fn.platforms import detect as pdetect
from krm_fn.platforms import gpu as pgpu
from krm_fn.records import record

SYNTHETIC_PREFIX = "synthetic-node-"
_PROVIDER_PREFIX = {
    "aws": "aws:///synthetic/i-0",
    "gcp": "gce://synthetic/zone/",
    "azure": "azure:///subscriptions/synthetic/",
    "oci": "ocid1.instance.oc1.synthetic.",
}
_PRODUCT = {
    "a100": "NVIDIA-A100-SXM4-80GB",
    "h100": "NVIDIA-H100-80GB-HBM3",
    "h200": "NVIDIA-H200",
    "b200": "NVIDIA-B200",
    "b300": "NVIDIA-B300",
    "gb200": "NVIDIA-GB200",
    "gb300": "NVIDIA-GB300",
    "l40": "NVIDIA-L40",
    "l40s": "NVIDIA-L40S",
    "rtxpro6000": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
}


@record(frozen=True)
class PlatformPlan:
    """What detection and the catalog resolved for one run."""

    platform: str
    gpu_architecture: str
    gpus_per_node: int
    nics_per_node: int
    mnnvl: bool
    overlay: pcat.ResolvedOverlay
    products: tuple[str, ...]


def _topology_keys() -> list[str]:
    """Every topology label the catalog may partition by (synthetic nodes share one domain)."""
    cat = pcat.load_catalog()
    return sorted({e.topology_key for e in cat.entries if e.topology_key})


def target_gpu_product(target: models.Target | None) -> str | None:
    """The GPU product a target names, as NVCRE's offline render reads it.

    ``target.nodeSelector["nvidia.com/gpu.product"]``, else the first value of an ``In``
    expression on that label; ``None`` when the target names none.
    """
    if target is None:
        return None
    product = target.node_selector.get(GPU_PRODUCT_LABEL)
    if product:
        return product
    for r in target.match_expressions:
        if r.key == GPU_PRODUCT_LABEL and r.operator == "In" and r.values:
            return r.values[0]
    return None


def _target_labels(target: models.Target | None) -> dict[str, str]:
    """Labels a node needs to satisfy the target's nodeSelector and expressions."""
    if target is None:
        return {}
    labels = dict(target.node_selector)
    for r in target.match_expressions:
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
) -> list[NodeInfo]:
    """Stand-in nodes for an offline preview (``render --platform X [--gpu-arch Y]``).

    As NVCRE's offline render: the GPU product is ``arch``'s, else the one the target names
    (:func:`target_gpu_product`). The nodes satisfy the target: its nodeSelector, its ``In``
    (first value), ``Exists``, ``Gt``/``Lt`` expressions, its taintSelectors (as taints) and
    its nodeNames (as names). They carry every topology label of the catalog with one shared
    value, so a platform default topology key partitions them as one domain instead of failing.
    """
    names = (
        list(target.node_names)
        if target is not None and target.node_names
        else [f"{SYNTHETIC_PREFIX}{i}" for i in range(count)]
    )
    product = _PRODUCT.get(arch, arch) if arch else target_gpu_product(target)
    wanted = _target_labels(target)
    taints = [
        {k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v}
        for t in (target.taint_selectors if target is not None else [])
    ]
    nodes = []
    for i, name in enumerate(names):
        labels = {"kubernetes.io/hostname": name, GPU_PRESENT_LABEL: "true"}
        labels.update(wanted)
        if product:
            labels[GPU_PRODUCT_LABEL] = product
        if platform == "coreweave":
            labels["node.coreweave.cloud/type"] = "synthetic"
        for key in _topology_keys():
            labels.setdefault(key, "synthetic-domain-0")
        provider = _PROVIDER_PREFIX.get(platform or "", "")
        spec: dict[str, Any] = {"providerID": f"{provider}{i}"} if provider else {}
        if taints:
            spec["taints"] = [dict(t, effect=t.get("effect", "NoSchedule")) for t in taints]
        obj: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": spec,
        }
        nodes.append(node_info(obj))
    return nodes


def check_forced_names(options: FunctionOptions) -> list[tuple[str, str]]:
    """Unknown ``platform``/``gpuArch`` option values, with the valid lists."""
    out = []
    if options.platform:
        try:
            pdetect.check_platform_name(options.platform)
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
) -> PlatformPlan:
    """Detect and resolve; problems are reported through ``err``/``warn``."""
    raws = [n.raw for n in eligible]
    pdet = pdetect.detect_fleet_platform(raws)
    if pdet.error and not options.platform:
        err(pdet.error, "spec.target")
    platform = (
        pdetect.check_platform_name(options.platform) if options.platform else pdet.platform
    ) or "unknown"
    gdet = pgpu.detect_gpu_architecture(raws, strict=options.strict_gpu_arch)
    if gdet.error and not options.gpu_arch:
        err(gdet.error, "spec.target")
    elif gdet.warning and not options.gpu_arch:
        warn(gdet.warning, "spec.target")
    arch = pgpu.check_gpu_arch_name(options.gpu_arch) if options.gpu_arch else gdet.architecture
    if arch == pgpu.UNKNOWN_ARCH:
        warn(
            "no eligible node carries nvidia.com/gpu.product, so the GPU architecture is unknown "
            "and no GPU-specific defaults or overrides apply; set gpusPerNode, or the gpuArch option",
            "spec.gpusPerNode",
        )
    cat = pcat.load_catalog()
    ctx = pcat.make_context(
        cat,
        platform=platform,
        gpu_architecture=arch,
        framework=spec.framework.name,
        nodes=raws,
        gpus_per_node=spec.gpus_per_node,
        nics_per_node=spec.mlnx_per_node,
        mnnvl=spec.enable_mnnvl,
    )
    overlay = pcat.resolve(cat, ctx)
    mnnvl = ctx.mnnvl
    return PlatformPlan(
        platform=platform,
        gpu_architecture=arch,
        gpus_per_node=ctx.gpus_per_node,
        nics_per_node=ctx.nics_per_node,
        mnnvl=mnnvl,
        overlay=overlay,
        products=tuple(gdet.products),
    )
