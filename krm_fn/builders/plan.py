"""The run's plan: the validated WorkloadRun plus what the stages resolved, built once per run.

Invariants:
    * A plan is immutable. What the user wrote is read from ``plan.run`` (the validated model,
      never copied field by field); the plan adds only what the stages resolved (sizes, env,
      resources, placement, argv, names, annotations), each in one field.
    * Every value derived from the WorkloadRun that reaches a command, an argument or an env
      value is escaped for the kubelet (``$`` → ``$$``), so the process sees it as written.
    * The launcher's argv: the framework's (``mpirun`` with the platform's, the overrides'
      then the user's ``mpiArgs``; ``torchrun``; the exec command), wrapped by the platform's
      and overrides' ``preCommand`` lines.
    * Platform volumes and mounts the user declares under the same name or path are dropped;
      tolerations are unioned in order; container securityContexts deep-merge
      (``capabilities`` lists unioned). Lists are in output order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn import MANAGER
from krm_fn.api import models, naming
from krm_fn.builders.launch import framework_argv, mpi_argv, wrap_pre_command
from krm_fn.builders.nccl_env import Env, merge_named
from krm_fn.fleet.inventory import GPU_PRESENT_LABEL, is_default
from krm_fn.keys import LABEL_MANAGED_BY, LABEL_RUN
from krm_fn.platforms.overlay import ResolvedOverlay

TRAINER_API = "trainer.kubeflow.org/v1alpha1"


@dataclass(frozen=True)
class WorkerEnv:
    """Env, resources and names every worker of the run gets (before escaping)."""

    env: tuple[Env, ...]  # every container's: NCCL defaults, spec.env
    node_env: tuple[Env, ...] | None  # the nodes' containers', when the platform sets some
    trainer_env: tuple[Env, ...]  # the platform's trainer.env (spec.env wins on names)
    platform_mpi_args: tuple[str, ...]  # the platform's mpiArgs, yielding to spec.env
    resources: dict[str, Any]  # of the worker container
    config_map: str | None  # mounted as config (generated or referenced)
    pull_secrets: tuple[str, ...]  # imagePullSecrets names, the generated one last
    secret_name: str | None  # the pull Secret to generate (registry option), if any


@dataclass(frozen=True, slots=True)
class RunPlan:
    """The validated run and everything the stages resolved for it."""

    run: models.WorkloadRun
    num_nodes: int
    gpus_per_node: int
    worker: WorkerEnv
    env: tuple[Env, ...]
    node_env: tuple[Env, ...]  # worker env with the platform's merged in
    trainer_env: tuple[Env, ...]  # TrainJob spec.trainer.env
    target_terms: tuple[Mapping[str, Any], ...]
    tolerations: tuple[Mapping[str, Any], ...]
    annotations: Mapping[str, str]
    trainjob_annotations: Mapping[str, str]
    trainer_command: tuple[str, ...]
    trainer_args: tuple[str, ...]
    platform_volumes: tuple[Mapping[str, Any], ...]
    platform_mounts: tuple[Mapping[str, Any], ...]
    worker_security_context: Mapping[str, Any]
    pod_annotations: Mapping[str, str]

    @property
    def spec(self) -> models.WorkloadRunSpec:
        """``spec`` of the run, as validated."""
        return self.run.spec

    @property
    def runtime_name(self) -> str:
        """The TrainingRuntime every TrainJob of the run refers to."""
        return naming.object_name(self.run.name, "runtime")

    @property
    def checkpoint_pvc(self) -> str | None:
        """The claim of ``spec.checkpoint``, if set."""
        return naming.object_name(self.run.name, "checkpoint-pvc") if self.spec.checkpoint else None

    def meta(self, name: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        """ObjectMeta for a generated object of this run."""
        meta: dict[str, Any] = {"name": name}
        if self.run.namespace:
            meta["namespace"] = self.run.namespace
        meta["labels"] = {LABEL_MANAGED_BY: MANAGER, LABEL_RUN: self.run.name, **(labels or {})}
        if self.annotations:
            meta["annotations"] = dict(self.annotations)
        return meta


def build_plan(
    wr: models.WorkloadRun,
    *,
    per_group: int,
    gpus: int,
    overlay: ResolvedOverlay | None,
    worker: WorkerEnv,
    override_mpi_args: Sequence[str],
    pre_command: Sequence[str],
    tolerations: Sequence[Mapping[str, Any]],
    annotations: Mapping[str, str],
    trainjob_annotations: Mapping[str, str],
) -> RunPlan:
    """The run's plan, escaped for the kubelet.

    ``pre_command`` holds the platform's then the matching overrides' lines, ``tolerations``
    the target's (the platform's follow), ``trainjob_annotations`` the TrainJobs' own.
    """
    spec = wr.spec
    command, args = launcher_argv(spec, gpus, worker, override_mpi_args, pre_command)
    return RunPlan(
        run=wr,
        num_nodes=per_group,
        gpus_per_node=gpus,
        worker=worker,
        env=literal_env(worker.env),
        node_env=literal_env(worker.env if worker.node_env is None else worker.node_env),
        trainer_env=literal_env(worker.trainer_env),
        target_terms=tuple(target_terms(spec.target)),
        tolerations=tuple(distinct([*tolerations, *(overlay.tolerations if overlay else ())])),
        annotations=annotations,
        trainjob_annotations=trainjob_annotations,
        trainer_command=tuple(kubelet_literal(c) for c in command),
        trainer_args=tuple(kubelet_literal(a) for a in args),
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
    )


def launcher_argv(
    spec: models.WorkloadRunSpec,
    gpus: int,
    worker: WorkerEnv,
    override_mpi_args: Sequence[str],
    pre_command: Sequence[str],
) -> tuple[list[str], list[str]]:
    """(command, args) of the trainer container, before escaping."""
    fw = spec.framework
    if fw.mpi is not None:
        # The ranks start under sshd: they get with -x what a worker container gets (the
        # platform's env included, at the table's last value) and trainer.env.
        ranks = worker.node_env if worker.node_env is not None else worker.env
        command, args = mpi_argv(
            fw.mpi,
            gpus,
            merge_named(list(ranks), list(worker.trainer_env)),
            list(worker.platform_mpi_args),
            list(override_mpi_args),
        )
    else:
        command, args = framework_argv(fw)
    return wrap_pre_command(pre_command, command, args)


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


def literal_env(env: Sequence[Env]) -> tuple[Env, ...]:
    """``env`` with every literal value escaped (``valueFrom`` entries unchanged)."""
    return tuple(
        Env(e.name, kubelet_literal(e.value), e.value_from) if e.value_from is None else e
        for e in env
    )


def distinct(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The distinct items (exact duplicates dropped), first occurrence first."""
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
    if target is None or is_default(target):
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
