"""Write the input.yaml of every golden case (run once; the inputs are committed).

    python tests/golden/make_inputs.py

Each case is a WorkloadRun (from the guide where one exists) plus a small inventory, built
with the tests' shared builders (``tests/builders.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
if __name__ == "__main__":  # run as a script: make ``tests`` importable from the checkout
    sys.path.insert(0, str(HERE.parents[1]))

from tests.builders import IMAGE, MPI, cm, node, nodes, rl, runtime_spec, wr  # noqa: E402

# The plain Secret holds the password: the function writes it only on this explicit opt-in.
REGISTRY = cm(
    registry="nvcr.io",
    registryUsername="$oauthtoken",
    registryPasswordEnv="NGC_API_KEY",
    plainPullSecret="true",
)
MPI16 = [wr("my-workload", {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 4}), *nodes(16)]

CASES: dict[str, tuple[Any, dict[str, str] | None]] = {
    "basic-mpi-16-nodes-four-groups-with-pull-secret": (
        rl(
            [
                wr("my-workload", {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 4}),
                *nodes(16),
            ],
            REGISTRY,
        ),
        {"NGC_API_KEY": "golden-test-password-123"},
    ),
    "torch-18-nodes-numnodes-2-nine-groups": (
        rl(
            [
                wr(
                    "torch-sweep",
                    {
                        "image": IMAGE,
                        "framework": {
                            "torch": {"script": "/workspace/train.py", "args": ["--epochs", "1"]}
                        },
                        "numNodes": 2,
                    },
                ),
                *nodes(18),
            ]
        ),
        None,
    ),
    "overflow-group-borrows-from-last-group": (
        rl(
            [
                wr("ten-nodes", {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 4}),
                *nodes(10),
            ]
        ),
        None,
    ),
    "remainder-skip-leaves-nodes-untested-with-warning": (
        rl(
            [
                wr("ten-nodes", {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 4}),
                *nodes(10),
            ],
            cm(remainder="skip"),
        ),
        None,
    ),
    "target-hostname-single-node": (
        rl(
            [
                wr(
                    "one-node",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 1,
                        "target": {"nodeSelector": {"kubernetes.io/hostname": "gpu-node-01"}},
                    },
                ),
                *nodes(3),
            ]
        ),
        None,
    ),
    "match-expressions-all-operators": (
        rl(
            [
                wr(
                    "selected",
                    {
                        "image": IMAGE,
                        "framework": {
                            "exec": {"command": ["/bin/sh", "-c"], "args": ["nvidia-smi"]}
                        },
                        "numNodes": 1,
                        "target": {
                            "matchExpressions": [
                                {"key": "rack", "operator": "In", "values": ["r1", "r2"]},
                                {"key": "drain", "operator": "DoesNotExist"},
                                {"key": "nvidia.com/gpu.product", "operator": "Exists"},
                                {"key": "pool", "operator": "NotIn", "values": ["spare"]},
                                {"key": "gen", "operator": "Gt", "values": ["2"]},
                                {"key": "gen", "operator": "Lt", "values": ["5"]},
                            ]
                        },
                    },
                ),
                node("n-a", labels={"rack": "r1", "gen": "3"}),
                node("n-b", labels={"rack": "r2", "gen": "4", "pool": "prod"}),
                node("n-c", labels={"rack": "r3", "gen": "3"}),
                node("n-d", labels={"rack": "r1", "gen": "3", "drain": "yes"}),
                node("n-e", labels={"rack": "r1", "gen": "5"}),
                node("n-f", labels={"rack": "r1", "gen": "3", "pool": "spare"}),
                node("n-g", labels={"rack": "r2", "gen": "x"}),
            ]
        ),
        None,
    ),
    "cordoned-notready-and-tainted-nodes-left-out-with-warning": (
        rl(
            [
                wr("healthy-only", {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 2}),
                *nodes(4),
                node("gpu-node-05", cordoned=True),
                node("gpu-node-06", ready=False),
                node(
                    "gpu-node-07",
                    taints=[{"key": "maintenance", "value": "true", "effect": "NoSchedule"}],
                ),
            ]
        ),
        None,
    ),
    "taint-selector-tolerates-and-keeps-tainted-nodes": (
        rl(
            [
                wr(
                    "tainted-ok",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "target": {
                            "nodeSelector": {"pool": "gpu"},
                            "taintSelectors": [
                                {
                                    "key": "nvidia.com/gpu",
                                    "value": "present",
                                    "effect": "NoSchedule",
                                }
                            ],
                        },
                    },
                ),
                *[
                    node(
                        f"t-{i}",
                        labels={"pool": "gpu"},
                        taints=[
                            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
                        ],
                    )
                    for i in range(1, 3)
                ],
            ]
        ),
        None,
    ),
    "env-precedence-mpi-args-beat-spec-env-beat-defaults": (
        rl(
            [
                wr(
                    "env-run",
                    {
                        "image": IMAGE,
                        "framework": {
                            "mpi": {**MPI, "mpiArgs": ["-x", "NCCL_DEBUG=WARN", "--tag-output"]}
                        },
                        "numNodes": 2,
                        "env": [
                            {"name": "NCCL_SHM_DISABLE", "value": "0"},
                            {"name": "NCCL_DEBUG", "value": "TRACE"},
                            {
                                "name": "CRE_TEST_MARKER",
                                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                            },
                            {"name": "ARG_WITH_SPACES", "value": 'a b "c" $(d) `e`; f'},
                        ],
                    },
                ),
                *nodes(2),
            ]
        ),
        None,
    ),
    "mpi-config-pvc-init-containers-workers-only": (
        rl(
            [
                wr(
                    "nccl-from-pvc",
                    {
                        "image": IMAGE,
                        "framework": {
                            "mpi": {
                                "mpirunPath": "/usr/local/mpi/bin/mpirun",
                                "binary": "/config/run_nccl.sh",
                            }
                        },
                        "numNodes": 4,
                        "config": {
                            "inline": {
                                "run_nccl.sh": "#!/bin/sh\n"
                                "exec /usr/local/bin/all_reduce_perf_mpi -b 8 -e 32G -f 2 -n 100\n"
                            }
                        },
                        "volumes": [
                            {
                                "name": "datasets",
                                "persistentVolumeClaim": {"claimName": "nccl-datasets"},
                            }
                        ],
                        "volumeMounts": [{"name": "datasets", "mountPath": "/data"}],
                        "initContainers": [
                            {
                                "name": "list-data",
                                "image": IMAGE,
                                "command": ["ls", "-l", "/data"],
                                "volumeMounts": [{"name": "datasets", "mountPath": "/data"}],
                            }
                        ],
                    },
                ),
                *nodes(4),
            ]
        ),
        None,
    ),
    "torch-module-config-map-ref-and-pull-secrets": (
        rl(
            [
                wr(
                    "torch-mod",
                    {
                        "image": IMAGE,
                        "framework": {"torch": {"module": "my_pkg.train", "args": ["--lr", "0.1"]}},
                        "numNodes": 2,
                        "config": {"configMapRef": {"name": "shared-scripts"}},
                        "imagePullSecrets": [{"name": "my-registry"}],
                        "resources": {"limits": {"memory": "64Gi"}, "requests": {"cpu": "16"}},
                    },
                    ns="team-a",
                ),
                *nodes(2),
            ]
        ),
        None,
    ),
    "exec-framework-explicit-gpu-count-and-timeout": (
        rl(
            [
                wr(
                    "exec-run",
                    {
                        "image": IMAGE,
                        "framework": {
                            "exec": {
                                "command": ["python", "/workspace/probe.py"],
                                "args": ["--all"],
                            }
                        },
                        "numNodes": 2,
                        "gpusPerNode": 4,
                        "orchestration": {"timeoutPerJob": "90m"},
                    },
                ),
                *nodes(2, gpus=4),
            ]
        ),
        None,
    ),
    "unpinned-exactly-numnodes-no-hostname-affinity": (
        rl(
            [
                wr(
                    "once",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "orchestration": {"placement": "Unpinned"},
                    },
                ),
                *nodes(5),
            ]
        ),
        None,
    ),
    "long-name-is-shortened-with-hash": (
        rl(
            [
                wr(
                    "a-very-long-workloadrun-name-for-the-nightly-fleet-sweep",
                    {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 2},
                ),
                *nodes(4),
            ]
        ),
        None,
    ),
    "gb200-mixed-gpus-majority-vote-enables-mnnvl": (
        rl(
            [
                wr("gb", {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 2}),
                *nodes(3, product="NVIDIA-GB200", provider="", gpus=4),
                node("gpu-node-09", product="NVIDIA-H100-80GB-HBM3", provider="", gpus=4),
            ]
        ),
        None,
    ),
    "every-error-reported-at-once": (
        rl(
            [
                wr(
                    "bad",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI, "torch": {"script": "x"}},
                        "numNodes": "4",
                        "envv": [],
                        "volumes": [{"name": "v", "hostPath": {"path": "/x"}, "emptyDir": {}}],
                        "orchestration": {"timeoutPerJob": "forever"},
                    },
                ),
                wr(
                    "too-big",
                    {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 8},
                    path="other.yaml",
                ),
                *nodes(4),
            ],
            REGISTRY,
        ),
        None,
    ),
    "unknown-field-suggests-the-right-name": (
        rl(
            [
                wr(
                    "typo",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": {**MPI, "mpiArg": ["-v"]}},
                        "numNodes": 1,
                        "nodeSelector": {"a": "b"},
                    },
                ),
                *nodes(1),
            ]
        ),
        None,
    ),
    "gang-kai-launcher-waits-for-sshd-instead-of-depends-on": (
        rl(
            [
                wr(
                    "gang-scheduled-workload",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 4,
                        "gangScheduler": {
                            "schedulerName": "kai-scheduler",
                            "queue": "high-priority",
                        },
                    },
                ),
                *nodes(8),
            ]
        ),
        None,
    ),
    "gang-runai-custom-queue-label-key-torch": (
        rl(
            [
                wr(
                    "wr-runai",
                    {
                        "image": IMAGE,
                        "framework": {"torch": {"script": "/workspace/train.py"}},
                        "numNodes": 2,
                        "gangScheduler": {
                            "schedulerName": "runai-scheduler",
                            "queueLabelKey": "runai/queue",
                            "queue": "team-a",
                        },
                    },
                    ns="runai-team-a",
                ),
                *nodes(2),
            ]
        ),
        None,
    ),
    "gang-unpinned-kueue-workload-labels-compose": (
        rl(
            [
                wr(
                    "kueued",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "orchestration": {"placement": "Unpinned"},
                        "gangScheduler": {"schedulerName": "kai-scheduler"},
                        "workloadMetadata": {
                            "labels": {
                                "kueue.x-k8s.io/queue-name": "gpu-queue",
                                "kai.scheduler/queue": "default-queue",
                            }
                        },
                    },
                ),
                *nodes(3),
            ]
        ),
        None,
    ),
    "gang-and-label-validation-errors": (
        rl(
            [
                wr(
                    "bad-gang",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 1,
                        "gangScheduler": {
                            "schedulerName": "kai-scheduler",
                            "queue": "-bad queue-",
                            "queueLabelKey": "nvcre.nvidia.com/queue",
                        },
                    },
                ),
                wr(
                    "bad-labels",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 1,
                        "gangScheduler": {"schedulerName": "kai-scheduler", "queue": "q1"},
                        "workloadMetadata": {
                            "labels": {
                                "kai.scheduler/queue": "q2",
                                "app.kubernetes.io/managed-by": "me",
                                "bad key!": "v",
                                "ok": "bad value!",
                            }
                        },
                    },
                    path="labels.yaml",
                ),
                *nodes(1),
            ]
        ),
        None,
    ),
    "reserved-names-and-paths-mpi-refused": (
        rl(
            [
                wr(
                    "reserved-mpi",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 1,
                        "volumes": [
                            {"name": "dshm", "emptyDir": {}},
                            {"name": "mpi-ssh-auth", "emptyDir": {}},
                            {"name": "data", "emptyDir": {}},
                        ],
                        "volumeMounts": [
                            {"name": "data", "mountPath": "/dev/shm"},
                            {"name": "data", "mountPath": "/root/.ssh/authorized_keys"},
                            {"name": "data", "mountPath": "/tmp/mpi-ssh-raw"},
                            {"name": "config-volume", "mountPath": "/cfg"},
                            {"name": "data", "mountPath": "/dev/shm/below-is-fine"},
                            {"name": "missing", "mountPath": "/m"},
                        ],
                        "initContainers": [{"name": "node", "image": IMAGE}],
                        "env": [{"name": "OMPI_MCA_plm_rsh_args", "value": "-p 2222"}],
                    },
                ),
                *nodes(1),
            ]
        ),
        None,
    ),
    "reserved-names-and-paths-torch-refused": (
        rl(
            [
                wr(
                    "reserved-torch",
                    {
                        "image": IMAGE,
                        "framework": {"torch": {"script": "/t.py"}},
                        "numNodes": 1,
                        "config": {"inline": {"a.sh": "echo"}},
                        "volumes": [
                            {"name": "kubeflow-trainer-token", "emptyDir": {}},
                            {"name": "config-volume", "emptyDir": {}},
                            {"name": "d", "emptyDir": {}},
                        ],
                        "volumeMounts": [
                            {"name": "d", "mountPath": "/config"},
                            {"name": "d", "mountPath": "/var/run/secrets/kubeflow/trainer/token"},
                            {"name": "d", "mountPath": "/config/sub-is-fine"},
                            {"name": "d", "mountPath": "/root/.ssh"},
                        ],
                        "env": [{"name": "PET_NNODES", "value": "3"}],
                    },
                ),
                *nodes(1),
            ]
        ),
        None,
    ),
    "pvc-read-write-once-shared-by-workers-refused": (
        rl(
            [
                wr(
                    "rwo",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "volumes": [
                            {"name": "ckpt", "persistentVolumeClaim": {"claimName": "rwo-claim"}}
                        ],
                        "volumeMounts": [{"name": "ckpt", "mountPath": "/ckpt"}],
                    },
                ),
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "rwo-claim"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Ti"}},
                    },
                },
                *nodes(2),
            ]
        ),
        None,
    ),
    "pvc-read-only-many-mounted-read-only-accepted": (
        rl(
            [
                wr(
                    "rox",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "volumes": [
                            {"name": "ds", "persistentVolumeClaim": {"claimName": "datasets"}}
                        ],
                        "volumeMounts": [{"name": "ds", "mountPath": "/data", "readOnly": True}],
                    },
                ),
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "datasets"},
                    "spec": {
                        "accessModes": ["ReadOnlyMany"],
                        "resources": {"requests": {"storage": "1Ti"}},
                    },
                },
                *nodes(2),
            ]
        ),
        None,
    ),
    "bandwidth-measurement-and-thresholds-carried-to-trainjobs": (
        rl(
            [
                wr(
                    "bw",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "bandwidthMeasurement": {
                            "logProfileRef": "nccl-bandwidth",
                            "testType": "all_reduce",
                        },
                        "thresholds": {"busBandwidthGBps": "value >= 900"},
                    },
                ),
                *nodes(2),
            ]
        ),
        None,
    ),
    "goodput-measurement-carried-to-trainjobs": (
        rl(
            [
                wr(
                    "megatron",
                    {
                        "image": IMAGE,
                        "framework": {"torch": {"script": "/workspace/pretrain_gpt.py"}},
                        "numNodes": 2,
                        "goodputMeasurement": {"logProfileRef": "megatron-training"},
                    },
                ),
                *nodes(2),
            ]
        ),
        None,
    ),
    "bad-threshold-and-test-type-refused": (
        rl(
            [
                wr(
                    "bad-bw",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 1,
                        "bandwidthMeasurement": {
                            "logProfileRef": "nccl-bandwidth",
                            "testType": "all-reduce",
                        },
                        "thresholds": {"busBandwidthGBps": "value >= ", "noSuchKey": "value > 1"},
                    },
                ),
                *nodes(1),
            ]
        ),
        None,
    ),
    "unpinned-clique-target-from-the-guide": (
        rl(
            [
                wr(
                    "clique-job",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "target": {
                            "matchExpressions": [
                                {
                                    "key": "nvidia.com/gpu.clique",
                                    "operator": "In",
                                    "values": ["clique-0"],
                                }
                            ]
                        },
                        "orchestration": {
                            "placement": "Unpinned",
                            "topology": {"topologyKey": "nvidia.com/gpu.clique"},
                        },
                        "gangScheduler": {"schedulerName": "kai-scheduler"},
                    },
                ),
                *nodes(
                    3,
                    product="NVIDIA-GB200",
                    provider="",
                    gpus=4,
                    labels={"nvidia.com/gpu.clique": "clique-0"},
                ),
                node(
                    "gpu-node-09",
                    product="NVIDIA-GB200",
                    provider="",
                    gpus=4,
                    labels={"nvidia.com/gpu.clique": "clique-1"},
                ),
            ]
        ),
        None,
    ),
    "unpinned-never-clamped-and-test-scale-refused": (
        rl(
            [
                wr(
                    "too-few",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 8,
                        "orchestration": {"placement": "Unpinned"},
                    },
                ),
                wr(
                    "scale",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 1,
                        "orchestration": {"placement": "Unpinned", "testScale": "intra-node"},
                    },
                    path="scale.yaml",
                ),
                *nodes(4),
            ]
        ),
        None,
    ),
    "host-rdma-override-from-the-guide": (
        rl(
            [
                wr(
                    "nccl-hostpath-rdma",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": {**MPI, "args": ["-b", "8", "-e", "32G", "-f", "2"]}},
                        "numNodes": 2,
                        "target": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200"}},
                        "volumes": [
                            {
                                "name": "ib-dev",
                                "hostPath": {"path": "/dev/infiniband", "type": "Directory"},
                            }
                        ],
                        "volumeMounts": [{"name": "ib-dev", "mountPath": "/dev/infiniband"}],
                        "overrides": [
                            {
                                "when": {},
                                "dependencies": [
                                    {
                                        "apiVersion": "trainer.kubeflow.org/v1alpha1",
                                        "kind": "TrainingRuntime",
                                        "metadata": {"name": "nccl-hostpath-rdma-runtime"},
                                        "spec": runtime_spec(
                                            "node",
                                            {
                                                "containers": [
                                                    {
                                                        "name": "node",
                                                        "securityContext": {"privileged": True},
                                                    }
                                                ]
                                            },
                                        ),
                                    }
                                ],
                            }
                        ],
                    },
                ),
                *nodes(2, product="NVIDIA-GB200", provider="", gpus=4),
            ]
        ),
        None,
    ),
    "checkpoint-pvc-mounted-and-max-restarts": (
        rl(
            [
                wr(
                    "ckpt",
                    {
                        "image": IMAGE,
                        "framework": {"torch": {"script": "/workspace/train.py"}},
                        "numNodes": 2,
                        "checkpoint": {
                            "storageSize": "500Gi",
                            "storageClassName": "fast-rwx",
                            "maxRestarts": 3,
                        },
                    },
                ),
                *nodes(2),
            ]
        ),
        None,
    ),
    "topology-key-fills-racks-and-overflow-runs-in-a-later-wave": (
        rl(
            [
                wr(
                    "racks",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 4,
                        "orchestration": {"topology": {"topologyKey": "rack"}},
                    },
                ),
                *[node(f"r1-{i}", labels={"rack": "rack-1"}) for i in range(1, 6)],
                *[node(f"r2-{i}", labels={"rack": "rack-2"}) for i in range(1, 5)],
                *[node(f"r3-{i}", labels={"rack": "rack-3"}) for i in range(1, 3)],
            ]
        ),
        None,
    ),
    "topology-label-missing-is-an-error-naming-the-node": (
        rl(
            [
                wr(
                    "racks",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "orchestration": {"topology": {"topologyKey": "rack"}},
                    },
                ),
                node("a-1", labels={"rack": "r1"}),
                node("a-2"),
            ]
        ),
        None,
    ),
    "intra-rack-one-job-per-rack": (
        rl(
            [
                wr(
                    "per-rack",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 1,
                        "orchestration": {
                            "testScale": "intra-rack",
                            "topology": {"topologyKey": "rack"},
                        },
                    },
                ),
                *[node(f"r1-{i}", labels={"rack": "rack-1"}) for i in range(1, 4)],
                *[node(f"r2-{i}", labels={"rack": "rack-2"}) for i in range(1, 3)],
            ]
        ),
        None,
    ),
    "intra-node-one-job-per-node": (
        rl(
            [
                wr(
                    "per-node",
                    {
                        "image": IMAGE,
                        "framework": {"exec": {"command": ["nvidia-smi"]}},
                        "numNodes": 4,
                        "orchestration": {"testScale": "intra-node"},
                    },
                ),
                *nodes(3),
            ]
        ),
        None,
    ),
    "repeat-count-and-max-concurrent-make-suspended-waves": (
        rl(
            [
                wr(
                    "repeat",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 2,
                        "orchestration": {"repeatCount": 2, "maxConcurrent": 1},
                    },
                ),
                *nodes(4),
            ]
        ),
        None,
    ),
    "overrides-job-template-patch-mpi-args-and-pre-command": (
        rl(
            [
                wr(
                    "ov",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": {**MPI, "mpiArgs": ["--tag-output"]}},
                        "numNodes": 2,
                        "overrides": [
                            {
                                "when": {"platform": {"equals": "aws"}},
                                "mpiArgs": ["--mca", "btl_tcp_if_include", "eth0"],
                                "preCommand": [
                                    "ulimit -l unlimited",
                                    "echo 'starting $(hostname)'",
                                ],
                            },
                            {
                                "when": {"gpuArchitecture": {"in": ["h100", "h200"]}},
                                # NVCRE's job-template language: workload labels and the
                                # TrainJob live under spec.workloadMetadata / spec.workload.
                                "jobTemplate": {
                                    "spec": {
                                        "workloadMetadata": {"labels": {"team": "fleet"}},
                                        "workload": {
                                            "trainJob": {
                                                "trainer": {
                                                    "env": [{"name": "EXTRA", "value": "1"}]
                                                }
                                            }
                                        },
                                    },
                                },
                                "jobTemplatePatch": [
                                    {
                                        "op": "add",
                                        "path": "/spec/workloadMetadata/labels/owner",
                                        "value": "sre",
                                    }
                                ],
                            },
                            {"when": {"platform": {"equals": "gcp"}}, "mpiArgs": ["--never"]},
                        ],
                    },
                ),
                *nodes(2),
            ]
        ),
        None,
    ),
    "override-dependency-naming-an-object-not-generated-is-an-error": (
        rl(
            [
                wr(
                    "dep",
                    {
                        "image": IMAGE,
                        "framework": {"mpi": MPI},
                        "numNodes": 1,
                        "overrides": [
                            {
                                "when": {},
                                "dependencies": [
                                    {
                                        "apiVersion": "trainer.kubeflow.org/v1alpha1",
                                        "kind": "TrainingRuntime",
                                        "metadata": {"name": "dep-runtim"},
                                        "spec": {},
                                    }
                                ],
                            }
                        ],
                    },
                ),
                *nodes(1),
            ]
        ),
        None,
    ),
}

CASES.update(
    {
        "gitops-pull-secret-from-external-secret-cluster-store": (
            rl(
                MPI16[:1] + MPI16[1:5],
                cm(
                    registry="nvcr.io",
                    registryUsername="$oauthtoken",
                    registrySecretStore="ClusterSecretStore/ngc",
                    registrySecretKey="ngc/api-key",
                    registrySecretProperty="password",
                ),
            ),
            {"NGC_API_KEY": "golden-test-password-123"},
        ),
        "gitops-pull-secret-existing-secret-referenced-not-rendered": (
            rl(MPI16[:1] + MPI16[1:5], cm(registryPullSecret="ngc-pull")),
            None,
        ),
        "gitops-plain-pull-secret-refused-without-opt-in": (
            rl(
                MPI16[:1] + MPI16[1:5],
                cm(
                    registry="nvcr.io",
                    registryUsername="$oauthtoken",
                    registryPasswordEnv="NGC_API_KEY",
                ),
            ),
            {"NGC_API_KEY": "golden-test-password-123"},
        ),
        "gitops-waves-released-by-the-engine-are-not-suspended": (
            rl(
                [
                    wr(
                        "waves",
                        {
                            "image": IMAGE,
                            "framework": {"mpi": MPI},
                            "numNodes": 2,
                            "orchestration": {"maxConcurrent": 1},
                        },
                    ),
                    *nodes(4),
                ],
                cm(waveRelease="engine"),
            ),
            None,
        ),
    }
)

STREAM_CASE = "plain-stream-in-plain-stream-out"


def generated_inputs() -> dict[str, str]:
    """Every file this generator writes, by its path relative to tests/golden."""
    out: dict[str, str] = {}
    for name, (doc, env) in CASES.items():
        out[f"{name}/input.yaml"] = yaml.safe_dump(doc, sort_keys=False)
        if env:
            out[f"{name}/env.yaml"] = yaml.safe_dump(env, sort_keys=False)
    docs = [
        wr("stream", {"image": IMAGE, "framework": {"mpi": MPI}, "numNodes": 2}, path=None),
        *nodes(2),
    ]
    out[f"{STREAM_CASE}/input.yaml"] = yaml.safe_dump_all(docs, sort_keys=False)
    return out


def main() -> None:
    for rel, text in generated_inputs().items():
        path = HERE / rel
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)


if __name__ == "__main__":
    main()
