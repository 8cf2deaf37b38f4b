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

from krm_fn.api.rules import SSH_DIR, SSH_RAW, SSH_VOLUME
from krm_fn.builders import pods
from krm_fn.builders.plan import RunPlan

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

SSHD_WAIT_ATTEMPTS = 240
SSHD_WAIT_SLEEP = 5

# Appended to the launcher's init script under KAI, where the launcher cannot be gated on
# worker readiness (KAI will not admit a PodGroup with an empty sub-group). POSIX sh; every
# value it handles comes from the hostfile, never from the WorkloadRun.
KAI_WAIT_SCRIPT = f"""set +x
[ -f {SSH_DIR}/id_rsa ] || {{ cp {SSH_RAW}/* {SSH_DIR}/ && chmod 600 {SSH_DIR}/id_rsa; }}
hosts=$(awk '{{print $1}}' /etc/mpi/hostfile 2>/dev/null)
if [ -z "$hosts" ]; then
  echo "ERROR: no hosts in /etc/mpi/hostfile (missing, empty, or unreadable); refusing to start mpirun." >&2
  exit 1
fi
pending=""
for h in $hosts; do
  case "$h" in "$HOSTNAME"|"$HOSTNAME".*) ;; *) pending="$pending $h" ;; esac
done
i=0
while [ "$i" -lt {SSHD_WAIT_ATTEMPTS} ]; do
  still=""
  for h in $pending; do
    if ! timeout 10 ssh -n -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5 "$h" true 2>/tmp/sshd-wait.err; then
      still="$still $h"
      if [ $((i % 10)) -eq 0 ]; then
        echo "waiting: $h has not answered sshd yet (attempt $((i + 1))/{SSHD_WAIT_ATTEMPTS}, $((i * {SSHD_WAIT_SLEEP}))s)"
        head -n 3 /tmp/sshd-wait.err | sed 's/^/  ssh: /'
      fi
    fi
  done
  pending=$still
  if [ -z "$pending" ]; then
    echo "workers answered sshd after $((i * {SSHD_WAIT_SLEEP}))s"
    exit 0
  fi
  i=$((i + 1))
  sleep {SSHD_WAIT_SLEEP}
done
pods=""
for h in $pending; do pods="$pods ${{h%%.*}}"; done
echo "ERROR: not every worker answered sshd within 20 minutes; refusing to start mpirun." >&2
echo "  worker pods to look at (their events carry the cause):$pods" >&2
echo "  e.g. kubectl describe pod -l jobset.sigs.k8s.io/replicatedjob-name=node" >&2
echo "  also check that the workers and this launcher share a network policy allowing pod-to-pod port 22" >&2
exit 1"""


def worker_job(plan: RunPlan) -> dict[str, Any]:
    """Replicated job ``node``: one sshd pod per node of the group."""
    container: dict[str, Any] = {
        "name": "node",
        "image": plan.spec.image,
        "command": ["sh", "-c"],
        "args": [WORKER_SCRIPT],
        "env": [e.to_k8s() for e in plan.node_env],
        "resources": dict(plan.worker.resources),
        "readinessProbe": {
            "exec": {"command": ["sh", "-c", READINESS_PROBE]},
            "initialDelaySeconds": 5,
            "periodSeconds": 30,
            "timeoutSeconds": 10,
        },
        "securityContext": dict(plan.worker_security_context),
        "volumeMounts": pods.workload_mounts(plan),
    }
    pod = pods.workload_pod(plan, {"restartPolicy": "OnFailure"}, container)
    return {"name": "node", "template": pods.job_template(plan, pod)}


def launcher_job(plan: RunPlan) -> dict[str, Any]:
    """Replicated job ``launcher``: runs mpirun once every worker is Ready.

    Under KAI the launcher is not gated (no ``dependsOn``); its init container waits for
    every worker's sshd instead, for up to 20 minutes, and the Job's ``backoffLimit`` is 6.
    """
    kai = plan.spec.gang_scheduler is not None and plan.spec.gang_scheduler.kai
    mounts: list[dict[str, Any]] = [
        {"name": SSH_VOLUME, "mountPath": SSH_RAW, "readOnly": True},
        {"name": SSH_KEYS, "mountPath": SSH_DIR},
    ]
    if kai:
        mounts.append({"name": "mpi-hostfile", "mountPath": "/etc/mpi", "readOnly": True})
    init = {
        "name": "fix-ssh-permissions",
        "image": plan.spec.image,
        "command": ["sh", "-c"],
        "args": [LAUNCHER_INIT + ("\n" + KAI_WAIT_SCRIPT if kai else "")],
        "volumeMounts": mounts,
    }
    container: dict[str, Any] = {
        "name": "node",
        "image": plan.spec.image,
        "env": [e.to_k8s() for e in plan.env],
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
    job: dict[str, Any] = {"name": "launcher"}
    if not kai:
        job["dependsOn"] = [{"name": "node", "status": "Ready"}]
    backoff = {"backoffLimit": 6} if kai else {}
    job["template"] = pods.job_template(plan, {"spec": spec}, pods.TRAINER_STEP, **backoff)
    return job


def build_mpi_runtime(plan: RunPlan) -> dict[str, Any]:
    """The run's MPI ``TrainingRuntime``."""
    mpi = {
        "mpiImplementation": "OpenMPI",
        "numProcPerNode": plan.gpus_per_node,
        "sshAuthMountPath": SSH_RAW,
        "runLauncherAsNode": False,
    }
    jobset = {
        "network": {"publishNotReadyAddresses": True},
        "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
        "replicatedJobs": [worker_job(plan), launcher_job(plan)],
    }
    return pods.training_runtime(plan, "mpi", {"numNodes": 1, "mpi": mpi}, jobset)
