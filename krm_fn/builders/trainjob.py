"""One ``TrainJob`` per node group, pinned to its group's hostnames through ``runtimePatches``.

Invariants:
    * ``runtimePatches`` holds exactly one entry, ours (manager
      ``nvcre.nvidia.com/workloadrun-fn``), and only fields the v2.3 ``PodSpecPatch`` allows
      (``affinity``); no ``time`` (the webhook stamps it) and no container env.
    * The patch's node affinity is the whole required term (hostnames plus the target), since
      a strategic merge replaces ``nodeSelectorTerms`` atomically.
    * A group that overlaps another (the overflow group) is rendered ``suspend: true`` and
      names the group it must run after, so the two can never hold GPUs on the shared nodes at
      the same time.
"""

from __future__ import annotations

from typing import Any

from krm_fn.builders import group_nodes, pods
from krm_fn.builders.plan import TRAINER_API, RunPlan
from krm_fn.fleet.inventory import HOSTNAME_LABEL
from krm_fn.fleet.partition import Group
from krm_fn.keys import ANN_RUNS_AFTER, LABEL_GROUP, LABEL_WAVE, PATCH_MANAGER


def build_trainjob(
    plan: RunPlan,
    group: Group,
    name: str,
    runs_after: str | None,
    active_deadline_seconds: int | None,
    wave: int = 0,
) -> dict[str, Any]:
    """The TrainJob of one group (no nodes under Unpinned).

    ``runs_after`` names the TrainJobs of the previous wave and makes this one suspended.
    """
    metadata, gang = plan.spec.workload_metadata, plan.spec.gang_scheduler
    labels = {
        LABEL_GROUP: group.name,
        LABEL_WAVE: str(wave),
        **(metadata.labels if metadata else {}),
    }
    if gang is not None:
        labels[gang.label_key] = gang.queue_name
    meta = plan.meta(name, labels)
    ann = meta.setdefault("annotations", {})
    ann.update(plan.trainjob_annotations)
    if group.nodes:
        group_nodes.annotate(ann, group.nodes)
    if runs_after:
        ann[ANN_RUNS_AFTER] = runs_after
    ref = {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": plan.runtime_name}
    spec: dict[str, Any] = {"runtimeRef": ref}
    if runs_after:
        spec["suspend"] = True
    if active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = active_deadline_seconds
    spec["trainer"] = _trainer(plan, group)
    if group.nodes:
        spec["runtimePatches"] = [_pinning_patch(plan, group)]
    return {"apiVersion": TRAINER_API, "kind": "TrainJob", "metadata": meta, "spec": spec}


def _trainer(plan: RunPlan, group: Group) -> dict[str, Any]:
    """``spec.trainer``: image, command, env and the group's size."""
    trainer: dict[str, Any] = {"image": plan.spec.image}
    if plan.trainer_command:
        trainer["command"] = list(plan.trainer_command)
    if plan.trainer_args:
        trainer["args"] = list(plan.trainer_args)
    if plan.trainer_env:
        trainer["env"] = [e.to_k8s() for e in plan.trainer_env]
    trainer["numNodes"] = len(group.nodes) if group.nodes else plan.num_nodes
    trainer["numProcPerNode"] = plan.gpus_per_node
    return trainer


def _pinning_patch(plan: RunPlan, group: Group) -> dict[str, Any]:
    """Our ``runtimePatches`` entry: every pod required onto the group's hostnames."""
    exprs = [
        {"key": HOSTNAME_LABEL, "operator": "In", "values": list(group.nodes)},
        *plan.target_terms,
    ]
    aff = pods.affinity(exprs)
    jobs = ["node", "launcher"] if plan.spec.framework.name == "mpi" else ["node"]
    return {
        "manager": PATCH_MANAGER,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {"name": j, "template": {"spec": {"template": {"spec": {"affinity": aff}}}}}
                        for j in jobs
                    ]
                }
            }
        },
    }
