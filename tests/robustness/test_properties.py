"""Property tests: random WorkloadRuns and inventories always give valid output or a clean refusal.

For every generated input ``run_krm`` either succeeds with objects that validate against the
pinned CRDs (``tests.k8s_schemas.validate_all``) or fails with exit 1 and error results; it
never raises. On success the placement invariants hold: every eligible node is in some
TrainJob's ``nvcre.nvidia.com/group-nodes`` unless a warning names it, no node is twice in a
group, TrainJobs of one ``nvcre.nvidia.com/wave`` share no node, and only wave 0 runs at once.
Eligibility is recomputed here from the README's rules (an oracle independent of
``krm_fn.fleet.inventory``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from krm_fn.entry.run import run_krm
from tests.k8s_schemas import validate_all
from tests.robustness.helpers import IMAGE, MPI, by_kind, dump, generated, load, rl, wr

PRODUCTS = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-H200", "NVIDIA-GB200"]
SETTINGS = settings(
    max_examples=80,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class NodeSpec:
    name: str
    gpu_present: str | None
    pool: str | None
    product: str | None
    cordoned: bool
    ready: bool | None
    tainted: bool
    rack: str | None


@st.composite
def inventories(draw: st.DrawFn) -> tuple[str, list[NodeSpec]]:
    provider = draw(st.sampled_from(["", "aws:///us-east-1a/i-0"]))
    products = PRODUCTS if not provider else PRODUCTS[:2]
    count = draw(st.integers(0, 40))
    scheme = draw(st.sampled_from(["gpu-node-{:02d}", "n{}", "rack-{}-x", "{}a"]))
    names = [scheme.format(i) for i in range(count)]
    if scheme == "{}a":  # names starting with a digit are valid DNS-1123 subdomains too
        names = [f"h{n}" if i % 2 else n for i, n in enumerate(names)]
    names = draw(st.permutations(names))
    rare = st.sampled_from([False] * 7 + [True])
    specs = [
        NodeSpec(
            name=n,
            gpu_present=draw(st.sampled_from(["true"] * 6 + ["false", None])),
            pool=draw(st.sampled_from(["a", "a", "b", None])),
            product=draw(st.sampled_from([*products, products[0], None])),
            cordoned=draw(rare),
            ready=draw(st.sampled_from([True] * 5 + [False, None])),
            tainted=draw(rare),
            rack=draw(st.sampled_from(["r1", "r1", "r2", "r3", "r3", "r3", None])),
        )
        for n in names
    ]
    return provider, specs


def node_object(n: NodeSpec, provider: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": n.name}
    if n.gpu_present is not None:
        labels["nvidia.com/gpu.present"] = n.gpu_present
    if n.pool is not None:
        labels["pool"] = n.pool
    if n.product is not None:
        labels["nvidia.com/gpu.product"] = n.product
    if n.rack is not None:
        labels["rack"] = n.rack
    spec: dict[str, Any] = {}
    if provider:
        spec["providerID"] = f"{provider}{n.name}"
    if n.cordoned:
        spec["unschedulable"] = True
    if n.tainted:
        spec["taints"] = [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]
    status: dict[str, Any] = {"allocatable": {"nvidia.com/gpu": "8"}}
    if n.ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if n.ready else "False"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": n.name, "labels": labels},
        "spec": spec,
        "status": status,
    }


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    provider, inv = draw(inventories())
    names = [n.name for n in inv]
    framework = draw(
        st.sampled_from(
            [
                {"mpi": MPI},
                {"torch": {"script": "/workspace/train.py", "args": ["--x", "1"]}},
                {"exec": {"command": ["python", "/probe.py"]}},
            ]
        )
    )
    selector_kind = draw(st.sampled_from(["none", "nodeSelector", "nodeNames", "matchExpressions"]))
    target: dict[str, Any] = {}
    if selector_kind == "nodeSelector":
        target["nodeSelector"] = {"pool": draw(st.sampled_from(["a", "b"]))}
    elif selector_kind == "nodeNames":
        chosen = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
        target["nodeNames"] = chosen + draw(st.sampled_from([[], ["not-in-inventory"]]))
    elif selector_kind == "matchExpressions":
        target["matchExpressions"] = [
            {"key": "pool", "operator": "In", "values": [draw(st.sampled_from(["a", "b"]))]}
        ]
    tolerate_taint = draw(st.booleans())
    keep_cordoned = draw(st.booleans()) and draw(st.booleans())
    taints = []
    if tolerate_taint:
        taints.append({"key": "maintenance"})
    if keep_cordoned:
        taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
    if taints:
        target["taintSelectors"] = taints
    orchestration: dict[str, Any] = {}
    placement = draw(st.sampled_from([None, "Pinned", "Unpinned"]))
    if placement:
        orchestration["placement"] = placement
    max_concurrent = draw(st.sampled_from([None, 0, 1, 2, 3]))
    if max_concurrent is not None:
        orchestration["maxConcurrent"] = max_concurrent
    repeat = draw(st.sampled_from([None, 1, 2, 3]))
    if repeat is not None:
        orchestration["repeatCount"] = repeat
    scale = draw(st.sampled_from([None, None, "intra-node", "full-scale"]))
    if scale:
        orchestration["testScale"] = scale
    if draw(st.booleans()) and draw(st.booleans()):
        orchestration["topology"] = {"topologyKey": "rack"}
    spec: dict[str, Any] = {
        "image": IMAGE,
        "framework": framework,
        "numNodes": draw(st.integers(1, 8)),
    }
    if target:
        spec["target"] = target
    if orchestration:
        spec["orchestration"] = orchestration
    if draw(st.booleans()) and draw(st.booleans()):
        spec["gangScheduler"] = {"schedulerName": "kai-scheduler", "queue": "q"}
    remainder = draw(st.sampled_from([None, "overflow", "skip"]))
    return {
        "provider": provider,
        "inventory": inv,
        "spec": spec,
        "remainder": remainder,
        "keep_cordoned": keep_cordoned,
        "tolerate_taint": tolerate_taint,
    }


def eligible_oracle(s: dict[str, Any]) -> set[str]:
    """The README's eligibility rules, applied independently of krm_fn.fleet.inventory."""
    target = s["spec"].get("target") or {}
    out = set()
    for n in s["inventory"]:
        if target.get("nodeSelector"):
            match = n.pool == target["nodeSelector"]["pool"]
        elif target.get("nodeNames"):  # an empty list selects nothing: the default applies
            match = n.name in target["nodeNames"]
        elif target.get("matchExpressions"):
            match = n.pool in target["matchExpressions"][0]["values"]
        else:
            match = n.gpu_present == "true"
        if not match or (n.cordoned and not s["keep_cordoned"]) or n.ready is False:
            continue
        if n.tainted and not s["tolerate_taint"]:
            continue
        out.add(n.name)
    return out


