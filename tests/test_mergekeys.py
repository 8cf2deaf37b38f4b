"""The strategic-merge keys are derived from the pinned CRDs (and the core OpenAPI they embed),
and a patch merges each keyed list like the real ``kubectl patch --type strategic``."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.api import mergekeys
from krm_fn.overrides.smp import strategic_merge
from tests.builders import runtime_spec
from tests.k8s_schemas import shared_dir

CRD_DIR = shared_dir() / "schemas" / "crds"
needs_crds = pytest.mark.skipif(not CRD_DIR.is_dir(), reason="needs ../shared/schemas/crds")

POD = "spec.template.spec.replicatedJobs.template.spec.template.spec"


def _derived() -> str:
    import kubernetes_validate

    core = (
        Path(kubernetes_validate.__file__).parent
        / "kubernetes-json-schema"
        / mergekeys.CORE_SCHEMA
        / "_definitions.json"
    )
    defs = json.loads(core.read_text())["$defs"]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the CRDs are megabytes of YAML
    crds = {k: yaml.load((CRD_DIR / f).read_text(), loader) for k, f in mergekeys.KINDS.items()}
    return mergekeys.dumps(mergekeys.derive(crds, defs))


@needs_crds
def test_committed_merge_keys_are_exactly_what_the_pinned_crds_give(update_golden: bool) -> None:
    derived = _derived()
    if update_golden:
        Path(mergekeys.TABLE_PATH).write_text(derived)
    assert Path(mergekeys.TABLE_PATH).read_text() == derived


@pytest.mark.parametrize(
    ("kind", "path", "keys"),
    [
        pytest.param("TrainingRuntime", f"{POD}.hostAliases", ["ip"], id="hostAliases-by-ip"),
        pytest.param(
            "TrainingRuntime",
            f"{POD}.topologySpreadConstraints",
            ["topologyKey"],
            id="topologySpread-by-topologyKey-as-kubectl-not-the-list-map-pair",
        ),
        pytest.param(
            "TrainingRuntime",
            f"{POD}.containers.volumeDevices",
            ["devicePath"],
            id="volumeDevices-by-devicePath",
        ),
        pytest.param(
            "TrainingRuntime",
            f"{POD}.containers.ports",
            ["containerPort"],
            id="ports-by-containerPort-as-kubectl",
        ),
        pytest.param(
            "TrainingRuntime",
            "spec.template.spec.replicatedJobs.dependsOn",
            ["name"],
            id="jobset-dependsOn-by-name",
        ),
        pytest.param(
            "TrainJob",
            "spec.runtimePatches.trainingRuntimeSpec.template.spec.replicatedJobs.template.spec"
            ".template.spec.containers.volumeMounts",
            ["name"],
            id="trainer-patch-volumeMounts-by-name-as-its-crd",
        ),
        pytest.param("TrainJob", "spec.runtimePatches", ["manager"], id="runtimePatches"),
    ],
)
def test_table_has_the_key(kind: str, path: str, keys: list[str]) -> None:
    assert mergekeys.load_table()["kinds"][kind][path] == keys


@pytest.mark.parametrize("field", ["tolerations", "args", "command", "nodeSelectorTerms"])
def test_atomic_lists_have_no_key(field: str) -> None:
    table = mergekeys.load_table()
    assert field not in table["fields"]
    assert not any(p.endswith("." + field) for p in table["kinds"]["TrainingRuntime"])


def _runtime(pod_spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "r"},
        "spec": runtime_spec("node", pod_spec),
    }


def _pod_of(runtime: dict[str, Any]) -> dict[str, Any]:
    rj = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]
    pod: dict[str, Any] = rj["template"]["spec"]["template"]["spec"]
    return pod


BASE_POD: dict[str, Any] = {
    "containers": [
        {
            "name": "node",
            "image": "i",
            "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
            "env": [{"name": "A", "value": "1"}],
            "volumeMounts": [{"name": "v", "mountPath": "/v"}],
            "volumeDevices": [{"name": "d", "devicePath": "/dev/a"}],
        }
    ],
    "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}],
    "topologySpreadConstraints": [
        {"topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1}
    ],
    "tolerations": [{"key": "a", "operator": "Exists"}],
    "volumes": [{"name": "v", "emptyDir": {}}],
}

PATCHES = [
    pytest.param({"hostAliases": [{"ip": "10.0.0.2", "hostnames": ["b"]}]}, id="hostAliases-added"),
    pytest.param(
        {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["c"]}]}, id="hostAliases-merged-by-ip"
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {"topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 2}
            ]
        },
        id="topologySpread-merged-by-topologyKey",
    ),
    pytest.param(
        {
            "containers": [
                {"name": "node", "volumeDevices": [{"name": "e", "devicePath": "/dev/b"}]}
            ]
        },
        id="volumeDevices-added",
    ),
    pytest.param(
        {"containers": [{"name": "node", "ports": [{"containerPort": 80, "protocol": "UDP"}]}]},
        id="ports-merged-by-containerPort",
    ),
    pytest.param(
        {"containers": [{"name": "node", "env": [{"name": "B", "value": "2"}]}]},
        id="env-added-by-name",
    ),
    pytest.param(
        {"containers": [{"name": "node", "volumeMounts": [{"name": "w", "mountPath": "/v"}]}]},
        id="volumeMounts-merged-by-mountPath",
    ),
    pytest.param({"tolerations": [{"key": "b", "operator": "Exists"}]}, id="tolerations-replaced"),
    pytest.param({"volumes": [{"name": "x", "emptyDir": {}}]}, id="volumes-added-by-name"),
]


def _sorted_lists(node: Any) -> Any:
    """Lists in a canonical order: kubectl puts patch-only items first, we append them."""
    if isinstance(node, dict):
        return {k: _sorted_lists(v) for k, v in node.items()}
    if isinstance(node, list):
        items = [_sorted_lists(v) for v in node]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return node


KUBECTL = shutil.which("kubectl")


@pytest.mark.e2e
@pytest.mark.skipif(KUBECTL is None, reason="needs kubectl")
@pytest.mark.parametrize("patch", PATCHES)
def test_pod_template_patch_merges_like_kubectl_strategic(
    patch: dict[str, Any], tmp_path: Path
) -> None:
    """The real ``kubectl patch --local --type strategic`` on a Pod is the oracle."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": BASE_POD}
    (tmp_path / "pod.json").write_text(json.dumps(pod))
    done = subprocess.run(
        [
            str(KUBECTL),
            *["patch", "--local", "--type", "strategic", "-o", "json"],
            *("-f", str(tmp_path / "pod.json"), "-p", json.dumps({"spec": patch})),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "KUBECONFIG": os.devnull},
    )
    expected = json.loads(done.stdout)["spec"]
    ours = _pod_of(strategic_merge(_runtime(copy.deepcopy(BASE_POD)), _runtime(patch)))
    assert _sorted_lists(ours) == _sorted_lists(expected)


@pytest.mark.parametrize("patch", PATCHES)
def test_fragment_without_kind_merges_the_same_as_the_runtime(patch: dict[str, Any]) -> None:
    whole = _pod_of(strategic_merge(_runtime(copy.deepcopy(BASE_POD)), _runtime(patch)))
    assert strategic_merge(BASE_POD, patch) == whole


def test_dependson_merges_by_name() -> None:
    def rt(rjobs: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "kind": "TrainingRuntime",
            "spec": {"template": {"spec": {"replicatedJobs": rjobs}}},
        }

    base = rt([{"name": "node", "dependsOn": [{"name": "init", "status": "Ready"}]}])
    patch = rt([{"name": "node", "dependsOn": [{"name": "init", "status": "Complete"},
                                               {"name": "x", "status": "Ready"}]}])  # fmt: skip
    merged = strategic_merge(base, patch)
    assert merged["spec"]["template"]["spec"]["replicatedJobs"][0]["dependsOn"] == [
        {"name": "init", "status": "Complete"},
        {"name": "x", "status": "Ready"},
    ]
