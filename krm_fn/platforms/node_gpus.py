"""What the eligible nodes say about their GPUs and NICs, and the per-run helpers on them.

Per node, the first that answers wins:
    * GPU product: label ``nvidia.com/gpu.product`` (GFD), else ``cloud.google.com/
      gke-accelerator``, else the ``productName`` of its ``gpu.nvidia.com`` ResourceSlice,
      as GFD would label it, added to the in-memory node after target matching (NVCRE's
      ``augmentGPUProductLabels``), so pods are never pinned to a label the node lacks.
    * GPUs: a positive allocatable ``nvidia.com/gpu``, else a positive ``nvidia.com/gpu.count``
      label, else its ResourceSlices' ``type: gpu`` devices; an allocatable 0 is "unknown"
      (NVCRE: the kubelet zeroes it while the device plugin restarts).
    * NIC resource: the one candidate every node advertises at the requested count
      (NVCRE pkg/controller/nic_detect.go), never a guess.

Pure functions; :func:`resource_slice_gpus` never raises, whatever the objects' shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from krm_fn.api import models
from krm_fn.fleet.inventory import (
    GPU_PRESENT_LABEL,
    GPU_PRODUCT_LABEL,
    Exclusion,
    NodeInfo,
    is_default,
)
from krm_fn.io.nodes import GPU_RESOURCE as GPU_RESOURCE
from krm_fn.io.nodes import as_list, as_mapping
from krm_fn.io.output import is_resource_slice
from krm_fn.io.results import some
from krm_fn.platforms.catalog import ClaimTemplate
from krm_fn.platforms.detect import GKE_ACCELERATOR_LABEL
from krm_fn.platforms.overlay import ResolvedOverlay

GPU_COUNT_LABEL = "nvidia.com/gpu.count"
DRA_GPU_DRIVER = "gpu.nvidia.com"
"""The NVIDIA DRA GPU driver's name (kubernetes-sigs/dra-driver-nvidia-gpu)."""
PRODUCT_ATTRIBUTES = ("productName", f"{DRA_GPU_DRIVER}/productName")
"""Device attribute naming the GPU (unqualified, or qualified with the driver's domain)."""
TYPE_ATTRIBUTES = ("type", f"{DRA_GPU_DRIVER}/type")
"""Device attribute saying what a device is (``gpu``, ``mig``, ``vfio`` ...)."""

SOURCE_ALLOCATABLE = "allocatable nvidia.com/gpu"
SOURCE_COUNT_LABEL = "label nvidia.com/gpu.count"
SOURCE_SLICE = "ResourceSlice"


@dataclass(frozen=True, slots=True)
class SliceGpus:
    """The GPUs one node's ``gpu.nvidia.com`` ResourceSlices advertise."""

    product: str  # as GFD would label it ("NVIDIA-GB200"); "" when no device names one
    count: int  # devices of type gpu
    slices: tuple[str, ...]  # ResourceSlice names, sorted