def per_group(s: dict[str, Any]) -> int:
    orch = s["spec"].get("orchestration") or {}
    return 1 if orch.get("testScale") == "intra-node" else s["spec"]["numNodes"]


def expected_refusal(s: dict[str, Any], eligible: set[str]) -> str | None:
    """Why the oracle expects a refusal, or ``None`` when the run must render."""
    orch = s["spec"].get("orchestration") or {}
    unpinned = orch.get("placement") == "Unpinned"
    if unpinned and orch.get("testScale") == "intra-node":
        return "Unpinned with testScale intra-node"
    if not eligible:
        return "no eligible nodes"
    size = s["spec"]["numNodes"] if unpinned else per_group(s)
    if len(eligible) < size:
        return "not enough eligible nodes"
    racks = {n.name: n.rack for n in s["inventory"]}
    if not unpinned and "topology" in orch and any(racks[n] is None for n in eligible):
        return "an eligible node lacks the topology label"
    return None


def _input(s: dict[str, Any]) -> bytes:
    items = [wr("prop", s["spec"]), *(node_object(n, s["provider"]) for n in s["inventory"])]
    fc = None
    if s["remainder"]:
        fc = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "fn"},
            "data": {"remainder": s["remainder"]},
        }
    return dump(rl(items, fc))


def _group_nodes(tj: dict[str, Any]) -> list[str]:
    ann = tj["metadata"].get("annotations") or {}
    text = ann.get("nvcre.nvidia.com/group-nodes", "")
    return text.split(",") if text else []


