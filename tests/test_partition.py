"""Default (pinned) placement: groups of numNodes, NVCRE's overflow group, skip remainder."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn.fleet.partition import PartitionError, partition_simple
from krm_fn.fleet.topology import run_waves


def names(n: int) -> list[str]:
    return sorted(f"n{i:02d}" for i in range(n))


@pytest.mark.parametrize(
    ("nodes", "per", "groups"),
    [
        pytest.param(16, 4, 4, id="sixteen-nodes-in-fours-give-four-groups"),
        pytest.param(18, 2, 9, id="eighteen-nodes-in-pairs-give-nine-groups"),
        pytest.param(4, 4, 1, id="exact-fit-gives-one-group"),
        pytest.param(5, 1, 5, id="single-node-groups"),
    ],
)
def test_full_groups(nodes: int, per: int, groups: int) -> None:
    p = partition_simple(names(nodes), per)
    assert len(p.groups) == groups
    assert all(len(g.nodes) == per for g in p.groups)
    assert [g.name for g in p.groups] == [f"group-{i}" for i in range(groups)]


def test_overflow_group_borrows_from_last_group() -> None:
    p = partition_simple(names(10), 4)
    assert [g.nodes for g in p.groups] == [
        ("n00", "n01", "n02", "n03"),
        ("n04", "n05", "n06", "n07"),
        ("n06", "n07", "n08", "n09"),
    ]
    assert p.groups[-1].name == "group-2-overflow"
    assert p.groups[-1].overlaps == "group-1"


def test_skip_remainder_reports_untested_nodes() -> None:
    p = partition_simple(names(10), 4, "skip")
    assert len(p.groups) == 2
    assert p.untested == ("n08", "n09")


def test_not_enough_nodes_gives_both_numbers() -> None:
    with pytest.raises(PartitionError, match=r"need 5 \(numNodes\), found 3"):
        partition_simple(names(3), 5)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 120), per=st.integers(1, 16), skip=st.booleans(), mc=st.integers(0, 4))
def test_partition_properties(n: int, per: int, skip: bool, mc: int) -> None:
    nodes = names(n)
    if n < per:
        with pytest.raises(PartitionError):
            partition_simple(nodes, per)
        return
    p = partition_simple(nodes, per, "skip" if skip else "overflow")
    covered = {x for g in p.groups for x in g.nodes} | set(p.untested)
    assert covered == set(nodes), "every eligible node is tested or named as untested"
    assert all(len(set(g.nodes)) == len(g.nodes) == per for g in p.groups)
    assert all(list(g.nodes) == sorted(g.nodes) for g in p.groups)
    assert len(p.untested) < per
    if not skip:
        assert not p.untested
    waves = run_waves(list(p.groups), mc)
    assert sorted(x for w in waves for x in w) == sorted(g.name for g in p.groups)
    by_name = {g.name: set(g.nodes) for g in p.groups}
    for wave in waves:
        assert not mc or len(wave) <= mc
        seen: set[str] = set()
        for g in wave:
            assert not seen & by_name[g], "two jobs of one wave share a node"
            seen |= by_name[g]
