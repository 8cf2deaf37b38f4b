"""After overrides: pinning kept, affinity and tolerations merged, losses refused with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from krm_fn.entry.run import run_krm
from tests.builders import node, nodes, runtime_spec
from tests.k8s_schemas import validate_all
from tests.robustness.helpers import by_kind, dump, generated, mpi_run, rl

HOST = "kubernetes.io/hostname"
TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def _render(run: dict[str, Any], inventory: list[dict[str, Any]] | None = None) -> Any:
    return run_krm(dump(rl([run, *(inventory or nodes(4))])))


def _err(out: Any) -> str:
    return "\n".join(out.stderr)


def _patch_pod(job: str, pod: dict[str, Any], manager: str = "example.com/team") -> dict[str, Any]:
    """A jobTemplate adding a runtimePatch that sets ``pod`` fields on replicated job ``job``."""
    patch = {"manager": manager, "trainingRuntimeSpec": runtime_spec(job, pod)}
    return {"spec": {"workload": {"trainJob": {"runtimePatches": [patch]}}}}


def _affinity(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": list(exprs)}]
                }
            }
        }
    }


def _user_patch_pod(tj: dict[str, Any], job: str) -> dict[str, Any]:
    (patch,) = [p for p in tj["spec"]["runtimePatches"] if p["manager"] == "example.com/team"]
    (rj,) = [
        r
        for r in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
        if r["name"] == job
    ]
    pod: dict[str, Any] = rj["template"]["spec"]["template"]["spec"]
    return pod


ZONE = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}


def test_override_node_affinity_merges_with_the_group_pinning() -> None:
    run = mpi_run(
        "aff", overrides=[{"when": {}, "jobTemplate": _patch_pod("node", _affinity(ZONE))}]
    )
    out = _render(run)
    assert out.exit_code == 0, out.stderr
    objs = generated(out.stdout)
    assert validate_all(objs) == []
    for tj in by_kind(objs, "TrainJob"):
        group = tj["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"].split(",")
        [term] = _user_patch_pod(tj, "node")["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        exprs = term["matchExpressions"]
        assert exprs[0] == ZONE  # the override's requirement, ANDed with ours
        assert {"key": HOST, "operator": "In", "values": group} in exprs


def test_override_tolerations_merge_with_the_taint_selector_ones() -> None:
    extra = {"key": "example.com/maintenance", "operator": "Exists"}
    run = mpi_run(
        "tol",
        target={"taintSelectors": [TAINT]},
        overrides=[{"when": {}, "jobTemplate": _patch_pod("node", {"tolerations": [extra]})}],
    )
    inventory = [node(f"gpu-node-0{i}", taints=[TAINT]) for i in range(1, 3)]
    out = _render(run, inventory)
    assert out.exit_code == 0, out.stderr
    for tj in by_kind(generated(out.stdout), "TrainJob"):
        tols = _user_patch_pod(tj, "node")["tolerations"]
        assert extra in tols
        assert {
            "key": "dedicated",
            "operator": "Equal",
            "value": "gpu",
            "effect": "NoSchedule",
        } in tols


@pytest.mark.parametrize(
    ("override", "reason"),
    [
        pytest.param(
            {
                "when": {},
                "jobTemplatePatch": [
                    {
                        "op": "remove",
                        "path": "/spec/workload/trainJob/runtimePatches/0/trainingRuntimeSpec"
                        "/template/spec/replicatedJobs/0/template/spec/template/spec/affinity",
                    }
                ],
            },
            "no longer pinned to exactly their group's nodes",
            id="removing-the-pinning-patch",
        ),
        pytest.param(
            {
                "when": {},
                "jobTemplate": _patch_pod(
                    "node", _affinity({"key": HOST, "operator": "In", "values": ["gpu-node-04"]})
                ),
            },
            "no longer pinned to exactly their group's nodes",
            id="moving-the-group-to-another-host",
        ),
        pytest.param(
            {"when": {}, "jobTemplate": _patch_pod("node", {"nodeName": "gpu-node-04"})},
            "nodeName: unknown field 'nodeName'",
            id="pod-field-trainer-patches-cannot-carry",
        ),
        pytest.param(
            {
                "when": {},
                "jobTemplate": {
                    "spec": {
                        "workload": {
                            "trainJob": {
                                "trainer": {
                                    "env": [{"name": "OMPI_MCA_plm_rsh_args", "value": "x"}]
                                }
                            }
                        }
                    }
                },
            },
            "spec.trainer.env must not have reserved envs, invalid envs configured: "
            "['OMPI_MCA_plm_rsh_args']",
            id="trainer-mpi-reserved-env",
        ),
        pytest.param(
            {"when": {}, "jobTemplate": _patch_pod("node", {"tolerations": []}, manager="team")},
            "must be a domain-prefixed path",
            id="runtime-patch-manager-not-a-path",
        ),
        pytest.param(
            {"when": {}, "jobTemplate": _patch_pod("trainer", {"tolerations": []})},
            "must not have replicated job that doesn't exist",
            id="runtime-patch-of-a-missing-replicated-job",
        ),
    ],
)
def test_override_that_breaks_placement_or_trainer_rules_is_refused(
    override: dict[str, Any], reason: str
) -> None:
    out = _render(mpi_run("pin", overrides=[override]))
    assert out.exit_code == 1
    assert "spec.overrides[0]" in _err(out)
    assert reason in _err(out)


def test_dependency_dropping_the_taint_toleration_is_refused() -> None:
    run = mpi_run(
        "dep",
        target={"taintSelectors": [TAINT]},
        overrides=[
            {
                "when": {},
                "dependencies": [
                    {
                        "apiVersion": "trainer.kubeflow.org/v1alpha1",
                        "kind": "TrainingRuntime",
                        "metadata": {"name": "dep-runtime"},
                        "spec": runtime_spec("node", {"tolerations": []}),
                    }
                ],
            }
        ],
    )
    inventory = [node(f"gpu-node-0{i}", taints=[TAINT]) for i in range(1, 3)]
    out = _render(run, inventory)
    assert out.exit_code == 1
    assert "lost the taint-selector toleration(s) dedicated" in _err(out)


# NVCRE parity: pkg/workloadrun/testdata/workload-metadata/
# override-removes-workload-label-restores-intent (NVIDIA/cluster-readiness-engine @b2d18c7a):
# "A JSON patch removed the workload object's metadata. NVCRE owns that label, so the check
# restores the configured queue rather than failing" (pkg/platform ValidateResolvedGangScheduling).
@pytest.mark.parametrize(
    "path",
    ["/spec/workloadMetadata", "/spec/workloadMetadata/labels/kai.scheduler~1queue"],
    ids=["whole-workload-metadata-removed", "queue-label-removed"],
)
def test_gang_queue_label_removed_by_an_override_is_restored(path: str) -> None:
    run = mpi_run(
        "gang",
        gangScheduler={"schedulerName": "kai-scheduler", "queue": "queue-a"},
        workloadMetadata={"labels": {"team": "vision"}},
        overrides=[{"when": {}, "jobTemplatePatch": [{"op": "remove", "path": path}]}],
    )
    out = _render(run)
    assert out.exit_code == 0, _err(out)
    for tj in by_kind(generated(out.stdout), "TrainJob"):
        labels = tj["metadata"]["labels"]
        assert labels["kai.scheduler/queue"] == "queue-a"
        assert ("team" in labels) == path.endswith("queue"), "a removed label stays removed"


def test_gang_queue_label_redirected_by_an_override_is_refused() -> None:
    run = mpi_run(
        "gang",
        gangScheduler={"schedulerName": "kai-scheduler", "queue": "queue-a"},
        overrides=[
            {
                "when": {},
                "jobTemplatePatch": [
                    {
                        "op": "replace",
                        "path": "/spec/workloadMetadata/labels/kai.scheduler~1queue",
                        "value": "queue-b",
                    }
                ],
            }
        ],
    )
    out = _render(run)
    assert out.exit_code == 1
    assert (
        "spec.overrides[0].jobTemplatePatch.spec.workloadMetadata.labels['kai.scheduler/queue']: "
        "conflicting label value 'queue-b', expected 'queue-a' (spec.gangScheduler.queue)"
    ) in _err(out)


def test_dependency_changing_a_template_queue_label_is_refused_naming_the_template() -> None:
    pod = {"metadata": {"labels": {"kai.scheduler/queue": "queue-b"}}, "spec": {}}
    runtime = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "gang-runtime"},
        "spec": {"template": {"spec": {"replicatedJobs": [
            {"name": "launcher", "template": {"spec": {"template": pod}}}
        ]}}},
    }  # fmt: skip
    run = mpi_run(
        "gang",
        gangScheduler={"schedulerName": "kai-scheduler", "queue": "queue-a"},
        overrides=[{"when": {}, "dependencies": [runtime]}],
    )
    out = _render(run)
    assert out.exit_code == 1
    assert (
        "the launcher pod template's queue label kai.scheduler/queue='queue-b' is not 'queue-a'"
    ) in _err(out)
    assert "the node pod template's queue label" not in _err(out)
