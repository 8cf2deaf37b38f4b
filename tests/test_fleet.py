"""Reading the fleet: GPU counts, ResourceSlices, GPU-resource taints, platform warnings.

The golden cases under tests/golden/ (see FLEET-FIXTURES.md) show whole renders; these tests
pin each rule on its own, and replay the successful fleet goldens through the Trainer/JobSet
simulation (``../shared/tools/trainer_sim.py``), including pod feasibility on their Nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.entry.run import run_krm
from krm_fn.fleet.inventory import node_info, select_nodes
from krm_fn.io.output import is_generated, is_input_kind
from krm_fn.platforms import node_gpus as fleet
from krm_fn.platforms.detect import hostname_only, unrecognised_provider_ids
from tests.builders import IMAGE, rl, wr
from tests.trainer_gate import trainer_sim

GOLDEN = Path(__file__).parent / "golden"
FLEET_CASES = [
    "gke-node-without-gfd-named-by-accelerator-label-gpu-taint-tolerated",
    "one-gpu-vm-sized-from-the-node",
    "dra-only-node-product-and-count-from-its-resourceslice",
    "vgpu-profile-keeps-its-name",
    "unknown-cloud-provider-is-a-warning-naming-the-settings",
    "mixed-model-fleet-warns-and-keeps-model-names",
]


def node(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    allocatable: str | None = None,
    taints: list[dict[str, str]] | None = None,
    provider: str = "",
) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": [{"type": "Ready", "status": "True"}]}
    if allocatable is not None:
        status["allocatable"] = {"nvidia.com/gpu": allocatable}
    spec: dict[str, Any] = {"providerID": provider} if provider else {}
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": status,
    }


def gpu_slice(node_name: str, devices: list[dict[str, Any]], version: str = "v1") -> dict[str, Any]:
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-gpu.nvidia.com-abcde"},
        "spec": {"driver": "gpu.nvidia.com", "nodeName": node_name, "devices": devices},
    }


def device(name: str, product: str, kind: str = "gpu") -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {"productName": {"string": product}, "type": {"string": kind}},
    }


# --------------------------------------------------------------------------- counts


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            node("n", allocatable="1", labels={"nvidia.com/gpu.count": "8"}),
            (1, fleet.SOURCE_ALLOCATABLE),
            id="allocatable-wins-over-the-count-label",
        ),
        pytest.param(
            node("n", allocatable="0", labels={"nvidia.com/gpu.count": "8"}),
            (8, fleet.SOURCE_COUNT_LABEL),
            id="zero-allocatable-is-unknown-so-the-label-answers",
        ),
        pytest.param(
            node("n", labels={"nvidia.com/gpu.count": "4"}),
            (4, fleet.SOURCE_COUNT_LABEL),
            id="count-label-without-allocatable",
        ),
        pytest.param(node("n"), (None, ""), id="a-node-that-says-nothing"),
        pytest.param(
            node("n", labels={"nvidia.com/gpu.count": "many"}),
            (None, ""),
            id="unparseable-label-is-ignored",
        ),
    ],
)
def test_node_gpu_count(obj: dict[str, Any], expected: tuple[int | None, str]) -> None:
    assert fleet.node_gpu_count(node_info(obj), {}) == expected


def test_node_gpu_count_falls_back_to_resource_slice_devices() -> None:
    slices = fleet.resource_slice_gpus(
        [gpu_slice("n", [device(f"gpu-{i}", "NVIDIA GB200") for i in range(4)])]
    )
    assert fleet.node_gpu_count(node_info(node("n")), slices) == (4, fleet.SOURCE_SLICE)


def test_fleet_count_is_the_count_the_reporting_nodes_agree_on() -> None:
    nodes = [node_info(node("a", allocatable="1")), node_info(node("b"))]
    assert fleet.fleet_gpu_count(nodes, {}) == ({1: ("a",)}, fleet.SOURCE_ALLOCATABLE)


def test_fleet_count_with_different_counts_has_no_source_and_the_groups() -> None:
    nodes = [node_info(node(n, allocatable=c)) for n, c in (("a", "8"), ("b", "1"), ("c", "8"))]
    assert fleet.fleet_gpu_count(nodes, {}) == ({8: ("a", "c"), 1: ("b",)}, "")


# --------------------------------------------------------------------------- ResourceSlices


def test_resource_slices_give_product_as_gfd_labels_it_and_count_whole_gpus() -> None:
    objects = [
        gpu_slice(
            "n1",
            [
                device("gpu-0", "NVIDIA GB300"),
                device("gpu-1", "NVIDIA GB300"),
                device("mig-0", "NVIDIA GB300", kind="mig"),
            ],
        ),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n1-compute-domain"},
            "spec": {"driver": "compute-domain.nvidia.com", "nodeName": "n1", "devices": []},
        },
    ]
    got = fleet.resource_slice_gpus(objects)
    assert got == {"n1": fleet.SliceGpus("NVIDIA-GB300", 2, ("n1-gpu.nvidia.com-abcde",))}


def test_resource_slices_v1beta1_basic_attributes_and_lists_are_read() -> None:
    beta = gpu_slice("n2", [], version="v1beta1")
    beta["spec"]["devices"] = [
        {"name": "gpu-0", "basic": {"attributes": {"productName": {"string": "GRID A100-10C"}}}}
    ]
    listed = {"apiVersion": "v1", "kind": "List", "items": [beta]}
    assert fleet.resource_slice_gpus([listed])["n2"].product == "GRID-A100-10C"


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1"}, id="no-spec"),
        pytest.param(
            {"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1", "spec": []},
            id="spec-not-a-mapping",
        ),
        pytest.param(
            {
                "kind": "ResourceSlice",
                "apiVersion": "resource.k8s.io/v1",
                "spec": {"driver": "gpu.nvidia.com", "devices": [device("g", "NVIDIA B200")]},
            },
            id="no-node-name",
        ),
        pytest.param(
            {
                "kind": "ResourceSlice",
                "apiVersion": "resource.k8s.io/v1",
                "spec": {"driver": "gpu.nvidia.com", "nodeName": "n", "devices": [1, None]},
            },
            id="devices-not-mappings",
        ),
    ],
)
def test_malformed_resource_slices_are_ignored(obj: dict[str, Any]) -> None:
    assert all(v.count == 0 for v in fleet.resource_slice_gpus([obj]).values())


def test_slice_product_added_only_to_nodes_that_name_no_gpu() -> None:
    slices = fleet.resource_slice_gpus(
        [gpu_slice(n, [device("gpu-0", "NVIDIA GB200")]) for n in ("dra", "gfd", "gke")]
    )
    nodes = [
        node_info(node("dra")),
        node_info(node("gfd", labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})),
        node_info(node("gke", labels={"cloud.google.com/gke-accelerator": "nvidia-l4"})),
    ]
    out = fleet.with_slice_products(nodes, slices)
    assert [n.labels.get("nvidia.com/gpu.product") for n in out] == [
        "NVIDIA-GB200",
        "NVIDIA-H100-80GB-HBM3",
        None,
    ]
    assert out[0].raw["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-GB200"
    assert "nvidia.com/gpu.product" not in nodes[0].labels  # the input node is not modified


def test_resource_slices_are_inventory_not_output() -> None:
    assert is_input_kind(gpu_slice("n", []))
    assert not is_input_kind({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})


# --------------------------------------------------------------------------- taints


GKE_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def test_gpu_resource_taint_does_not_exclude_and_is_reported_for_a_toleration() -> None:
    nodes = [node_info(node("gke", taints=[GKE_TAINT], labels={"nvidia.com/gpu.present": "true"}))]
    sel = select_nodes(nodes, None, [], ["nvidia.com/gpu"])
    assert [n.name for n in sel.eligible] == ["gke"]
    assert sel.resource_taints == ("nvidia.com/gpu",)


@pytest.mark.parametrize(
    "taint",
    [
        pytest.param(
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoExecute"},
            id="no-execute-is-not-covered-by-the-admission-plugin",
        ),
        pytest.param(
            {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
            id="a-key-that-is-not-a-requested-resource",
        ),
    ],
)
def test_other_taints_still_exclude(taint: dict[str, str]) -> None:
    nodes = [node_info(node("n", taints=[taint], labels={"nvidia.com/gpu.present": "true"}))]
    sel = select_nodes(nodes, None, [], ["nvidia.com/gpu"])
    assert not sel.eligible
    assert sel.resource_taints == ()


def test_user_toleration_covering_the_gpu_taint_adds_nothing() -> None:
    nodes = [node_info(node("n", taints=[GKE_TAINT], labels={"nvidia.com/gpu.present": "true"}))]
    tol = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    sel = select_nodes(nodes, None, tol, ["nvidia.com/gpu"])
    assert [n.name for n in sel.eligible] == ["n"]
    assert sel.resource_taints == ()


# --------------------------------------------------------------------------- platform warnings


def test_unrecognised_provider_ids_grouped_by_scheme() -> None:
    nodes = [
        node("a", provider="hcloud://123"),
        node("b", provider="hcloud://124"),
        node("c", provider="kind://docker/kind/kind-worker"),
        node("d", provider="aws:///us-east-1a/i-1"),
        node("e", provider="openstack:///x"),
        node("f"),
    ]
    assert unrecognised_provider_ids(nodes) == {"hcloud://": ["a", "b"], "kind://": ["c"]}


def test_forge_by_hostname_only_names_nodes_nvcre_would_call_forge() -> None:
    nodes = [
        node("forge-01"),
        node("forge-02", labels={"nke.nvidia.com/site-name": "s"}),
        node("forge-03", provider="kind://x"),
        node("gpu-01"),
    ]
    assert hostname_only(nodes) == {"forge": (["forge-01"], "forge", ["nke.nvidia.com/site-name"])}


# --------------------------------------------------------------------------- whole renders


def _render(items: list[dict[str, Any]], fc: dict[str, Any] | None = None) -> Any:
    return run_krm(yaml.safe_dump(rl(items, fc)).encode(), cwd=Path.cwd())


def _run(spec: dict[str, Any]) -> dict[str, Any]:
    return wr(
        "r",
        {"image": IMAGE, "framework": {"torch": {"script": "/w/train.py"}}, "numNodes": 1, **spec},
        path=None,
    )


def _generated(stdout: str) -> list[dict[str, Any]]:
    doc = yaml.safe_load(stdout)
    return [i for i in doc["items"] if is_generated(i)]


def test_every_generated_object_carries_applied_overrides_even_when_empty() -> None:
    gpu = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-80GB-PCIe"}
    # GCP A100: no entry of NVCRE's table matches it (Azure would get azure-mlnxnics).
    out = _render(
        [_run({}), node("vm", labels=gpu, allocatable="1", provider="gce://p/us-central1-a/vm")]
    )
    assert out.exit_code == 0, out.stderr
    objs = _generated(out.stdout)
    assert objs
    assert all(
        o["metadata"]["annotations"]["nvcre.nvidia.com/applied-overrides"] == "" for o in objs
    )


def test_unknown_model_without_count_warns_with_table_sizing() -> None:
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H20"}
    out = _render([_run({}), node("n", labels=labels)])
    assert out.exit_code == 0, out.stderr
    assert any(
        "GPU model 'h20' (NVIDIA-H20) has no entry in the GPU defaults" in line
        and "gpusPerNode=4" in line
        for line in out.stderr
    ), out.stderr


def test_no_model_warning_does_not_claim_no_product_label_or_suggest_set_gpus_per_node() -> None:
    out = _render([_run({"gpusPerNode": 2}), node("n", labels={"nvidia.com/gpu.present": "true"})])
    assert out.exit_code == 0, out.stderr
    (line,) = [x for x in out.stderr if "names its GPU model" in x]
    assert "2 GPU(s) per node from spec.gpusPerNode" in line
    assert "set spec.gpusPerNode" not in line


def test_hostname_containing_forge_stays_onprem_with_a_warning() -> None:
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-B200"}
    out = _render([_run({}), node("forge-gpu-01", labels=labels, allocatable="8")])
    assert out.exit_code == 0, out.stderr
    (job,) = [o for o in _generated(out.stdout) if o["kind"] == "TrainJob"]
    assert job["metadata"]["annotations"]["nvcre.nvidia.com/detected-platform"] == "onprem"
    assert any("NVCRE calls them forge" in line for line in out.stderr), out.stderr


def test_default_target_hints_at_gke_nodes_without_gpu_present() -> None:
    gke = {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    out = _render([_run({}), node("gke-1", labels=gke, allocatable="1", provider="gce://p/z/g")])
    assert out.exit_code == 1
    assert any(
        "nodeSelector cloud.google.com/gke-accelerator: nvidia-l4" in line for line in out.stderr
    ), out.stderr


# --------------------------------------------------------------------------- trainer_sim


def _items(text: str) -> Iterator[dict[str, Any]]:
    for doc in yaml.safe_load_all(text):
        if doc and doc.get("kind") == "ResourceList":
            yield from doc["items"]
        elif doc:
            yield doc


@pytest.mark.parametrize("case", FLEET_CASES)
def test_fleet_golden_passes_the_trainer_simulation(case: str) -> None:
    sim = trainer_sim()
    text = (GOLDEN / case / "input.yaml").read_text()
    out = run_krm(text.encode(), cwd=GOLDEN / case)
    assert out.exit_code == 0, out.stderr
    generated = [i for i in _items(out.stdout) if is_generated(i)]
    inputs = list(_items(text))
    # A DRA-only case claims its GPUs through DRA, which the simulation does not model
    # (it sees no nvidia.com/gpu request); tests/test_dra_only.py checks the claims.
    failed = [(n, d) for n, ok, d in sim.check_render(generated, inputs, label=case) if not ok]
    assert not failed, failed


def test_resource_slices_in_the_input_come_back_marked_local_config() -> None:
    case = GOLDEN / "dra-only-node-product-and-count-from-its-resourceslice"
    out = run_krm((case / "input.yaml").read_bytes(), cwd=case)
    assert out.exit_code == 0, out.stderr
    slices = [i for i in _items(out.stdout) if i.get("kind") == "ResourceSlice"]
    assert len(slices) == 4
    for s in slices:
        assert s["metadata"]["annotations"]["config.kubernetes.io/local-config"] == "true"


def test_default_target_hints_at_dra_only_nodes() -> None:
    items = [_run({}), node("dra-1"), gpu_slice("dra-1", [device("gpu-0", "NVIDIA GB200")])]
    out = _render(items)
    assert out.exit_code == 1
    assert any(
        "1 node(s) advertise GPUs in gpu.nvidia.com ResourceSlices" in line and "dra-1" in line
        for line in out.stderr
    ), out.stderr
