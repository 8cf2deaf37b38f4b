"""Gang scheduling: the scheduler name on every pod, the queue label on three levels.

Invariants (the guide's "Gang scheduling" section):
    * ``schedulerName`` is set in every pod spec of the runtime (MPI: launcher and workers),
      since Trainer's ``runtimePatches`` cannot carry it.
    * The queue label (``queueLabelKey: queue``) is on the TrainJob, on every replicated job's
      Job template metadata and on every pod template's metadata; the pod-template metadata
      block exists only when a gang scheduler is set.
"""

from __future__ import annotations

from typing import Any

from krm_fn.builders.plan import RunPlan


def apply_gang_to_runtime(runtime: dict[str, Any], plan: RunPlan) -> None:
    """Set scheduler and queue labels on every replicated job of ``runtime`` (in place)."""
    g = plan.spec.gang_scheduler
    if g is None:
        return
    for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        job_tpl = rj["template"]
        job_meta = job_tpl.get("metadata") or {}
        job_meta["labels"] = {**(job_meta.get("labels") or {}), g.label_key: g.queue_name}
        rj["template"] = {
            "metadata": job_meta,
            **{k: v for k, v in job_tpl.items() if k != "metadata"},
        }
        pod_tpl = job_tpl["spec"]["template"]
        pod_meta = pod_tpl.get("metadata") or {}
        pod_meta["labels"] = {**(pod_meta.get("labels") or {}), g.label_key: g.queue_name}
        spec = pod_tpl["spec"]
        job_tpl["spec"]["template"] = {
            "metadata": pod_meta,
            "spec": {
                "schedulerName": g.scheduler_name,
                **{k: v for k, v in spec.items() if k != "schedulerName"},
            },
        }
