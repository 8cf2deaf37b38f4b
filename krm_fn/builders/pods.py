"""Pieces shared by the runtime builders: the runtime, Job and pod templates, volumes, affinity.

Invariants:
    * The built-in volumes (``dshm`` memory-backed at ``/dev/shm``, ``config-volume`` at
      ``/config`` with mode 0755) come first/last exactly as NVCRE orders them:
      ``[dshm, user volumes..., config-volume]``.
    * Affinity is one required ``nodeSelectorTerm`` whose expressions are concatenated and
      de-duplicated (exact duplicates only), in a stable order.
    * Gang scheduling (the guide's section): ``schedulerName`` is set in every pod spec of the
      runtime (MPI: launcher and workers), since Trainer's ``runtimePatches`` cannot carry it,
      and the queue label (``queueLabelKey: queue``) is on every Job template's and pod
      template's metadata; the pod-template metadata block exists only when a gang scheduler
      is set (or the platform annotates the pods).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from krm_fn.api.rules import CONFIG_PATH, CONFIG_VOLUME, DSHM
from krm_fn.builders.plan import TRAINER_API, RunPlan, distinct
from krm_fn.keys import LABEL_TRAINER_STEP

CONFIG_MODE = 0o755


def dshm_volume() -> dict[str, Any]:
    """The always-present memory-backed ``/dev/shm``."""
    return {"name": DSHM, "emptyDir": {"medium": "Memory"}}


def dshm_mount() -> dict[str, Any]:
    """Mount of :func:`dshm_volume`."""
    return {"name": DSHM, "mountPath": "/dev/shm"}


def config_volume(plan: RunPlan) -> list[dict[str, Any]]:
    """The ``config-volume`` (``spec.config``), or nothing."""
    if not (name := plan.worker.config_map):
        return []
    return [{"name": CONFIG_VOLUME, "configMap": {"name": name, "defaultMode": CONFIG_MODE}}]


def config_mount(plan: RunPlan, read_only: bool = False) -> list[dict[str, Any]]:
    """The ``/config`` mount, read-only on the MPI launcher."""
    if not plan.worker.config_map:
        return []
    flag = {"readOnly": True} if read_only else {}
    return [{"name": CONFIG_VOLUME, "mountPath": CONFIG_PATH, **flag}]


def workload_volumes(plan: RunPlan) -> list[dict[str, Any]]:
    """Volumes of the pods that run the workload (torch/exec node pods, MPI workers).

    Order: ``dshm``, platform volumes (e.g. ``/dev/infiniband``), the user's, ``config-volume``.
    """
    pvc = plan.checkpoint_pvc
    checkpoint = (
        [{"name": "checkpoint", "persistentVolumeClaim": {"claimName": pvc}}] if pvc else []
    )
    return [
        dshm_volume(),
        *(dict(v) for v in plan.platform_volumes),
        *(v.to_k8s() for v in plan.spec.volumes),
        *checkpoint,
        *config_volume(plan),
    ]


def workload_mounts(plan: RunPlan) -> list[dict[str, Any]]:
    """Mounts of the workload container, in the order of :func:`workload_volumes`."""
    return [
        dshm_mount(),
        *(dict(m) for m in plan.platform_mounts),
        *(m.to_k8s() for m in plan.spec.volume_mounts),
        *([{"name": "checkpoint", "mountPath": "/checkpoint"}] if plan.checkpoint_pvc else []),
        *config_mount(plan),
    ]


def workload_pod(plan: RunPlan, head: dict[str, Any], container: dict[str, Any]) -> dict[str, Any]:
    """Pod template of the pods that run the workload (torch/exec node pods, MPI workers).

    ``head`` fields first, then ``spec.initContainers`` as written, ``container``, the workload
    volumes and :func:`pod_extras`; the platform's pod annotations (GKE's NICs) in metadata.
    """
    inits = [c.to_k8s() for c in plan.spec.init_containers]
    spec = {**head, **({"initContainers": inits} if inits else {})}
    spec |= {"containers": [container], "volumes": workload_volumes(plan), **pod_extras(plan)}
    if not plan.pod_annotations:
        return {"spec": spec}
    return {"metadata": {"annotations": dict(plan.pod_annotations)}, "spec": spec}


def affinity(exprs: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """A required node affinity with one term, or ``None`` when there is nothing to require."""
    if not exprs:
        return None
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": distinct(exprs)}]
            }
        }
    }


def training_runtime(
    plan: RunPlan, framework: str, ml_policy: dict[str, Any], jobset: dict[str, Any]
) -> dict[str, Any]:
    """The run's TrainingRuntime; checkpoint restarts become the JobSet's ``failurePolicy``."""
    checkpoint = plan.spec.checkpoint
    if checkpoint is not None and checkpoint.max_restarts:
        jobset = {**jobset, "failurePolicy": {"maxRestarts": checkpoint.max_restarts}}
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainingRuntime",
        "metadata": plan.meta(plan.runtime_name, {"trainer.kubeflow.org/framework": framework}),
        "spec": {"mlPolicy": ml_policy, "template": {"spec": jobset}},
    }


TRAINER_STEP = {LABEL_TRAINER_STEP: "trainer"}
"""The label of the replicated job Trainer puts the TrainJob's image, command and env on."""


def job_template(
    plan: RunPlan, pod: dict[str, Any], labels: dict[str, str] | None = None, **job: Any
) -> dict[str, Any]:
    """A replicated job's Job template: ``labels``, then ``job`` fields and the pod template."""
    g = plan.spec.gang_scheduler
    if g is not None:
        queue = {g.label_key: g.queue_name}
        labels = {**(labels or {}), **queue}
        pod_meta = {**(pod.get("metadata") or {}), "labels": queue}
        pod = {"metadata": pod_meta, "spec": {"schedulerName": g.scheduler_name, **pod["spec"]}}
    meta = {"metadata": {"labels": labels}} if labels else {}
    return {**meta, "spec": {**job, "template": pod}}


def pull_secrets(plan: RunPlan) -> list[dict[str, str]]:
    """``imagePullSecrets`` for every pod of the run."""
    return [{"name": n} for n in plan.worker.pull_secrets]


def pod_extras(plan: RunPlan) -> dict[str, Any]:
    """Scheduling fields shared by every pod of the run (affinity, tolerations, secrets)."""
    out: dict[str, Any] = {}
    if aff := affinity(plan.target_terms):
        out["affinity"] = aff
    if plan.tolerations:
        out["tolerations"] = [dict(t) for t in plan.tolerations]
    if plan.worker.pull_secrets:
        out["imagePullSecrets"] = pull_secrets(plan)
    return out
