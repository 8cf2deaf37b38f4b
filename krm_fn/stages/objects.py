"""Stage 9, objects: build every object of the run from its plan and schedule.

Invariants:
    * Dependencies first (pull Secret when the registry and its credentials are set, inline
      ConfigMap, checkpoint PVC, the TrainingRuntime), then the TrainJobs in schedule order.
    * The launcher env as built (before any override) is recorded, so the final check can
      tell the variables an override added from those the runtime already had.
    * The platform's DRA objects (ComputeDomain, ResourceClaimTemplates) are added after the
      overrides applied (:func:`with_platform_objects`), so overrides never see or drop them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.builders import (
    checkpoint,
    configmap,
    dra,
    mpi_forward,
    mpi_runtime,
    secret,
    torch_runtime,
    trainjob,
)
from krm_fn.builders.plan import RunPlan, WorkerEnv
from krm_fn.platforms.overlay import ResolvedOverlay
from krm_fn.stages.waves import Schedule


@dataclass(frozen=True)
class Built:
    """The run's objects as built (dependencies, then TrainJobs), before overrides."""

    objects: tuple[dict[str, Any], ...]
    launcher_env: Mapping[str, Mapping[str, Any]]  # the launcher container's env by name


def build_objects(
    spec: models.WorkloadRunSpec,
    plan: RunPlan,
    worker: WorkerEnv,
    jobs: Schedule,
    deadline: int,
    options: FunctionOptions,
    password: str | None,
) -> Built:
    """Build the dependencies and one TrainJob per scheduled job."""
    objs: list[dict[str, Any]] = []
    pull_secret = _pull_secret(plan, worker.secret_name, options, password)
    if pull_secret is not None:
        objs.append(pull_secret)
    if spec.config is not None and spec.config.inline and worker.config_map:
        objs.append(configmap.build_config_map(plan, worker.config_map, spec.config.inline))
    if spec.checkpoint is not None and plan.checkpoint_pvc:
        objs.append(checkpoint.build_checkpoint_pvc(plan, plan.checkpoint_pvc, spec.checkpoint))
    if spec.framework.name == "mpi":
        runtime = mpi_runtime.build_mpi_runtime(plan)
    else:
        runtime = torch_runtime.build_torch_runtime(plan)
    objs.append(runtime)
    for j in jobs.jobs:
        objs.append(trainjob.build_trainjob(plan, j.group, j.name, j.runs_after, deadline, j.wave))
        if options.wave_release == "engine":
            # The GitOps engine applies wave w+1 only after wave w completed (Argo CD sync
            # waves with the TrainJob health check, Flux dependsOn): nothing to release by hand.
            objs[-1]["spec"].pop("suspend", None)
    built_env = {str(e.get("name")): e for e in mpi_forward.launcher_env(runtime, {})}
    return Built(tuple(objs), built_env)


def _pull_secret(
    plan: RunPlan, name: str | None, options: FunctionOptions, password: str | None
) -> dict[str, Any] | None:
    """The pull Secret (password from the environment) or the ExternalSecret that makes it.

    ``None`` when the run pulls with a Secret that exists already (``registryPullSecret``)
    or with none.
    """
    if not name or not options.registry or not options.registry_username:
        return None
    if password:
        return secret.build_pull_secret(
            plan, name, options.registry, options.registry_username, password
        )
    if options.registry_secret_store and options.registry_secret_key:
        from krm_fn.builders import external_secret

        return external_secret.build_external_secret(
            plan,
            name,
            options.registry,
            options.registry_username,
            options.registry_secret_store,
            options.registry_secret_key,
            options.registry_secret_property,
        )
    return None


def with_platform_objects(
    objs: list[dict[str, Any]], plan: RunPlan, overlay: ResolvedOverlay
) -> list[dict[str, Any]]:
    """The objects with the platform's DRA objects added and the pods claiming them."""
    return dra.apply_dra(objs, plan, overlay.compute_domain, overlay.claim_templates)
