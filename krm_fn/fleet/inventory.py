"""The Node inventory: which nodes a WorkloadRun may use.

Invariants:
    * Nodes are the records of :mod:`krm_fn.io.nodes` (what the readers extract); their names
      are re-exported here for the fleet logic's callers.
    * Eligible nodes come back sorted by name, each name once.
    * A node is left out only with a reason, and the reason is reported by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from krm_fn.io.nodes import GPU_PRESENT_LABEL as GPU_PRESENT_LABEL
from krm_fn.io.nodes import GPU_PRODUCT_LABEL as GPU_PRODUCT_LABEL
from krm_fn.io.nodes import HOSTNAME_LABEL as HOSTNAME_LABEL
from krm_fn.io.nodes import UNSCHEDULABLE_TAINT
from krm_fn.io.nodes import NodeInfo as NodeInfo
from krm_fn.io.nodes import collect_nodes as collect_nodes
from krm_fn.io.nodes import node_info as node_info
from krm_fn.io.nodes import node_view as node_view

if TYPE_CHECKING:  # only for annotations: the reader imports this before the models
    from krm_fn.api.models import Target


def is_default(target: Target | None) -> bool:
    """Whether the target selects nothing, so ``nvidia.com/gpu.present=true`` selects instead."""
    return target is None or not (
        target.node_selector or target.match_expressions or target.node_names
    )


def matches_target(node: NodeInfo, target: Target | None) -> bool:
    """Whether the node matches the target's selectors (all ANDed), or the default target."""
    labels = node.labels
    if target is None or is_default(target):
        return labels.get(GPU_PRESENT_LABEL) == "true"
    if any(labels.get(k) != v for k, v in target.node_selector.items()):
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
                num, bound = int(val or ""), int(req.values[0])  # the bound: checked by the model
            except ValueError:
                return False
            if not (num > bound if op == "Gt" else num < bound):
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
    return Eligibility(tuple(eligible), tuple(excluded), tuple(sorted(resource_taints)))
