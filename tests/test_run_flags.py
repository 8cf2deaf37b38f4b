"""NVCRE's run flags (``nodeList``, ``topologyDomain``, ``topologyKey``, ``testScale``).

Each case renders twice, once with ``render --node-list ...`` (the CLI) and once with the
same options in a ``WorkloadRunRender`` function config (the KRM function), on fleets the
benchmark generates (``bench/make_inventory.py``: AWS layer-1/3 and GCP block labels as the
clouds write them), and checks the TrainJobs' nodes and counts.

NVCRE's own cases (NVIDIA/cluster-readiness-engine pkg/workloadrun/testdata/
apply-run-overrides/*/input.yaml and expected.json, read with the search tools) are replayed
against :func:`krm_fn.stages.run_flags.applied`, the spec edit NVCRE's ``applyRunOverrides``
makes (pkg/workloadrun/workloadrun.go).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions, options_from_config
from krm_fn.entry.commands import cli
from krm_fn.entry.run import run_krm
from krm_fn.stages import run_flags
from tests.builders import MPI, bench_generator, rl, wr

REPO = Path(__file__).resolve().parents[1]
TORCH = {"torch": {"script": "/t.py"}}
FLAG = {"nodeList": "--node-list", "topologyDomain": "--topology-domain"}
FLAG |= {"topologyKey": "--topology-key", "testScale": "--test-scale"}


def fleet(platform: str, count: int) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = bench_generator().nodes(count, seed=7, platform=platform)
    return nodes


def run(num_nodes: int, **spec: Any) -> dict[str, Any]:
    return wr("flags", {"image": "img:latest", "numNodes": num_nodes, "framework": TORCH, **spec})


def render_function(items: list[dict[str, Any]], flags: dict[str, str]) -> tuple[int, str, str]:
    fc = {
        "apiVersion": "fn.nvcre.nvidia.com/v1alpha1",
        "kind": "WorkloadRunRender",
        "metadata": {"name": "render"},
        "spec": flags,
    }
    out = run_krm(yaml.safe_dump(rl(items, fc)).encode())
    answer = yaml.safe_load(out.stdout)
    generated = [i for i in answer["items"] if i["kind"] != "Node"]
    results = [r["message"] for r in answer.get("results") or []]  # infos too
    return out.exit_code, yaml.safe_dump_all(generated), "\n".join([*out.stderr, *results])


def render_cli(
    items: list[dict[str, Any]], flags: dict[str, str], tmp: Path
) -> tuple[int, str, str]:
    (tmp / "in.yaml").write_text(yaml.safe_dump_all(items))
    args = [a for k, v in flags.items() for a in (FLAG[k], v)]
    res = CliRunner().invoke(cli, ["render", str(tmp / "in.yaml"), *args])
    return res.exit_code, res.stdout, res.stderr


Render = Callable[[list[dict[str, Any]], dict[str, str], Path], tuple[int, str, str]]
RENDER: dict[str, Render] = {
    "cli": render_cli,
    "function": lambda items, flags, tmp: render_function(items, flags),
}


def groups(text: str) -> list[tuple[int, list[str], list[str]]]:
    """(numNodes, pinned nodes, applied overrides) of each TrainJob."""
    out = []
    for o in yaml.safe_load_all(text):
        if o and o.get("kind") == "TrainJob":
            ann = o["metadata"]["annotations"]
            nodes = ann["nvcre.nvidia.com/group-nodes"].split(",")
            applied = ann["nvcre.nvidia.com/applied-overrides"].split(",")
            out.append((o["spec"]["trainer"]["numNodes"], nodes, applied))
    return out


def names(nodes: list[dict[str, Any]], *idx: int) -> list[str]:
    return [str(nodes[i]["metadata"]["name"]) for i in idx]


@pytest.fixture(params=sorted(RENDER))
def render(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    way = RENDER[request.param]
    return lambda items, flags: way(items, flags, tmp_path)


def test_node_list_lowers_num_nodes_to_the_named_nodes_that_exist(render: Any) -> None:
    aws = fleet("aws", 24)
    named = [*names(aws, 3, 17), "gpu-aws-99999"]  # the last one is not in the inventory
    code, out, err = render([run(4), *aws], {"nodeList": ",".join(named)})
    assert code == 0, err
    assert [(n, sorted(g)) for n, g, _ in groups(out)] == [(2, names(aws, 3, 17))]
    assert "run:nodeList" in groups(out)[0][2]
    assert "gpu-aws-99999" in err and "not in the input" in err


def test_node_list_never_raises_num_nodes(render: Any) -> None:
    aws = fleet("aws", 24)
    named = names(aws, 1, 2, 3, 4, 5)
    code, out, err = render([run(2), *aws], {"nodeList": ",".join(named)})
    assert code == 0, err
    got = groups(out)
    assert {n for n, _, _ in got} == {2}
    assert {x for _, g, _ in got for x in g} == set(named)


def test_domain_without_key_uses_the_platform_default_and_sizes_num_nodes(render: Any) -> None:
    gcp = fleet("gcp", 80)  # cloud.google.com/gce-topology-block: 72 nodes, then 8
    code, out, err = render([run(2), *gcp], {"topologyDomain": "block-0001"})
    assert code == 0, err
    ((size, nodes, applied),) = groups(out)
    assert (size, sorted(nodes)) == (8, names(gcp, *range(72, 80)))
    assert "run:topologyKey=cloud.google.com/gce-topology-block" in applied


def test_domain_with_a_key_narrows_to_that_label(render: Any) -> None:
    aws = fleet("aws", 40)  # topology.k8s.aws/network-node-layer-3: 16 nodes each
    flags = {"topologyDomain": "nn-00000001"}
    flags["topologyKey"] = "topology.k8s.aws/network-node-layer-3"
    code, out, err = render([run(4, framework={"mpi": MPI}), *aws], flags)
    assert code == 0, err
    ((size, nodes, applied),) = groups(out)
    assert (size, sorted(nodes)) == (16, names(aws, *range(16, 32)))
    assert applied[:2] == [
        "run:topologyDomain=nn-00000001",
        f"run:topologyKey={flags['topologyKey']}",
    ]


def test_domain_on_a_platform_without_a_default_key_asks_for_the_key(render: Any) -> None:
    oci = fleet("oci", 8)
    code, out, err = render([run(2), *oci], {"topologyDomain": "lb-0000"})
    assert code == 1
    assert "needs topologyKey: the oci platform has no default topology key" in err
    assert "kind: TrainJob" not in out


def test_an_empty_flag_is_not_given(render: Any) -> None:
    aws = fleet("aws", 8)
    empty = {k: "" for k in FLAG}
    assert render([run(2), *aws], empty) == render([run(2), *aws], {})


def test_test_scale_from_the_config_replaces_the_file(render: Any) -> None:
    aws = fleet("aws", 40)
    layer3 = {"topologyKey": "topology.k8s.aws/network-node-layer-3"}
    file_run = run(6, orchestration={"testScale": "full-scale", "topology": layer3})
    rack = {n["metadata"]["name"]: n["metadata"]["labels"][layer3["topologyKey"]] for n in aws}
    code, out, err = render([file_run, *aws], {"testScale": "intra-rack"})
    assert code == 0, err
    got = groups(out)  # one TrainJob per rack, on the rack's eligible nodes
    assert sorted(rack[g[0]] for _, g, _ in got) == sorted(set(rack.values()))
    assert all({rack[x] for x in g} == {rack[g[0]]} and n == len(g) for n, g, _ in got)
    assert all("run:testScale=intra-rack" in a for _, _, a in got)
    code, out, err = render([file_run, *aws], {})
    assert code == 0, err
    assert {n for n, _, _ in groups(out)} == {6}  # the file's full-scale: groups of numNodes


def test_intra_rack_without_a_key_splits_by_the_platform_default_key(render: Any) -> None:
    """AWS H100 has no override key (NVCRE sets one for GB200/GB300 only): intra-rack uses
    the platform table's defaultTopologyKey, and says so."""
    aws = fleet("aws", 40)
    key = "topology.k8s.aws/network-node-layer-1"
    rack = {n["metadata"]["name"]: n["metadata"]["labels"][key] for n in aws}
    code, out, err = render([run(2), *aws], {"testScale": "intra-rack"})
    assert code == 0, err
    got = groups(out)
    assert sorted(rack[g[0]] for _, g, _ in got) == sorted(set(rack.values()))
    assert all({rack[x] for x in g} == {rack[g[0]]} and n == len(g) for n, g, _ in got)
    assert f"partitioned by {key}" in err or (
        f"one TrainJob per {key!r} domain, the aws platform's default topology key" in err
    )


