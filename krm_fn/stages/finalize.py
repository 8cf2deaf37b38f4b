"""Stage 10, finalize: make the final objects (after overrides) acceptable to the cluster.

Invariants, in order:
    * Every launcher variable reaches the MPI ranks with ``-x`` (:mod:`krm_fn.builders.mpi_forward`);
      those that cannot (an override replaced mpirun) are named in a warning.
    * The trainer command fits Trainer's 128 items (:mod:`krm_fn.builders.trainer_limits`).
    * Output order is the apply-order contract (:mod:`krm_fn.builders.apply_order`): dependencies,
      then TrainJobs by wave; Kueue's queue label on a multi-wave run is a warning.
    * Every object fits the API server's size limits.
    * Returns the ordered objects, or ``None`` when any check failed (reported).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from krm_fn.api import models
from krm_fn.builders import apply_order, mpi_forward, trainer_limits
from krm_fn.builders.plan import kubelet_literal
from krm_fn.stages.diagnostics import RunDiagnostics

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def finalize(
    objs: Sequence[dict[str, Any]],
    spec: models.WorkloadRunSpec,
    mpi_args: tuple[Sequence[str], Sequence[str]],
    built_env: Mapping[str, Mapping[str, Any]],
    diag: RunDiagnostics,
) -> list[dict[str, Any]] | None:
    """Forward env, check limits, order the objects; ``None`` on an error.

    ``objs`` (after overrides) are modified in place by the env forwarding; a variable passed
    with ``-x`` by the platform's or the matching overrides' ``mpiArgs`` (``mpi_args``) or the
    user's is not passed again. ``built_env``: the launcher env as built, before overrides.
    """
    jobs = [o for o in objs if apply_order.is_trainjob(o)]
    _forward_env(objs, jobs, spec, mpi_args, built_env, diag)
    ok = True
    for j in jobs:
        msg = trainer_limits.fit_trainer_argv(j)
        if msg:
            diag.error(f"TrainJob {j['metadata']['name']}: {msg}", "spec.env")
            ok = False
            break  # the same command line for every TrainJob of the run
    ordered = apply_order.order_run(list(objs))
    _kueue_warning(jobs, spec, diag)
    for o in trainer_limits.worth_measuring(ordered):
        for msg in trainer_limits.size_problems(o):
            trainjob = apply_order.is_trainjob(o)
            diag.error(
                f"{o.get('kind')} {o['metadata'].get('name')}: {msg}"
                + ("; use a smaller spec.numNodes" if trainjob else ""),
                "spec.numNodes" if trainjob else None,
            )
            ok = False
    return ordered if ok else None


def _forward_env(
    objs: Sequence[dict[str, Any]],
    jobs: Sequence[dict[str, Any]],
    spec: models.WorkloadRunSpec,
    arg_lists: tuple[Sequence[str], Sequence[str]],
    built_env: Mapping[str, Mapping[str, Any]],
    diag: RunDiagnostics,
) -> None:
    """Forward every launcher variable to the MPI ranks (one runtime, or one per TrainJob)."""
    mpi = spec.framework.mpi
    runtimes = {o["metadata"]["name"]: o for o in objs if o.get("kind") == "TrainingRuntime"}
    if mpi is None or not runtimes:
        return
    explicit = mpi_forward.explicit_names(*arg_lists, mpi.mpi_args)
    missed: set[str] = set()
    caches: dict[str, dict[Any, Any]] = {}
    mpirun = kubelet_literal(mpi.mpirun_path)
    for j in jobs:
        ref = str(((j.get("spec") or {}).get("runtimeRef") or {}).get("name"))
        runtime = runtimes.get(ref) or next(iter(runtimes.values()))
        cache = caches.setdefault(runtime["metadata"]["name"], {})
        missed.update(
            mpi_forward.forward_launcher_env(runtime, j, explicit, mpirun, built_env, cache)
        )
    if missed:
        diag.warning(
            "the launcher command is not mpirun (an override replaced it), so these launcher "
            "variables cannot be forwarded to the ranks with -x and the ranks, started by "
            "sshd with a clean environment, will not see them: " + ", ".join(sorted(missed)),
            "spec.overrides",
        )


def _kueue_warning(
    jobs: Sequence[dict[str, Any]], spec: models.WorkloadRunSpec, diag: RunDiagnostics
) -> None:
    """Warn when Kueue would start the suspended later waves early."""
    queued = any(KUEUE_QUEUE_LABEL in (j["metadata"].get("labels") or {}) for j in jobs)
    waves = {apply_order.wave_of(j) for j in jobs} if queued else set()
    if len(waves) <= 1:
        return
    gs = spec.gang_scheduler
    diag.warning(
        f"the TrainJobs carry Kueue's queue label {KUEUE_QUEUE_LABEL} and the run has "
        f"{len(waves)} waves: Kueue unsuspends every TrainJob it admits, so the suspended "
        "later waves start as soon as quota allows instead of after the previous wave, and "
        "TrainJobs that share nodes can hold GPUs at the same time; render a single wave "
        "(remainder: skip, repeatCount 1, maxConcurrent 0) or drop the queue label and "
        "release the waves yourself (docs/rendering.md: Kueue and waves)",
        "spec.gangScheduler.queueLabelKey"
        if gs is not None and gs.queue_label_key == KUEUE_QUEUE_LABEL
        else "spec.workloadMetadata.labels",
    )
