"""The resolved, framework-independent facts every builder needs (one per WorkloadRun).

Invariants:
    * A plan is immutable and complete: builders never look back at the WorkloadRun model
      for anything the plan resolves (env, resources, volumes, affinity, names).
    * Lists in the plan are already in output order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from krm_fn.api.models import FrameworkName
from krm_fn.builders.nccl_env import Env
from krm_fn.keys import ANN_FRAMEWORK as ANN_FRAMEWORK
from krm_fn.keys import ANN_GPU_ARCH as ANN_GPU_ARCH
from krm_fn.keys import ANN_GROUP_NODES as ANN_GROUP_NODES
from krm_fn.keys import ANN_PLATFORM as ANN_PLATFORM
from krm_fn.keys import LABEL_GROUP as LABEL_GROUP
from krm_fn.keys import LABEL_MANAGED_BY as LABEL_MANAGED_BY
from krm_fn.keys import LABEL_RUN as LABEL_RUN
from krm_fn.keys import LABEL_WAVE as LABEL_WAVE
from krm_fn.keys import PATCH_MANAGER as PATCH_MANAGER

TRAINER_API = "trainer.kubeflow.org/v1alpha1"


@dataclass(frozen=True, slots=True)
class GangPlan:
    """``spec.gangScheduler`` resolved: scheduler, queue label, and the KAI special case."""

    scheduler_name: str
    queue_label_key: str
    queue: str

    @property
    def kai(self) -> bool:
        """NVCRE keys the KAI behaviour on the exact scheduler name ``kai-scheduler``."""
        return self.scheduler_name == "kai-scheduler"


@dataclass(frozen=True, slots=True)
class RunPlan:
    """Everything resolved for one WorkloadRun."""

    name: str
    namespace: str | None
    image: str
    framework: FrameworkName
    num_nodes: int
    gpus_per_node: int
    env: tuple[Env, ...]
    worker_resources: Mapping[str, Any]
    user_volumes: tuple[Mapping[str, Any], ...]
    user_mounts: tuple[Mapping[str, Any], ...]
    init_containers: tuple[Mapping[str, Any], ...]
    config_map: str | None
    image_pull_secrets: tuple[str, ...]
    target_terms: tuple[Mapping[str, Any], ...]
    tolerations: tuple[Mapping[str, Any], ...]
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    trainer_command: tuple[str, ...]
    trainer_args: tuple[str, ...]
    runtime_name: str
    gang: GangPlan | None = None
    workload_labels: Mapping[str, str] = field(default_factory=dict)
    trainjob_annotations: Mapping[str, str] = field(default_factory=dict)
    platform_volumes: tuple[Mapping[str, Any], ...] = ()
    platform_mounts: tuple[Mapping[str, Any], ...] = ()
    worker_security_context: Mapping[str, Any] = field(default_factory=dict)
    pod_annotations: Mapping[str, str] = field(default_factory=dict)
    checkpoint_pvc: str | None = None
    max_restarts: int = 0
    node_env: tuple[Env, ...] | None = None  # worker env with the platform's merged in
    trainer_env: tuple[Env, ...] = ()  # TrainJob spec.trainer.env

    def meta(self, name: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        """ObjectMeta for a generated object of this run."""
        meta: dict[str, Any] = {"name": name}
        if self.namespace:
            meta["namespace"] = self.namespace
        meta["labels"] = {**self.labels, **(labels or {})}
        if self.annotations:
            meta["annotations"] = dict(self.annotations)
        return meta