def test_intra_rack_on_a_platform_without_a_default_key_asks_for_one(render: Any) -> None:
    code, out, err = render([run(2), *fleet("oci", 8)], {"testScale": "intra-rack"})
    assert code == 1
    assert "no topology key is known for platform 'oci'" in err
    assert "set spec.orchestration.topology.topologyKey" in err
    assert "kind: TrainJob" not in out


# --------------------------------------------------------------------------- NVCRE's cases

NVCRE_CASES = {
    # case: (numNodes, nodeList) -> (numNodes, target.nodeNames); orchestration stays null
    "node-list-clamps-numnodes-down": ((4, "node001,node002"), (2, ["node001", "node002"])),
    "node-list-never-raises-numnodes": (
        (2, "node001,node002,node003,node004,node005"),
        (2, [f"node00{i}" for i in range(1, 6)]),
    ),
    "no-flags-leaves-the-spec-alone": ((3, ""), (3, None)),
}


@pytest.mark.parametrize("case", sorted(NVCRE_CASES))
def test_nvcre_apply_run_overrides_cases(case: str) -> None:
    (num, node_list), (want_num, want_names) = NVCRE_CASES[case]
    model = models.WorkloadRun.model_validate(run(num))
    options = options_from_config({"kind": "ConfigMap", "data": {"nodeList": node_list}})
    got = run_flags.applied(model, options)
    assert got.spec.num_nodes == want_num
    assert (got.spec.target.node_names if got.spec.target else None) == want_names
    assert got.spec.orchestration is None
    if want_names is None:
        assert got is model


