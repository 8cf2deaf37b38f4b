"""The Node view: the fields the render reads from a Node, declared once, and its record.

:data:`NODE_FIELDS` is the one declaration: both readers (PyYAML's, :func:`node_view`, and
the fast one, :mod:`krm_fn.io.fastio.extract`) read exactly these fields into a Node's view,
:func:`node_problems` checks their shapes, :func:`node_record` turns a view into the
:class:`NodeInfo` the fleet logic (:mod:`krm_fn.fleet.inventory`) chooses among, and the
compact inventory (:mod:`krm_fn.gitops.compact_inventory`) keeps what the records say.

Invariants:
    * Only the fields of :data:`NODE_FIELDS` are read from a Node (besides ``apiVersion`` and
      ``kind``); the Node object is never modified here.
    * :attr:`NodeInfo.raw` is the Node's view, the same whether the Node was parsed by PyYAML
      or read from the text by :mod:`krm_fn.io.fastio`. Platform and GPU detection read only it.
    * :func:`node_problems` says what makes a Node unusable (a field or section not of its
      shape, no name); the readers refuse such a Node with that message, and
      :func:`node_info` never raises whatever the shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
HOSTNAME_LABEL = "kubernetes.io/hostname"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
GPU_RESOURCE = "nvidia.com/gpu"

Shape = Literal["scalar", "strings", "mapping", "entries"]


@dataclass(frozen=True, slots=True)
class NodeField:
    """One field of a Node the render reads.

    ``shape``: ``scalar`` (one scalar of any type), ``strings`` (a mapping of strings),
    ``mapping`` (a mapping of scalars) or ``entries`` (a list of mappings of scalars).
    """

    section: str  # ``metadata``, ``spec`` or ``status``
    key: str  # its key in the section
    shape: Shape
    keep: tuple[str, ...] = ()  # for ``entries``, the keys of each entry kept (``()``: all)


NODE_FIELDS: tuple[NodeField, ...] = (
    NodeField("metadata", "name", "scalar"),
    NodeField("metadata", "labels", "strings"),
    NodeField("spec", "providerID", "scalar"),
    NodeField("spec", "unschedulable", "scalar"),
    NodeField("spec", "taints", "entries"),
    NodeField("status", "allocatable", "mapping"),
    NodeField("status", "conditions", "entries", keep=("type", "status")),
)
"""Every field of a Node the render reads (the capacity, images, addresses ... are not)."""

SECTIONS = ("metadata", "spec", "status")
FIELDS_BY_SECTION: Mapping[str, Mapping[str, NodeField]] = {
    s: {f.key: f for f in NODE_FIELDS if f.section == s} for s in SECTIONS
}


def node_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of :data:`NODE_FIELDS` of a Node object (with ``apiVersion`` and ``kind``).

    Sections and entries that are not mappings are kept as they are; fields absent from the
    Node are absent from the view.
    """
    out: dict[str, Any] = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    for section, fields in FIELDS_BY_SECTION.items():
        if section not in obj:
            continue
        value = obj[section]
        if not isinstance(value, Mapping):
            out[section] = value
            continue
        sub = {k: value[k] for k in fields if k in value}
        for k, f in fields.items():
            if f.keep and isinstance(sub.get(k), list):
                sub[k] = [
                    {x: e[x] for x in f.keep if x in e} if isinstance(e, Mapping) else e
                    for e in sub[k]
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


def as_mapping(value: object) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else ``{}`` (a field of any shape, read safely)."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[Any]:
    """``value`` when it is a list, else ``[]``."""
    return value if isinstance(value, list) else []


_SHAPE_TYPES: Mapping[str, tuple[type, str]] = {
    "strings": (dict, "a mapping"),
    "mapping": (dict, "a mapping"),
    "entries": (list, "a list"),
}


def node_problems(obj: Mapping[str, Any]) -> list[str]:
    """What makes a Node object unusable, one message each (empty when it is fine).

    Sections and fields may be absent or null; present, they must have their shape
    (:data:`NODE_FIELDS`), entries must be mappings, and ``metadata.name`` a non-empty string.
    """
    out: list[str] = []
    for section, fields in FIELDS_BY_SECTION.items():
        sec = obj.get(section)
        if sec is not None and not isinstance(sec, dict):
            out.append(f"{section} must be a mapping, got {type(sec).__name__}")
        for key, f in fields.items():
            value = as_mapping(sec).get(key)
            kind, what = _SHAPE_TYPES.get(f.shape, (object, ""))
            if value is not None and not isinstance(value, kind):
                out.append(f"{section}.{key} must be {what}, got {type(value).__name__}")
            elif f.shape == "entries":
                out += [
                    f"{section}.{key}[{i}] must be a mapping, got {type(e).__name__}"
                    for i, e in enumerate(as_list(value))
                    if not isinstance(e, Mapping)
                ]
    name = as_mapping(obj.get("metadata")).get("name")
    if not isinstance(name, str) or not name:
        out.append("has no metadata.name" if name is None else "metadata.name must be a string")
    return out


def node_record(view: Mapping[str, Any], string_labels: bool = False) -> NodeInfo:
    """The :class:`NodeInfo` of a Node's view (tolerating any shape).

    ``string_labels``: the labels are known to be a mapping of strings (the fast reader's).
    """
    meta, spec, status = (as_mapping(view.get(s)) for s in SECTIONS)
    labels = meta.get("labels") or {}
    if not string_labels:
        labels = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}
    ready: bool | None = None
    for cond in as_list(status.get("conditions")):
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            ready = str(cond.get("status")) == "True"
    alloc = as_mapping(status.get("allocatable")).get(GPU_RESOURCE)
    try:
        gpus = int(str(alloc)) if alloc is not None else None
    except ValueError:
        gpus = None
    return NodeInfo(
        name=str(meta.get("name", "")),
        labels=labels,
        provider_id=str(spec.get("providerID") or ""),
        unschedulable=bool(spec.get("unschedulable")),
        ready=ready,
        taints=tuple(t for t in as_list(spec.get("taints")) if isinstance(t, Mapping)),
        allocatable_gpus=gpus,
        raw=view,
    )


def node_info(obj: Mapping[str, Any]) -> NodeInfo:
    """Extract a :class:`NodeInfo` from a Node object (tolerating any shape)."""
    return node_record(node_view(obj))


def collect_nodes(items: Iterable[Mapping[str, Any]]) -> list[NodeInfo]:
    """Every Node among the items, including those inside ``v1`` ``List`` objects."""
    out: list[NodeInfo] = []
    for it in items:
        kind = it.get("kind")
        if kind == "Node" and it.get("apiVersion") == "v1":
            out.append(node_info(it))
        elif kind in ("List", "NodeList") and it.get("apiVersion") == "v1":
            for sub in as_list(it.get("items")):
                if isinstance(sub, Mapping) and sub.get("kind", "Node") == "Node":
                    out.append(node_info(sub))
    return out
