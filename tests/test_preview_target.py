"""Offline preview as NVCRE's: the GPU from the target, synthetic nodes that satisfy it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from krm_fn.api import models
from krm_fn.entry.preview import preview
from krm_fn.fleet.inventory import select_nodes
from krm_fn.platforms.run_platform import synthetic_nodes, target_gpu_product
from tests.builders import wr

MPI = {"mpirunPath": "/usr/local/mpi/bin/mpirun", "binary": "/b"}


def _target(**t: Any) -> models.Target:
    return models.Target.model_validate(t)


@pytest.mark.parametrize(
    ("target", "product"),
    [
        pytest.param({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-B200"}}, "NVIDIA-B200",
                     id="from-node-selector"),
        pytest.param(
            {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In",
                                   "values": ["NVIDIA-GB200", "NVIDIA-GB300"]}]},
            "NVIDIA-GB200",
            id="from-an-in-expression",
        ),
        pytest.param({"nodeSelector": {"pool": "a"}}, None, id="target-names-no-gpu"),
    ],
)  # fmt: skip
def test_gpu_product_comes_from_the_target(target: dict[str, Any], product: str | None) -> None:
    assert target_gpu_product(_target(**target)) == product


def test_synthetic_nodes_satisfy_every_selector_the_target_has() -> None:
    target = _target(
        nodeSelector={"pool": "training"},
        matchExpressions=[
            {"key": "nvidia.com/gpu.clique", "operator": "Exists"},
            {"key": "rack", "operator": "In", "values": ["r1", "r2"]},
            {"key": "generation", "operator": "Gt", "values": ["3"]},
            {"key": "retired", "operator": "DoesNotExist"},
        ],
        taintSelectors=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
    )
    nodes = synthetic_nodes(3, "aws", "h100", target)
    tolerations = [t.to_toleration() for t in target.taint_selectors]
    selected = select_nodes(nodes, target, tolerations)
    assert [n.name for n in selected.eligible] == [n.name for n in nodes]
    assert len(nodes) == 3


def test_synthetic_nodes_are_the_target_node_names() -> None:
    nodes = synthetic_nodes(2, None, "h100", _target(nodeNames=["a-01", "a-02"]))
    assert [n.name for n in nodes] == ["a-01", "a-02"]


def test_platform_alone_previews_a_targeted_run(tmp_path: Any) -> None:
    run = wr(
        "pv",
        {
            "image": "img",
            "numNodes": 2,
            "framework": {"mpi": MPI},
            "target": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-B200", "pool": "t"}},
        },
        path=None,
    )
    path = tmp_path / "wr.yaml"
    path.write_text(yaml.safe_dump(run))
    code, out, err = preview([str(path)], None, "nscale", None, "yaml")
    assert code == 0, err
    assert "WorkloadRun pv: 1 group(s), platform nscale, GPU b200" in err
    docs = [d for d in yaml.safe_load_all(out) if d]
    [tj] = [d for d in docs if d["kind"] == "TrainJob"]
    assert tj["metadata"]["annotations"]["nvcre.nvidia.com/detected-gpu-architecture"] == "b200"