def test_test_scale_flag_creates_the_orchestration_block() -> None:
    model = models.WorkloadRun.model_validate(run(2))
    got = run_flags.applied(model, FunctionOptions.model_validate({"testScale": "intra-node"}))
    assert got.spec.orchestration is not None
    assert got.spec.orchestration.test_scale == "intra-node"
    assert got.spec.target is None


# --------------------------------------------------------------------------- the CLI itself


def test_render_help_lists_the_four_flags_with_an_example_each() -> None:
    text = " ".join(
        CliRunner().invoke(cli, ["render", "--help"], terminal_width=2000).stdout.split()
    )
    for flag in FLAG.values():
        assert re.search(rf"{flag} \S+ .*?Example: {flag} \S+", text), flag


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--test-scale", "rack"], "'intra-node', 'intra-rack' or 'full-scale'"),
        (["--topology-key", "a/b/c"], "not a valid label key"),
        (["--topology-domain", "rack 7"], "not a valid label value"),
    ],
)
def test_a_bad_flag_value_is_a_usage_error(args: list[str], message: str) -> None:
    res = CliRunner().invoke(cli, ["render", str(REPO / "fixtures"), *args])
    assert res.exit_code == 2
    assert message in res.stderr


def test_topology_key_alone_is_refused() -> None:
    with pytest.raises(ValueError, match="topologyKey names the label of topologyDomain"):
        options_from_config({"kind": "ConfigMap", "data": {"topologyKey": "a/b"}})


