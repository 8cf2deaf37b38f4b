"""Build the :class:`~krm_fn.builders.plan.RunPlan` of one run from its resolved stages.

Invariants:
    * Every value derived from the WorkloadRun that reaches a command, an argument or an env
      value is escaped for the kubelet (``$`` → ``$$``), so the process sees it as written.
    * The launcher's argv: the framework's (``mpirun`` with the platform's, the overrides'
      then the user's ``mpiArgs``; ``torchrun``; the exec command), wrapped by the platform's
      and overrides' ``preCommand`` lines.
    * Platform volumes and mounts the user declares under the same name or path are dropped;
      tolerations are unioned in order; container securityContexts deep-merge
      (``capabilities`` lists unioned).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn import MANAGER
from krm_fn.api import models, naming
from krm_fn.builders.launch import framework_argv, mpi_argv, wrap_pre_command
from krm_fn.builders.nccl_env import Env, merge_named
from krm_fn.builders.plan import LABEL_MANAGED_BY, LABEL_RUN, GangPlan, RunPlan
from krm_fn.fleet.inventory import GPU_PRESENT_LABEL
from krm_fn.platforms.overlay import ResolvedOverlay


@dataclass(frozen=True)
class WorkerEnv:
    """Env, resources and names every worker of the run gets (before escaping).

    Attributes:
        env: Runtime env of every container (NCCL defaults, ``spec.env``).
        node_env: Env of the nodes' containers when the platform sets some, else ``None``.
        trainer_env: The platform's ``trainer.env`` (``spec.env`` wins on names).
        platform_mpi_args: The platform's ``mpiArgs``, yielding to ``spec.env``.
        resources: Worker container resources.
        config_map: The ConfigMap mounted as config (generated or referenced).
        pull_secrets: ``imagePullSecrets`` names, the generated one last.
        secret_name: The pull Secret to generate (``registry`` option), if any.

    """

    env: tuple[Env, ...]
    node_env: tuple[Env, ...] | None
    trainer_env: tuple[Env, ...]
    platform_mpi_args: tuple[str, ...]
    resources: dict[str, Any]
    config_map: str | None
    pull_secrets: tuple[str, ...]
    secret_name: str | None


@dataclass(frozen=True)
class PlanInputs:
    """What the stages before the plan resolved for one run.

    Attributes:
        per_group: Nodes per TrainJob.
        gpus: GPUs per node.
        overlay: The catalog's overlay for the run's platform and GPU, if any.
        worker: Env, resources and names of the workers.
        override_mpi_args: The matching overrides' ``mpiArgs``.
        pre_command: The platform's then the matching overrides' ``preCommand`` lines.
        tolerations: The target's tolerations (before the platform's).
        annotations: Annotations of every generated object.
        trainjob_annotations: Annotations of the TrainJobs only (for ``report``).

    """

    per_group: int
    gpus: int
    overlay: ResolvedOverlay | None
    worker: WorkerEnv
    override_mpi_args: tuple[str, ...]
    pre_command: tuple[str, ...]
    tolerations: tuple[dict[str, Any], ...]
    annotations: dict[str, str]
    trainjob_annotations: dict[str, str]


def build_plan(wr: models.WorkloadRun, inputs: PlanInputs) -> RunPlan:
    """The run's plan: everything every builder needs, escaped for the kubelet."""
    spec, overlay, worker = wr.spec, inputs.overlay, inputs.worker
    command, args = launcher_argv(spec, inputs)
    return RunPlan(
        name=wr.name,
        namespace=wr.namespace,
        image=spec.image,
        framework=spec.framework.name,
        num_nodes=inputs.per_group,
        gpus_per_node=inputs.gpus,
        env=tuple(literal_env(worker.env)),
        node_env=tuple(literal_env(worker.node_env)) if worker.node_env is not None else None,
        trainer_env=tuple(literal_env(worker.trainer_env)),
        worker_resources=worker.resources,
        user_volumes=tuple(v.to_k8s() for v in spec.volumes),
        user_mounts=tuple(
            m.model_dump(by_alias=True, exclude_none=True) for m in spec.volume_mounts
        ),
        init_containers=tuple(
            c.model_dump(by_alias=True, exclude_none=True) for c in spec.init_containers
        ),
        config_map=worker.config_map,
        image_pull_secrets=worker.pull_secrets,
        target_terms=tuple(target_terms(spec.target)),
        tolerations=tuple(union([*inputs.tolerations, *(overlay.tolerations if overlay else ())])),
        labels={LABEL_MANAGED_BY: MANAGER, LABEL_RUN: wr.name},
        annotations=inputs.annotations,
        trainer_command=tuple(kubelet_literal(c) for c in command),
        trainer_args=tuple(kubelet_literal(a) for a in args),
        runtime_name=naming.runtime_name(wr.name),
        gang=_gang(spec.gang_scheduler),
        workload_labels=dict(spec.workload_metadata.labels) if spec.workload_metadata else {},
        trainjob_annotations=inputs.trainjob_annotations,
        platform_volumes=not_shadowed(
            overlay.volumes if overlay else (), {v.name for v in spec.volumes}, "name"
        ),
        platform_mounts=not_shadowed(
            overlay.volume_mounts if overlay else (),
            {m.mount_path for m in spec.volume_mounts},
            "mountPath",
        ),
        worker_security_context=_security_context(spec, overlay),
        pod_annotations=dict(overlay.pod_annotations) if overlay else {},
        checkpoint_pvc=naming.checkpoint_pvc_name(wr.name) if spec.checkpoint else None,
        max_restarts=spec.checkpoint.max_restarts if spec.checkpoint else 0,
    )


