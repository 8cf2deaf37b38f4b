"""Cut the eligible nodes into job groups (NVCRE's default, pinned placement).

Invariants:
    * Input node names are sorted and unique; every group lists its nodes sorted.
    * No node appears twice in one group.
    * Every eligible node is in some group, unless the remainder policy is ``skip``, in which
      case the left-out nodes are returned so the caller can name them in a warning.
    * An overflow group borrows nodes only from the last full group, and records which group
      it overlaps so the two are never run at the same time (see :mod:`krm_fn.render`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Group:
    """One job group: the nodes of one TrainJob."""

    name: str
    nodes: tuple[str, ...]
    overflow: bool = False
    overlaps: str | None = None


@dataclass(frozen=True, slots=True)
class Partition:
    """The groups and the nodes no group tests."""

    groups: tuple[Group, ...]
    untested: tuple[str, ...] = ()


class PartitionError(ValueError):
    """The nodes cannot be partitioned as asked."""


def check_size(nodes: int, per_group: int) -> None:
    """Raise :class:`PartitionError` unless ``nodes`` can fill one group of ``per_group`` >= 1."""
    if per_group < 1:
        raise PartitionError(f"numNodes must be >= 1, got {per_group}")
    if nodes < per_group:
        raise PartitionError(
            f"not enough eligible nodes: need {per_group} (numNodes), found {nodes}"
        )


def partition_simple(
    nodes: Sequence[str], per_group: int, remainder: Literal["overflow", "skip"] = "overflow"
) -> Partition:
    """Partition sorted, unique node names into groups of ``per_group`` (``numNodes``).

    The last ``r`` nodes that fill no group: ``overflow`` (NVCRE) makes one more group of them
    and the last ``per_group - r`` nodes of the last full group; ``skip`` leaves them untested.
    """
    check_size(len(nodes), per_group)
    full = len(nodes) // per_group
    groups = [
        Group(f"group-{i}", tuple(nodes[i * per_group : (i + 1) * per_group])) for i in range(full)
    ]
    rest = tuple(nodes[full * per_group :])
    if not rest:
        return Partition(tuple(groups))
    if remainder == "skip":
        return Partition(tuple(groups), untested=rest)
    last = groups[-1]
    borrowed = last.nodes[len(rest) :]
    overflow = Group(
        f"group-{full}-overflow", tuple(sorted(borrowed + rest)), overflow=True, overlaps=last.name
    )
    return Partition((*groups, overflow))
