"""The torch/exec ``TrainingRuntime``: one replicated job ``node``, one pod per node.

Invariants:
    * The single replicated job ``node`` carries ``trainjob-ancestor-step: trainer`` and a
      container named ``node``, so the TrainJob's image/command/args land on it.
    * ``mlPolicy.torch`` is used for exec too (as NVCRE does), so scripts see the ``PET_*``
      rendezvous variables Trainer injects.
"""

from __future__ import annotations

from typing import Any

from krm_fn.builders import pods
from krm_fn.builders.plan import RunPlan


def build_torch_runtime(plan: RunPlan) -> dict[str, Any]:
    """The run's torch (or exec) ``TrainingRuntime``."""
    container: dict[str, Any] = {
        "name": "node",
        "image": plan.spec.image,
        "env": [e.to_k8s() for e in plan.node_env],
        "resources": dict(plan.worker.resources),
        "volumeMounts": pods.workload_mounts(plan),
    }
    if plan.worker_security_context:
        container["securityContext"] = dict(plan.worker_security_context)
    head = {
        "terminationGracePeriodSeconds": 30,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
    }
    pod = pods.workload_pod(plan, head, container)
    job = {"name": "node", "template": pods.job_template(plan, pod, pods.TRAINER_STEP)}
    ml_policy = {"numNodes": plan.num_nodes, "torch": {}}
    return pods.training_runtime(plan, "torch", ml_policy, {"replicatedJobs": [job]})
