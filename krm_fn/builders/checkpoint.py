"""The checkpoint ``PersistentVolumeClaim`` (``spec.checkpoint``).

Invariants (NVCRE): the claim is ``<run>-checkpoint-pvc``, ``ReadWriteMany`` (every worker
writes to it at once), sized ``storageSize``; it is mounted at ``/checkpoint`` on the workload
pods, and ``maxRestarts`` becomes the JobSet ``failurePolicy.maxRestarts`` of the runtime, so
a failed job restarts from its last checkpoint that many times.
"""

from __future__ import annotations

from typing import Any

from krm_fn.api import models
from krm_fn.builders.plan import RunPlan


def build_checkpoint_pvc(plan: RunPlan, name: str, ckpt: models.Checkpoint) -> dict[str, Any]:
    """The RWX claim the run's workers share for checkpoints."""
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": ckpt.storage_size}},
    }
    if ckpt.storage_class_name:
        spec["storageClassName"] = ckpt.storage_class_name
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": plan.meta(name),
        "spec": spec,
    }