@pytest.mark.slow
@SETTINGS
@given(scenarios())
def test_random_runs_render_valid_objects_or_refuse_cleanly(s: dict[str, Any]) -> None:
    out = run_krm(_input(s))  # must never raise: a crash is exit 70 for the user
    event(f"exit {out.exit_code}")
    assert out.exit_code in (0, 1)
    stderr = "\n".join(out.stderr)
    assert "Traceback" not in stderr and "internal error" not in stderr
    objs = generated(out.stdout)
    eligible = eligible_oracle(s)
    refusal = expected_refusal(s, eligible)
    if out.exit_code == 1:
        assert objs == []
        assert out.stderr[-1].endswith("nothing rendered")
        assert any(r["severity"] == "error" for r in load(out.stdout)["results"])
        assert refusal, f"refused although {len(eligible)} nodes are eligible:\n{stderr}"
        return
    assert refusal is None, f"rendered although the oracle expects: {refusal}"
    assert validate_all(objs) == []
    trainjobs = by_kind(objs, "TrainJob")
    assert trainjobs
    warnings = [line for line in out.stderr if line.startswith("[warning]")]
    unpinned = (s["spec"].get("orchestration") or {}).get("placement") == "Unpinned"
    repeat = (s["spec"].get("orchestration") or {}).get("repeatCount") or 1
    max_concurrent = (s["spec"].get("orchestration") or {}).get("maxConcurrent") or 0

    covered: set[str] = set()
    for tj in trainjobs:
        group = _group_nodes(tj)
        size = s["spec"]["numNodes"] if unpinned else per_group(s)
        assert tj["spec"]["trainer"]["numNodes"] == size
        if unpinned:
            assert group == []
            continue
        assert len(group) == len(set(group)) == size, group
        assert set(group) <= eligible, set(group) - eligible
        covered |= set(group)
    if not unpinned:
        for name in sorted(eligible - covered):
            assert any(name in w for w in warnings), f"eligible node {name} silently untested"

    waves: dict[str, list[dict[str, Any]]] = {}
    for tj in trainjobs:
        waves.setdefault(tj["metadata"]["labels"]["nvcre.nvidia.com/wave"], []).append(tj)
    assert sorted(waves, key=int) == [str(i) for i in range(len(waves))]
    for wave, jobs in waves.items():
        for tj in jobs:
            assert bool(tj["spec"].get("suspend")) is (wave != "0"), tj["metadata"]["name"]
            runs_after = (tj["metadata"].get("annotations") or {}).get(
                "nvcre.nvidia.com/runs-after"
            )
            if wave == "0":
                assert runs_after is None
            else:
                previous = {j["metadata"]["name"] for j in waves[str(int(wave) - 1)]}
                assert set(runs_after.split(",")) == previous
        if max_concurrent:
            assert len(jobs) <= max_concurrent
        if unpinned:
            assert len(jobs) == 1, "unpinned iterations may use any node: one per wave"
        else:
            seen: set[str] = set()
            for tj in jobs:
                nodes_ = set(_group_nodes(tj))
                assert not (seen & nodes_), f"wave {wave} runs two TrainJobs on {seen & nodes_}"
                seen |= nodes_
    if unpinned:
        assert len(trainjobs) == repeat
    if "gangScheduler" in s["spec"]:
        assert all(tj["metadata"]["labels"]["kai.scheduler/queue"] == "q" for tj in trainjobs)


@pytest.mark.slow
@SETTINGS
@given(
    st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,14}[a-z0-9]", fullmatch=True), max_size=30),
    st.integers(1, 8),
    st.randoms(use_true_random=False),
)
def test_node_input_order_never_changes_the_generated_objects(
    names: list[str], num_nodes: int, rnd: Any
) -> None:
    spec = NodeSpec("", "true", "a", PRODUCTS[0], False, True, False, "r1")
    inv = [node_object(replace(spec, name=n), "") for n in names]
    run = wr("order", {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": num_nodes})
    first = run_krm(dump(rl([run, *inv])))
    shuffled = list(inv)
    rnd.shuffle(shuffled)
    again = run_krm(dump(rl([run, *shuffled])))
    assert first.exit_code == again.exit_code
    assert generated(first.stdout) == generated(again.stdout)
    assert first.stderr == again.stderr
