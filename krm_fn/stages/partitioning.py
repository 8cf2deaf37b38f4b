"""Stage 4, partition: split the eligible nodes into the groups one TrainJob each runs on.

Invariants:
    * Unpinned: one group without nodes, only when at least ``numNodes`` nodes are eligible
      (the requested size is never lowered).
    * With a topology key (the run's, else the platform override's; for ``intra-rack`` only,
      else the platform table's ``defaultTopologyKey``, said in an info): groups never
      straddle a domain when ``strictDomain`` or ``intra-rack``; every eligible node must
      carry the label.
    * Without one: groups of ``numNodes`` in name order (``intra-node``: one node each).
    * Nodes that fill no group are named in a warning (option ``remainder: skip``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.fleet import topology
from krm_fn.fleet.inventory import NodeInfo
from krm_fn.fleet.partition import Group, Partition, PartitionError, partition_simple
from krm_fn.io.results import listed, some
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.nodes import domain_key
from krm_fn.stages.platform import ResolvedPlatform


@dataclass(frozen=True)
class Partitioned:
    """The run's groups (none on an error) and how they were cut."""

    part: Partition
    per_group: int  # nodes per TrainJob
    unpinned: bool  # placement Unpinned: pods not pinned to nodes
    topology_key: str | None  # the label partitioned by, if any
    domains: int  # topology domains among the eligible nodes (0 when not by topology)

    @property
    def topology_mode(self) -> str:
        """``topology`` or ``simple``, as a ``when`` sees it."""
        return "topology" if self.topology_key and not self.unpinned else "simple"


def partition(
    spec: models.WorkloadRunSpec,
    platform: ResolvedPlatform,
    options: FunctionOptions,
    diag: RunDiagnostics,
) -> Partitioned:
    """Partition the eligible nodes; problems reported, an empty partition on error."""
    orch = spec.orchestration
    scale = orch.test_scale if orch else None
    per_group = 1 if scale == "intra-node" else spec.num_nodes
    own_key = orch.topology.topology_key if orch and orch.topology else None
    topo_key = own_key or platform.overlay.topology_key
    if scale == "intra-rack" and not topo_key and platform.eligible:
        topo_key = _rack_key(platform, options, diag)
    unpinned = bool(orch and orch.placement == "Unpinned")
    out = Partitioned(Partition(()), per_group, unpinned, topo_key, 0)
    if not platform.eligible:
        return out
    if unpinned:
        out = _unpinned(spec, platform.eligible, out, diag)
    elif scale == "intra-rack" and not topo_key:
        diag.error(
            "testScale intra-rack runs one job per topology domain, but no topology key is "
            f"known for platform {platform.platform!r} and GPU {platform.arch!r}; set "
            "spec.orchestration.topology.topologyKey",
            "spec.orchestration.testScale",
        )
    elif topo_key:
        out = _by_topology(spec, platform, options, out, topo_key, diag)
    else:
        names = [n.name for n in platform.eligible]
        try:
            out = replace(out, part=partition_simple(names, per_group, options.remainder))
        except PartitionError as exc:
            diag.error(f"{exc}; {_fewer_nodes(platform.eligible, platform.gpus)}", "spec.numNodes")
    if out.part.untested:
        diag.warning(
            f"remainder: {len(out.part.untested)} node(s) left untested because they do not "
            f"fill a group of {per_group} (option remainder=skip): " + listed(out.part.untested)
        )
    return out


def _rack_key(
    platform: ResolvedPlatform, options: FunctionOptions, diag: RunDiagnostics
) -> str | None:
    """``intra-rack`` with no key from the run or the override: the platform's default key.

    NVCRE takes the key from its override table only (GB200/GB300), so it has none for,
    say, AWS H100; the platform table's ``defaultTopologyKey`` is the label its racks carry.
    """
    key = domain_key(options, platform.platform)
    if key:
        diag.info(
            f"testScale intra-rack: one TrainJob per {key!r} domain, the {platform.platform} "
            "platform's default topology key (spec.orchestration.topology.topologyKey chooses "
            "another)"
        )
    return key


def _unpinned(
    spec: models.WorkloadRunSpec,
    eligible: Sequence[NodeInfo],
    out: Partitioned,
    diag: RunDiagnostics,
) -> Partitioned:
    """One group of the exact requested size, placed by the scheduler."""
    if len(eligible) < spec.num_nodes:
        diag.error(
            f"not enough eligible nodes: need {spec.num_nodes} (numNodes), found "
            f"{len(eligible)}; Unpinned runs the requested job size exactly, so make "
            f"{spec.num_nodes} qualifying nodes available rather than lowering numNodes",
            "spec.numNodes",
        )
        return out
    return replace(out, part=Partition((Group("group-0", ()),), untested=()))


def _by_topology(
    spec: models.WorkloadRunSpec,
    platform: ResolvedPlatform,
    options: FunctionOptions,
    out: Partitioned,
    topo_key: str,
    diag: RunDiagnostics,
) -> Partitioned:
    """Groups filled domain by domain; every node must carry the topology label."""
    orch = spec.orchestration
    pairs = [(n.name, n.labels.get(topo_key)) for n in platform.eligible]
    missing = topology.missing_topology_label(pairs)
    if missing:
        src = (
            "spec.orchestration.topology.topologyKey"
            if orch and orch.topology
            else f"the {platform.platform} platform default"
        )
        diag.error(
            f"node(s) {', '.join(repr(m) for m in missing)} missing topology label "
            f"{topo_key!r} ({src}); label them, narrow spec.target, or set "
            "spec.orchestration.topology.topologyKey to a label they carry",
            "spec.orchestration.topology.topologyKey",
        )
        return out
    labelled = [(n, str(d)) for n, d in pairs]
    domains = len({d for _, d in labelled})
    strict = bool(orch and orch.topology and orch.topology.strict_domain) or (
        orch is not None and orch.test_scale == "intra-rack"
    )
    try:
        part = topology.partition_topology(labelled, out.per_group, strict, options.remainder)
    except PartitionError as exc:
        diag.error(f"{exc}; {_fewer_nodes(platform.eligible, platform.gpus)}", "spec.numNodes")
        return replace(out, domains=domains)
    return replace(out, part=part, domains=domains)


def _fewer_nodes(eligible: Sequence[NodeInfo], gpus: int) -> str:
    """The remedy for too few nodes: a numNodes the nodes able to run the job can meet.

    A node with fewer allocatable GPUs than the job asks per node was just named in a warning
    as unable to run it, so it does not count.
    """
    short = [
        n.name for n in eligible if n.allocatable_gpus is not None and n.allocatable_gpus < gpus
    ]
    usable = len(eligible) - len(short)
    cannot = f" ({some(short)} cannot run it: fewer than {gpus} allocatable nvidia.com/gpu)"
    cannot = cannot if short else ""
    if usable < 1:
        return f"no eligible node can run the job{cannot}"
    return f"set numNodes to {usable} or fewer{cannot}"
