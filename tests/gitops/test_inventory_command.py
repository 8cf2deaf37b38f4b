"""`workloadrun-fn inventory`: compact, deterministic, and the render cannot tell the difference."""

from __future__ import annotations

import copy
import importlib.util
import json
import random
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krm_fn.entry.run import run_krm
from krm_fn.gitops import compact_inventory as ci
from krm_fn.io.output import is_generated
from krm_fn.keys import is_workloadrun

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
FN = [sys.executable, "-m", "krm_fn"]


@cache
def bench_inventory() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_inventory", REPO / "bench" / "make_inventory.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compact_text(docs: list[Any], extra: tuple[str, ...] = ()) -> str:
    nodes, problems = ci.compact([(yaml.safe_dump_all(docs).encode(), "t")], ci.LabelPolicy(extra))
    assert problems == []
    return ci.dump(nodes)


@pytest.mark.parametrize("platform", bench_inventory().PLATFORMS)
def test_a_realistic_node_compacts_to_at_most_one_kilobyte(platform: str) -> None:
    full = bench_inventory().nodes(50, seed=3, platform=platform)
    text = _compact_text(full)
    body = text.split("\n", 2)[2]  # the two header comment lines are written once
    per_node = len(body.encode()) / 50
    assert per_node <= 1024, per_node
    assert len(yaml.safe_dump_all(full).encode()) / 50 > 8 * per_node  # it did compact


def _volatile_changed(node: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    n = copy.deepcopy(node)
    n["metadata"]["resourceVersion"] = str(rng.randrange(10**9))
    n["metadata"].setdefault("annotations", {})["node.alpha.kubernetes.io/ttl"] = "0"
    st_ = n.setdefault("status", {})
    st_["images"] = list(reversed(st_.get("images") or []))[: rng.randrange(5)]
    for c in st_.get("conditions") or []:
        c["lastHeartbeatTime"] = f"2026-12-0{rng.randrange(1, 9)}T00:00:00Z"
    st_["allocatable"] = {**(st_.get("allocatable") or {}), "memory": f"{rng.randrange(10**6)}Ki"}
    n["metadata"].setdefault("labels", {})["feature.node.kubernetes.io/cpu-cpuid.AVX"] = "true"
    n["metadata"]["labels"]["nvidia.com/gfd.timestamp"] = str(rng.randrange(10**9))
    return n


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), platform=st.sampled_from(bench_inventory().PLATFORMS))
def test_same_fleet_same_bytes_whatever_the_order_form_or_volatile_fields(
    seed: int, platform: str
) -> None:
    full = bench_inventory().nodes(6, seed=seed % 50, platform=platform)
    rng = random.Random(seed)
    shuffled = [_volatile_changed(n, rng) for n in full]
    rng.shuffle(shuffled)
    reference = _compact_text(full)
    as_list = json.dumps({"apiVersion": "v1", "kind": "List", "items": shuffled}).encode()
    nodes, problems = ci.compact([(as_list, "json")], ci.LabelPolicy())
    assert problems == []
    assert ci.dump(nodes) == reference
    again, _ = ci.compact([(reference.encode(), "own")], ci.LabelPolicy())
    assert ci.dump(again) == reference  # idempotent


def _render_generated(rl: dict[str, Any], case: Path | None, env: dict[str, str]) -> Any:
    out = run_krm(yaml.safe_dump(rl, sort_keys=False).encode(), cwd=case)
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    items = docs[0]["items"] if docs and docs[0].get("kind") == "ResourceList" else docs
    return out.exit_code, [i for i in items if is_generated(i)], out.stderr


def _with_compact_nodes(rl: dict[str, Any]) -> dict[str, Any]:
    items = rl["items"]
    runs = [i for i in items if is_workloadrun(i)]
    inventory = ("Node", "List", "NodeList", "ResourceSlice")  # kubectl get nodes,resourceslices
    node_docs = [i for i in items if i.get("kind") in inventory]
    others = [i for i in items if i not in node_docs]
    policy = ci.LabelPolicy(sorted(ci.target_label_keys(runs)))
    nodes, problems = ci.compact([(yaml.safe_dump_all(node_docs).encode(), "g")], policy)
    assert problems == []
    return {**rl, "items": [*others, *nodes]}


def _golden_resourcelists() -> list[str]:
    out = []
    for case in sorted(GOLDEN.iterdir()):
        f = case / "input.yaml"
        if not f.exists():
            continue
        doc = next(iter(yaml.safe_load_all(f.read_text())), None)
        if (
            isinstance(doc, dict)
            and doc.get("kind") == "ResourceList"
            and any(i.get("kind") == "Node" for i in doc.get("items") or [])
        ):
            out.append(case.name)
    return out


GOLDEN_CASES = _golden_resourcelists()


