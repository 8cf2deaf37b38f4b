"""Nodes whose GPUs are only ``gpu.nvidia.com`` ResourceSlice devices (issue 26 item 3).

kube-scheduler's NodeResourcesFit counts an extended resource missing from a node's
allocatable as 0 (kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go
fitsRequest), so a pod requesting ``nvidia.com/gpu`` never lands on such a node. The render
claims the GPUs through DRA there, or refuses the run with why and the fix.

``trainer_sim.check_render`` models GPUs as allocatable ``nvidia.com/gpu`` only
(../shared/tools/trainer_sim.py:1363-1395 ``feasible_nodes`` reads the pods' ``nvidia.com/gpu``
requests and nothing of ``resourceClaims``; LIMITS at :126-147): it passes the golden because
no pod requests ``nvidia.com/gpu`` any more, but it cannot tell whether a claim can be
allocated. :func:`test_every_claim_fits_the_devices_its_nodes_publish` checks that part the
way the scheduler's DynamicResources plugin allocates it (kubernetes
pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go PreFilter/Filter: each
pod claim from its ResourceClaimTemplate, the devices of the candidate node's ResourceSlices
that the request's DeviceClass selects): DeviceClass ``gpu.nvidia.com`` selects
``device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'``
(NVIDIA DRA driver chart, templates/deviceclass-gpu.yaml; copy in
jgehrcke/k8s-dra-driver-gpu deployments/helm/nvidia-dra-driver-gpu @ d7b7d1ec).
"""

from __future__ import annotations

import copy
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.entry.run import run_krm
from krm_fn.io.output import is_generated
from tests.builders import node
from tests.k8s_schemas import shared_dir

CASE = Path(__file__).parent / "golden" / "dra-only-h100-nodes-claim-their-gpus-through-dra"
SELECTED_BY_GPU_CLASS = {"gpu.nvidia.com": ("gpu.nvidia.com", "gpu")}  # class: (driver, type)


def _inputs() -> dict[str, Any]:
    rl: dict[str, Any] = yaml.safe_load((CASE / "input.yaml").read_text())
    return rl


def _render(rl: dict[str, Any]) -> tuple[int, list[dict[str, Any]], str]:
    out = run_krm(yaml.safe_dump(rl).encode())
    items = yaml.safe_load(out.stdout)["items"] if out.exit_code == 0 else []
    return out.exit_code, [i for i in items if is_generated(i)], "\n".join(out.stderr)


def _pods(objs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(runtime, worker pod spec, pinned nodes) for each TrainJob."""
    runtimes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "TrainingRuntime"}
    out = []
    for job in (o for o in objs if o["kind"] == "TrainJob"):
        runtime = runtimes[job["spec"]["runtimeRef"]["name"]]
        for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
            if rj["name"] == "node":
                nodes = job["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"]
                out.append(
                    (
                        runtime["metadata"]["name"],
                        rj["template"]["spec"]["template"]["spec"],
                        nodes.split(","),
                    )
                )
    return out


def test_the_golden_passes_the_trainer_simulation() -> None:
    tools = shared_dir() / "tools"
    if not (tools / "trainer_sim.py").exists():
        pytest.skip("../shared/tools/trainer_sim.py is not available")
    sys.path.insert(0, str(tools))
    sim = importlib.import_module("trainer_sim")
    code, generated, err = _render(_inputs())
    assert code == 0, err
    failed = [(n, d) for n, ok, d in sim.check_render(generated, _inputs()["items"]) if not ok]
    assert not failed, failed


def test_every_claim_fits_the_devices_its_nodes_publish() -> None:
    code, generated, err = _render(_inputs())
    assert code == 0, err
    templates = {
        o["metadata"]["name"]: o for o in generated if o["kind"] == "ResourceClaimTemplate"
    }
    published: dict[tuple[str, str], int] = {}
    for s in (i for i in _inputs()["items"] if i["kind"] == "ResourceSlice"):
        for device in s["spec"]["devices"]:
            for cls, (driver, kind) in SELECTED_BY_GPU_CLASS.items():
                if s["spec"]["driver"] == driver and device["attributes"]["type"]["string"] == kind:
                    key = (s["spec"]["nodeName"], cls)
                    published[key] = published.get(key, 0) + 1
    pods = _pods(generated)
    assert pods
    for _, pod, nodes in pods:
        (container,) = pod["containers"]
        res = container["resources"]
        assert "nvidia.com/gpu" not in {**res.get("limits", {}), **res.get("requests", {})}
        by_name = {c["name"]: c["resourceClaimTemplateName"] for c in pod["resourceClaims"]}
        assert [c["name"] for c in res["claims"]] == list(by_name)
        for template in by_name.values():
            for request in templates[template]["spec"]["spec"]["devices"]["requests"]:
                exactly = request["exactly"]
                assert exactly["count"] == 8
                for n in nodes:
                    assert published.get((n, exactly["deviceClassName"]), 0) >= exactly["count"]


def test_a_fleet_of_both_kinds_is_refused_naming_each_kind() -> None:
    rl = _inputs()
    rl["items"].append(node("gpu-node-3", provider=None, product=""))
    rl["items"][0]["spec"]["target"]["nodeNames"].append("gpu-node-3")
    code, generated, err = _render(rl)
    assert code == 1 and not generated
    assert (
        "gpu-node-1, gpu-node-2 publish their GPUs only through gpu.nvidia.com ResourceSlices"
        in err
    )
    assert "gpu-node-3 do not" in err and "narrow spec.target" in err


def test_the_users_own_gpu_request_is_refused_with_the_fix() -> None:
    rl = _inputs()
    rl["items"][0]["spec"]["resources"] = {"limits": {"nvidia.com/gpu": "8"}}
    code, _, err = _render(rl)
    assert code == 1
    assert "spec.resources" in err and "never gets; remove it" in err


def test_a_zero_gpu_request_stays_as_written() -> None:
    rl = copy.deepcopy(_inputs())
    rl["items"][0]["spec"]["resources"] = {"limits": {"nvidia.com/gpu": "0"}}
    code, generated, err = _render(rl)
    assert code == 0, err
    assert not [o for o in generated if o["kind"] == "ResourceClaimTemplate"]
