"""Node objects as the readers see them: the view the render reads, and its record.

Both readers (PyYAML's, :func:`node_view`, and the fast one, :mod:`krm_fn.io.fastio`) produce
:class:`NodeInfo` records from the same fields, so this module sits in the io layer, below the
models and the fleet logic (:mod:`krm_fn.fleet.inventory`) that choose among the nodes.

Invariants:
    * Only the fields the render needs are read from a Node (name, labels, providerID,
      unschedulable, taints, Ready condition, allocatable GPUs); the Node object is never
      modified here.
    * :attr:`NodeInfo.raw` is the Node's *view*: exactly the fields in
      :data:`NODE_VIEW_FIELDS` (conditions reduced to ``type`` and ``status``), the same
      whether the Node was parsed by PyYAML (:func:`node_view`) or read from the text by
      :mod:`krm_fn.io.fastio`. Platform and GPU detection read only these fields.
    * :func:`node_problems` says what makes a Node unusable (wrong section types, no name);
      the readers refuse such a Node with that message, and :func:`node_info` never raises
      whatever the shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
HOSTNAME_LABEL = "kubernetes.io/hostname"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


NODE_VIEW_FIELDS: Mapping[str, tuple[str, ...]] = {
    "metadata": ("name", "labels"),
    "spec": ("providerID", "unschedulable", "taints"),
    "status": ("allocatable", "conditions"),
}
"""The fields of a Node kept in :attr:`NodeInfo.raw` (besides ``apiVersion`` and ``kind``)."""

CONDITION_VIEW_FIELDS = ("type", "status")
"""The fields of each ``status.conditions`` entry kept in the view."""


def node_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The render-relevant part of a Node object (see :data:`NODE_VIEW_FIELDS`).

    Sections that are not mappings, and condition entries that are not mappings, are kept
    as they are; fields absent from the Node are absent from the view.
    """
    out: dict[str, Any] = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    for section, keys in NODE_VIEW_FIELDS.items():
        if section not in obj:
            continue
        value = obj[section]
        if not isinstance(value, Mapping):
            out[section] = value
            continue
        sub = {k: value[k] for k in keys if k in value}
        conds = sub.get("conditions")
        if section == "status" and isinstance(conds, list):
            sub["conditions"] = [
                {k: c[k] for k in CONDITION_VIEW_FIELDS if k in c} if isinstance(c, Mapping) else c
                for c in conds
            ]
        out[section] = sub
    return out


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """The render-relevant view of one Node."""

    name: str
    labels: Mapping[str, str]
    provider_id: str
    unschedulable: bool
    ready: bool | None  # None: the node reports no Ready condition
    taints: tuple[Mapping[str, Any], ...]
    allocatable_gpus: int | None
    raw: Mapping[str, Any]  # node_view() of the Node

    @property
    def gpu_product(self) -> str:
        """The GPU Feature Discovery product label, or ``""``."""
        return self.labels.get(GPU_PRODUCT_LABEL, "")


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


_SECTION_TYPES: tuple[tuple[tuple[str, ...], type, str], ...] = (
    (("metadata",), dict, "a mapping"),
    (("metadata", "labels"), dict, "a mapping"),
    (("spec",), dict, "a mapping"),
    (("spec", "taints"), list, "a list"),
    (("status",), dict, "a mapping"),
    (("status", "allocatable"), dict, "a mapping"),
    (("status", "conditions"), list, "a list"),
)


def node_problems(obj: Mapping[str, Any]) -> list[str]:
    """What makes a Node object unusable, one message each (empty when it is fine).

    Sections may be absent or null; present, they must have the Kubernetes type, taints and
    conditions must be mappings, and the Node must have a string ``metadata.name``.
    """
    out: list[str] = []
    for path, kind, what in _SECTION_TYPES:
        cur: Any = obj
        for part in path[:-1]:
            cur = cur.get(part) if isinstance(cur, Mapping) else None
        value = cur.get(path[-1]) if isinstance(cur, Mapping) else None
        if value is not None and not isinstance(value, kind):
            out.append(f"{'.'.join(path)} must be {what}, got {type(value).__name__}")
    for path in (("spec", "taints"), ("status", "conditions")):
        entries = _list(_mapping(obj.get(path[0])).get(path[1]))
        for i, entry in enumerate(entries):
            if not isinstance(entry, Mapping):
                out.append(f"{'.'.join(path)}[{i}] must be a mapping, got {type(entry).__name__}")
    name = _mapping(obj.get("metadata")).get("name")
    if not isinstance(name, str) or not name:
        out.append("has no metadata.name" if name is None else "metadata.name must be a string")
    return out


def node_info(obj: Mapping[str, Any]) -> NodeInfo:
    """Extract a :class:`NodeInfo` from a Node object (tolerating any shape)."""
    meta = _mapping(obj.get("metadata"))
    spec = _mapping(obj.get("spec"))
    status = _mapping(obj.get("status"))
    labels = meta.get("labels") or {}
    ready: bool | None = None
    for cond in _list(status.get("conditions")):
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            ready = str(cond.get("status")) == "True"
    alloc = _mapping(status.get("allocatable")).get("nvidia.com/gpu")
    gpus: int | None
    try:
        gpus = int(str(alloc)) if alloc is not None else None
    except ValueError:
        gpus = None
    taints = tuple(t for t in _list(spec.get("taints")) if isinstance(t, Mapping))
    return NodeInfo(
        name=str(meta.get("name", "")),
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {},
        provider_id=str(spec.get("providerID") or ""),
        unschedulable=bool(spec.get("unschedulable")),
        ready=ready,
        taints=taints,
        allocatable_gpus=gpus,
        raw=node_view(obj),
    )


def collect_nodes(items: Iterable[Mapping[str, Any]]) -> list[NodeInfo]:
    """Every Node among the items, including those inside ``v1`` ``List`` objects."""
    out: list[NodeInfo] = []
    for it in items:
        kind = it.get("kind")
        if kind == "Node" and it.get("apiVersion") == "v1":
            out.append(node_info(it))
        elif kind in ("List", "NodeList") and it.get("apiVersion") == "v1":
            for sub in _list(it.get("items")):
                if isinstance(sub, Mapping) and sub.get("kind", "Node") == "Node":
                    out.append(node_info(sub))
    return out
