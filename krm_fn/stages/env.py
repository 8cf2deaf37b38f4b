"""Stage 5, env and resources: what every worker gets, before any override.

Invariants:
    * Env precedence (NVCRE's BuildOverrides): NCCL defaults < platform env < ``spec.env``;
      a platform ``trainer.env`` variable also sets the runtime's variable of the same name
      (Trainer upserts trainer.env, so it then overwrites nothing the runtime set).
    * Platform ``mpiArgs`` that set a variable the user sets in ``spec.env`` yield to it.
    * Resources: NVCRE's GPU rule, then the platform's requests, then the NIC request; the
      user's names always win (:func:`worker_resources`).
    * Shared claims (PVCs) every concurrent worker mounts must allow it.
"""

from __future__ import annotations

from typing import Any

from krm_fn.api import models, naming, rules
from krm_fn.api.config import FunctionOptions
from krm_fn.builders.nccl_env import (
    Env,
    base_nccl_env,
    merge_env,
    merge_named,
    user_wins_in_mpi_args,
)
from krm_fn.builders.plan import WorkerEnv
from krm_fn.platforms.node_gpus import GPU_RESOURCE
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.parse import InputContext
from krm_fn.stages.partitioning import Partitioned
from krm_fn.stages.platform import ResolvedPlatform


def env_and_resources(
    wr: models.WorkloadRun,
    platform: ResolvedPlatform,
    partitioned: Partitioned,
    options: FunctionOptions,
    context: InputContext,
    diag: RunDiagnostics,
) -> WorkerEnv:
    """Check shared claims, then resolve env, resources, config and pull secrets."""
    spec = wr.spec
    _shared_claims(wr, platform, partitioned, context, diag)
    overlay = platform.overlay
    user_env = [Env(e.name, e.value or "", e.value_from) for e in spec.env]
    env = merge_env(base_nccl_env(platform.mnnvl), user_env)
    user_by_name = {e.name: e for e in user_env}
    node_env = (
        merge_named(env, [user_by_name.get(e.name, Env(e.name, e.value)) for e in overlay.env])
        if overlay.env
        else None
    )
    trainer_env = [user_by_name.get(e.name, Env(e.name, e.value)) for e in overlay.trainer_env]
    trainer_by_name = {e.name: e for e in trainer_env}
    env = [trainer_by_name.get(e.name, e) for e in env]
    if node_env is not None:
        node_env = [trainer_by_name.get(e.name, e) for e in node_env]
    mpi_args = user_wins_in_mpi_args(list(overlay.mpi_args), user_by_name)
    secret_name = options.registry_pull_secret or (
        naming.object_name(wr.name, "pull-secret") if options.registry else None
    )
    pull = [s.name for s in spec.image_pull_secrets]
    pull += [secret_name] if secret_name and secret_name not in pull else []
    return WorkerEnv(
        env=tuple(env),
        node_env=tuple(node_env) if node_env is not None else None,
        trainer_env=tuple(trainer_env),
        platform_mpi_args=tuple(mpi_args),
        resources=worker_resources(spec.resources, platform),
        config_map=_config_map(wr),
        pull_secrets=tuple(pull),
        secret_name=secret_name,
    )


def _shared_claims(
    wr: models.WorkloadRun,
    platform: ResolvedPlatform,
    partitioned: Partitioned,
    context: InputContext,
    diag: RunDiagnostics,
) -> None:
    """Refuse a PVC the concurrent workers cannot all mount; warn where it is doubtful."""
    concurrent = wr.spec.num_nodes if partitioned.unpinned else len(platform.eligible)
    ns_key = wr.namespace or ""
    pvcs = {name: pvc for (ns, name), pvc in context.pvcs.items() if ns in (ns_key, "")}
    claim_errors, claim_warnings = rules.shared_claims(wr.spec, concurrent, pvcs)
    for path, msg in claim_errors:
        diag.build_failed(msg, path)
    for path, msg in claim_warnings:
        diag.warning(msg, path)


def _config_map(wr: models.WorkloadRun) -> str | None:
    config = wr.spec.config
    if config is None:
        return None
    if config.inline:
        return naming.object_name(wr.name, "config")
    return config.config_map_ref.name if config.config_map_ref is not None else None


def worker_resources(
    res: models.ResourceRequirements | None, platform: ResolvedPlatform
) -> dict[str, Any]:
    """Worker resources: NVCRE's GPU rule, then platform requests, then the NIC request.

    ``nvidia.com/gpu`` goes into limits and requests unless the user named it in either;
    platform resources (EFA adapters, RDMA devices, hugepages) are added where the user did
    not set the same name; ``nicResourceName`` requests ``mlnxPerNode`` (0 opts out).
    """
    gpu, gpus = GPU_RESOURCE, platform.gpus
    nic_name, nics = platform.nic_resource_name, platform.nics
    limits: dict[str, Any] = dict(res.limits or {}) if res else {}
    requests: dict[str, Any] = dict(res.requests or {}) if res else {}
    if gpu not in limits and gpu not in requests:
        limits[gpu] = str(gpus)
        requests[gpu] = str(gpus)
    user_named = set(limits) | set(requests)
    for section, target in (("limits", limits), ("requests", requests)):
        for k, v in (platform.overlay.resources.get(section) or {}).items():
            if v is None:  # the platform deletes the name (DRA claims replace nvidia.com/gpu)
                target.pop(k, None)
            elif k not in user_named:
                target[k] = v
    if nic_name and nics > 0 and nic_name not in user_named:
        limits[nic_name] = str(nics)
        requests[nic_name] = str(nics)
    out: dict[str, Any] = {k: v for k, v in (("limits", limits), ("requests", requests)) if v}
    if res and res.claims:
        out["claims"] = list(res.claims)
    return out