def launcher_argv(spec: models.WorkloadRunSpec, inputs: PlanInputs) -> tuple[list[str], list[str]]:
    """(command, args) of the trainer container, before escaping."""
    fw, worker = spec.framework, inputs.worker
    if fw.mpi is not None:
        # The ranks start under sshd: they get with -x what a worker container gets (the
        # platform's env included, at the table's last value) and trainer.env.
        ranks = worker.node_env if worker.node_env is not None else worker.env
        command, args = mpi_argv(
            fw.mpi,
            inputs.gpus,
            merge_named(list(ranks), list(worker.trainer_env)),
            list(worker.platform_mpi_args),
            list(inputs.override_mpi_args),
        )
    else:
        command, args = framework_argv(fw)
    return wrap_pre_command(inputs.pre_command, command, args)


def _gang(gs: models.GangScheduler | None) -> GangPlan | None:
    if gs is None:
        return None
    return GangPlan(
        gs.scheduler_name, gs.queue_label_key or "kai.scheduler/queue", gs.queue or "default-queue"
    )


def _security_context(
    spec: models.WorkloadRunSpec, overlay: ResolvedOverlay | None
) -> dict[str, Any]:
    base: dict[str, Any] = (
        {"capabilities": {"add": ["IPC_LOCK", "SYS_CHROOT"]}}
        if spec.framework.name == "mpi"
        else {}
    )
    return merge_security(base, overlay.security_context if overlay else {})


def kubelet_literal(text: str) -> str:
    """Escape ``$`` so the kubelet's ``$(VAR)`` expansion leaves the text exactly as written."""
    return text.replace("$", "$$")


def literal_env(env: Sequence[Env]) -> list[Env]:
    """``env`` with every literal value escaped (``valueFrom`` entries unchanged)."""
    return [
        Env(e.name, kubelet_literal(e.value), e.value_from) if e.value_from is None else e
        for e in env
    ]


def union(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The distinct items, first occurrence first."""
    out: list[dict[str, Any]] = []
    for i in items:
        if dict(i) not in out:
            out.append(dict(i))
    return out


def not_shadowed(
    items: Sequence[Mapping[str, Any]], user: set[str], key: str
) -> tuple[Mapping[str, Any], ...]:
    """Platform volumes/mounts, minus those the user declares under the same name/path."""
    return tuple(i for i in items if i.get(key) not in user)


def merge_security(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge container securityContexts; ``capabilities.add`` lists are unioned."""
    out: dict[str, Any] = {k: v for k, v in base.items()}
    for k, v in extra.items():
        if k == "capabilities" and isinstance(v, Mapping):
            caps = dict(out.get("capabilities") or {})
            for ck, cv in v.items():
                if ck in ("add", "drop") and isinstance(cv, list):
                    caps[ck] = list(dict.fromkeys([*(caps.get(ck) or []), *cv]))
                else:
                    caps[ck] = cv
            out["capabilities"] = caps
        elif isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = merge_security(out[k], v)
        else:
            out[k] = v
    return out


def target_terms(target: models.Target | None) -> list[dict[str, Any]]:
    """The target as required node-affinity expressions (the implied default included)."""
    if target is None or not (
        target.node_selector or target.match_expressions or target.node_names
    ):
        return [{"key": GPU_PRESENT_LABEL, "operator": "In", "values": ["true"]}]
    exprs = [
        {"key": k, "operator": "In", "values": [target.node_selector[k]]}
        for k in sorted(target.node_selector)
    ]
    exprs += [r.to_k8s() for r in target.match_expressions]
    if target.node_names:
        exprs.append(
            {"key": "kubernetes.io/hostname", "operator": "In", "values": sorted(target.node_names)}
        )
    return exprs
