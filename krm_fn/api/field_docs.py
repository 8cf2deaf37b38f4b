"""What each API field means, an example of it and what it renders to: the reference's prose.

The types, defaults, constraints and the list of fields come from the models themselves
(:mod:`krm_fn.api.models`, :mod:`krm_fn.api.config`); this table only adds the words a model
cannot carry. :mod:`krm_fn.api.reference` joins the two.

Invariants:
    * Keys are ``"<Model class>.<input key>"``; every field of every documented model has an
      entry and every entry names an existing field (a test checks both ways, so a field added
      to a model without words here fails the suite, and so does a stale entry).
    * ``default`` is only for a field whose model default is ``None`` but that the render fills
      in (from the GPU, the platform or a constant); ``{value}`` in it is replaced by the
      constant named by ``default_from`` (``"module:ATTRIBUTE"``), read when the reference is
      generated, so the text follows the code; ``values_from`` likewise names the tuple of
      accepted values of a plain-string field (the platform and GPU names).
"""

from __future__ import annotations

from typing import NamedTuple


class FieldDoc(NamedTuple):
    """The words for one field."""

    description: str
    example: str
    renders: str
    default: str | None = None
    default_from: str | None = None
    values_from: str | None = None


FIELD_DOCS: dict[str, FieldDoc] = {
    # --- WorkloadRun ----------------------------------------------------------------------
    "WorkloadRun.apiVersion": FieldDoc(
        "API group and version of the object.",
        "apiVersion: nvcre.nvidia.com/v1alpha1",
        "Selects the object as an input; not copied anywhere.",
    ),
    "WorkloadRun.kind": FieldDoc(
        "Object kind.",
        "kind: WorkloadRun",
        "Selects the object as an input; not copied anywhere.",
    ),
    "WorkloadRun.metadata": FieldDoc(
        "Name (an RFC 1035 label of at most 63 characters) and namespace of the run.",
        "metadata: {name: my-workload, namespace: gpu-validation}",
        "Every generated object is named after `metadata.name` (`<name>-runtime`, "
        "`<name>-group-<i>`, `<name>-config`, `<name>-pull-secret`) in `metadata.namespace`, "
        "and labelled `nvcre.nvidia.com/workload-run: <name>`.",
    ),
    "WorkloadRun.spec": FieldDoc(
        "What to run, on which nodes, and how.",
        "spec: {image: nvcr.io/nvidia/pytorch:24.09-py3, numNodes: 1, "
        "framework: {exec: {command: [nvidia-smi]}}}",
        "See the fields below.",
    ),
    "WorkloadRun.status": FieldDoc(
        "Written by NVCRE's controller; accepted and ignored here.",
        "status: {}",
        "Nothing.",
    ),
    # --- WorkloadRunSpec ------------------------------------------------------------------
    "WorkloadRunSpec.image": FieldDoc(
        "Container image of every workload pod.",
        "image: nvcr.io/nvidia/pytorch:24.09-py3",
        "`image` of the `node` container of every pod (MPI: launcher and workers) in the "
        "TrainingRuntime.",
    ),
    "WorkloadRunSpec.framework": FieldDoc(
        "How the workload starts: exactly one of `mpi`, `torch`, `exec`.",
        "framework: {mpi: {binary: /usr/bin/all_reduce_perf, mpirunPath: /usr/bin/mpirun}}",
        "The TrainingRuntime's shape (MPI launcher + workers, or torch `node` pods) and the "
        "TrainJob's command.",
    ),
    "WorkloadRunSpec.numNodes": FieldDoc(
        "Nodes per TrainJob (per group), not a total: the eligible nodes are cut into groups "
        "of this size.",
        "numNodes: 4",
        "`TrainJob.spec.trainer.numNodes`; one TrainJob per group (16 nodes, `numNodes: 4` → "
        "4 TrainJobs).",
    ),
    "WorkloadRunSpec.gpusPerNode": FieldDoc(
        "GPUs each node pod uses.",
        "gpusPerNode: 8",
        "`nvidia.com/gpu` in the worker's limits and requests, `numProcPerNode`, and mpirun's "
        "`-N`.",
        default="from the detected GPU (8 for H100/H200/B200, 4 for GB200/GB300)",
    ),
    "WorkloadRunSpec.mlnxPerNode": FieldDoc(
        "RDMA NICs each node pod requests under `nicResourceName`; `0` opts out.",
        "mlnxPerNode: 8",
        "`<nicResourceName>: <n>` in the worker's limits and requests.",
        default="from the GPU and platform defaults",
    ),
    "WorkloadRunSpec.nicResourceName": FieldDoc(
        "Extended resource name of the RDMA NICs (`<domain>/<name>`, not under "
        "`kubernetes.io`/`k8s.io`).",
        "nicResourceName: rdma/ib",
        "The resource name `mlnxPerNode` is requested under.",
        default="from the platform catalog, where it names one",
    ),
    "WorkloadRunSpec.enableMNNVL": FieldDoc(
        "Multi-node NVLink.",
        "enableMNNVL: true",
        "`NCCL_MNNVL_ENABLE=1` (or `0`) in the workload env.",
        default="on for GB200/GB300, off otherwise",
    ),
    "WorkloadRunSpec.env": FieldDoc(
        "Environment of the workload containers, merged over the NCCL defaults (a user value "
        "replaces a default of the same name).",
        "env: [{name: NCCL_DEBUG, value: WARN}]",
        "`env` of the `node` container (MPI: launcher and workers); for MPI also forwarded to "
        "the ranks as `-x NAME=value`.",
    ),
    "WorkloadRunSpec.volumes": FieldDoc(
        "Extra pod volumes (names `dshm`, `config-volume` and the Trainer ones are reserved).",
        "volumes: [{name: data, persistentVolumeClaim: {claimName: datasets}}]",
        "Appended after the built-in volumes on the torch/exec pods and the MPI workers "
        "(never the launcher).",
    ),
    "WorkloadRunSpec.volumeMounts": FieldDoc(
        "Mounts of those volumes into the workload container.",
        "volumeMounts: [{name: data, mountPath: /data}]",
        "Appended after the built-in mounts of the `node` container (torch/exec pods, MPI "
        "workers).",
    ),
    "WorkloadRunSpec.initContainers": FieldDoc(
        "Init containers of the workload pods (none may be named `node`).",
        "initContainers: [{name: warmup, image: busybox, command: [sh, -c, 'true']}]",
        "`initContainers` of the torch/exec pods and the MPI workers (never the launcher).",
    ),
    "WorkloadRunSpec.resources": FieldDoc(
        "Resources of the workload container; `nvidia.com/gpu` is added unless named here.",
        "resources: {limits: {memory: 512Gi}}",
        "`resources` of the worker's `node` container, plus `nvidia.com/gpu`, the platform's "
        "requests and the NIC request where not named.",
        default="`nvidia.com/gpu: <gpusPerNode>` in limits and requests",
    ),
    "WorkloadRunSpec.imagePullSecrets": FieldDoc(
        "Existing pull Secrets of the image.",
        "imagePullSecrets: [{name: ngc-pull}]",
        "`imagePullSecrets` of every pod (MPI: launcher and workers), before the generated "
        "`<run>-pull-secret` when the registry options are set.",
    ),
    "WorkloadRunSpec.target": FieldDoc(
        "Which nodes of the inventory the run is for (all conditions ANDed).",
        "target: {nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}",
        "The eligible nodes, and a required node affinity on every pod.",
        default="nodes labelled `nvidia.com/gpu.present=true`",
    ),
    "WorkloadRunSpec.orchestration": FieldDoc(
        "Placement, grouping, repetition, concurrency and timeout.",
        "orchestration: {timeoutPerJob: 2h}",
        "See the fields below.",
    ),
    "WorkloadRunSpec.config": FieldDoc(
        "Files for the workload, mounted at `/config`.",
        "config: {inline: {train.sh: 'echo hi'}}",
        "A ConfigMap volume `config-volume` mounted at `/config` (mode 0755).",
    ),
    "WorkloadRunSpec.checkpoint": FieldDoc(
        "A shared checkpoint volume.",
        "checkpoint: {storageSize: 100Gi}",
        "PersistentVolumeClaim `<run>-checkpoint-pvc` (ReadWriteMany) mounted at "
        "`/checkpoint` on the workload pods.",
    ),
    "WorkloadRunSpec.thresholds": FieldDoc(
        "Pass/fail thresholds for `workloadrun-fn report` (keys from the report's registry, "
        "values such as `value >= 900`).",
        "thresholds: {busBandwidthGBps: 'value >= 380'}",
        "The JSON annotation `nvcre.nvidia.com/thresholds` on every TrainJob.",
    ),
    "WorkloadRunSpec.goodputMeasurement": FieldDoc(
        "Measure goodput from the training logs.",
        "goodputMeasurement: {logProfileRef: megatron-training}",
        "The JSON annotation `nvcre.nvidia.com/goodput-measurement` on every TrainJob.",
    ),
    "WorkloadRunSpec.bandwidthMeasurement": FieldDoc(
        "Measure bus bandwidth from nccl-tests output.",
        "bandwidthMeasurement: {logProfileRef: nccl-bandwidth, testType: all_reduce}",
        "The JSON annotation `nvcre.nvidia.com/bandwidth-measurement` on every TrainJob.",
    ),
    "WorkloadRunSpec.overrides": FieldDoc(
        "Patches applied after the platform catalog, in order, when their `when` matches.",
        "overrides: [{when: {platform: {equals: aws}}, mpiArgs: [-x, FI_PROVIDER=efa]}]",
        "Changes to the generated objects; each applied one is listed in the annotation "
        "`nvcre.nvidia.com/applied-overrides` as `spec.overrides[<i>]`.",
    ),
    "WorkloadRunSpec.gangScheduler": FieldDoc(
        "Gang scheduling (KAI, Run:ai, ...).",
        "gangScheduler: {schedulerName: kai-scheduler}",
        "`schedulerName` on every pod and the queue label on the TrainJob, its Job templates "
        "and pod templates.",
    ),
    "WorkloadRunSpec.workloadMetadata": FieldDoc(
        "Extra metadata for the TrainJobs.",
        "workloadMetadata: {labels: {kueue.x-k8s.io/queue-name: team-a}}",
        "See the fields below.",
    ),
    # --- framework ------------------------------------------------------------------------
    "Framework.mpi": FieldDoc(
        "mpirun on a launcher pod starts `binary` on every worker over SSH.",
        "mpi: {binary: /usr/bin/all_reduce_perf, mpirunPath: /usr/bin/mpirun}",
        "An MPI TrainingRuntime: replicated jobs `node` (workers, sshd) and `launcher`.",
    ),
    "Framework.torch": FieldDoc(
        "torchrun with a script or a module on every node pod.",
        "torch: {script: /config/train.py}",
        "A torch TrainingRuntime; `numProcPerNode` = GPUs per node.",
    ),
    "Framework.exec": FieldDoc(
        "A command run verbatim on every node pod.",
        "exec: {command: [python, /config/bench.py]}",
        "A torch-shaped TrainingRuntime (scripts see Trainer's `PET_*` variables).",
    ),
    "MPIFramework.binary": FieldDoc(
        "Program mpirun starts on every rank.",
        "binary: /usr/bin/all_reduce_perf",
        "The launcher's mpirun argv, after the mpirun options.",
    ),
    "MPIFramework.args": FieldDoc(
        "Arguments of `binary`.",
        "args: [-b, '8', -e, 16G, -f, '2']",
        "The end of the launcher's mpirun argv (`$` written as `$$`, so the kubelet leaves "
        "it alone).",
    ),
    "MPIFramework.mpiArgs": FieldDoc(
        "Extra mpirun options; they come last, so they win over the platform's.",
        "mpiArgs: [-x, NCCL_ALGO=Ring]",
        "The launcher's mpirun argv, before `binary`.",
    ),
    "MPIFramework.mpiImplementation": FieldDoc(
        "MPI implementation.",
        "mpiImplementation: OpenMPI",
        "`mlPolicy.mpi.mpiImplementation` of the TrainingRuntime.",
    ),
    "MPIFramework.mpirunPath": FieldDoc(
        "Path of mpirun in the image.",
        "mpirunPath: /usr/local/mpi/bin/mpirun",
        "The first element of the launcher's command.",
    ),
    "TorchFramework.script": FieldDoc(
        "Script for torchrun (exclusive with `module`).",
        "script: /config/train.py",
        "`torchrun <script> <args>` as the TrainJob's command.",
    ),
    "TorchFramework.module": FieldDoc(
        "Python module for `torchrun -m` (exclusive with `script`).",
        "module: megatron.training",
        "`torchrun -m <module> <args>` as the TrainJob's command.",
    ),
    "TorchFramework.args": FieldDoc(
        "Arguments after the script or module.",
        "args: [--epochs, '1']",
        "The end of the TrainJob's `trainer.args`.",
    ),
    "ExecFramework.command": FieldDoc(
        "Command (argv) run on every node pod.",
        "command: [python, /config/bench.py]",
        "`TrainJob.spec.trainer.command`, verbatim.",
    ),
    "ExecFramework.args": FieldDoc(
        "Arguments of the command.",
        "args: [--size, 1G]",
        "`TrainJob.spec.trainer.args`, verbatim.",
    ),
    # --- target ---------------------------------------------------------------------------
    "Target.nodeSelector": FieldDoc(
        "Labels a node must carry (all of them).",
        "nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}",
        "Eligible nodes, and `In` expressions in the pods' required node affinity.",
    ),
    "Target.matchExpressions": FieldDoc(
        "Label expressions a node must satisfy (`In`, `NotIn`, `Exists`, `DoesNotExist`, "
        "`Gt`, `Lt`).",
        "matchExpressions: [{key: nvidia.com/gpu.clique, operator: In, values: [clique-0]}]",
        "Eligible nodes, and the same expressions in the pods' required node affinity.",
    ),
    "Target.nodeNames": FieldDoc(
        "Explicit node names (ANDed with the other conditions).",
        "nodeNames: [gpu-node-01, gpu-node-02]",
        "Eligible nodes, and `kubernetes.io/hostname In [...]` in the pods' node affinity.",
    ),
    "Target.taintSelectors": FieldDoc(
        "Tainted nodes to include; each entry is also tolerated by the pods.",
        "taintSelectors: [{key: nvidia.com/gpu, effect: NoSchedule}]",
        "Eligible nodes, and a toleration on every pod.",
    ),
    "TaintSelector.key": FieldDoc(
        "Taint key.",
        "key: nvidia.com/gpu",
        "`tolerations[].key`.",
    ),
    "TaintSelector.value": FieldDoc(
        "Taint value; unset tolerates any value.",
        "value: present",
        "`operator: Equal` with `value`, or `operator: Exists` when unset.",
    ),
    "TaintSelector.effect": FieldDoc(
        "Taint effect; unset matches every effect.",
        "effect: NoSchedule",
        "`tolerations[].effect`.",
    ),
    # --- orchestration --------------------------------------------------------------------
    "Orchestration.testScale": FieldDoc(
        "`intra-node`: one single-node TrainJob per eligible node; `intra-rack`: one TrainJob "
        "per topology domain; `full-scale`: the default grouping.",
        "testScale: intra-node",
        "The number and size of the TrainJobs.",
        default="full-scale behaviour",
    ),
    "Orchestration.placement": FieldDoc(
        "`Pinned`: every group pinned to its nodes; `Unpinned`: one TrainJob of `numNodes` "
        "nodes placed by the scheduler.",
        "placement: Unpinned",
        "Pinned: a `kubernetes.io/hostname In [group nodes]` affinity in a runtimePatch of "
        "each TrainJob; Unpinned: one TrainJob without it.",
        default="Pinned",
    ),
    "Orchestration.topology": FieldDoc(
        "Fill groups within topology domains (racks, NVLink domains).",
        "topology: {topologyKey: nvidia.com/gpu.clique}",
        "Which nodes share a TrainJob.",
        default="the platform's rack/block label where the catalog names one",
    ),
    "Orchestration.repeatCount": FieldDoc(
        "How many times every group runs.",
        "repeatCount: 3",
        "TrainJobs `<run>-group-<i>-iter-<k>`, in successive waves.",
        default="1",
    ),
    "Orchestration.maxConcurrent": FieldDoc(
        "At most this many TrainJobs run at once (0: unlimited).",
        "maxConcurrent: 2",
        "Waves: later TrainJobs are rendered `suspend: true` with the label "
        "`nvcre.nvidia.com/wave`.",
        default="0 (unlimited)",
    ),
    "Orchestration.timeoutPerJob": FieldDoc(
        "Deadline of each TrainJob, a Go duration (`90m`, `1h30m`, `24h`).",
        "timeoutPerJob: 2h",
        "`TrainJob.spec.activeDeadlineSeconds`.",
        default="`{value}`",
        default_from="krm_fn.render:DEFAULT_TIMEOUT",
    ),
    "Topology.topologyKey": FieldDoc(
        "Node label whose value names the domain.",
        "topologyKey: nvidia.com/gpu.clique",
        "Group membership; every eligible node must carry the label.",
    ),
    "Topology.strictDomain": FieldDoc(
        "One TrainJob per domain, at the domain's size.",
        "strictDomain: true",
        "One TrainJob per distinct label value.",
    ),
    # --- config / checkpoint --------------------------------------------------------------
    "ConfigSpec.inline": FieldDoc(
        "File name → content (exclusive with `configMapRef`).",
        "inline: {train.sh: '#!/bin/sh ...'}",
        "ConfigMap `<run>-config`, mounted at `/config`.",
    ),
    "ConfigSpec.configMapRef": FieldDoc(
        "An existing ConfigMap to mount instead (exclusive with `inline`).",
        "configMapRef: {name: shared-scripts}",
        "That ConfigMap mounted at `/config`; nothing is generated.",
    ),
    "Checkpoint.storageSize": FieldDoc(
        "Size of the checkpoint claim.",
        "storageSize: 100Gi",
        "`spec.resources.requests.storage` of `<run>-checkpoint-pvc`.",
    ),
    "Checkpoint.storageClassName": FieldDoc(
        "Storage class of the claim.",
        "storageClassName: lustre",
        "`spec.storageClassName` of `<run>-checkpoint-pvc`.",
        default="the cluster's default class",
    ),
    "Checkpoint.maxRestarts": FieldDoc(
        "How many times a failed run restarts from its checkpoint.",
        "maxRestarts: 2",
        "The JobSet `failurePolicy.maxRestarts` in the TrainingRuntime.",
    ),
    # --- measurements ---------------------------------------------------------------------
    "GoodputMeasurement.logProfileRef": FieldDoc(
        "LogProfile that reads the training logs (`megatron-training`, `megatron-bridge`, or "
        "a LogProfile among the inputs).",
        "logProfileRef: megatron-training",
        "The goodput annotation, read by `workloadrun-fn report`.",
    ),
    "GoodputMeasurement.sampleInterval": FieldDoc(
        "Sampling interval, a Go duration.",
        "sampleInterval: 30s",
        "The goodput annotation.",
    ),
    "BandwidthMeasurement.logProfileRef": FieldDoc(
        "LogProfile that reads nccl-tests output (`nccl-bandwidth`, `nccl-loopback`, or a "
        "LogProfile among the inputs).",
        "logProfileRef: nccl-bandwidth",
        "The bandwidth annotation, read by `workloadrun-fn report`.",
    ),
    "BandwidthMeasurement.sampleInterval": FieldDoc(
        "Sampling interval, a Go duration.",
        "sampleInterval: 60s",
        "The bandwidth annotation.",
    ),
    "BandwidthMeasurement.testType": FieldDoc(
        "The nccl-tests collective the logs must come from.",
        "testType: all_reduce",
        "The bandwidth annotation; `report` checks the log's collective against it.",
    ),
    # --- overrides ------------------------------------------------------------------------
    "Override.when": FieldDoc(
        "When the override applies: every matcher set must match (an empty `when` always matches).",
        "when: {gpuArchitecture: {in: [gb200, gb300]}}",
        "Nothing by itself; decides whether the rest applies.",
    ),
    "Override.jobTemplate": FieldDoc(
        "Strategic merge patch onto every TrainJob (`trainer.env` and `trainer.args` are "
        "replaced, not merged).",
        "jobTemplate: {spec: {trainer: {args: [-b, 1G]}}}",
        "The TrainJobs.",
    ),
    "Override.jobTemplatePatch": FieldDoc(
        "RFC 6902 JSON Patch onto every TrainJob, after `jobTemplate`.",
        "jobTemplatePatch: [{op: add, path: /spec/suspend, value: true}]",
        "The TrainJobs.",
    ),
    "Override.dependencies": FieldDoc(
        "Objects strategic-merged into the generated object of the same apiVersion, kind and name.",
        "dependencies: [{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainingRuntime, "
        "metadata: {name: my-workload-runtime}, spec: {mlPolicy: {numNodes: 1}}}]",
        "The TrainingRuntime, ConfigMap, Secret or claim it names.",
    ),
    "Override.orchestration": FieldDoc(
        "Replacement orchestration sub-structures.",
        "orchestration: {placement: Unpinned}",
        "As `spec.orchestration`.",
    ),
    "Override.mpiArgs": FieldDoc(
        "mpirun options (WorkloadRun-only).",
        "mpiArgs: [-x, NCCL_IB_HCA=mlx5]",
        "The launcher's mpirun argv, after the platform's and before the user's `mpiArgs`.",
    ),
    "Override.preCommand": FieldDoc(
        "Shell lines run before the workload (WorkloadRun-only).",
        "preCommand: [ulimit -l unlimited]",
        'The command becomes `/bin/bash -c "<lines>\\nexec <argv, shell-quoted>"`.',
    ),
    "When.gpuArchitecture": FieldDoc(
        "Match the detected GPU architecture (`h100`, `gb200`, ...).",
        "gpuArchitecture: {equals: h100}",
        "Nothing; a condition.",
    ),
    "When.platform": FieldDoc(
        "Match the detected platform (`aws`, `gcp`, ...).",
        "platform: {in: [aws, azure]}",
        "Nothing; a condition.",
    ),
    "When.workloadKind": FieldDoc(
        "Match the generated workload kind.",
        "workloadKind: TrainJob",
        "Nothing; a condition (always `TrainJob` here).",
    ),
    "When.topology": FieldDoc(
        "Match the grouping mode and the number of topology domains.",
        "topology: {mode: topology, domainCount: {greaterThan: 1}}",
        "Nothing; a condition.",
    ),
    "When.config": FieldDoc(
        "Subset match on the workload's config values (NVCRE); this render has none, so "
        "only an empty map matches.",
        "config: {}",
        "Nothing; a condition.",
    ),
    "When.expression": FieldDoc(
        "A boolean expression over `platform`, `gpuArchitecture`, `workloadKind`, "
        "`topologyMode`, `domainCount`.",
        "expression: platform == 'aws' && domainCount > 1",
        "Nothing; a condition.",
    ),
    "StringMatch.equals": FieldDoc("Exactly this value.", "equals: h100", "Nothing."),
    "StringMatch.in": FieldDoc("One of these values.", "in: [h100, h200]", "Nothing."),
    "StringMatch.notIn": FieldDoc("None of these values.", "notIn: [a100]", "Nothing."),
    "IntMatch.equals": FieldDoc("Exactly this number.", "equals: 1", "Nothing."),
    "IntMatch.greaterThan": FieldDoc("More than this number.", "greaterThan: 1", "Nothing."),
    "IntMatch.lessThan": FieldDoc("Less than this number.", "lessThan: 4", "Nothing."),
    "TopologyMatch.mode": FieldDoc(
        "`topology` when groups follow a topology key, else `simple`.",
        "mode: topology",
        "Nothing.",
    ),
    "TopologyMatch.domainCount": FieldDoc(
        "Number of topology domains among the eligible nodes.",
        "domainCount: {greaterThan: 1}",
        "Nothing.",
    ),
    # --- gang scheduling / metadata -------------------------------------------------------
    "GangScheduler.schedulerName": FieldDoc(
        "The gang scheduler (`kai-scheduler` switches on KAI's launcher handling).",
        "schedulerName: kai-scheduler",
        "`schedulerName` of every pod in the TrainingRuntime.",
    ),
    "GangScheduler.queue": FieldDoc(
        "Queue name (a label value).",
        "queue: team-a",
        "The value of the queue label.",
    ),
    "GangScheduler.queueLabelKey": FieldDoc(
        "Label key the scheduler reads the queue from.",
        "queueLabelKey: runai/queue",
        "The queue label on the TrainJob, on every Job template and on every pod template.",
    ),
    "WorkloadMetadata.labels": FieldDoc(
        "Labels for the TrainJobs (at most 32; not `app.kubernetes.io/managed-by` nor "
        "`nvcre.nvidia.com/*`).",
        "labels: {kueue.x-k8s.io/queue-name: team-a}",
        "`metadata.labels` of every TrainJob.",
    ),
    # --- function options -----------------------------------------------------------------
    "FunctionOptions.registry": FieldDoc(
        "Registry server of the image (set with the two below).",
        "registry: nvcr.io",
        "A `kubernetes.io/dockerconfigjson` Secret `<run>-pull-secret`, added to every pod's "
        "`imagePullSecrets`.",
    ),
    "FunctionOptions.registryUsername": FieldDoc(
        "Registry user (`$oauthtoken` is taken literally, as NGC wants).",
        "registryUsername: $oauthtoken",
        "The Secret's user.",
    ),
    "FunctionOptions.registryPasswordEnv": FieldDoc(
        "*Name* of the environment variable holding the password or API key.",
        "registryPasswordEnv: NGC_API_KEY",
        "The Secret's password, read from that variable at render time.",
    ),
    "FunctionOptions.registryPassword": FieldDoc(
        "Always refused: a password never goes in a file; use `registryPasswordEnv`.",
        "registryPassword: s3cret  # refused",
        "An error.",
    ),
    "FunctionOptions.registryPullSecret": FieldDoc(
        "Name of a pull Secret that already exists in the run's namespace (GitOps: no "
        "password anywhere). Excludes the registry options.",
        "registryPullSecret: ngc-pull",
        "That name in every pod's `imagePullSecrets`; nothing is generated.",
    ),
    "FunctionOptions.registrySecretStore": FieldDoc(
        "External Secrets Operator store (`NAME`, `SecretStore/NAME` or "
        "`ClusterSecretStore/NAME`); with `registry`, `registryUsername` and "
        "`registrySecretKey` the pull Secret comes from it.",
        "registrySecretStore: ClusterSecretStore/ngc",
        "An `ExternalSecret` (`external-secrets.io/v1`) `<run>-pull-secret` instead of the "
        "Secret; the operator writes the Secret in the cluster.",
    ),
    "FunctionOptions.registrySecretKey": FieldDoc(
        "The key of the registry password in that store.",
        "registrySecretKey: ngc-api-key",
        "The ExternalSecret's `remoteRef.key`.",
    ),
    "FunctionOptions.registrySecretProperty": FieldDoc(
        "A field of a JSON secret in the store holding the password (optional).",
        "registrySecretProperty: password",
        "The ExternalSecret's `remoteRef.property`.",
    ),
    "FunctionOptions.plainPullSecret": FieldDoc(
        "The explicit opt-in to write the plain Secret, password included, into the "
        "function's output (kpt files it into the package). Without it `registryPasswordEnv` "
        "is refused by the function.",
        "plainPullSecret: 'true'",
        "The `kubernetes.io/dockerconfigjson` Secret `<run>-pull-secret`.",
    ),
    "FunctionOptions.waveRelease": FieldDoc(
        "`suspend`: later waves are rendered `suspend: true` (released by `workloadrun-fn "
        "release`); `engine`: nothing suspended, the GitOps engine orders the waves.",
        "waveRelease: engine",
        "`spec.suspend` of the TrainJobs of later waves.",
    ),
    "FunctionOptions.remainder": FieldDoc(
        "What happens to eligible nodes that do not fill a last group: `overflow` (one more "
        "group borrowing nodes from the last full one) or `skip` (left out, with a warning).",
        "remainder: skip",
        "An extra `<run>-group-<k>-overflow` TrainJob, or none.",
    ),
    "FunctionOptions.outputDir": FieldDoc(
        "Directory (next to the WorkloadRun's file) kpt writes the generated objects to.",
        "outputDir: rendered",
        "The `internal.config.kubernetes.io/path` of each generated object.",
    ),
    "FunctionOptions.platform": FieldDoc(
        "Force the platform instead of detecting it (previews).",
        "platform: aws",
        "The platform catalog entries that apply.",
        default="detected from the nodes",
        values_from="krm_fn.platforms.detect:PLATFORMS",
    ),
    "FunctionOptions.gpuArch": FieldDoc(
        "Force the GPU architecture instead of detecting it (previews); a product name such "
        "as `NVIDIA-H100-80GB-HBM3` is accepted too.",
        "gpuArch: h100",
        "GPU defaults and catalog entries.",
        default="detected from the nodes",
        values_from="krm_fn.platforms.gpu:GPU_ARCHITECTURES",
    ),
    "FunctionOptions.strictGpuArch": FieldDoc(
        "Mixed GPU products are an error instead of a majority vote with a warning.",
        "strictGpuArch: 'true'",
        "Nothing; a check.",
    ),
    "FunctionOptions.inventory": FieldDoc(
        "Extra Node files or directories (comma- or newline-separated in a ConfigMap or "
        "annotation), for generators that receive no resources.",
        "inventory: [nodes.yaml, racks/]",
        "More nodes to choose from.",
    ),
}


__all__ = ["FIELD_DOCS", "FieldDoc"]
