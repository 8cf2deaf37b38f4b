"""The checkpoint ``PersistentVolumeClaim`` (``spec.checkpoint``).

Invariants (NVCRE): the claim is ``<run>-checkpoint-pvc``, ``ReadWriteMany`` (every worker
writes to it at once), sized ``storageSize``; it is mounted at ``/checkpoint`` on the workload
pods, and ``maxRestarts`` becomes the JobSet ``failurePolicy.maxRestarts`` of the runtime, so
a failed job restarts from its last checkpoint that many times.
"""

from __future__ import annotations

from typing import Any

from krm_fn.builders.plan import RunPlan


def build_checkpoint_pvc(
    plan: RunPlan, name: str, size: str, storage_class: str | None
) -> dict[str, Any]:
    """The RWX claim the run's workers share for checkpoints."""
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": size}},
    }
    if storage_class:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": plan.meta(name),
        "spec": spec,
    }
