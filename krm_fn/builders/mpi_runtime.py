"""The MPI ``TrainingRuntime``: sshd workers (replicated job ``node``) and an mpirun launcher.

Invariants (Kubeflow Trainer v2.3 MPI plugin and JobSet rules):
    * Replicated jobs are ``node`` then ``launcher`` (JobSet forbids ``dependsOn`` on the
      first); the training container in both is named ``node`` (only ``node`` containers get
      the SSH key and hostfile mounts).
    * Only the launcher carries ``trainer.kubeflow.org/trainjob-ancestor-step: trainer``, so the
      TrainJob's ``trainer.command``/``args`` reach mpirun and never replace the workers' sshd.
    * ``mlPolicy.numNodes`` is 1 (the launcher count); the worker count comes from the TrainJob.
    * The SSH Secret is mounted by Trainer at ``/tmp/mpi-ssh-raw`` and copied into
      ``/root/.ssh`` with the modes sshd insists on.
    * User volumes, mounts and init containers reach the workers only; the launcher gets only
      ``spec.config``, read-only.
"""

from __future__ import annotations

from typing import Any

from krm_fn.builders import pods
from krm_fn.builders.plan import TRAINER_API, RunPlan

SSH_RAW = "/tmp/mpi-ssh-raw"
SSH_DIR = "/root/.ssh"
SSH_VOLUME = "mpi-ssh-auth"
SSH_KEYS = "ssh-keys"

_COPY_KEYS = (
    f"cp {SSH_RAW}/* {SSH_DIR}/ && chmod 600 {SSH_DIR}/id_rsa && "
    f"chmod 644 {SSH_DIR}/id_rsa.pub {SSH_DIR}/authorized_keys"
)

WORKER_SCRIPT = (
    "set -x && test -x /usr/sbin/sshd || (apt-get update && apt-get install -y "
    "--no-install-recommends openssh-server) && mkdir -p /var/run/sshd && "
    f"chmod 0755 /var/run/sshd && mkdir -p {SSH_DIR} && chmod 700 {SSH_DIR} && "
    f"{_COPY_KEYS} && /usr/sbin/sshd -De"
)

READINESS_PROBE = "\n".join(
    [
        "command -v ssh >/dev/null 2>&1 || exec grep -q ':0016 [0-9A-F]*:[0-9A-F]* 0A ' "
        "/proc/net/tcp /proc/net/tcp6",
        "set -- ssh -n -o BatchMode=yes -o StrictHostKeyChecking=no "
        "-o UserKnownHostsFile=/dev/null -o ConnectTimeout=5 127.0.0.1 true",
        'command -v timeout >/dev/null 2>&1 && set -- timeout 8 "$@"',
        'exec "$@"',
    ]
)

LAUNCHER_INIT = f"set -x && {_COPY_KEYS}"


def _env(plan: RunPlan) -> list[dict[str, object]]:
    return [e.to_k8s() for e in plan.env]


def worker_job(plan: RunPlan) -> dict[str, Any]:
    """Replicated job ``node``: one sshd pod per node of the group."""
    container: dict[str, Any] = {
        "name": "node",
        "image": plan.image,
        "command": ["sh", "-c"],
        "args": [WORKER_SCRIPT],
        "env": _env(plan),
        "resources": dict(plan.worker_resources),
        "readinessProbe": {
            "exec": {"command": ["sh", "-c", READINESS_PROBE]},
            "initialDelaySeconds": 5,
            "periodSeconds": 30,
            "timeoutSeconds": 10,
        },
        "securityContext": {"capabilities": {"add": ["IPC_LOCK", "SYS_CHROOT"]}},
        "volumeMounts": pods.workload_mounts(plan),
    }
    spec: dict[str, Any] = {"restartPolicy": "OnFailure"}
    if plan.init_containers:
        spec["initContainers"] = [dict(c) for c in plan.init_containers]
    spec["containers"] = [container]
    spec["volumes"] = pods.workload_volumes(plan)
    spec.update(pods.pod_extras(plan))
    return {"name": "node", "template": {"spec": {"template": {"spec": spec}}}}


def launcher_job(plan: RunPlan) -> dict[str, Any]:
    """Replicated job ``launcher``: runs mpirun once every worker is Ready."""
    init = {
        "name": "fix-ssh-permissions",
        "image": plan.image,
        "command": ["sh", "-c"],
        "args": [LAUNCHER_INIT],
        "volumeMounts": [
            {"name": SSH_VOLUME, "mountPath": SSH_RAW, "readOnly": True},
            {"name": SSH_KEYS, "mountPath": SSH_DIR},
        ],
    }
    container: dict[str, Any] = {
        "name": "node",
        "image": plan.image,
        "env": _env(plan),
        "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
        "volumeMounts": [
            {"name": SSH_KEYS, "mountPath": SSH_DIR},
            pods.dshm_mount(),
            *pods.config_mount(plan, read_only=True),
        ],
    }
    spec: dict[str, Any] = {
        "restartPolicy": "OnFailure",
        "initContainers": [init],
        "containers": [container],
        "volumes": [
            {"name": SSH_KEYS, "emptyDir": {}},
            pods.dshm_volume(),
            *pods.config_volume(plan),
        ],
    }
    spec.update(pods.pod_extras(plan))
    return {
        "name": "launcher",
        "dependsOn": [{"name": "node", "status": "Ready"}],
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": spec}},
        },
    }


def build_mpi_runtime(plan: RunPlan) -> dict[str, Any]:
    """The run's MPI ``TrainingRuntime``."""
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainingRuntime",
        "metadata": plan.meta(plan.runtime_name, {"trainer.kubeflow.org/framework": "mpi"}),
        "spec": {
            "mlPolicy": {
                "numNodes": 1,
                "mpi": {
                    "mpiImplementation": "OpenMPI",
                    "numProcPerNode": plan.gpus_per_node,
                    "sshAuthMountPath": SSH_RAW,
                    "runLauncherAsNode": False,
                },
            },
            "template": {
                "spec": {
                    "network": {"publishNotReadyAddresses": True},
                    "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
                    "replicatedJobs": [worker_job(plan), launcher_job(plan)],
                }
            },
        },
    }
