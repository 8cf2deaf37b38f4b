"""Stage 1, run flags: NVCRE's ``nvcrectl workloadrun run`` flags applied to the run.

The options ``nodeList``, ``topologyDomain``, ``topologyKey`` and ``testScale`` (``render
--node-list`` ...) change the WorkloadRun as NVCRE's ``applyRunOverrides`` and
``runWorkloadRunExecute`` do (NVIDIA/cluster-readiness-engine pkg/workloadrun/workloadrun.go):

Invariants:
    * No flag: the run is returned as it is (no empty ``target`` or ``orchestration`` appears).
    * ``nodeList`` replaces ``target.nodeNames`` and lowers ``numNodes`` to the number of names,
      then to the number of eligible nodes; it never raises it.
    * ``topologyDomain`` adds ``{key: K, operator: In, values: [domain]}`` to
      ``target.matchExpressions``; K is ``topologyKey``, else the platform's default (detected
      from the nodes the run's target selects without the domain); a platform without one is
      an error asking for ``topologyKey``. ``numNodes`` becomes the number of eligible nodes.
    * ``testScale`` replaces ``orchestration.testScale``.
    * Every flag applied is named ``run:<option>[=<value>]`` in the run's applied overrides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import GPU_PRESENT_LABEL, NodeInfo, matches_target
from krm_fn.io.results import LISTED, some
from krm_fn.platforms.catalog import load_catalog
from krm_fn.platforms.detect import detect_fleet_platform
from krm_fn.platforms.run_platform import forced_platform
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.nodes import NodeSelection, domain_key, explicit, select, within
from krm_fn.stages.parse import InputContext


def _with(wr: models.WorkloadRun, **spec: Any) -> models.WorkloadRun:
    return wr.model_copy(update={"spec": wr.spec.model_copy(update=spec)})


def applied(wr: models.WorkloadRun, options: FunctionOptions) -> models.WorkloadRun:
    """The run with ``nodeList`` and ``testScale`` written into its spec (NVCRE's file edit)."""
    spec, update = wr.spec, dict[str, Any]()
    if options.node_list:
        update["target"] = explicit(spec.target).model_copy(
            update={"node_names": list(options.node_list)}
        )
        update["num_nodes"] = min(spec.num_nodes, len(options.node_list))
    if options.test_scale:
        orch = spec.orchestration or models.Orchestration()
        update["orchestration"] = orch.model_copy(update={"test_scale": options.test_scale})
    return _with(wr, **update) if update else wr


@dataclass(frozen=True)
class Narrowed:
    """The run narrowed to its topology domain, its nodes, and the flags that applied."""

    run: models.WorkloadRun
    selection: NodeSelection
    flags: tuple[str, ...]


def narrowed(
    wr: models.WorkloadRun,
    nodes: Sequence[NodeInfo],
    options: FunctionOptions,
    context: InputContext,
    diag: RunDiagnostics,
) -> Narrowed:
    """Select the run's nodes, within ``topologyDomain`` when it is given."""
    selection = select(wr.spec, nodes, context)
    known = {n.name: n for n in nodes} if options.node_list else {}
    absent = [n for n in options.node_list if n not in known]
    if absent:
        diag.warning(f"nodeList names node(s) that are not in the input: {', '.join(absent)}")
    if cpu := [n for n in options.node_list if n in known and not matches_target(known[n], None)]:
        diag.warning(f"nodeList names node(s) without {GPU_PRESENT_LABEL}=true: {', '.join(cpu)}")
    domain = options.topology_domain
    if not domain or not selection.eligible:
        return Narrowed(wr, selection, _flags(options, None))
    raws, table = [n.raw for n in selection.eligible], load_catalog(options.platform_catalog)
    platform = forced_platform(options) or detect_fleet_platform(raws, table).platform
    key = domain_key(options, platform)
    if key is None:
        if platform:  # else the nodes' platforms disagree: that error comes with the platform
            diag.error(
                f"topologyDomain {domain!r} needs topologyKey: the {platform} platform has no "
                "default topology key; set topologyKey (render --topology-key) to the node "
                "label whose value names the domain"
            )
        return Narrowed(wr, selection, _flags(options, None))
    inside = _with(wr, target=within(wr.spec.target, key, domain))
    chosen = select(inside.spec, nodes, context)
    if not chosen.eligible:
        found = Counter(n.labels.get(key, "(no label)") for n in selection.eligible)
        diag.error(
            f"no eligible node is in topologyDomain {domain!r} (label {key}); the run's eligible "
            f"nodes are in: {some([f'{d} ({c})' for d, c in sorted(found.items())], LISTED)}"
        )
        return Narrowed(wr, selection, _flags(options, key))
    return Narrowed(inside, chosen, _flags(options, key))


def _flags(options: FunctionOptions, key: str | None) -> tuple[str, ...]:
    """``run:<option>[=<value>]`` for each flag applied (the key: the one used)."""
    out = ["run:nodeList"] if options.node_list else []
    if key:
        out += [f"run:topologyDomain={options.topology_domain}", f"run:topologyKey={key}"]
    if options.test_scale:
        out.append(f"run:testScale={options.test_scale}")
    return tuple(out)


def sized(wr: models.WorkloadRun, eligible: int, options: FunctionOptions) -> models.WorkloadRun:
    """``numNodes`` as NVCRE's ``runWorkloadRunExecute`` sizes it from the eligible nodes."""
    if not eligible:
        return wr
    size = wr.spec.num_nodes
    if options.topology_domain:
        size = eligible
    elif options.node_list:
        size = min(size, eligible)
    return wr if size == wr.spec.num_nodes else _with(wr, num_nodes=size)
