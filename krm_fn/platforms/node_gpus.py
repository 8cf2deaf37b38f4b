"""What the eligible nodes say about their GPUs (product, incl. DRA ResourceSlices; count) and NICs.

Precedence, first that answers wins, per node:
    * GPU product: label ``nvidia.com/gpu.product`` (GPU Feature Discovery), else label
      ``cloud.google.com/gke-accelerator`` (GKE without GFD), else the ``productName`` of
      the node's ``gpu.nvidia.com`` ResourceSlice (DRA-only nodes), turned into the label
      GFD would write. NVCRE does the same (pkg/controller/gpu_resourceslice_detect.go
      ``augmentGPUProductLabels``): the product is added to the in-memory node only, after
      target matching, so pods are never pinned to a label the node lacks.
    * GPUs per node: a positive allocatable ``nvidia.com/gpu``, else a positive
      ``nvidia.com/gpu.count`` label, else the number of ``type: gpu`` devices in the node's
      ``gpu.nvidia.com`` ResourceSlices. A zero allocatable count is "unknown", not "none"
      (NVCRE: the kubelet zeroes it while the device plugin restarts).

Invariants:
    * Pure functions of their arguments; Nodes and ResourceSlices are never modified.
    * :func:`resource_slice_gpus` never raises, whatever the shape of the objects.

NIC resource (:func:`detect_nic_resource`, NVCRE pkg/controller/nic_detect.go): the one
candidate name allocatable at the requested count on every node, or none (never a guess).

The per-run helpers at the end (requested resources and GPUs, the capacity filter, the DRA-only
and GKE hints) are what the render calls between node selection and partitioning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn.api import models
from krm_fn.fleet.inventory import GPU_PRESENT_LABEL, GPU_PRODUCT_LABEL, Exclusion, NodeInfo
from krm_fn.platforms.detect import GKE_ACCELERATOR_LABEL

GPU_RESOURCE = "nvidia.com/gpu"
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
DRA_GPU_DRIVER = "gpu.nvidia.com"
"""The NVIDIA DRA GPU driver's name (kubernetes-sigs/dra-driver-nvidia-gpu)."""
PRODUCT_ATTRIBUTES = ("productName", f"{DRA_GPU_DRIVER}/productName")
"""Device attribute naming the GPU (unqualified, or qualified with the driver's domain)."""

SOURCE_ALLOCATABLE = "allocatable nvidia.com/gpu"
SOURCE_COUNT_LABEL = "label nvidia.com/gpu.count"
SOURCE_SLICE = "ResourceSlice"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class SliceGpus:
    """The GPUs one node's ``gpu.nvidia.com`` ResourceSlices advertise."""

    product: str  # as GFD would label it ("NVIDIA-GB200"); "" when no device names one
    count: int  # devices of type gpu
    slices: tuple[str, ...]  # ResourceSlice names, sorted


