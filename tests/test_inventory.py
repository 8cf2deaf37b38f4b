"""Node eligibility: target selectors, the default GPU target, cordons, readiness, taints."""

from __future__ import annotations

from typing import Any

import pytest

from krm_fn.api.models import Target
from krm_fn.fleet.inventory import collect_nodes, node_info, select_nodes, tolerates


def node(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true", **(labels or {})}},
        "spec": spec,
        "status": {"conditions": [{"type": "Ready", "status": spec.pop("ready", "True")}]},
    }


def target(**kw: Any) -> Target:
    return Target.model_validate(kw)


@pytest.mark.parametrize(
    ("tgt", "expected"),
    [
        pytest.param(None, ["a", "b", "c"], id="no-target-selects-gpu-present-nodes"),
        pytest.param(target(nodeSelector={"rack": "r1"}), ["a"], id="node-selector-is-anded"),
        pytest.param(target(nodeNames=["b", "zz"]), ["b"], id="node-names-select-by-name"),
        pytest.param(
            target(matchExpressions=[{"key": "rack", "operator": "NotIn", "values": ["r1"]}]),
            ["b", "c"],
            id="not-in-keeps-nodes-without-the-label",
        ),
        pytest.param(
            target(matchExpressions=[{"key": "gen", "operator": "Gt", "values": ["3"]}]),
            ["b"],
            id="gt-needs-an-integer-label",
        ),
    ],
)
def test_target_selection(tgt: Target | None, expected: list[str]) -> None:
    nodes = collect_nodes(
        [node("c"), node("a", {"rack": "r1", "gen": "3"}), node("b", {"rack": "r2", "gen": "4"})]
    )
    assert [n.name for n in select_nodes(nodes, tgt, []).eligible] == expected


def test_nodes_from_a_v1_list_are_collected() -> None:
    lst = {"apiVersion": "v1", "kind": "List", "items": [node("x"), node("y")]}
    assert [n.name for n in collect_nodes([lst])] == ["x", "y"]


def test_cordoned_notready_and_tainted_nodes_are_left_out_with_reasons() -> None:
    nodes = collect_nodes(
        [
            node("ok"),
            node("cordoned", unschedulable=True),
            node("down", ready="False"),
            node("tainted", taints=[{"key": "maint", "effect": "NoSchedule"}]),
            node("soft", taints=[{"key": "pref", "effect": "PreferNoSchedule"}]),
        ]
    )
    sel = select_nodes(nodes, None, [])
    assert [n.name for n in sel.eligible] == ["ok", "soft"]
    reasons = {x.node: x.reason for x in sel.excluded}
    assert "cordoned" in reasons["cordoned"]
    assert reasons["down"] == "NotReady"
    assert "maint:NoSchedule" in reasons["tainted"]


def test_unschedulable_taint_selector_keeps_cordoned_nodes() -> None:
    nodes = collect_nodes([node("cordoned", unschedulable=True)])
    tol = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    assert [n.name for n in select_nodes(nodes, None, tol).eligible] == ["cordoned"]


def test_node_without_labels_or_provider_id_is_read_safely() -> None:
    info = node_info({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare"}})
    assert info.labels == {} and info.provider_id == "" and info.ready is None


@pytest.mark.parametrize(
    ("tol", "taint", "ok"),
    [
        ({"key": "k", "operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, True),
        ({"operator": "Exists"}, {"key": "any", "effect": "NoExecute"}, True),
        ({"key": "k", "value": "v"}, {"key": "k", "value": "w", "effect": "NoSchedule"}, False),
        (
            {"key": "k", "value": "v", "effect": "NoExecute"},
            {"key": "k", "value": "v", "effect": "NoSchedule"},
            False,
        ),
    ],
    ids=[
        "exists-matches-key",
        "empty-key-exists-matches-all",
        "value-must-match",
        "effect-must-match",
    ],
)
def test_toleration_matching(tol: dict[str, str], taint: dict[str, str], ok: bool) -> None:
    assert tolerates([tol], taint) is ok
