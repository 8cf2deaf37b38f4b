"""Topology-aware node partitioning (NVCRE ``PartitionNodes`` topology mode) as pure functions.

A node's *domain* is the value of its topology label (a rack, NVLink clique, placement group).
Jobs that stay inside one domain avoid the spine network, so the partitioner packs each group into
as few domains as it can.

Algorithm (``strict_domain=False``):

1. Domains are ordered by size descending, then by name; the nodes of a domain by name. This is
   done on the input, so the result does not depend on the order the nodes are given in.
2. ``cap = ceil(per_group / largest domain)``: the fewest domains any group can need.
3. Regular pass: while the ``cap`` domains with the most unassigned nodes (ties by name) hold at
   least ``per_group`` of them, take a group from them, largest pool first, each pool's nodes in
   name order. Taking from the largest pool first uses as few domains as possible, so a group that
   fits in one domain is never split. Groups are numbered ``group-0``, ``group-1``, ... in the
   order they are made (NVCRE's order), which follows the domain order of step 1.
4. Overflow pass for the nodes still unassigned (``remainder="overflow"``): each domain offers a
   pool of its untested nodes first, then its tested ones, each in name order. Domains are ranked
   by untested nodes in the pool, then pool size, then name, and a group of ``per_group`` is taken
   from them in rank order. So an overflow group first fills up from the leftover nodes' own
   domain(s), and only borrows from another domain when its own are too small (golden
   ``topology-overflow``). A node taken leaves its domain's pool, so consecutive overflow groups
   borrow different nodes where they can. Overflow groups are named ``group-<N>-overflow``, where
   ``N`` continues the numbering of step 3, and have ``overflow=True``.

With ``strict_domain=True`` (testScale ``intra-rack``) each domain is one group at its natural
size, ``group-<i>`` in the domain order of step 1; ``per_group`` does not size the groups.

Decisions where NVCRE or the reference is silent, or where NVCRE's result would be wrong for a
job of ``per_group`` nodes:

* **Every group has exactly ``per_group`` nodes** (strict mode aside). NVCRE emits one
  ``group-0`` holding *all* nodes when ``cap`` domains cannot fill even the first group (e.g.
  domains of 3, 1, 1, 1 and ``per_group`` 5), which is a job with more nodes than ``numNodes``.
  Here ``cap`` is instead raised to the fewest domains the first group needs. NVCRE's overflow
  pools can also run dry and leave an undersized last group; here that group is topped up with
  other nodes not in it, from the domains it already uses first, then in domain order.
* **Overflow groups may span more domains than ``cap``**, as in NVCRE (golden
  ``topology-overflow``: the 2 nodes of rack-3 borrow 2 nodes from rack-1 even though the cap is
  1 domain). Regular groups never do.
* **``overlaps``** of an overflow group names the *earliest* group, in partition order, that it
  shares a node with (``None`` if it reuses no node). Borrowing from two domains can make an
  overflow group overlap several groups: :func:`run_waves` schedules around all of them.
  Regular groups never overlap one another.
* **``remainder="skip"`` never puts a node in two groups.** Nodes left over by step 3 can still
  hold whole groups when ``cap`` stopped the regular pass (domains of 8 and 4, ``per_group`` 6:
  2 + 4 nodes are left). Skip mode still groups them as in step 4, drawing on untested nodes
  only (so ``overlaps`` stays ``None``), and returns the fewer than ``per_group`` nodes it
  cannot place in ``Partition.untested``, sorted.
* The not-enough-nodes check applies in strict mode too (NVCRE checks ``numNodes`` against the
  node count before it partitions). ``remainder`` is ignored in strict mode.
* Duplicate node names and empty domain values are errors. NVCRE counts an empty label value as
  missing: call :func:`missing_topology_label` first to report those nodes with the key.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from krm_fn.fleet.partition import Group, Partition, PartitionError, check_size


@dataclass(frozen=True, slots=True)
class TopologyGroup(Group):
    """A job group that also records the topology domains of its nodes (sorted)."""

    domains: tuple[str, ...] = ()


def missing_topology_label(nodes: Sequence[tuple[str, str | None]]) -> list[str]:
    """The names (sorted) of the ``(name, label value)`` nodes without a value.

    ``None`` (the label is absent) and ``""`` (as in NVCRE) both count as missing.
    """
    return sorted(name for name, value in nodes if not value)


def _domains(nodes: Sequence[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """Return the ``(domain, node names)`` pairs, ordered by size descending, then name."""
    domain_of: dict[str, str] = {}
    for name, domain in nodes:
        if not name:
            raise PartitionError("node name must not be empty")
        if name in domain_of:
            raise PartitionError(f'duplicate node "{name}"')
        if not domain:
            raise PartitionError(f'node "{name}" has an empty topology domain')
        domain_of[name] = domain
    members: dict[str, list[str]] = {}
    for name in sorted(domain_of):
        members.setdefault(domain_of[name], []).append(name)
    return sorted(members.items(), key=lambda item: (-len(item[1]), item[0]))


class _Pools:
    """Per-domain pools that nodes are taken from the front of."""

    def __init__(self, pools: dict[str, list[str]], untested: dict[str, int]) -> None:
        self.nodes = pools
        self.cursor = dict.fromkeys(pools, 0)
        self.untested = untested  # untested nodes at the front of each pool

    def left(self, domain: str) -> int:
        return len(self.nodes[domain]) - self.cursor[domain]

    def untested_left(self, domain: str) -> int:
        return max(0, self.untested[domain] - self.cursor[domain])

    def take(self, domain: str, count: int) -> list[str]:
        start = self.cursor[domain]
        self.cursor[domain] = start + count
        return self.nodes[domain][start : start + count]


def _take(pools: _Pools, ranked: list[str], per_group: int) -> tuple[list[str], list[str]]:
    """Take up to ``per_group`` nodes from the pools in ``ranked`` order; return nodes, domains."""
    taken: list[str] = []
    used: list[str] = []
    for domain in ranked:
        if len(taken) == per_group:
            break
        count = min(per_group - len(taken), pools.left(domain))
        if count:
            taken += pools.take(domain, count)
            used.append(domain)
    return taken, used


def partition_topology(
    nodes: Sequence[tuple[str, str]],
    per_group: int,
    strict_domain: bool = False,
    remainder: Literal["overflow", "skip"] = "overflow",
) -> Partition:
    """Partition ``(node name, domain)`` pairs into groups within as few domains as possible.

    The module docstring has the algorithm, ``strict_domain`` (testScale ``intra-rack``) and
    ``remainder``. :class:`PartitionError`: ``per_group`` below 1, fewer nodes than
    ``per_group``, a duplicate node name or an empty domain value.
    """
    ordered = _domains(nodes)
    check_size(sum(len(names) for _, names in ordered), per_group)
    if strict_domain:
        return Partition(
            tuple(
                TopologyGroup(f"group-{i}", tuple(names), domains=(domain,))
                for i, (domain, names) in enumerate(ordered)
            )
        )
    groups, leftover = _regular_groups(ordered, per_group)
    if not any(leftover.values()):
        return Partition(tuple(groups))
    groups, untested = _overflow_groups(ordered, leftover, groups, per_group, remainder)
    return Partition(tuple(groups), untested=tuple(sorted(untested)))


def _group_cap(ordered: list[tuple[str, list[str]]], per_group: int) -> int:
    """Step 2: the fewest domains group-0 needs, never below ``ceil(per_group / largest)``.

    ``ordered`` is largest first, with at least ``per_group`` nodes in all.
    """
    totals = itertools.accumulate(len(names) for _, names in ordered)
    return next(count for count, total in enumerate(totals, 1) if total >= per_group)


def _regular_groups(
    ordered: list[tuple[str, list[str]]], per_group: int
) -> tuple[list[TopologyGroup], dict[str, list[str]]]:
    """Step 3: disjoint groups from at most the cap's domains; and each domain's leftovers."""
    cap = _group_cap(ordered, per_group)
    members = dict(ordered)
    fresh = _Pools(members, dict.fromkeys(members, 0))
    heap = [(-len(names), d) for d, names in ordered]  # (-unassigned, name): fullest first
    groups: list[TopologyGroup] = []
    while heap:
        # A group only ever needs the `cap` fullest pools, taken fullest first.
        top = [heapq.heappop(heap) for _ in range(min(cap, len(heap)))]
        if sum(fresh.left(d) for _, d in top) < per_group:
            break
        taken, used = _take(fresh, [d for _, d in top], per_group)
        for _, d in top:
            if fresh.left(d):
                heapq.heappush(heap, (-fresh.left(d), d))
        groups.append(
            TopologyGroup(f"group-{len(groups)}", tuple(sorted(taken)), domains=tuple(sorted(used)))
        )
    return groups, {d: names[fresh.cursor[d] :] for d, names in ordered}


def _overflow_groups(
    ordered: list[tuple[str, list[str]]],
    leftover: dict[str, list[str]],
    regular: list[TopologyGroup],
    per_group: int,
    remainder: Literal["overflow", "skip"],
) -> tuple[list[TopologyGroup], set[str]]:
    """Step 4: the regular groups, then overflow groups of the leftovers; the nodes in none.

    ``skip`` draws on untested nodes only and stops when fewer than ``per_group`` are left.
    """
    members = dict(ordered)
    rank = {domain: i for i, (domain, _) in enumerate(ordered)}
    untested = {n for names in leftover.values() for n in names}
    groups = list(regular)
    first_group = {n: i for i, g in enumerate(groups) for n in g.nodes}
    pools = _Pools(
        {
            d: leftover[d]
            + ([] if remainder == "skip" else [n for n in names if n not in untested])
            for d, names in ordered
        },
        {d: len(leftover[d]) for d in members},
    )
    while untested and (remainder == "overflow" or len(untested) >= per_group):
        ranked = sorted(members, key=lambda d: (-pools.untested_left(d), -pools.left(d), rank[d]))
        taken, used = _take(pools, ranked, per_group)
        if len(taken) < per_group:  # every pool ran dry: top up with other nodes
            _top_up(members, rank, taken, used, per_group)
        untested.difference_update(taken)
        shared = [first_group[n] for n in taken if n in first_group]
        index = len(groups)
        groups.append(
            TopologyGroup(
                f"group-{index}-overflow",
                tuple(sorted(taken)),
                overflow=True,
                overlaps=groups[min(shared)].name if shared else None,
                domains=tuple(sorted(used)),
            )
        )
        for n in taken:
            first_group.setdefault(n, index)
    return groups, untested


def _top_up(
    members: dict[str, list[str]],
    rank: dict[str, int],
    taken: list[str],
    used: list[str],
    per_group: int,
) -> None:
    """Extend ``taken`` (and ``used``) to ``per_group``: its own domains first, then in order."""
    chosen = set(taken)
    for d in sorted(members, key=lambda d: (d not in used, rank[d])):
        extra = [n for n in members[d] if n not in chosen][: per_group - len(taken)]
        if extra:
            taken += extra
            used += [] if d in used else [d]


def run_waves(groups: Sequence[Group], max_concurrent: int = 0) -> list[list[str]]:
    """Schedule groups into waves that can run at the same time.

    Greedy first fit in group order: each group joins the earliest wave that has none of its
    nodes and fewer than ``max_concurrent`` groups (0 = unlimited), else it opens a new wave. So
    no wave holds two groups that share a node, and every group is in exactly one wave. A group
    can land in an earlier wave than an earlier-listed group it does not overlap. Raises
    ValueError for ``max_concurrent`` below 0 or two groups of one name.
    """
    if max_concurrent < 0:
        raise ValueError(f"maxConcurrent must be >= 0, got {max_concurrent}")
    names = [g.name for g in groups]
    if len(set(names)) != len(names):
        raise ValueError("group names must be unique")
    waves: list[list[str]] = []
    open_waves: list[int] = []  # sorted indices of waves that can take another group
    waves_of: dict[str, set[int]] = {}  # node -> waves that use it
    for group in groups:
        blocked: set[int] = set()
        for node in group.nodes:
            blocked |= waves_of.get(node, set())
        wave = next((w for w in open_waves if w not in blocked), None)
        if wave is None:
            wave = len(waves)
            waves.append([])
            open_waves.append(wave)
        waves[wave].append(group.name)
        for node in group.nodes:
            waves_of.setdefault(node, set()).add(wave)
        if max_concurrent and len(waves[wave]) >= max_concurrent:
            del open_waves[bisect.bisect_left(open_waves, wave)]
    return waves