def _attribute(attributes: Mapping[str, Any], names: Sequence[str]) -> str:
    for name in names:
        value = _mapping(attributes.get(name)).get("string")
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _slices(objects: Iterable[Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    for obj in objects:
        api = obj.get("apiVersion")
        if obj.get("kind") == "ResourceSlice" and isinstance(api, str):
            if api.startswith("resource.k8s.io/"):
                yield obj
        elif obj.get("kind") == "List" and api == "v1":
            yield from _slices(s for s in _list(obj.get("items")) if isinstance(s, Mapping))


def resource_slice_gpus(objects: Iterable[Mapping[str, Any]]) -> dict[str, SliceGpus]:
    """GPUs per node name from the ``gpu.nvidia.com`` ResourceSlices among the objects.

    Reads ``resource.k8s.io`` v1 (``spec.devices[].attributes``) and v1beta1
    (``spec.devices[].basic.attributes``) slices, alone or inside a ``v1`` ``List``; slices of
    other drivers and slices without ``spec.nodeName`` are ignored. A device counts as a GPU
    when its ``type`` attribute is ``gpu`` (MIG and vfio devices are not whole GPUs), or,
    without a ``type`` attribute, when it names a product.

    Args:
        objects: Input objects (anything; only ResourceSlices are read).

    Returns:
        ``{node name: SliceGpus}``; the product is the first one named, in slice-name order.

    """
    found: dict[str, list[tuple[str, str, int]]] = {}
    for obj in _slices(objects):
        spec = _mapping(obj.get("spec"))
        node = spec.get("nodeName")
        if spec.get("driver") != DRA_GPU_DRIVER or not isinstance(node, str) or not node:
            continue
        product, count = "", 0
        for device in _list(spec.get("devices")):
            dev = _mapping(device)
            attributes = _mapping(
                dev.get("attributes") or _mapping(dev.get("basic")).get("attributes")
            )
            name = _attribute(attributes, PRODUCT_ATTRIBUTES)
            kind = _attribute(attributes, ("type", f"{DRA_GPU_DRIVER}/type"))
            if kind == "gpu" or (not kind and name):
                count += 1
                product = product or name
        slice_name = str(_mapping(obj.get("metadata")).get("name") or "")
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
        if (
            gpus is None
            or not gpus.product
            or n.labels.get(GPU_PRODUCT_LABEL)
            or n.labels.get(GKE_ACCELERATOR_LABEL)
        ):
            out.append(n)
            continue
        labels = {**n.labels, GPU_PRODUCT_LABEL: gpus.product}
        raw = dict(n.raw)
        meta = dict(_mapping(raw.get("metadata")))
        meta["labels"] = {**_mapping(meta.get("labels")), GPU_PRODUCT_LABEL: gpus.product}
        raw["metadata"] = meta
        out.append(
            NodeInfo(
                name=n.name,
                labels=labels,
                provider_id=n.provider_id,
                unschedulable=n.unschedulable,
                ready=n.ready,
                taints=n.taints,
                allocatable_gpus=n.allocatable_gpus,
                raw=raw,
            )
        )
    return out


def _positive_int(value: object) -> int | None:
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number > 0 else None


def node_gpu_count(node: NodeInfo, slices: Mapping[str, SliceGpus]) -> tuple[int | None, str]:
    """How many GPUs the node says it has, and where it says so (see the module docstring).

    Returns:
        ``(count, source)``, or ``(None, "")`` when the node does not say.

    """
    if node.allocatable_gpus is not None and node.allocatable_gpus > 0:
        return node.allocatable_gpus, SOURCE_ALLOCATABLE
    label = _positive_int(node.labels.get(GPU_COUNT_LABEL, ""))
    if label is not None:
        return label, SOURCE_COUNT_LABEL
    gpus = slices.get(node.name)
    if gpus is not None and gpus.count > 0:
        return gpus.count, SOURCE_SLICE
    return None, ""


@dataclass(frozen=True, slots=True)
class FleetCount:
    """GPUs per node the eligible nodes agree on, or the groups they split into."""

    count: int | None  # None: no node says, or the nodes disagree
    source: str  # where the agreed count comes from ("" when count is None)
    by_count: Mapping[int, tuple[str, ...]]  # node names per reported count, highest first


def fleet_gpu_count(nodes: Sequence[NodeInfo], slices: Mapping[str, SliceGpus]) -> FleetCount:
    """The GPUs per node of a fleet: the count every node that reports one agrees on.

    Nodes that report nothing do not vote. The source is the first of allocatable, the
    ``nvidia.com/gpu.count`` label and ResourceSlices that any node used.
    """
    by_count: dict[int, list[str]] = {}
    sources: set[str] = set()
    for n in nodes:
        count, source = node_gpu_count(n, slices)
        if count is not None:
            by_count.setdefault(count, []).append(n.name)
            sources.add(source)
    groups = {c: tuple(sorted(by_count[c])) for c in sorted(by_count, reverse=True)}
    if len(groups) != 1:
        return FleetCount(None, "", groups)
    order = (SOURCE_ALLOCATABLE, SOURCE_COUNT_LABEL, SOURCE_SLICE)
    source = next(s for s in order if s in sources)
    return FleetCount(next(iter(groups)), source, groups)


def extended_resource_toleration(resource: str) -> dict[str, Any]:
    """The toleration the ExtendedResourceToleration admission plugin adds for a resource."""
    return {"key": resource, "operator": "Exists", "effect": "NoSchedule"}


# --------------------------------------------------------------------------- per run


def in_table(arch: str) -> bool:
    """Whether the GPU model is one of the platform table's."""
    from krm_fn.platforms.gpu import architectures

    return arch in architectures()


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


def dra_only_nodes(
    eligible: Sequence[NodeInfo],
    slices: Mapping[str, SliceGpus],
    resources: Mapping[str, Any],
) -> list[str]:
    """Nodes with GPUs only in ResourceSlices, when the pods still request ``nvidia.com/gpu``."""
    try:
        requested = int(str((resources.get("limits") or {}).get(GPU_RESOURCE, 0)))
    except ValueError:
        return []
    if requested <= 0:
        return []
    return sorted(
        n.name
        for n in eligible
        if n.allocatable_gpus is None and n.name in slices and slices[n.name].count > 0
    )


def unlabelled_gpu_hint(
    nodes: Sequence[NodeInfo],
    target: models.Target | None,
    slices: Mapping[str, SliceGpus] | None = None,
) -> str:
    """Under the default target, name GPU nodes that lack ``nvidia.com/gpu.present``.

    GKE's own GPU stack and DRA-only nodes run no GPU Feature Discovery, so the implied target
    (``nvidia.com/gpu.present=true``) never selects them; the hint says how to.
    """
    if target is not None and (
        target.node_selector or target.match_expressions or target.node_names
    ):
        return ""
    slices = slices or {}
    unlabelled = [n for n in nodes if n.labels.get(GPU_PRESENT_LABEL) != "true"]
    gke = sorted(n.name for n in unlabelled if n.labels.get(GKE_ACCELERATOR_LABEL))
    dra = sorted(n.name for n in unlabelled if n.name in slices and slices[n.name].count > 0)
    hints = []
    if gke:
        value = next(n.labels[GKE_ACCELERATOR_LABEL] for n in nodes if n.name == gke[0])
        hints.append(
            f"{len(gke)} node(s) carry {GKE_ACCELERATOR_LABEL} but not {GPU_PRESENT_LABEL} "
            f"(GKE without GPU Feature Discovery: {_shown(gke)}): select them with spec.target, "
            f"e.g. nodeSelector {GKE_ACCELERATOR_LABEL}: {value}"
        )
    if dra:
        hints.append(
            f"{len(dra)} node(s) advertise GPUs in {DRA_GPU_DRIVER} ResourceSlices but carry no "
            f"{GPU_PRESENT_LABEL} label ({_shown(dra)}): select them with spec.target, e.g. "
            "nodeNames or a label they carry"
        )
    return "".join(f"; {h}" for h in hints)


def _shown(names: Sequence[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


# --------------------------------------------------------------------------- NIC resource

_SUFFIXES = {"k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def _count(value: object) -> int | None:
    """An allocatable count (``"8"``, ``"1k"``); ``None`` when it is not a whole number."""
    text = str(value).strip()
    for suffix, factor in _SUFFIXES.items():
        if text.endswith(suffix) and text[: -len(suffix)].isdigit():
            return int(text[: -len(suffix)]) * factor
    return int(text) if text.isdigit() else None


@dataclass(frozen=True, slots=True)
class NicDetection:
    """The NIC resource name detected on the nodes, and why when none is.

    ``qualifying``: the candidates allocatable at ``required`` on every node; ``present``:
    every candidate some node lists at any count (both sorted).
    """

    name: str | None
    qualifying: tuple[str, ...]
    present: tuple[str, ...]
    required: int
    candidates: tuple[str, ...]

    def message(self) -> str:
        """Why nothing was detected (NVCRE's NICResourceDetection event text)."""
        if len(self.qualifying) > 1:
            return (
                "NIC resource auto-detection found multiple candidates allocatable on every "
                f"target node ({', '.join(self.qualifying)}); no NIC resource is requested. "
                "Set nicResourceName to choose one."
            )
        if not self.present:
            return (
                "NIC resource auto-detection found no RDMA extended resource "
                f"({' or '.join(self.candidates)}) on any target node; no NIC resource is "
                "requested. Set nicResourceName to request one."
            )
        return (
            f"NIC resource auto-detection found candidates ({', '.join(self.present)}), but "
            f"none is allocatable at the requested count {self.required} on every target "
            "node; no NIC resource is requested. Set nicResourceName to request one, or "
            "adjust mlnxPerNode."
        )


def detect_nic_resource(
    nodes: Sequence[NodeInfo], candidates: Sequence[str], required: int
) -> NicDetection:
    """The one candidate resource allocatable at ``required`` (at least 1) on every node.

    ``candidates`` are names or ``prefix*`` patterns (the platform's ``nicResources``). Zero
    or several qualifying candidates detect nothing: a request one node cannot satisfy
    leaves its pods Pending, and a guess between two may request the wrong device.
    """
    exact = {c for c in candidates if not c.endswith("*")}
    prefixes = tuple(c[:-1] for c in candidates if c.endswith("*"))
    required = max(required, 1)
    covered: dict[str, int] = {}
    for node in nodes:
        allocatable = node.raw.get("status", {}).get("allocatable") or {}
        for name, value in allocatable.items():
            if name in exact or name.startswith(prefixes):
                count = _count(value)
                covered[name] = covered.get(name, 0) + (count is not None and count >= required)
    qualifying = tuple(sorted(n for n, c in covered.items() if nodes and c == len(nodes)))
    name = qualifying[0] if len(qualifying) == 1 else None
    return NicDetection(name, qualifying, tuple(sorted(covered)), required, tuple(candidates))
