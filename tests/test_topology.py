"""Topology-aware partitioning: NVCRE's goldens, behaviour cases and properties."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn.fleet.partition import Group, Partition, PartitionError
from krm_fn.fleet.topology import (
    TopologyGroup,
    missing_topology_label,
    partition_topology,
    run_waves,
)


def racks(*sizes: int, prefix: str = "rack") -> list[tuple[str, str]]:
    """Nodes ``node-r<k>-<i>`` in domain ``rack-<k>`` (k from 1), as in NVCRE's goldens."""
    return [
        (f"node-r{k}-{i}", f"{prefix}-{k}")
        for k, size in enumerate(sizes, start=1)
        for i in range(size)
    ]


def n(rack: int, *indices: int) -> tuple[str, ...]:
    return tuple(f"node-r{rack}-{i}" for i in indices)


@dataclass(frozen=True)
class Case:
    nodes: list[tuple[str, str]]
    per_group: int
    expected: list[TopologyGroup]
    strict_domain: bool = False
    remainder: Literal["overflow", "skip"] = "overflow"
    untested: tuple[str, ...] = field(default=())


CASES = {
    "two-full-racks-give-one-group-each": Case(
        racks(4, 4),
        4,
        [
            TopologyGroup("group-0", n(1, 0, 1, 2, 3), domains=("rack-1",)),
            TopologyGroup("group-1", n(2, 0, 1, 2, 3), domains=("rack-2",)),
        ],
    ),
    "group-fits-in-one-domain-stays-in-one-domain": Case(
        # 6 + 3 nodes, 3 per group: the two groups in rack-1 never borrow from rack-2.
        racks(6, 3),
        3,
        [
            TopologyGroup("group-0", n(1, 0, 1, 2), domains=("rack-1",)),
            TopologyGroup("group-1", n(1, 3, 4, 5), domains=("rack-1",)),
            TopologyGroup("group-2", n(2, 0, 1, 2), domains=("rack-2",)),
        ],
    ),
    "group-spanning-two-domains-when-per-group-exceeds-largest": Case(
        # 6 per group, racks of 4: each group takes a whole rack plus 2 from the fullest other.
        racks(4, 4, 4),
        6,
        [
            TopologyGroup("group-0", n(1, 0, 1, 2, 3) + n(2, 0, 1), domains=("rack-1", "rack-2")),
            TopologyGroup("group-1", n(2, 2, 3) + n(3, 0, 1, 2, 3), domains=("rack-2", "rack-3")),
        ],
    ),
    "leftovers-form-overflow-group-from-same-domain": Case(
        # 5 + 5 nodes, 4 per group: each leftover node is topped up from its own rack.
        racks(5, 5),
        4,
        [
            TopologyGroup("group-0", n(1, 0, 1, 2, 3), domains=("rack-1",)),
            TopologyGroup("group-1", n(2, 0, 1, 2, 3), domains=("rack-2",)),
            TopologyGroup(
                "group-2-overflow",
                n(1, 0, 1, 2, 4),
                overflow=True,
                overlaps="group-0",
                domains=("rack-1",),
            ),
            TopologyGroup(
                "group-3-overflow",
                n(2, 0, 1, 2, 4),
                overflow=True,
                overlaps="group-1",
                domains=("rack-2",),
            ),
        ],
    ),
    "strict-domain-one-group-per-rack": Case(
        # Natural sizes, biggest rack first; per_group does not size the groups.
        racks(2, 3, 1),
        1,
        [
            TopologyGroup("group-0", n(2, 0, 1, 2), domains=("rack-2",)),
            TopologyGroup("group-1", n(1, 0, 1), domains=("rack-1",)),
            TopologyGroup("group-2", n(3, 0), domains=("rack-3",)),
        ],
        strict_domain=True,
    ),
    "skip-remainder-reports-untested": Case(
        racks(4, 4, 2),
        4,
        [
            TopologyGroup("group-0", n(1, 0, 1, 2, 3), domains=("rack-1",)),
            TopologyGroup("group-1", n(2, 0, 1, 2, 3), domains=("rack-2",)),
        ],
        remainder="skip",
        untested=n(3, 0, 1),
    ),
    "skip-remainder-still-groups-leftovers-that-need-no-borrowing": Case(
        # 8 + 4 nodes, 6 per group: the cap of 1 domain stops the regular pass, but the 2 + 4
        # nodes left fill a group on their own, so skip mode tests them without double-booking.
        racks(8, 4),
        6,
        [
            TopologyGroup("group-0", n(1, 0, 1, 2, 3, 4, 5), domains=("rack-1",)),
            TopologyGroup(
                "group-1-overflow",
                n(1, 6, 7) + n(2, 0, 1, 2, 3),
                overflow=True,
                domains=("rack-1", "rack-2"),
            ),
        ],
        remainder="skip",
    ),
    "cap-too-tight-for-any-group-is-raised-not-one-oversized-group": Case(
        # ceil(5 / 3) = 2 domains cannot hold 5 nodes; NVCRE would emit one group of all 8.
        [("a0", "A"), ("a1", "A"), ("a2", "A")] + [(x, x.upper()) for x in "bcdef"],
        5,
        [
            TopologyGroup("group-0", ("a0", "a1", "a2", "b", "c"), domains=("A", "B", "C")),
            TopologyGroup(
                "group-1-overflow",
                ("a0", "a1", "d", "e", "f"),
                overflow=True,
                overlaps="group-0",
                domains=("A", "D", "E", "F"),
            ),
        ],
    ),
    "dry-overflow-pools-are-topped-up-to-full-size": Case(
        # NVCRE's pools run dry for the last overflow group and would leave it with 4 nodes.
        [
            (f"{d.lower()}{i}", d)
            for d, size in zip("ABCD", (3, 3, 2, 1), strict=True)
            for i in range(size)
        ],
        5,
        [
            TopologyGroup("group-0", ("a0", "a1", "a2", "b0", "b1"), domains=("A", "B")),
            TopologyGroup(
                "group-1-overflow",
                ("b0", "b1", "b2", "c0", "c1"),
                overflow=True,
                overlaps="group-0",
                domains=("B", "C"),
            ),
            TopologyGroup(
                "group-2-overflow",
                ("a0", "a1", "a2", "b0", "d0"),
                overflow=True,
                overlaps="group-0",
                domains=("A", "B", "D"),
            ),
        ],
    ),
    "intra-node-takes-each-node-from-the-fullest-domain": Case(
        # One node per group, always from the domain with the most nodes left (ties by name).
        racks(1, 2),
        1,
        [
            TopologyGroup("group-0", n(2, 0), domains=("rack-2",)),
            TopologyGroup("group-1", n(1, 0), domains=("rack-1",)),
            TopologyGroup("group-2", n(2, 1), domains=("rack-2",)),
        ],
    ),
    # NVCRE pkg/orchestration/testdata/partition/<name> (inputs and expected groups).
    "nvcre-golden-topology-overflow": Case(
        racks(4, 4, 2),
        4,
        [
            TopologyGroup("group-0", n(1, 0, 1, 2, 3), domains=("rack-1",)),
            TopologyGroup("group-1", n(2, 0, 1, 2, 3), domains=("rack-2",)),
            TopologyGroup(
                "group-2-overflow",
                n(1, 0, 1) + n(3, 0, 1),
                overflow=True,
                overlaps="group-0",
                domains=("rack-1", "rack-3"),
            ),
        ],
    ),
    "nvcre-golden-topology-multi-domain": Case(
        racks(2, 2),
        4,
        [TopologyGroup("group-0", n(1, 0, 1) + n(2, 0, 1), domains=("rack-1", "rack-2"))],
    ),
    "nvcre-golden-topology-exact-fit": Case(
        racks(4, 4, 4, 4),
        4,
        [
            TopologyGroup(f"group-{k - 1}", n(k, 0, 1, 2, 3), domains=(f"rack-{k}",))
            for k in (1, 2, 3, 4)
        ],
    ),
    "nvcre-golden-topology-max-domains": Case(
        racks(2, 2, 2, 2, 2, 2),
        5,
        [
            TopologyGroup(
                "group-0", n(1, 0, 1) + n(2, 0, 1) + n(3, 0), domains=("rack-1", "rack-2", "rack-3")
            ),
            TopologyGroup(
                "group-1", n(4, 0, 1) + n(5, 0, 1) + n(6, 0), domains=("rack-4", "rack-5", "rack-6")
            ),
            TopologyGroup(
                "group-2-overflow",
                n(1, 0) + n(3, 0, 1) + n(6, 0, 1),
                overflow=True,
                overlaps="group-0",
                domains=("rack-1", "rack-3", "rack-6"),
            ),
        ],
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_partition_topology(case: Case) -> None:
    got = partition_topology(case.nodes, case.per_group, case.strict_domain, case.remainder)
    assert list(got.groups) == case.expected
    assert got.untested == case.untested


@pytest.mark.parametrize(
    ("nodes", "per_group", "strict", "message"),
    [
        pytest.param(
            racks(2, 1),
            4,
            False,
            "not enough eligible nodes: need 4 (numNodes), found 3",
            id="not-enough-nodes-error",
        ),
        pytest.param(
            [], 1, False, "not enough eligible nodes: need 1 (numNodes), found 0", id="no-nodes"
        ),
        pytest.param(racks(2), 0, False, "numNodes must be >= 1, got 0", id="zero-per-group"),
        pytest.param(
            [("a", "r1"), ("a", "r2")], 1, False, 'duplicate node "a"', id="duplicate-node-name"
        ),
        pytest.param(
            [("a", "r1"), ("b", "")],
            1,
            False,
            'node "b" has an empty topology domain',
            id="empty-domain",
        ),
        pytest.param(
            racks(1),
            2,
            True,
            "not enough eligible nodes: need 2 (numNodes), found 1",
            id="strict-too",
        ),
    ],
)
def test_partition_errors(
    nodes: list[tuple[str, str]], per_group: int, strict: bool, message: str
) -> None:
    with pytest.raises(PartitionError) as exc:
        partition_topology(nodes, per_group, strict_domain=strict)
    assert str(exc.value) == message


def test_groups_are_plain_groups_too() -> None:
    group = partition_topology(racks(2), 2).groups[0]
    assert isinstance(group, Group)
    assert (group.name, group.nodes, group.overflow, group.overlaps) == (
        "group-0",
        n(1, 0, 1),
        False,
        None,
    )


def test_missing_topology_label() -> None:
    nodes = [("n2", None), ("n1", ""), ("n3", "rack-1")]
    assert missing_topology_label(nodes) == ["n1", "n2"]
    assert missing_topology_label([("n3", "rack-1")]) == []


def g(name: str, *nodes: str) -> Group:
    return Group(name, tuple(nodes))


def overlapping_pairs(groups: list[Group] | tuple[Group, ...]) -> list[tuple[str, str]]:
    """Every (earlier, later) pair of groups sharing a node, in partition order."""
    return [
        (a.name, b.name)
        for i, a in enumerate(groups)
        for b in groups[i + 1 :]
        if set(a.nodes) & set(b.nodes)
    ]


def test_run_waves_examples() -> None:
    groups = [g("g0", "a"), g("g1", "b"), g("g2-overflow", "a", "c"), g("g3", "d")]
    assert run_waves(groups) == [["g0", "g1", "g3"], ["g2-overflow"]]
    assert run_waves(groups, 2) == [["g0", "g1"], ["g2-overflow", "g3"]]
    assert run_waves(groups, 1) == [["g0"], ["g1"], ["g2-overflow"], ["g3"]]
    assert run_waves([]) == []


def test_run_waves_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        run_waves([g("g0", "a")], -1)
    with pytest.raises(ValueError):
        run_waves([g("g0", "a"), g("g0", "b")])


def test_overflow_that_borrows_from_two_groups_waits_for_both() -> None:
    part = partition_topology(racks(2, 2, 2, 2, 2, 2), 5)
    assert overlapping_pairs(part.groups) == [
        ("group-0", "group-2-overflow"),
        ("group-1", "group-2-overflow"),
    ]
    assert run_waves(part.groups) == [["group-0", "group-1"], ["group-2-overflow"]]


# --- properties -----------------------------------------------------------------------------


@st.composite
def inventories(draw: st.DrawFn) -> tuple[list[tuple[str, str]], int]:
    count = draw(st.integers(1, 200))
    domains = draw(st.integers(1, 20))
    names = draw(
        st.lists(
            st.text("abcdefgh0123456789-", min_size=1, max_size=8),
            min_size=count,
            max_size=count,
            unique=True,
        )
    )
    nodes = [(name, f"rack-{draw(st.integers(0, domains - 1))}") for name in names]
    per_group = draw(st.integers(1, min(32, count)))
    return nodes, per_group


def check_groups(part: Partition, nodes: list[tuple[str, str]], per_group: int) -> None:
    domain_of = dict(nodes)
    sizes = Counter(domain_of.values())
    fits_one_domain = per_group <= max(sizes.values())
    seen: set[str] = set()
    first: dict[str, int] = {}
    for i, group in enumerate(part.groups):
        assert isinstance(group, TopologyGroup)
        assert len(set(group.nodes)) == len(group.nodes), "node twice in one group"
        assert list(group.nodes) == sorted(group.nodes)
        assert len(group.nodes) == per_group
        assert group.domains == tuple(sorted({domain_of[x] for x in group.nodes}))
        fresh = [x for x in group.nodes if x not in seen]
        assert fresh, "a group that tests no new node"
        earlier = sorted({first[x] for x in group.nodes if x in first})
        assert group.overlaps == (part.groups[earlier[0]].name if earlier else None)
        if group.overflow:
            assert group.name == f"group-{i}-overflow"
            new_domains = {domain_of[x] for x in fresh}
            if len(new_domains) == 1 and sizes[next(iter(new_domains))] >= per_group:
                assert group.domains == tuple(new_domains), "overflow left a big enough domain"
        else:
            assert group.name == f"group-{i}"
            assert not earlier, "regular groups are disjoint"
            if fits_one_domain:
                assert len(group.domains) == 1, "group that fits one domain was split"
            else:
                assert len(group.domains) >= math.ceil(per_group / max(sizes.values()))
        for x in group.nodes:
            first.setdefault(x, i)
        seen.update(group.nodes)
    regular = [i for i, p in enumerate(part.groups) if not p.overflow]
    assert regular == list(range(len(regular))), "regular groups come first"


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(inventories())
def test_overflow_mode_covers_every_node(inv: tuple[list[tuple[str, str]], int]) -> None:
    nodes, per_group = inv
    part = partition_topology(nodes, per_group)
    check_groups(part, nodes, per_group)
    assert part.untested == ()
    assert {x for grp in part.groups for x in grp.nodes} == {name for name, _ in nodes}


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(inventories())
def test_skip_mode_never_reuses_a_node(inv: tuple[list[tuple[str, str]], int]) -> None:
    nodes, per_group = inv
    part = partition_topology(nodes, per_group, remainder="skip")
    check_groups(part, nodes, per_group)
    grouped = [x for grp in part.groups for x in grp.nodes]
    assert len(grouped) == len(set(grouped))
    assert all(grp.overlaps is None for grp in part.groups)
    assert not set(grouped) & set(part.untested)
    assert set(grouped) | set(part.untested) == {name for name, _ in nodes}
    assert list(part.untested) == sorted(part.untested)
    assert len(part.untested) < per_group
    assert part.groups, "enough nodes always give at least one group"


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(inventories())
def test_strict_domain_is_one_group_per_domain(inv: tuple[list[tuple[str, str]], int]) -> None:
    nodes, per_group = inv
    part = partition_topology(nodes, per_group, strict_domain=True)
    members: dict[str, list[str]] = {}
    for name, domain in sorted(nodes):
        members.setdefault(domain, []).append(name)
    order = sorted(members, key=lambda d: (-len(members[d]), d))
    assert part.untested == ()
    assert all(isinstance(grp, TopologyGroup) for grp in part.groups)
    assert [(grp.name, getattr(grp, "domains", None), grp.nodes) for grp in part.groups] == [
        (f"group-{i}", (d,), tuple(members[d])) for i, d in enumerate(order)
    ]
    assert not any(grp.overflow or grp.overlaps for grp in part.groups)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(
    inventories(),
    st.booleans(),
    st.sampled_from(["overflow", "skip"]),
    st.randoms(use_true_random=False),
)
def test_output_is_independent_of_input_order(
    inv: tuple[list[tuple[str, str]], int],
    strict: bool,
    remainder: Literal["overflow", "skip"],
    rnd: random.Random,
) -> None:
    nodes, per_group = inv
    shuffled = list(nodes)
    rnd.shuffle(shuffled)
    assert partition_topology(shuffled, per_group, strict, remainder) == partition_topology(
        sorted(nodes), per_group, strict, remainder
    )


@st.composite
def group_lists(draw: st.DrawFn) -> list[Group]:
    pool = [f"n{i}" for i in range(draw(st.integers(1, 40)))]
    count = draw(st.integers(0, 40))
    return [
        Group(f"group-{i}", tuple(sorted(draw(st.sets(st.sampled_from(pool), min_size=1)))))
        for i in range(count)
    ]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(group_lists(), st.integers(0, 6))
def test_run_waves_properties(groups: list[Group], max_concurrent: int) -> None:
    waves = run_waves(groups, max_concurrent)
    by_name = {grp.name: grp for grp in groups}
    placed = [name for wave in waves for name in wave]
    assert sorted(placed) == sorted(by_name), "every group in exactly one wave"
    assert all(wave for wave in waves)
    pairs = set(overlapping_pairs(groups))
    for wave in waves:
        if max_concurrent:
            assert len(wave) <= max_concurrent
        nodes = [x for name in wave for x in by_name[name].nodes]
        assert len(nodes) == len(set(nodes)), "two overlapping groups in one wave"
        assert all((a, b) not in pairs for a in wave for b in wave)
        order = [groups.index(by_name[name]) for name in wave]
        assert order == sorted(order)
    assert run_waves(groups, max_concurrent) == waves


@settings(max_examples=100, deadline=None)
@given(inventories(), st.integers(0, 4))
def test_waves_of_a_real_partition(inv: tuple[list[tuple[str, str]], int], limit: int) -> None:
    nodes, per_group = inv
    part = partition_topology(nodes, per_group)
    waves = run_waves(part.groups, limit)
    regular = [grp.name for grp in part.groups if not grp.overflow]
    if not limit:
        assert waves[0][: len(regular)] == regular, "all regular groups start at once"
    for wave in waves:
        names = set(wave)
        assert not any(a in names and b in names for a, b in overlapping_pairs(part.groups))
