"""Stage 2, select nodes: the Ready, schedulable nodes the run's target matches.

Invariants:
    * Nodes keep the inventory's (name) order; every left-out node keeps its reason.
    * Tolerations are the target's taint selectors, plus one per extended-resource taint on
      a resource the pods request (what GKE's ExtendedResourceToleration plugin adds), so
      clusters without that plugin schedule the same.
    * GPU products a node advertises only through ResourceSlices are attached to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn import fleet
from krm_fn.api import models
from krm_fn.inventory import Exclusion, NodeInfo, select_nodes
from krm_fn.stages.parse import InputContext


@dataclass(frozen=True)
class NodeSelection:
    """The run's nodes.

    Attributes:
        eligible: Nodes the run may use, in name order.
        excluded: Nodes matching the target but left out, each with its reason.
        tolerations: Tolerations every pod of the run carries (before platform ones).

    """

    eligible: tuple[NodeInfo, ...]
    excluded: tuple[Exclusion | fleet.ShortOfGpus, ...]
    tolerations: tuple[dict[str, Any], ...]


def select(
    spec: models.WorkloadRunSpec, nodes: Sequence[NodeInfo], context: InputContext
) -> NodeSelection:
    """Select the eligible nodes and the tolerations that keep them eligible."""
    tolerations = [t.to_toleration() for t in (spec.target.taint_selectors if spec.target else [])]
    sel = select_nodes(nodes, spec.target, tolerations, fleet.requested_resources(spec))
    tolerations += [fleet.extended_resource_toleration(k) for k in sel.resource_taints]
    eligible = fleet.with_slice_products(sel.eligible, context.gpu_slices)
    return NodeSelection(tuple(eligible), tuple(sel.excluded), tuple(tolerations))
