"""The Node inventory: which nodes a WorkloadRun may use.

Invariants:
    * Only the fields the render needs are read from a Node (name, labels, providerID,
      unschedulable, taints, Ready condition, allocatable GPUs); the Node object is never
      modified here.
    * :attr:`NodeInfo.raw` is the Node's *view*: exactly the fields in
      :data:`NODE_VIEW_FIELDS` (conditions reduced to ``type`` and ``status``), the same
      whether the Node was parsed by PyYAML (:func:`node_view`) or read from the text by
      :mod:`krm_fn.fastio`. Platform and GPU detection read only these fields.
    * :func:`node_problems` says what makes a Node unusable (wrong section types, no name);
      the readers refuse such a Node with that message, and :func:`node_info` never raises
      whatever the shape.
    * Eligible nodes come back sorted by name, each name once.
    * A node is left out only with a reason, and the reason is reported by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for annotations: the reader imports this before the models
    from krm_fn.api.models import Target

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


def matches_target(node: NodeInfo, target: Target | None) -> bool:
    """Whether the node matches the target's selectors (all ANDed).

    With no target (or an empty one) the default is nodes labelled
    ``nvidia.com/gpu.present=true``.
    """
    labels = node.labels
    if target is None or not (
        target.node_selector or target.match_expressions or target.node_names
    ):
        return labels.get(GPU_PRESENT_LABEL) == "true"
    for k, v in target.node_selector.items():
        if labels.get(k) != v:
            return False
    if target.node_names and node.name not in target.node_names:
        return False
    for req in target.match_expressions:
        val = labels.get(req.key)
        op = req.operator
        if op == "In" and (val is None or val not in req.values):
            return False
        if op == "NotIn" and val is not None and val in req.values:
            return False
        if op == "Exists" and val is None:
            return False
        if op == "DoesNotExist" and val is not None:
            return False
        if op in ("Gt", "Lt"):
            try:
                num = int(val) if val is not None else None
            except ValueError:
                num = None
            if num is None:
                return False
            bound = int(req.values[0])
            if (op == "Gt" and not num > bound) or (op == "Lt" and not num < bound):
                return False
    return True


def tolerates(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    """Kubernetes toleration matching for one taint."""
    for tol in tolerations:
        if tol.get("effect") and tol.get("effect") != taint.get("effect"):
            continue
        if tol.get("operator", "Equal") == "Exists":
            if not tol.get("key") or tol.get("key") == taint.get("key"):
                return True
        elif tol.get("key") == taint.get("key") and (tol.get("value") or "") == (
            taint.get("value") or ""
        ):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A node that matched the target but cannot be used, and why."""

    node: str
    reason: str


@dataclass(frozen=True, slots=True)
class Eligibility:
    """The outcome of node selection."""

    eligible: tuple[NodeInfo, ...]
    excluded: tuple[Exclusion, ...]
    matched: int
    resource_taints: tuple[str, ...] = ()
    """Extended resources whose NoSchedule taint an eligible node carries and no user
    toleration covers: the pods request them, so the render tolerates them explicitly."""


def select_nodes(
    nodes: Iterable[NodeInfo],
    target: Target | None,
    tolerations: list[dict[str, Any]],
    requested_resources: Iterable[str] = (),
) -> Eligibility:
    """Pick the nodes a run may use: target match, schedulable, Ready, taints tolerated.

    Cordoned nodes are kept only when a toleration covers ``node.kubernetes.io/unschedulable``
    (NVCRE's taintSelector rule). A NoSchedule taint whose key is one of
    ``requested_resources`` (GKE's ``nvidia.com/gpu=present:NoSchedule``) does not exclude the
    node: the pods request that resource, and the ExtendedResourceToleration admission plugin
    tolerates it for them; it is listed in :attr:`Eligibility.resource_taints` so the render
    also emits the toleration, for clusters without that plugin.
    """
    resources = frozenset(requested_resources)
    resource_taints: set[str] = set()
    by_name: dict[str, NodeInfo] = {}
    for n in nodes:
        if n.name and matches_target(n, target):
            by_name.setdefault(n.name, n)
    eligible: list[NodeInfo] = []
    excluded: list[Exclusion] = []
    keep_cordoned = tolerates(
        tolerations, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "value": ""}
    )
    for name in sorted(by_name):
        n = by_name[name]
        if n.unschedulable and not keep_cordoned:
            excluded.append(Exclusion(name, "cordoned (spec.unschedulable)"))
            continue
        if n.ready is False:
            excluded.append(Exclusion(name, "NotReady"))
            continue
        untolerated = [
            t
            for t in n.taints
            if t.get("effect") in ("NoSchedule", "NoExecute")
            and not (t.get("key") == UNSCHEDULABLE_TAINT and n.unschedulable and keep_cordoned)
            and not tolerates(tolerations, t)
        ]
        by_resource = [
            t for t in untolerated if t.get("effect") == "NoSchedule" and t.get("key") in resources
        ]
        blocking = [t for t in untolerated if t not in by_resource]
        if blocking:
            desc = ", ".join(
                f"{t.get('key')}{'=' + str(t['value']) if t.get('value') else ''}:{t.get('effect')}"
                for t in blocking
            )
            excluded.append(
                Exclusion(name, f"has taint {desc} that no target.taintSelectors entry tolerates")
            )
            continue
        resource_taints.update(str(t.get("key")) for t in by_resource)
        eligible.append(n)
    return Eligibility(
        tuple(eligible), tuple(excluded), len(by_name), tuple(sorted(resource_taints))
    )
