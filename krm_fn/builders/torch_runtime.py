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
from krm_fn.builders.plan import TRAINER_API, RunPlan


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
    runtime: dict[str, Any] = {
        "apiVersion": TRAINER_API,
        "kind": "TrainingRuntime",
        "metadata": plan.meta(plan.runtime_name, {"trainer.kubeflow.org/framework": "torch"}),
        "spec": {
            "mlPolicy": {"numNodes": plan.num_nodes, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {
                                    "labels": {
                                        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
                                    }
                                },
                                "spec": {"template": pods.workload_pod(plan, head, container)},
                            },
                        }
                    ]
                }
            },
        },
    }
    pods.finish_runtime(runtime, plan)
    return runtime
