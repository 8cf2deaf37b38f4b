"""Suggest the next grouping of a failed group's nodes, to isolate the bad node.

The rule, applied to the nodes of one failed group:

* 3 or more nodes: split into consecutive pairs (the health-check shape: a pair passes only
  when both nodes are good). An odd node left over is paired with a known-good node from a
  passing group of the same run when there is one, else tested alone.
* 2 nodes: pair each with a known-good node when there is one (the failing side shows up),
  else test each alone (single-node, intra-node).
* 1 node: nothing to split; the node itself is the suspect.

Nodes the log names as the failing host are put first, so the first new group tests the
most likely culprit.

Invariants:
    * Every node of the failed group appears in exactly one suggested group.
    * Known-good nodes only ever complete a group; they are never tested alone.
    * Without node names (placement Unpinned) there is no suggestion.
"""

from __future__ import annotations

from collections.abc import Sequence


def suggest_regrouping(
    nodes: Sequence[str], known_good: Sequence[str] = (), suspects: Sequence[str] = ()
) -> list[list[str]]:
    """The next groups to run to find the bad node among ``nodes`` (suspects tested first)."""
    ordered = list(dict.fromkeys([n for n in suspects if n in nodes] + list(nodes)))
    partner = [n for n in known_good if n not in ordered][:1]  # a known-good node, if any
    if len(ordered) <= 1:
        return []
    if len(ordered) == 2:
        return [[node, *partner] for node in ordered]
    groups = [ordered[i : i + 2] for i in range(0, len(ordered) - 1, 2)]
    if len(ordered) % 2:
        groups.append([ordered[-1], *partner])
    return groups