def _attribute(attributes: Mapping[str, Any], names: Sequence[str]) -> str:
    for name in names:
        value = as_mapping(attributes.get(name)).get("string")
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _slices(objects: Iterable[Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    for obj in objects:
        if is_resource_slice(obj):
            yield obj
        elif obj.get("kind") == "List" and obj.get("apiVersion") == "v1":
            yield from _slices(s for s in as_list(obj.get("items")) if isinstance(s, Mapping))


def _device_attributes(device: object) -> Mapping[str, Any]:
    dev = as_mapping(device)  # v1: attributes; v1beta1: basic.attributes
    return as_mapping(dev.get("attributes") or as_mapping(dev.get("basic")).get("attributes"))


def gpu_slices(objects: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ``gpu.nvidia.com`` ResourceSlices that name a node, among the objects (Lists opened)."""
    return [
        s
        for s in _slices(objects)
        if as_mapping(s.get("spec")).get("driver") == DRA_GPU_DRIVER
        and isinstance(as_mapping(s.get("spec")).get("nodeName"), str)
        and as_mapping(s.get("spec")).get("nodeName")
    ]


def slice_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What :func:`resource_slice_gpus` reads of a slice (and its pool, for the schema).

    ``apiVersion``, ``kind``, ``metadata.name``, ``spec.driver``, ``spec.nodeName``,
    ``spec.pool`` and each device's name with only its type and product attributes, in the
    slice's own version's layout; devices left with no attribute are dropped.
    """
    spec = as_mapping(obj.get("spec"))
    devices = []
    for device in as_list(spec.get("devices")):
        attributes = _device_attributes(device)
        kept = {
            k: attributes[k] for k in (*TYPE_ATTRIBUTES, *PRODUCT_ATTRIBUTES) if k in attributes
        }
        if kept:
            basic = "basic" in as_mapping(device) and "attributes" not in as_mapping(device)
            dev: dict[str, Any] = {"name": as_mapping(device).get("name")}
            dev.update({"basic": {"attributes": kept}} if basic else {"attributes": kept})
            devices.append(dev)
    out_spec = {k: spec[k] for k in ("driver", "nodeName", "pool") if k in spec}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": "ResourceSlice",
        "metadata": {"name": as_mapping(obj.get("metadata")).get("name")},
        "spec": {**out_spec, "devices": devices},
    }


def resource_slice_gpus(objects: Iterable[Mapping[str, Any]]) -> dict[str, SliceGpus]:
    """``{node name: SliceGpus}`` of the ``gpu.nvidia.com`` ResourceSlices among the objects.

    ``resource.k8s.io`` v1 (``spec.devices[].attributes``) and v1beta1 (``…basic.attributes``)
    slices, alone or in a ``v1`` ``List``; other drivers and slices without ``spec.nodeName``
    are ignored. A device is a GPU when its ``type`` is ``gpu`` (MIG and vfio devices are not
    whole GPUs), or, without a type, when it names a product; the product is the first named,
    in slice-name order.
    """
    found: dict[str, list[tuple[str, str, int]]] = {}
    for obj in gpu_slices(objects):
        spec = as_mapping(obj.get("spec"))
        node = str(spec.get("nodeName"))
        product, count = "", 0
        for device in as_list(spec.get("devices")):
            attributes = _device_attributes(device)
            name = _attribute(attributes, PRODUCT_ATTRIBUTES)
            kind = _attribute(attributes, TYPE_ATTRIBUTES)
            if kind == "gpu" or (not kind and name):
                count += 1
                product = product or name
        slice_name = str(as_mapping(obj.get("metadata")).get("name") or "")
        found.setdefault(node, []).append((slice_name, product, count))
    from krm_fn.platforms.gpu import gpu_product_label_value

    out: dict[str, SliceGpus] = {}
    for node, entries in found.items():
        entries.sort()
        product = next((p for _, p, _ in entries if p), "")
        out[node] = SliceGpus(
            gpu_product_label_value(product) if product else "",
            sum(c for _, _, c in entries),
            tuple(n for n, _, _ in entries),
        )
    return out


def with_slice_products(
    nodes: Sequence[NodeInfo], slices: Mapping[str, SliceGpus]
) -> list[NodeInfo]:
    """The nodes, each one that names no GPU given the product of its ResourceSlice.

    A node names its GPU with ``nvidia.com/gpu.product`` or ``cloud.google.com/gke-accelerator``;
    one with neither gets ``nvidia.com/gpu.product`` from its slice, in memory (labels and view),
    as NVCRE's ``augmentGPUProductLabels`` does. Call it on the eligible nodes only.
    """
    if not slices:
        return list(nodes)
    out = []
    for n in nodes:
        gpus = slices.get(n.name)
        named = n.labels.get(GPU_PRODUCT_LABEL) or n.labels.get(GKE_ACCELERATOR_LABEL)
        if gpus is None or not gpus.product or named:
            out.append(n)
            continue
        meta = dict(as_mapping(n.raw.get("metadata")))
        meta["labels"] = {**as_mapping(meta.get("labels")), GPU_PRODUCT_LABEL: gpus.product}
        labels = {**n.labels, GPU_PRODUCT_LABEL: gpus.product}
        out.append(replace(n, labels=labels, raw={**n.raw, "metadata": meta}))
    return out


def _positive_int(value: object) -> int | None:
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number > 0 else None


def node_gpu_count(node: NodeInfo, slices: Mapping[str, SliceGpus]) -> tuple[int | None, str]:
    """(GPUs the node says it has, where it says so); ``(None, "")`` when it does not say."""
    if node.allocatable_gpus is not None and node.allocatable_gpus > 0:
        return node.allocatable_gpus, SOURCE_ALLOCATABLE
    label = _positive_int(node.labels.get(GPU_COUNT_LABEL, ""))
    if label is not None:
        return label, SOURCE_COUNT_LABEL
    gpus = slices.get(node.name)
    if gpus is not None and gpus.count > 0:
        return gpus.count, SOURCE_SLICE
    return None, ""


def fleet_gpu_count(
    nodes: Sequence[NodeInfo], slices: Mapping[str, SliceGpus]
) -> tuple[dict[int, tuple[str, ...]], str]:
    """Node names per GPU count the nodes report (highest first), and where one count came from.

    Nodes that report nothing do not vote. The source, ``""`` unless the nodes agree on one
    count, is the first of allocatable, the ``nvidia.com/gpu.count`` label and ResourceSlices
    that any node used.
    """
    by_count: dict[int, list[str]] = {}
    sources: set[str] = set()
    for n in nodes:
        count, source = node_gpu_count(n, slices)
        if count is not None:
            by_count.setdefault(count, []).append(n.name)
            sources.add(source)
    groups = {c: tuple(sorted(by_count[c])) for c in sorted(by_count, reverse=True)}
    order = (SOURCE_ALLOCATABLE, SOURCE_COUNT_LABEL, SOURCE_SLICE)
    return groups, (next(s for s in order if s in sources) if len(groups) == 1 else "")


# --------------------------------------------------------------------------- per run


def requested_resources(spec: models.WorkloadRunSpec) -> list[str]:
    """Extended resources the worker pods request: GPUs, the NIC resource, the user's own."""
    names = {GPU_RESOURCE}
    if spec.nic_resource_name:
        names.add(spec.nic_resource_name)
    if spec.resources is not None:
        for section in (spec.resources.limits or {}, spec.resources.requests or {}):
            names.update(k for k in section if "/" in k and not k.startswith("kubernetes.io/"))
    return sorted(names)


def requested_gpus(spec: models.WorkloadRunSpec, gpus_per_node: int) -> int:
    """The ``nvidia.com/gpu`` each worker pod requests: the user's own value, else gpusPerNode."""
    if spec.resources is not None:
        for section in (spec.resources.limits or {}, spec.resources.requests or {}):
            if GPU_RESOURCE in section:
                try:
                    return int(str(section[GPU_RESOURCE]))
                except ValueError:
                    return gpus_per_node
    return gpus_per_node


@dataclass(frozen=True, slots=True)
class ShortOfGpus(Exclusion):
    """A node left out because it says it has fewer GPUs than each pod requests."""

    gpus: int = 0


def short_of_gpus(
    eligible: Sequence[NodeInfo], requested: int, slices: Mapping[str, SliceGpus]
) -> list[ShortOfGpus]:
    """Nodes that say they have fewer GPUs than each pod requests (NVCRE's capacity filter).

    A node that does not say how many it has is kept (NVCRE: allocatable is advertised
    asynchronously, and 0 means the device plugin is restarting).
    """
    out = []
    for n in eligible:
        count, source = node_gpu_count(n, slices)
        if count is not None and 0 < count < requested:
            out.append(
                ShortOfGpus(
                    n.name, f"has {count} nvidia.com/gpu ({source}), needs {requested}", count
                )
            )
    return out


def gpus_by_claim(
    overlay: ResolvedOverlay,
    eligible: Sequence[NodeInfo],
    slices: Mapping[str, SliceGpus],
    spec: models.WorkloadRunSpec,
    gpus: int,
) -> tuple[ResolvedOverlay, tuple[str, str] | None]:
    """The overlay with the GPUs claimed through DRA where the nodes publish them only so.

    kube-scheduler's NodeResourcesFit counts an extended resource missing from a node's
    allocatable as 0, so a pod requesting ``nvidia.com/gpu`` never lands on a node whose GPUs
    are only ``gpu.nvidia.com`` ResourceSlice devices. When every eligible node is such a node
    and the pods would request ``nvidia.com/gpu``, the request becomes a ResourceClaimTemplate
    of DeviceClass ``gpu.nvidia.com`` for ``gpus`` devices (what the catalog's Nscale entry
    does). Returns the overlay and, when the run cannot start either way, the problem (why and
    the fix) with the field it is about.
    """
    dra = [n.name for n in eligible if n.allocatable_gpus is None and _sliced(n, slices)]
    res = overlay.resources
    deleted = any((res.get(k) or {}).get(GPU_RESOURCE, 0) is None for k in ("limits", "requests"))
    if not dra or deleted or gpus <= 0 or requested_gpus(spec, gpus) <= 0:
        return overlay, None
    via = f"node(s) {some(dra)} publish their GPUs only through {DRA_GPU_DRIVER} ResourceSlices"
    others = [n.name for n in eligible if n.name not in set(dra)]
    if others:
        why = "the pods of a run request their GPUs one way; narrow spec.target to one kind"
        return overlay, (f"{via} and {some(others)} do not: {why}", "spec.target")
    if requested_gpus(spec, -1) > 0:  # the user's own nvidia.com/gpu (-1: none named)
        fix = f"remove it and the pods claim {DRA_GPU_DRIVER} devices instead"
        return overlay, (
            f"{via}, which a pod requesting {GPU_RESOURCE} never gets; {fix}",
            "spec.resources",
        )
    claim = ClaimTemplate(
        claim="gpu", suffix="gpu", request="gpu", deviceClassName=DRA_GPU_DRIVER, count=gpus
    )
    drop = {k: {**(res.get(k) or {}), GPU_RESOURCE: None} for k in ("limits", "requests")}
    return replace(overlay, claim_templates=(*overlay.claim_templates, claim), resources=drop), None


def _sliced(node: NodeInfo, slices: Mapping[str, SliceGpus]) -> bool:
    return node.name in slices and slices[node.name].count > 0


def unlabelled_gpu_hint(
    nodes: Sequence[NodeInfo], target: models.Target | None, slices: Mapping[str, SliceGpus]
) -> str:
    """Under the default target, name GPU nodes that lack ``nvidia.com/gpu.present``.

    GKE's own GPU stack and DRA-only nodes run no GPU Feature Discovery, so the implied target
    (``nvidia.com/gpu.present=true``) never selects them; the hint says how to.
    """
    if not is_default(target):
        return ""
    unlabelled = [n for n in nodes if n.labels.get(GPU_PRESENT_LABEL) != "true"]
    gke = sorted(n.name for n in unlabelled if n.labels.get(GKE_ACCELERATOR_LABEL))
    dra = sorted(n.name for n in unlabelled if _sliced(n, slices))
    hints = []
    if gke:
        value = next(n.labels[GKE_ACCELERATOR_LABEL] for n in nodes if n.name == gke[0])
        hints.append(
            f"{len(gke)} node(s) carry {GKE_ACCELERATOR_LABEL} but not {GPU_PRESENT_LABEL} "
            f"(GKE without GPU Feature Discovery: {some(gke)}): select them with spec.target, "
            f"e.g. nodeSelector {GKE_ACCELERATOR_LABEL}: {value}"
        )
    if dra:
        hints.append(
            f"{len(dra)} node(s) advertise GPUs in {DRA_GPU_DRIVER} ResourceSlices but carry no "
            f"{GPU_PRESENT_LABEL} label ({some(dra)}): select them with spec.target, e.g. "
            "nodeNames or a label they carry"
        )
    return "".join(f"; {h}" for h in hints)


# --------------------------------------------------------------------------- NIC resource

_SUFFIXES = {"k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def _count(value: object) -> int:
    """An allocatable count (``"8"``, ``"1k"``); 0 when it is not a whole number."""
    text = str(value).strip()
    digits = text.rstrip("kMGi")
    factor = _SUFFIXES.get(text[len(digits) :], 1 if digits == text else 0)
    return int(digits) * factor if digits.isdigit() else 0


def detect_nic_resource(
    nodes: Sequence[NodeInfo], candidates: Sequence[str], required: int
) -> tuple[str | None, str]:
    """(the one candidate every node advertises at ``required`` or more, else why none).

    ``candidates``: names or ``prefix*`` patterns (the platform's ``nicResources``); at least
    1 is required. Zero or several qualifying: none (a request one node cannot satisfy leaves
    its pods Pending, a guess may be the wrong device); the reason in NVCRE's words.
    """
    prefixes = tuple(c.rstrip("*") for c in candidates if c.endswith("*"))
    required = max(required, 1)
    covered: dict[str, int] = {}
    for node in nodes:
        for name, value in (node.raw.get("status", {}).get("allocatable") or {}).items():
            if name in candidates or name.startswith(prefixes):
                covered[name] = covered.get(name, 0) + (_count(value) >= required)
    ok = sorted(n for n, c in covered.items() if c == len(nodes))
    if len(ok) == 1:
        return ok[0], ""
    if ok:
        why = f"found multiple candidates allocatable on every target node ({', '.join(ok)}); "
    elif covered:
        why = (
            f"found candidates ({', '.join(sorted(covered))}), but none is allocatable at the "
            f"requested count {required} on every target node; "
        )
    else:
        why = f"found no RDMA extended resource ({' or '.join(candidates)}) on any target node; "
    fix = (
        "to choose one."
        if ok
        else "to request one" + (", or adjust mlnxPerNode." if covered else ".")
    )
    return (
        None,
        f"NIC resource auto-detection {why}no NIC resource is requested. Set nicResourceName {fix}",
    )
