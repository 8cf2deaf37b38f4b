"""Stage 2, select nodes: the Ready, schedulable nodes the run's target matches.

Invariants:
    * Nodes keep the inventory's (name) order; every left-out node keeps its reason.
    * Tolerations are the target's taint selectors, plus one per extended-resource taint on
      a resource the pods request (what GKE's ExtendedResourceToleration plugin adds), so
      clusters without that plugin schedule the same.
    * GPU products a node advertises only through ResourceSlices are attached to it.
    * Offline preview: with no Node in the input and a forced platform or GPU architecture,
      ``numNodes`` synthetic nodes stand in (:func:`inventory_for`), said in an info result;
      they are in the ``topologyDomain`` option's domain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import GPU_PRESENT_LABEL, Exclusion, NodeInfo, is_default, select_nodes
from krm_fn.io.results import ResourceRef, Results
from krm_fn.platforms import node_gpus as fleet
from krm_fn.platforms.catalog import load_catalog
from krm_fn.platforms.gpu import parse_gpu_product
from krm_fn.platforms.run_platform import forced_platform, synthetic_nodes
from krm_fn.stages.parse import InputContext


@dataclass(frozen=True)
class NodeSelection:
    """The run's nodes: those it may use (in name order) and those left out, with why."""

    eligible: tuple[NodeInfo, ...]
    excluded: tuple[Exclusion | fleet.ShortOfGpus, ...]
    tolerations: tuple[dict[str, Any], ...]  # every pod of the run's (before platform ones)


def select(
    spec: models.WorkloadRunSpec, nodes: Sequence[NodeInfo], context: InputContext
) -> NodeSelection:
    """Select the eligible nodes and the tolerations that keep them eligible."""
    tolerations = [t.to_toleration() for t in (spec.target.taint_selectors if spec.target else [])]
    sel = select_nodes(nodes, spec.target, tolerations, fleet.requested_resources(spec))
    # what the ExtendedResourceToleration admission plugin adds for a requested resource
    tolerations += [
        {"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in sel.resource_taints
    ]
    eligible = fleet.with_slice_products(sel.eligible, context.gpu_slices)
    return NodeSelection(tuple(eligible), tuple(sel.excluded), tuple(tolerations))


def explicit(target: models.Target | None) -> models.Target:
    """The target; the default one spelled out: a selector a run flag adds keeps its GPU filter."""
    target = target or models.Target()
    if not is_default(target):
        return target
    term = models.NodeSelectorRequirement(key=GPU_PRESENT_LABEL, operator="In", values=["true"])
    return target.model_copy(update={"match_expressions": [term]})


def within(target: models.Target | None, key: str, domain: str) -> models.Target:
    """The target narrowed to one topology domain: an ``In`` term on ``key`` added."""
    target = explicit(target)
    term = models.NodeSelectorRequirement(key=key, operator="In", values=[domain])
    return target.model_copy(update={"match_expressions": [*target.match_expressions, term]})


def domain_key(options: FunctionOptions, platform: str | None) -> str | None:
    """The label naming ``topologyDomain``'s domain: ``topologyKey``, else the platform's."""
    own = load_catalog(options.platform_catalog).platform(platform or "")
    return options.topology_key or (own.default_topology_key if own else None)


def inventory_for(
    spec: models.WorkloadRunSpec,
    ref: ResourceRef,
    nodes: Sequence[NodeInfo],
    options: FunctionOptions,
    results: Results,
) -> Sequence[NodeInfo]:
    """The inventory, or synthetic nodes for an offline preview (said in a note)."""
    if nodes or not (options.platform or options.gpu_arch):
        return nodes
    platform = forced_platform(options)
    arch = parse_gpu_product(options.gpu_arch) if options.gpu_arch else None
    key, domain = domain_key(options, platform), options.topology_domain
    target = within(spec.target, key, domain) if key and domain else spec.target
    table = load_catalog(options.platform_catalog)
    synthetic = synthetic_nodes(spec.num_nodes, platform, arch, target, table)
    results.info(
        f"no Node in the input: offline preview on {len(synthetic)} synthetic node(s) "
        f"({synthetic[0].name} ...)",
        resource=ref,
    )
    return synthetic