@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_render_of_the_compact_inventory_equals_render_of_the_full_one_on_goldens(
    name: str,
) -> None:
    case = GOLDEN / name
    env_file = case / "env.yaml"
    env = yaml.safe_load(env_file.read_text()) if env_file.exists() else {}
    rl = yaml.safe_load((case / "input.yaml").read_text())
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, str(v))
        full = _render_generated(rl, case, env)
        small = _render_generated(_with_compact_nodes(rl), case, env)
    assert small == full


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 1000),
    platform=st.sampled_from(bench_inventory().PLATFORMS),
    count=st.integers(2, 24),
    mixed=st.booleans(),
)
def test_render_of_the_compact_inventory_equals_render_of_the_full_one_on_bench_fleets(
    seed: int, platform: str, count: int, mixed: bool
) -> None:
    wr = yaml.safe_load(bench_inventory().WORKLOADRUN)[0]
    rl = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": [wr, *bench_inventory().nodes(count, seed, platform, mixed)],
    }
    assert _render_generated(_with_compact_nodes(rl), None, {}) == _render_generated(rl, None, {})


def test_cli_reads_stdin_list_and_writes_sorted_nodes_with_only_kept_labels(
    tmp_path: Path,
) -> None:
    full = bench_inventory().nodes(3, seed=1, platform="aws")
    lst = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": full[::-1]})
    proc = subprocess.run(
        [*FN, "inventory", "--keep-label", "feature.node.kubernetes.io/*"],
        input=lst,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(proc.stdout))
    assert [d["metadata"]["name"] for d in docs] == sorted(n["metadata"]["name"] for n in full)
    labels = docs[0]["metadata"]["labels"]
    assert any(k.startswith("feature.node.kubernetes.io/") for k in labels)
    assert "nvidia.com/gfd.timestamp" not in labels
    assert docs[0]["metadata"]["annotations"] == {"config.kubernetes.io/local-config": "true"}
    assert "images" not in docs[0]["status"]


def test_cli_refuses_input_without_nodes_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "inventory.yaml"
    proc = subprocess.run(
        [*FN, "inventory", "-", "-o", str(out)],
        input="apiVersion: v1\nkind: List\nitems: []\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "no Node in the input" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("example", ["argocd-app", "kpt-basic"])
def test_every_gitops_example_commits_the_compact_inventory(example: str) -> None:
    """The example's nodes.yaml is exactly what `workloadrun-fn inventory --for DIR` writes
    from it: a user regenerating it from the cluster gets a diff of real changes only."""
    pkg = REPO / "kustomization-examples" / example
    committed = (pkg / "nodes.yaml").read_text()
    proc = subprocess.run(
        [*FN, "inventory", str(pkg / "nodes.yaml"), "--for", str(pkg)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == committed


@pytest.mark.parametrize("encoding", ["yaml", "json"])
def test_dra_only_fleet_keeps_its_gpu_resourceslices_and_renders_the_same(
    tmp_path: Path, encoding: str
) -> None:
    """`kubectl get nodes,resourceslices -o yaml` of DRA-only nodes: the compact inventory
    keeps the gpu.nvidia.com slices (trimmed to what the render reads), drops the other
    drivers' slices, and the render of it equals the render of the full export."""
    case = GOLDEN / "dra-only-h100-nodes-claim-their-gpus-through-dra"
    rl = yaml.safe_load((case / "input.yaml").read_text())
    inventory = [i for i in rl["items"] if i["kind"] in ("Node", "ResourceSlice")]
    lst = {"apiVersion": "v1", "kind": "List", "items": inventory[::-1]}
    text = json.dumps(lst) if encoding == "json" else yaml.safe_dump(lst)
    proc = subprocess.run(
        [*FN, "inventory"], input=text, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    docs = list(yaml.safe_load_all(proc.stdout))
    slices = [d for d in docs if d["kind"] == "ResourceSlice"]
    full_gpu_slices = [
        i
        for i in inventory
        if i["kind"] == "ResourceSlice" and i["spec"]["driver"] == "gpu.nvidia.com"
    ]
    assert [s["metadata"]["name"] for s in slices] == sorted(
        s["metadata"]["name"] for s in full_gpu_slices
    )
    assert {s["spec"]["driver"] for s in slices} == {"gpu.nvidia.com"}
    attrs = {k for s in slices for d in s["spec"]["devices"] for k in d["attributes"]}
    assert attrs <= {"type", "productName", "gpu.nvidia.com/type", "gpu.nvidia.com/productName"}
    assert all(
        s["metadata"]["annotations"] == {"config.kubernetes.io/local-config": "true"}
        for s in slices
    )
    nodes = sum(1 for d in docs if d["kind"] == "Node")
    assert f"inventory: {nodes} node(s), {len(slices)} GPU ResourceSlice(s)" in proc.stderr
    again = subprocess.run(
        [*FN, "inventory"], input=proc.stdout, capture_output=True, text=True, check=False
    )
    assert again.stdout == proc.stdout  # running it on its own output changes nothing
    others = [i for i in rl["items"] if i["kind"] not in ("Node", "ResourceSlice")]
    assert _render_generated({**rl, "items": [*others, *docs]}, case, {}) == _render_generated(
        rl, case, {}
    )


def test_without_the_gpu_slices_a_dra_only_fleet_renders_differently() -> None:
    """The slices carry what the render needs: dropping them changes the render (so the
    test above cannot pass by accident)."""
    case = GOLDEN / "dra-only-h100-nodes-claim-their-gpus-through-dra"
    rl = yaml.safe_load((case / "input.yaml").read_text())
    no_slices = [i for i in rl["items"] if i["kind"] != "ResourceSlice"]
    assert _render_generated({**rl, "items": no_slices}, case, {}) != _render_generated(
        rl, case, {}
    )
