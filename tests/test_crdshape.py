"""The run-time CRD table is derived from the pinned CRDs, and catches what the API server would."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.api import crdshape
from tests.builders import runtime_spec
from tests.k8s_schemas import shared_dir

CRD_DIR = shared_dir() / "schemas" / "crds"
pytestmark = pytest.mark.skipif(not CRD_DIR.is_dir(), reason="needs ../shared/schemas/crds")


def _derived() -> str:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the CRDs are megabytes of YAML
    crds = {k: yaml.load((CRD_DIR / f).read_text(), loader) for k, f in crdshape.KINDS.items()}
    return crdshape.dumps(crdshape.derive(crds))


def test_committed_table_is_exactly_what_the_pinned_crds_give(update_golden: bool) -> None:
    derived = _derived()
    if update_golden:
        Path(crdshape.TABLE_PATH).write_text(derived)
    assert Path(crdshape.TABLE_PATH).read_text() == derived


TRAINJOB: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "run-group-0", "labels": {"a": "b"}},
    "spec": {
        "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "r"},
        "trainer": {"image": "i", "numNodes": 2, "env": [{"name": "A", "value": "1"}]},
        "runtimePatches": [
            {
                "manager": "m",
                "trainingRuntimeSpec": runtime_spec("node", {"tolerations": []}),
            }
        ],
    },
}


def test_a_valid_trainjob_has_no_problem() -> None:
    assert crdshape.unknown_fields("TrainJob", TRAINJOB) == []


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        pytest.param(("spec", "trainer", "envv"), [], "spec.trainer.envv", id="typo-in-trainer"),
        pytest.param(("spec", "workloadMetadata"), {}, "spec.workloadMetadata", id="nvcre-field"),
        pytest.param(("metadata", "lables"), {}, "metadata.lables", id="typo-in-metadata"),
    ],
)
def test_unknown_field_is_named_with_its_path(
    path: tuple[str, ...], value: Any, where: str
) -> None:
    obj = copy.deepcopy(TRAINJOB)
    node = obj
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    [(at, msg)] = crdshape.unknown_fields("TrainJob", obj)
    assert at == where
    assert "unknown field" in msg


def test_deep_unknown_field_inside_runtime_patch_pod_spec() -> None:
    obj = copy.deepcopy(TRAINJOB)
    rj = obj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
    rj["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["hostNetworkk"] = True
    [(at, _)] = crdshape.unknown_fields("TrainJob", obj)
    assert at.endswith("replicatedJobs[0].template.spec.template.spec.hostNetworkk")


def test_wrong_type_is_reported() -> None:
    obj = copy.deepcopy(TRAINJOB)
    obj["spec"]["trainer"]["numNodes"] = "two"
    assert crdshape.unknown_fields("TrainJob", obj) == [
        ("spec.trainer.numNodes", "must be an integer, got str")
    ]


def test_prefix_checks_a_part_in_place() -> None:
    problems = crdshape.unknown_fields("TrainJob", {"imagee": "x"}, "spec.trainer")
    assert problems[0][0] == "spec.trainer.imagee"
