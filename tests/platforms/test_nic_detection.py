"""spec.nicResourceName detected from the Nodes' allocatable when the spec leaves it empty.

NVCRE's rule (NVIDIA/cluster-readiness-engine pkg/controller/nic_detect.go @ 195cb591): on
on-prem GB200/GB300/B200/B300 (the platform table's ``nicDetection``), the one candidate
(``rdma/*`` or ``nvidia.com/mlnxnics``, the table's ``nicResources``) allocatable at the
resolved mlnxPerNode on every node; zero or several: nothing, with the reason.
``spec.mlnxPerNode: 0`` is the explicit opt-out, as NVCRE documents (ADR-087).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.entry.run import run_krm
from krm_fn.fleet.inventory import node_info
from krm_fn.io.output import is_generated
from krm_fn.platforms.catalog import bundled
from krm_fn.platforms.node_gpus import detect_nic_resource
from tests.builders import IMAGE, rl, wr

DATA = Path(__file__).parent / "data"
ONPREM = bundled().platform("onprem")
assert ONPREM is not None
CANDIDATES = ONPREM.nic_resources

# NVCRE's own cases, pkg/controller/testdata/detect-nic-resource/<case>/input.yaml (commits
# as the search index holds them): (case, mlnxPerNode, allocatable per node, expected name,
# expected message or None).
NVCRE = "NVIDIA/cluster-readiness-engine pkg/controller/testdata/detect-nic-resource"
NVCRE_CASES = [
    ("single-candidate", 0, [{"nvidia.com/gpu": "4", "rdma/ib": "1"}] * 2, "rdma/ib", None),
    ("count-satisfied", 8, [{"nvidia.com/gpu": "4", "rdma/ib": "8"}] * 2, "rdma/ib", None),
    ("mlnxnics-exact-name", 8, [{"nvidia.com/mlnxnics": "8"}] * 2, "nvidia.com/mlnxnics", None),
    (
        "prefix-vs-exact-lookalike",
        8,
        [{"rdma/shared_ib": "63", "nvidia.com/mlnx_sriov": "8"}] * 2,
        "rdma/shared_ib",
        None,
    ),
    (
        "gate-hgx-b300",
        1,
        [{"rdma/rdma_shared_device_a": "1000", "rdma/rdmashared": "0"}] * 2,
        "rdma/rdma_shared_device_a",
        None,
    ),
    (
        "multiple-candidates",
        1,
        [{"rdma/ib": "1", "nvidia.com/mlnxnics": "8"}] * 2,
        None,
        "NIC resource auto-detection found multiple candidates allocatable on every target "
        "node (nvidia.com/mlnxnics, rdma/ib); no NIC resource is requested. Set "
        "nicResourceName to choose one.",
    ),
    (
        "below-count-on-one-node",
        8,
        [{"rdma/ib": "8"}, {"rdma/ib": "1"}],
        None,
        "NIC resource auto-detection found candidates (rdma/ib), but none is allocatable at "
        "the requested count 8 on every target node; no NIC resource is requested. Set "
        "nicResourceName to request one, or adjust mlnxPerNode.",
    ),
    (
        "zero-allocatable-on-one-node",
        1,
        [{"rdma/ib": "1"}, {"rdma/ib": "0"}],
        None,
        "NIC resource auto-detection found candidates (rdma/ib), but none is allocatable at "
        "the requested count 1 on every target node; no NIC resource is requested. Set "
        "nicResourceName to request one, or adjust mlnxPerNode.",
    ),
    (
        "candidate-missing-on-one-node",
        1,
        [{"rdma/ib": "1"}, {"nvidia.com/gpu": "4"}],
        None,
        "NIC resource auto-detection found candidates (rdma/ib), but none is allocatable at "
        "the requested count 1 on every target node; no NIC resource is requested. Set "
        "nicResourceName to request one, or adjust mlnxPerNode.",
    ),
    (
        "none-found",
        0,
        [{"nvidia.com/gpu": "4"}] * 2,
        None,
        "NIC resource auto-detection found no RDMA extended resource (rdma/* or "
        "nvidia.com/mlnxnics) on any target node; no NIC resource is requested. Set "
        "nicResourceName to request one.",
    ),
]


@pytest.mark.parametrize(
    ("required", "allocatable", "name", "message"),
    [pytest.param(*c[1:], id=c[0]) for c in NVCRE_CASES],
)
def test_nvcre_detection_cases(
    required: int, allocatable: list[dict[str, str]], name: str | None, message: str | None
) -> None:
    nodes = [
        node_info({"metadata": {"name": f"node-0{i + 1}"}, "status": {"allocatable": a}})
        for i, a in enumerate(allocatable)
    ]
    found, why = detect_nic_resource(nodes, CANDIDATES, required)
    assert found == name
    assert (why or None) == message


def test_no_nodes_detect_nothing() -> None:
    assert detect_nic_resource([], CANDIDATES, 8)[0] is None


def test_the_table_detects_on_prem_nvl72_and_hgx_only_as_nvcre_gates_it() -> None:
    gated = {p.name: set(p.nic_detection or ()) for p in bundled().platforms if p.nic_detection}
    assert gated == {"onprem": {"gb200", "gb300", "b200", "b300"}}


# --------------------------------------------------------------------------- rendered


def _render(nodes_file: str, spec: dict[str, Any], options: dict[str, str]) -> tuple[Any, Any]:
    docs = [d for d in yaml.safe_load_all((DATA / nodes_file).read_text()) if d]
    items = [n for d in docs for n in (d["items"] if d["kind"] == "List" else [d])]
    names = [n["metadata"]["name"] for n in items]
    body = {
        "image": IMAGE,
        "framework": {"torch": {"script": "/workspace/train.py"}},
        "numNodes": len(names),
        "target": {"nodeNames": names},
        **spec,
    }
    fc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fc"}, "data": options}
    out = run_krm(yaml.safe_dump(rl([wr("nic", body, path=None), *items], fc)).encode())
    assert out.exit_code == 0, out.stderr
    doc = yaml.safe_load(out.stdout)
    runtime = next(i for i in doc["items"] if is_generated(i) and i["kind"] == "TrainingRuntime")
    (job,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    (node,) = job["template"]["spec"]["template"]["spec"]["containers"]
    notes = [
        r["message"]
        for r in doc.get("results", [])
        if r["message"].startswith(("nicResourceName", "NIC resource"))
    ]
    return node["resources"], notes


def test_a_shared_rdma_pool_on_every_on_prem_gb200_node_is_requested_at_mlnx_per_node() -> None:
    resources, notes = _render(
        "network-operator-723_rdma-shared-device-63.yaml", {}, {"gpuArch": "gb200"}
    )
    assert resources["limits"]["rdma/rdma_shared_device_a"] == "8"
    assert resources["requests"]["rdma/rdma_shared_device_a"] == "8"
    assert notes == [
        "nicResourceName rdma/rdma_shared_device_a detected on every eligible node (8 per pod, "
        "mlnxPerNode): set spec.nicResourceName to choose another, or spec.mlnxPerNode: 0 to "
        "request none"
    ]


def test_mlnx_per_node_zero_is_the_explicit_opt_out() -> None:
    resources, notes = _render(
        "network-operator-723_rdma-shared-device-63.yaml", {"mlnxPerNode": 0}, {"gpuArch": "gb200"}
    )
    assert not any(k.startswith("rdma/") for k in resources["limits"])
    assert notes == []


def test_the_spec_names_the_resource_and_nothing_is_detected() -> None:
    resources, notes = _render(
        "network-operator-723_rdma-shared-device-63.yaml",
        {"nicResourceName": "rdma/ib"},
        {"gpuArch": "gb200"},
    )
    assert resources["limits"]["rdma/ib"] == "8"
    assert "rdma/rdma_shared_device_a" not in resources["limits"]
    assert notes == []


def test_a_pool_advertised_at_zero_is_not_requested_and_the_run_says_why() -> None:
    resources, notes = _render(
        "network-operator-438_rdma-shared-device-zero.yaml", {"gpusPerNode": 7}, {"gpuArch": "b200"}
    )
    assert not any(k.startswith("rdma/") for k in resources["limits"])
    assert notes == [
        "NIC resource auto-detection found candidates (rdma/rdma_shared_device_a), but none is "
        "allocatable at the requested count 8 on every target node; no NIC resource is "
        "requested. Set nicResourceName to request one, or adjust mlnxPerNode."
    ]


def test_an_efa_node_on_aws_gets_no_detected_nic_resource() -> None:
    resources, notes = _render(
        "aws-k8s-tester-471_g5-efa.yaml", {"gpusPerNode": 1}, {"gpuArch": "a100"}
    )
    assert set(resources["limits"]) == {"nvidia.com/gpu"}
    assert notes == []