def test_the_readme_run_flag_example_renders_one_rack(monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (REPO / "README.md").read_text()
    line = next(x for x in readme.splitlines() if "render fixtures/ --topology-domain" in x)
    env, _, command = line.split("#")[0].strip().partition(" workloadrun-fn ")
    monkeypatch.setenv(*env.split("=", 1))
    monkeypatch.chdir(REPO)
    res = CliRunner().invoke(cli, command.split())
    assert res.exit_code == 0, res.stderr
    ((size, nodes, _),) = groups(res.stdout)
    assert size == len(nodes) == 8
    assert "run flags applied: run:topologyDomain=nn-0001" in res.stderr


def test_offline_preview_stands_synthetic_nodes_in_the_domain(tmp_path: Path) -> None:
    (tmp_path / "wr.yaml").write_text(yaml.safe_dump(run(2)))
    args = ["render", str(tmp_path / "wr.yaml"), "--platform", "gcp", "--gpu-arch", "h100"]
    res = CliRunner().invoke(cli, [*args, "--topology-domain", "block-7"])
    assert res.exit_code == 0, res.stderr
    ((size, nodes, applied),) = groups(res.stdout)
    assert size == len(nodes) == 2
    assert "run:topologyKey=cloud.google.com/gce-topology-block" in applied


def test_unpinned_warnings_see_num_nodes_as_the_flags_sized_it(render: Any) -> None:
    # a domain sizes numNodes to its eligible nodes (8 in block-0001): 1 -> 8, a gang to schedule
    gcp = fleet("gcp", 80)
    unpinned = run(1, orchestration={"placement": "Unpinned"})
    code, _, err = render([unpinned, *gcp], {})
    assert code == 0, err
    assert "without spec.gangScheduler" not in err
    code, out, err = render([unpinned, *gcp], {"topologyDomain": "block-0001"})
    assert code == 0, err
    jobs = [o for o in yaml.safe_load_all(out) if o["kind"] == "TrainJob"]
    assert [j["spec"]["trainer"]["numNodes"] for j in jobs] == [8]
    assert "numNodes is 8 under placement Unpinned without spec.gangScheduler" in err


def cpu_node(like: dict[str, Any], name: str) -> dict[str, Any]:
    """A node in the same racks as ``like`` but without GPUs (no nvidia.com/gpu* at all)."""
    node = copy.deepcopy(like)
    node["metadata"]["name"] = name
    labels = node["metadata"]["labels"]
    for key in [k for k in labels if k.startswith("nvidia.com/gpu")]:
        del labels[key]
    labels["kubernetes.io/hostname"] = name
    for section in ("capacity", "allocatable"):
        node["status"].get(section, {}).pop("nvidia.com/gpu", None)
    return node


def test_a_domain_never_takes_cpu_nodes_into_the_run(render: Any) -> None:
    # NVCRE's discovery keeps only nvidia.com/gpu.present=true nodes, whatever the target
    gcp = fleet("gcp", 80)  # block-0001: nodes 72-79
    cpu = cpu_node(gcp[72], "cpu-0001")
    code, out, err = render([run(2), *gcp, cpu], {"topologyDomain": "block-0001"})
    assert code == 0, err
    ((size, nodes, _),) = groups(out)
    assert (size, sorted(nodes)) == (8, names(gcp, *range(72, 80)))


def test_a_node_list_naming_a_cpu_node_leaves_it_out_and_says_so(render: Any) -> None:
    aws = fleet("aws", 8)
    cpu = cpu_node(aws[0], "cpu-0001")
    code, out, err = render([run(2), *aws, cpu], {"nodeList": f"{names(aws, 3)[0]},cpu-0001"})
    assert code == 0, err
    assert [(n, g) for n, g, _ in groups(out)] == [(1, names(aws, 3))]
    assert "nodeList names node(s) without nvidia.com/gpu.present=true: cpu-0001" in err


def test_a_node_list_of_unknown_nodes_names_them_in_the_error(render: Any) -> None:
    aws = fleet("aws", 8)
    code, out, err = render([run(2), *aws], {"nodeList": "node998,node999"})
    assert code == 1
    assert "nodeList names node(s) that are not in the input: node998, node999" in err
    assert "no eligible nodes" in err and "the target includes nodeList node998, node999" in err
    assert "kind: TrainJob" not in out
