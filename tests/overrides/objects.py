"""Realistic generated objects for the override tests (shaped like krm_fn.builders output)."""

from __future__ import annotations

from typing import Any

from tests.builders import IMAGE, runtime_spec

TRAINER_API = "trainer.kubeflow.org/v1alpha1"

NCCL_ENV = [
    {"name": "NCCL_DEBUG", "value": "INFO"},
    {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
]

GPU_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
                    ]
                }
            ]
        }
    }
}


def configmap(run: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{run}-config", "namespace": "default"},
        "data": {"run_nccl.sh": "#!/bin/sh\nexec all_reduce_perf_mpi -b 8\n"},
    }


def mpi_runtime(run: str) -> dict[str, Any]:
    """An MPI TrainingRuntime: sshd workers (``node``) and an mpirun ``launcher``."""
    worker = {
        "name": "node",
        "template": {
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [
                            {
                                "name": "node",
                                "image": IMAGE,
                                "command": ["sh", "-c"],
                                "args": ["/usr/sbin/sshd -De"],
                                "env": [dict(e) for e in NCCL_ENV],
                                "resources": {
                                    "limits": {"nvidia.com/gpu": "8"},
                                    "requests": {"nvidia.com/gpu": "8"},
                                },
                                "securityContext": {
                                    "capabilities": {"add": ["IPC_LOCK", "SYS_CHROOT"]}
                                },
                                "volumeMounts": [
                                    {"name": "dshm", "mountPath": "/dev/shm"},
                                    {"name": "ib-dev", "mountPath": "/dev/infiniband"},
                                    {"name": "config-volume", "mountPath": "/config"},
                                ],
                            }
                        ],
                        "volumes": [
                            {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                            {
                                "name": "ib-dev",
                                "hostPath": {"path": "/dev/infiniband", "type": "Directory"},
                            },
                            {
                                "name": "config-volume",
                                "configMap": {"name": f"{run}-config", "defaultMode": 493},
                            },
                        ],
                        "affinity": GPU_AFFINITY,
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    }
                }
            }
        },
    }
    launcher = {
        "name": "launcher",
        "dependsOn": [{"name": "node", "status": "Ready"}],
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "initContainers": [
                            {
                                "name": "fix-ssh-permissions",
                                "image": IMAGE,
                                "command": ["sh", "-c"],
                                "args": ["cp /tmp/mpi-ssh-raw/* /root/.ssh/"],
                                "volumeMounts": [
                                    {
                                        "name": "mpi-ssh-auth",
                                        "mountPath": "/tmp/mpi-ssh-raw",
                                        "readOnly": True,
                                    },
                                    {"name": "ssh-keys", "mountPath": "/root/.ssh"},
                                ],
                            }
                        ],
                        "containers": [
                            {
                                "name": "node",
                                "image": IMAGE,
                                "env": [dict(e) for e in NCCL_ENV],
                                "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
                                "volumeMounts": [
                                    {"name": "ssh-keys", "mountPath": "/root/.ssh"},
                                    {
                                        "name": "config-volume",
                                        "mountPath": "/config",
                                        "readOnly": True,
                                    },
                                ],
                            }
                        ],
                        "volumes": [
                            {"name": "ssh-keys", "emptyDir": {}},
                            {
                                "name": "config-volume",
                                "configMap": {"name": f"{run}-config", "defaultMode": 493},
                            },
                        ],
                        "affinity": GPU_AFFINITY,
                    }
                }
            },
        },
    }
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainingRuntime",
        "metadata": {
            "name": f"{run}-runtime",
            "namespace": "default",
            "labels": {"trainer.kubeflow.org/framework": "mpi"},
        },
        "spec": {
            "mlPolicy": {
                "numNodes": 1,
                "mpi": {
                    "mpiImplementation": "OpenMPI",
                    "numProcPerNode": 8,
                    "sshAuthMountPath": "/tmp/mpi-ssh-raw",
                    "runLauncherAsNode": False,
                },
            },
            "template": {
                "spec": {
                    "network": {"publishNotReadyAddresses": True},
                    "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
                    "replicatedJobs": [worker, launcher],
                }
            },
        },
    }


def trainjob(run: str, group: int, hosts: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainJob",
        "metadata": {
            "name": f"{run}-group-{group}",
            "namespace": "default",
            "labels": {"nvcre.nvidia.com/group": f"group-{group}"},
        },
        "spec": {
            "runtimeRef": {
                "apiGroup": "trainer.kubeflow.org",
                "kind": "TrainingRuntime",
                "name": f"{run}-runtime",
            },
            "trainer": {
                "image": IMAGE,
                "command": ["/usr/local/mpi/bin/mpirun"],
                "args": ["--hostfile", "/etc/mpi/hostfile", "/config/run_nccl.sh"],
                "env": [{"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"}],
                "numNodes": len(hosts),
            },
            "runtimePatches": [
                {
                    "manager": "nvcre.nvidia.com/workloadrun-fn",
                    "trainingRuntimeSpec": runtime_spec(
                        "node", {"nodeSelector": {"kubernetes.io/hostname": hosts[0]}}
                    ),
                }
            ],
        },
    }


def generated(run: str = "nccl-hostpath-rdma") -> list[dict[str, Any]]:
    """The objects one MPI WorkloadRun renders to: ConfigMap, TrainingRuntime, two TrainJobs."""
    return [
        configmap(run),
        mpi_runtime(run),
        trainjob(run, 0, ["gpu-node-01", "gpu-node-02"]),
        trainjob(run, 1, ["gpu-node-03", "gpu-node-04"]),
    ]


def pod_spec(runtime: dict[str, Any], rjob: str) -> dict[str, Any]:
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        if job["name"] == rjob:
            spec: dict[str, Any] = job["template"]["spec"]["template"]["spec"]
            return spec
    raise KeyError(rjob)


def replicated_job(runtime: dict[str, Any], rjob: str) -> dict[str, Any]:
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        if job["name"] == rjob:
            found: dict[str, Any] = job
            return found
    raise KeyError(rjob)
