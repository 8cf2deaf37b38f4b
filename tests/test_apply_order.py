"""Apply order: dependencies before TrainJobs, Argo CD sync waves, kpt depends-on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.builders.apply_order import (
    ANN_DEPENDS_ON,
    ANN_SYNC_WAVE,
    is_trainjob,
    object_reference,
    order_run,
)
from krm_fn.io.output import is_generated
from tests.trainer_gate import trainer_sim

GOLDEN = Path(__file__).parent / "golden"
CATALOG = Path(__file__).parent / "golden_catalog"


def _obj(api: str, kind: str, name: str, ns: str | None = "ns", wave: int | None = None) -> dict:
    meta: dict[str, Any] = {"name": name}
    if ns:
        meta["namespace"] = ns
    if wave is not None:
        meta["labels"] = {"nvcre.nvidia.com/wave": str(wave)}
    return {"apiVersion": api, "kind": kind, "metadata": meta}


def _tj(name: str, wave: int, ns: str | None = "ns") -> dict:
    return _obj("trainer.kubeflow.org/v1alpha1", "TrainJob", name, ns, wave)


@pytest.mark.parametrize(
    ("obj", "ref"),
    [
        (_obj("v1", "Secret", "s"), "/namespaces/ns/Secret/s"),
        (
            _obj("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "rt"),
            "trainer.kubeflow.org/namespaces/ns/TrainingRuntime/rt",
        ),
        (
            _obj("resource.nvidia.com/v1beta1", "ComputeDomain", "cd"),
            "resource.nvidia.com/namespaces/ns/ComputeDomain/cd",
        ),
        (
            _obj("resource.k8s.io/v1", "DeviceClass", "dc", ns=None),
            "resource.k8s.io/DeviceClass/dc",
        ),
        (_obj("v1", "ConfigMap", "c", ns=None), None),
    ],
    ids=[
        "core-group-is-empty",
        "trainer-group",
        "any-new-dependency-kind",
        "cluster-scoped-has-three-fields",
        "namespaced-without-namespace-has-no-reference",
    ],
)
def test_kpt_object_reference(obj: dict, ref: str | None) -> None:
    assert object_reference(obj) == ref


def test_dependencies_first_then_trainjobs_by_wave_with_sync_waves_and_depends_on() -> None:
    objs = [
        _tj("g1", 1),
        _obj("v1", "Secret", "pull"),
        _tj("g0", 0),
        _obj("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "rt"),
        _tj("g2", 0),
        _obj("resource.nvidia.com/v1beta1", "ComputeDomain", "cd"),
    ]
    out = order_run(objs)
    assert [o["metadata"]["name"] for o in out] == ["pull", "rt", "cd", "g0", "g2", "g1"]
    waves = [o["metadata"]["annotations"][ANN_SYNC_WAVE] for o in out]
    assert waves == ["0", "0", "0", "1", "1", "2"]
    for j in out[3:]:
        assert j["metadata"]["annotations"][ANN_DEPENDS_ON] == (
            "/namespaces/ns/Secret/pull,"
            "trainer.kubeflow.org/namespaces/ns/TrainingRuntime/rt,"
            "resource.nvidia.com/namespaces/ns/ComputeDomain/cd"
        )
    for d in out[:3]:
        assert ANN_DEPENDS_ON not in d["metadata"]["annotations"]


def test_a_claim_is_applied_first_but_not_awaited_by_kpt() -> None:
    pvc = _obj("v1", "PersistentVolumeClaim", "ckpt")
    out = order_run([_tj("g0", 0), pvc, _obj("v1", "ConfigMap", "c")])
    assert [o["kind"] for o in out] == ["PersistentVolumeClaim", "ConfigMap", "TrainJob"]
    assert out[0]["metadata"]["annotations"][ANN_SYNC_WAVE] == "0"
    assert out[2]["metadata"]["annotations"][ANN_DEPENDS_ON] == "/namespaces/ns/ConfigMap/c"


def test_without_a_namespace_trainjobs_carry_no_depends_on_that_kpt_would_reject() -> None:
    out = order_run([_obj("v1", "Secret", "s", ns=None), _tj("g0", 0, ns=None)])
    assert ANN_DEPENDS_ON not in out[1]["metadata"]["annotations"]
    assert out[1]["metadata"]["annotations"][ANN_SYNC_WAVE] == "1"


def _rendered(path: Path) -> list[dict]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    if len(docs) == 1 and docs[0].get("kind") == "ResourceList":
        docs = docs[0]["items"]
    return [d for d in docs if is_generated(d)]


GOLDENS = sorted(
    [p for p in GOLDEN.glob("*/expected.yaml")] + [p for p in CATALOG.glob("*/*.yaml")]
)


@pytest.mark.parametrize("path", GOLDENS, ids=[str(p.relative_to(p.parents[1])) for p in GOLDENS])
def test_every_golden_output_is_in_apply_order_with_the_contract_annotations(path: Path) -> None:
    objs = _rendered(path)
    kinds = ["TrainJob" if is_trainjob(o) else "dependency" for o in objs]
    assert kinds == sorted(kinds, key=lambda k: k == "TrainJob"), "dependencies come first"
    sim = trainer_sim()
    assert sim.apply_order_problems(objs) == []
    deps = [o for o in objs if not is_trainjob(o)]
    for o in objs:
        ann = o["metadata"]["annotations"]
        if is_trainjob(o):
            wave = int(o["metadata"]["labels"]["nvcre.nvidia.com/wave"])
            assert ann[ANN_SYNC_WAVE] == str(wave + 1)
            refs = [object_reference(d) for d in deps if d["kind"] != "PersistentVolumeClaim"]
            if all(refs):
                assert ann[ANN_DEPENDS_ON] == ",".join(r for r in refs if r)
            else:
                assert ANN_DEPENDS_ON not in ann
        else:
            assert ann[ANN_SYNC_WAVE] == "0"


def test_flux_needs_the_dependencies_in_an_earlier_apply() -> None:
    """One Flux apply of everything fails its dry-run; TrainJobs alone after the deps pass."""
    case = GOLDEN / "basic-mpi-16-nodes-four-groups-with-pull-secret"
    objs = _rendered(case / "expected.yaml")
    sim = trainer_sim()
    assert sim.flux_batch_problems(objs), "a single batch must fail (the reason for the split)"
    deps = [o for o in objs if not is_trainjob(o)]
    jobs = [o for o in objs if is_trainjob(o)]
    have = [
        (o["metadata"].get("namespace") or "default", o["metadata"]["name"])
        for o in deps
        if o["kind"] == "TrainingRuntime"
    ]
    assert sim.flux_batch_problems(jobs, preexisting=have) == []
