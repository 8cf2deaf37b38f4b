"""Models of NVCRE's ``WorkloadRun`` (``nvcre.nvidia.com/v1alpha1``).

Declared with pydantic v2 (frozen models); the CRD (:mod:`krm_fn.api.crd`) and the field
reference (:mod:`krm_fn.api.reference`) are generated from their ``model_fields``.

Invariants:
    * Every field NVCRE defines is accepted under its NVCRE name, so an existing manifest is
      accepted unchanged; a field the model does not know is an error naming its path.
    * Types are strict: ``numNodes: "4"`` is an error, not a silent coercion.
    * Validation here is structural and per-field; rules that need the inventory or several
      fields at once live in the render stages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from krm_fn.keys import WORKLOADRUN_API_GROUP as API_GROUP

API_VERSION = f"{API_GROUP}/v1alpha1"

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*"
DNS1123_SUBDOMAIN_RE = re.compile(rf"^{DNS1123_SUBDOMAIN}$")
LABEL_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE_RE = re.compile(r"^$|^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$")
NIC_RESOURCE_RE = re.compile(
    rf"^{DNS1123_SUBDOMAIN}/[a-zA-Z0-9]([-A-Za-z0-9_.]{{0,61}}[a-zA-Z0-9])?$"
)
QUANTITY_RE = re.compile(r"^([0-9]+(\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei)?$")
DNS1123_LABEL_RE = re.compile(rf"^{_DNS1123_LABEL}$")
ENV_NAME_RE = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+$")
MAX_REPEAT_COUNT = 1000
DEFAULT_QUEUE = "default-queue"
DEFAULT_QUEUE_LABEL_KEY = "kai.scheduler/queue"
DEFAULT_TIMEOUT_PER_JOB = "24h"
"""NVCRE's ``catalog.DefaultWorkloadRunTimeoutPerJob``."""


def checked(problem: Callable[[str], str | None], message: str) -> AfterValidator:
    """Refuse a value ``problem`` faults: ``message`` formatted with ``value`` and ``why``."""

    def check(value: str | None) -> str | None:
        if value is not None and (why := problem(value)):
            raise ValueError(message.format(value=value, why=why))
        return value

    return AfterValidator(check)


def dns_label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label, or ``None`` when it is."""
    if len(value) > 63 or not DNS1123_LABEL_RE.match(value):
        return (
            "must be a DNS-1123 label: at most 63 lower-case letters, digits or '-', starting "
            "and ending with a letter or digit"
        )
    return None


def label_key_problem(key: str) -> str | None:
    """Return why ``key`` is not a valid Kubernetes label key, or ``None`` when it is."""
    if key.count("/") > 1:
        return "a label key has at most one '/'"
    prefix, _, name = key.rpartition("/")
    if "/" in key:
        if not prefix:
            return "the prefix before '/' must not be empty"
        if len(prefix) > 253 or not DNS1123_SUBDOMAIN_RE.match(prefix):
            return "the prefix must be a DNS-1123 subdomain of at most 253 characters"
    if not name or len(name) > 63 or not LABEL_NAME_RE.match(name):
        return (
            "the name part must be at most 63 characters, alphanumeric at both ends, "
            "with '-', '_' or '.' inside"
        )
    return None


_KEY = "key {value!r} is not a valid label key: {why}"


def label_value_problem(value: str) -> str | None:
    """Return why ``value`` is not a valid Kubernetes label value, or ``None``."""
    if len(value) > 63 or not LABEL_VALUE_RE.match(value):
        return (
            "a label value must be at most 63 characters, begin and end with an alphanumeric "
            "character and contain only alphanumerics, '-', '_' or '.'"
        )
    return None


class Strict(BaseModel):
    """Base: unknown fields are errors, types are strict, names are NVCRE's camelCase."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        populate_by_name=True,
        defer_build=True,
        alias_generator=to_camel,
    )


# --- core/v1 pieces: thin views of Kubernetes' types, checked against their derived schemas ---


class CoreV1(Strict):
    """A Kubernetes core/v1 type, written as in a Pod.

    Declares only the fields the render reads; every field, declared or not, is checked
    against the type's schema DERIVED from the pinned CRDs (:mod:`krm_fn.api.corev1`), and
    :meth:`to_k8s` gives the object back as written (declared fields first, unset ones left out).
    """

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="after")
    def _derived_schema(self) -> CoreV1:
        if self.model_extra:
            from krm_fn.api import corev1

            dumped = self.model_dump(by_alias=True, exclude_none=True)
            if problems := corev1.problems(type(self).__name__, dumped):
                raise ValueError(
                    "; ".join(m if m.startswith("unknown") else f"{p}: {m}" for p, m in problems)
                )
        return self

    def to_k8s(self) -> dict[str, Any]:
        """The object as Kubernetes reads it (unset and empty-by-default fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)


class EnvVar(CoreV1):
    """A container environment variable."""

    name: str = Field(min_length=1)
    value: str | None = None
    value_from: dict[str, Any] | None = Field(default=None)

    @field_validator("name")
    @classmethod
    def _env_name(cls, v: str) -> str:
        if not ENV_NAME_RE.match(v):
            raise ValueError(
                f"environment variable name {v!r} must consist of letters, digits, '_', '-' or "
                "'.', and must not start with a digit"
            )
        return v

    @model_validator(mode="after")
    def _one_source(self) -> EnvVar:
        if self.value is not None and self.value_from is not None:
            raise ValueError("value and valueFrom are mutually exclusive")
        return self


class VolumeMount(CoreV1):
    """A volume mount."""

    name: str = Field(min_length=1)
    mount_path: str = Field(min_length=1)
    read_only: bool | None = Field(default=None)


class Volume(CoreV1):
    """A pod volume: a name plus exactly one volume source."""

    name: Annotated[str, checked(dns_label_problem, "volume name {value!r} {why}")] = Field(
        min_length=1
    )

    @model_validator(mode="after")
    def _one_source(self) -> Volume:
        found = sorted(self.model_extra or {})
        if len(found) != 1:
            raise ValueError(
                f"a volume must have exactly one volume source, found {len(found)}"
                + (f" ({', '.join(found)})" if found else "")
            )
        return self

    @property
    def source(self) -> tuple[str, dict[str, Any]]:
        """The volume source's key and body."""
        ((k, v),) = (self.model_extra or {}).items()
        return k, v


class Container(CoreV1):
    """A container (``spec.initContainers``)."""

    name: Annotated[str, checked(dns_label_problem, "container name {value!r} {why}")] = Field(
        min_length=1
    )


class ResourceRequirements(CoreV1):
    """Compute resources of a container; quantities as strings or integers."""

    limits: dict[str, str | int] | None = None
    requests: dict[str, str | int] | None = None
    claims: list[dict[str, Any]] | None = None


class LocalObjectReference(CoreV1):
    """A reference by name."""

    name: str = Field(min_length=1)


# --- framework ------------------------------------------------------------------------------


class MPIFramework(Strict):
    """``spec.framework.mpi``: mpirun launches ``binary`` on every worker over SSH."""

    binary: str = Field(
        min_length=1,
        description="Program mpirun starts on every rank; it follows the mpirun options.",
        examples=["/usr/bin/all_reduce_perf"],
    )
    args: list[str] = Field(
        default_factory=list,
        description="Arguments of `binary`: the end of the launcher's mpirun argv.",
        examples=[["-b", "8", "-e", "16G", "-f", "2"]],
    )
    mpi_args: list[str] = Field(
        default_factory=list,
        description="Extra mpirun options, placed last before `binary`, so they win over the "
        "platform's and the overrides'.",
        examples=[["-x", "NCCL_ALGO=Ring"]],
    )
    mpi_implementation: Literal["OpenMPI"] = Field(
        default="OpenMPI",
        description="The TrainingRuntime's `mlPolicy.mpi.mpiImplementation`.",
        examples=["OpenMPI"],
    )
    mpirun_path: str = Field(
        min_length=1,
        description="Path of mpirun in the image: the launcher's command.",
        examples=["/usr/local/mpi/bin/mpirun"],
    )


class TorchFramework(Strict):
    """``spec.framework.torch``: torchrun with a script or a module."""

    script: str | None = Field(
        default=None,
        min_length=1,
        description="Script run as `torchrun <script> <args>` (exclusive with `module`).",
        examples=["/config/train.py"],
    )
    module: str | None = Field(
        default=None,
        min_length=1,
        description="Module run as `torchrun -m <module> <args>` (exclusive with `script`).",
        examples=["torch.distributed.run"],
    )
    args: list[str] = Field(
        default_factory=list,
        description="Arguments after the script or module: the end of `trainer.args`.",
        examples=[["--epochs", "1"]],
    )

    @model_validator(mode="after")
    def _script_xor_module(self) -> TorchFramework:
        if self.script is not None and self.module is not None:
            raise ValueError("script and module are mutually exclusive")
        if self.script is None and self.module is None:
            raise ValueError("either script or module must be set")
        return self


class ExecFramework(Strict):
    """``spec.framework.exec``: a command run verbatim on every node pod."""

    command: list[str] = Field(
        min_length=1,
        description="Command (argv) run on every node pod: `trainer.command`, verbatim.",
        examples=[["python", "/config/bench.py"]],
    )
    args: list[str] = Field(
        default_factory=list,
        description="Arguments of the command: `trainer.args`, verbatim.",
        examples=[["--size", "1G"]],
    )


FrameworkName = Literal["mpi", "torch", "exec"]


class Framework(Strict):
    """``spec.framework``: exactly one of ``mpi``, ``torch``, ``exec``."""

    mpi: MPIFramework | None = Field(
        default=None,
        description="mpirun on a launcher pod starts `binary` on every worker over SSH: an MPI "
        "TrainingRuntime with replicated jobs `node` (workers, sshd) and `launcher`.",
        examples=[{"binary": "/usr/bin/all_reduce_perf", "mpirunPath": "/usr/bin/mpirun"}],
    )
    torch: TorchFramework | None = Field(
        default=None,
        description="torchrun with a script or a module on every node pod; `numProcPerNode` "
        "is the GPUs per node.",
        examples=[{"script": "/config/train.py"}],
    )
    exec_: ExecFramework | None = Field(
        default=None,
        alias="exec",
        description="A command run verbatim on every node pod (a torch-shaped runtime, so "
        "scripts see Trainer's `PET_*` variables).",
        examples=[{"command": ["python", "/config/bench.py"]}],
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> Framework:
        found = [
            n for n, v in (("mpi", self.mpi), ("torch", self.torch), ("exec", self.exec_)) if v
        ]
        if len(found) != 1:
            raise ValueError(
                "exactly one of mpi, torch, exec must be set"
                + (f" (found {', '.join(found)})" if found else " (found none)")
            )
        return self

    @property
    def name(self) -> FrameworkName:
        """Which framework is set."""
        return "mpi" if self.mpi is not None else "torch" if self.torch is not None else "exec"


# --- target / orchestration -----------------------------------------------------------------


class NodeSelectorRequirement(CoreV1):
    """A node selector requirement."""

    key: Annotated[str, checked(label_key_problem, _KEY)] = Field(min_length=1)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _values_fit_operator(self) -> NodeSelectorRequirement:
        op, vals = self.operator, self.values
        if op in ("In", "NotIn") and not vals:
            raise ValueError(f"operator {op} requires at least one value")
        if op in ("Exists", "DoesNotExist") and vals:
            raise ValueError(f"operator {op} takes no values, got {vals}")
        if op in ("Gt", "Lt") and (len(vals) != 1 or not re.fullmatch(r"-?[0-9]+", vals[0])):
            raise ValueError(f"operator {op} requires exactly one integer value, got {vals}")
        return self


class TaintSelector(Strict):
    """``spec.target.taintSelectors[]``: tainted nodes to select and tolerate."""

    key: Annotated[str, checked(label_key_problem, "taint " + _KEY)] = Field(
        min_length=1, description="Taint key: `tolerations[].key`.", examples=["dedicated"]
    )
    value: str | None = Field(
        default=None,
        description="Taint value (`operator: Equal`); unset tolerates any value (`Exists`).",
        examples=["gpu"],
    )
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = Field(
        default=None,
        description="Taint effect; unset matches every effect.",
        examples=["NoSchedule"],
    )

    def to_toleration(self) -> dict[str, Any]:
        """The pod toleration this selector implies."""
        tol: dict[str, Any] = {"key": self.key, "operator": "Equal" if self.value else "Exists"}
        if self.value:
            tol["value"] = self.value
        if self.effect:
            tol["effect"] = self.effect
        return tol


class Target(Strict):
    """``spec.target``: which nodes the run is for (all conditions ANDed)."""

    node_selector: dict[str, str] = Field(
        default_factory=dict,
        description="Labels a node must carry (all of them); `In` terms of the pods' required "
        "node affinity.",
        examples=[{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}],
    )
    match_expressions: list[NodeSelectorRequirement] = Field(
        default_factory=list,
        description="Label expressions a node must satisfy; the same terms go in the pods' "
        "required node affinity.",
        examples=[[{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]],
    )
    node_names: list[str] = Field(
        default_factory=list,
        description="Node names (ANDed with the rest): `kubernetes.io/hostname In [...]`.",
        examples=[["gpu-node-01", "gpu-node-02"]],
    )
    taint_selectors: list[TaintSelector] = Field(
        default_factory=list,
        description="Tainted nodes to include; each entry is also a toleration on every pod.",
        examples=[[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]],
    )

    @field_validator("node_selector")
    @classmethod
    def _selector(cls, v: dict[str, str]) -> dict[str, str]:
        problems = []
        for key, value in v.items():
            if kp := label_key_problem(key):
                problems.append(f"key {key!r}: {kp}")
            if vp := label_value_problem(value):
                problems.append(f"value {value!r} of {key!r}: {vp}")
        if problems:
            raise ValueError("; ".join(problems))
        return v


class Topology(Strict):
    """``spec.orchestration.topology``."""

    topology_key: str = Field(
        min_length=1,
        description="Node label whose value names the domain; every eligible node carries it.",
        examples=["topology.kubernetes.io/zone"],
    )
    strict_domain: bool = Field(
        default=False, description="One TrainJob per domain, at the domain's size.", examples=[True]
    )


class Orchestration(Strict):
    """``spec.orchestration``."""

    test_scale: Literal["intra-node", "intra-rack", "full-scale"] | None = Field(
        default=None,
        description="`intra-node`: one single-node TrainJob per eligible node; `intra-rack`: "
        "one TrainJob per topology domain (of `topology.topologyKey`, else the platform override's, "
        "else the platform's default key); `full-scale` (as unset): groups of `numNodes`.",
        examples=["intra-node"],
    )
    placement: Literal["Pinned", "Unpinned"] | None = Field(
        default=None,
        description="`Pinned` (as unset): each group pinned to its nodes by a runtimePatch; "
        "`Unpinned`: one TrainJob of `numNodes` nodes placed by the scheduler.",
        examples=["Unpinned"],
    )
    topology: Topology | None = Field(
        default=None,
        description="Fill groups within topology domains (racks, NVLink domains). Unset: the "
        "platform's rack label where the catalog names one.",
        examples=[{"topologyKey": "topology.kubernetes.io/zone"}],
    )
    repeat_count: int | None = Field(
        default=None,
        ge=1,
        le=MAX_REPEAT_COUNT,
        description="How many times every group runs (`<run>-group-<i>-iter-<k>`, in "
        "successive waves). Unset: 1.",
        examples=[3],
    )
    max_concurrent: int | None = Field(
        default=None,
        ge=0,
        description="At most this many TrainJobs run at once; later ones are rendered "
        "`suspend: true` in waves (label `nvcre.nvidia.com/wave`). Unset or 0: unlimited.",
        examples=[2],
    )
    timeout_per_job: str | None = Field(
        default=None,
        description="Deadline of each TrainJob (`activeDeadlineSeconds`), a Go duration "
        f"(`90m`, `1h30m`). Unset: {DEFAULT_TIMEOUT_PER_JOB}, NVCRE's default.",
        examples=["2h"],
    )

    @field_validator("timeout_per_job")
    @classmethod
    def _go_duration(cls, v: str | None) -> str | None:
        if v is not None:
            from krm_fn.api.durations import parse_go_duration

            if parse_go_duration(v) < 1:
                raise ValueError(f"{v!r} is shorter than the 1s minimum of activeDeadlineSeconds")
        return v


class ConfigSpec(Strict):
    """``spec.config``: files shipped to ``/config``."""

    inline: dict[str, str] | None = Field(
        default=None,
        description="File name → content (exclusive with `configMapRef`): ConfigMap "
        "`<run>-config` mounted at `/config`.",
        examples=[{"train.sh": "echo hi"}],
    )
    config_map_ref: LocalObjectReference | None = Field(
        default=None,
        description="An existing ConfigMap mounted at `/config` instead (exclusive with "
        "`inline`); nothing is generated.",
        examples=[{"name": "shared-scripts"}],
    )

    @field_validator("inline")
    @classmethod
    def _keys(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if bad := [k for k in (v or {}) if len(k) > 253 or not CONFIG_KEY_RE.match(k)]:
            raise ValueError(
                f"ConfigMap keys {bad} must consist of letters, digits, '-', '_' or '.' "
                "(they become file names under /config)"
            )
        return v

    @model_validator(mode="after")
    def _one_form(self) -> ConfigSpec:
        if self.inline is not None and self.config_map_ref is not None:
            raise ValueError("inline and configMapRef are mutually exclusive")
        return self


class Checkpoint(Strict):
    """``spec.checkpoint``."""

    storage_size: str = Field(
        description="Size of the claim `<run>-checkpoint-pvc`.", examples=["100Gi"]
    )
    storage_class_name: str | None = Field(
        default=None,
        description="Storage class of the claim. Unset: the cluster's default class.",
        examples=["lustre"],
    )
    max_restarts: int = Field(
        default=0,
        ge=0,
        description="Restarts from the checkpoint: the JobSet's `failurePolicy.maxRestarts`.",
        examples=[2],
    )

    @field_validator("storage_size")
    @classmethod
    def _quantity(cls, v: str) -> str:
        if not QUANTITY_RE.match(v):
            raise ValueError(f"storageSize {v!r} is not a quantity such as 100Gi")
        return v


class GoodputMeasurement(Strict):
    """``spec.goodputMeasurement``."""

    log_profile_ref: str = Field(
        min_length=1,
        description="LogProfile that reads the training logs (`megatron-training`, "
        "`megatron-bridge`, or a LogProfile among the inputs).",
        examples=["megatron-training"],
    )
    sample_interval: str = Field(
        default="60s", description="Sampling interval, a Go duration.", examples=["30s"]
    )


class BandwidthMeasurement(Strict):
    """``spec.bandwidthMeasurement``."""

    log_profile_ref: str = Field(
        min_length=1,
        description="LogProfile that reads nccl-tests output (`nccl-bandwidth`, "
        "`nccl-loopback`, or a LogProfile among the inputs).",
        examples=["nccl-bandwidth"],
    )
    sample_interval: str | None = Field(
        default=None, description="Sampling interval, a Go duration.", examples=["60s"]
    )
    test_type: str | None = Field(
        default=None,
        description="The nccl-tests collective the logs must come from (`report` checks it).",
        examples=["all_reduce"],
    )


class StringMatch(Strict):
    """A WhenSpec string matcher."""

    equals: str | None = Field(default=None, description="Exactly this value.", examples=["h100"])
    in_: list[str] | None = Field(
        default=None, alias="in", description="One of these values.", examples=[["h100", "h200"]]
    )
    not_in: list[str] | None = Field(
        default=None, description="None of these values.", examples=[["a100"]]
    )


class IntMatch(Strict):
    """A WhenSpec integer matcher."""

    equals: int | None = Field(default=None, description="Exactly this number.", examples=[1])
    greater_than: int | None = Field(
        default=None, description="More than this number.", examples=[0]
    )
    less_than: int | None = Field(default=None, description="Less than this number.", examples=[4])


class TopologyMatch(Strict):
    """A WhenSpec topology matcher."""

    mode: Literal["simple", "topology"] | None = Field(
        default=None,
        description="`topology` when groups follow a topology key, else `simple`.",
        examples=["simple"],
    )
    domain_count: IntMatch | None = Field(
        default=None,
        description="Number of topology domains among the eligible nodes.",
        examples=[{"lessThan": 4}],
    )


class When(Strict):
    """``spec.overrides[].when``: all set matchers must match."""

    gpu_architecture: StringMatch | None = Field(
        default=None,
        description="Match the detected GPU architecture (`h100`, `gb200`, ...).",
        examples=[{"in": ["h100", "h200"]}],
    )
    platform: StringMatch | None = Field(
        default=None,
        description="Match the detected platform (`aws`, `gcp`, ...).",
        examples=[{"equals": "aws"}],
    )
    workload_kind: str | None = Field(
        default=None,
        description="Match the generated workload kind (always `TrainJob` here).",
        examples=["TrainJob"],
    )
    topology: TopologyMatch | None = Field(
        default=None,
        description="Match the grouping mode and the number of topology domains.",
        examples=[{"mode": "simple"}],
    )
    config: dict[str, Any] | None = Field(
        default=None,
        description="Subset match on the workload's config values (NVCRE); this render has "
        "none, so only an empty map matches.",
        examples=[{}],
    )
    expression: str | None = Field(
        default=None,
        description="A boolean expression over `platform`, `gpuArchitecture`, `workloadKind`, "
        "`topologyMode` and `domainCount`.",
        examples=["platform == 'aws' && domainCount >= 1"],
    )

    def as_mapping(self) -> dict[str, Any]:
        """The matchers as written (camelCase, unset ones left out; ``config`` kept whole)."""
        out = self.model_dump(by_alias=True, exclude_none=True)
        if self.config is not None:
            out["config"] = self.config  # ``None`` values inside it are part of the subset match
        return out


class Override(Strict):
    """``spec.overrides[]``."""

    when: When = Field(
        description="When the override applies: every matcher set must match (`{}` always does).",
        examples=[{"gpuArchitecture": {"in": ["h100", "h200"]}}],
    )
    job_template: dict[str, Any] | None = Field(
        default=None,
        description="Strategic merge patch onto NVCRE's job template of every TrainJob (see "
        "JobTemplate below: the TrainJob's spec is `spec.workload.trainJob`, its labels "
        "`spec.workloadMetadata.labels`); `trainer.env` and `trainer.args` are replaced whole.",
        examples=[{"spec": {"workload": {"trainJob": {"trainer": {"args": ["-b", "1G"]}}}}}],
    )
    job_template_patch: list[dict[str, Any]] | None = Field(
        default=None,
        description="RFC 6902 JSON Patch onto the same job template, after `jobTemplate`.",
        examples=[
            [{"op": "add", "path": "/spec/workloadMetadata", "value": {"labels": {"team": "ml"}}}]
        ],
    )
    dependencies: list[dict[str, Any]] | None = Field(
        default=None,
        description="Objects strategic-merged into the generated object of the same "
        "apiVersion, kind and name (TrainingRuntime, ConfigMap, Secret, claim).",
        examples=[
            [
                {
                    "apiVersion": "trainer.kubeflow.org/v1alpha1",
                    "kind": "TrainingRuntime",
                    "metadata": {"name": "my-workload-runtime"},
                    "spec": {"mlPolicy": {"numNodes": 1}},
                }
            ]
        ],
    )
    orchestration: dict[str, Any] | None = Field(
        default=None,
        description="Refused here: NVCRE's orchestration replacements come after placement is "
        "decided; set `spec.orchestration` instead.",
        examples=[{"placement": "Unpinned"}],
    )
    mpi_args: list[str] | None = Field(
        default=None,
        description="mpirun options, after the platform's and before the user's `mpiArgs`.",
        examples=[["-x", "NCCL_IB_HCA=mlx5"]],
    )
    pre_command: list[str] | None = Field(
        default=None,
        description="Shell lines run before the workload: the command becomes "
        '`/bin/bash -c "<lines>\\nexec <argv>"`.',
        examples=[["ulimit -l unlimited"]],
    )


class GangScheduler(Strict):
    """``spec.gangScheduler``: NVCRE's defaults fill a queue or key written empty."""

    scheduler_name: str = Field(
        min_length=1,
        description="`schedulerName` of every pod (`kai-scheduler` turns on KAI's launcher "
        "handling).",
        examples=["kai-scheduler"],
    )
    queue: str = Field(
        default=DEFAULT_QUEUE, description="Queue name (a label value).", examples=["team-a"]
    )
    queue_label_key: str = Field(
        default=DEFAULT_QUEUE_LABEL_KEY,
        description="Label key the scheduler reads the queue from: set on the TrainJob, every "
        "Job template and every pod template.",
        examples=["runai/queue"],
    )

    @property
    def queue_name(self) -> str:
        """The queue every workload goes to (NVCRE's ``gangSchedulerQueue``)."""
        return self.queue or DEFAULT_QUEUE

    @property
    def label_key(self) -> str:
        """The queue label's key (NVCRE's ``gangSchedulerQueueLabelKey``)."""
        return self.queue_label_key or DEFAULT_QUEUE_LABEL_KEY

    @property
    def kai(self) -> bool:
        """NVCRE keys the KAI behaviour on the exact scheduler name ``kai-scheduler``."""
        return self.scheduler_name == "kai-scheduler"


class WorkloadMetadata(Strict):
    """``spec.workloadMetadata``."""

    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels of every TrainJob (at most 32; not `app.kubernetes.io/managed-by` "
        "nor `nvcre.nvidia.com/*`); the gang queue label is added.",
        examples=[{"kueue.x-k8s.io/queue-name": "team-a"}],
    )


# --- NVCRE's job template: what jobTemplate and jobTemplatePatch patch ----------------------


class JobWorkload(Strict):
    """NVCRE's ``WorkloadSpec``: the workload object of the Job, here always a TrainJob."""

    train_job: dict[str, Any] = Field(
        description="The TrainJob's `spec`, checked against the pinned TrainJob CRD.",
        examples=[{"trainer": {"env": [{"name": "NCCL_DEBUG", "value": "WARN"}]}}],
    )


class NodeHealthMonitor(Strict):
    """NVCRE's ``nodeHealthMonitor``."""

    cel: dict[str, Any] | None = Field(
        default=None,
        description="`{expression: ...}`, a CEL check of every node; only NVCRE acts on it.",
        examples=[{"expression": "node.spec.unschedulable == true"}],
    )


class JobCheckpoint(Strict):
    """NVCRE's Job ``checkpoint``."""

    pvc_name: str | None = Field(
        default=None,
        description="The checkpoint claim; only NVCRE acts on it.",
        examples=["my-workload-checkpoint-pvc"],
    )
    max_restarts: int | None = Field(
        default=None, ge=0, description="Checkpoint restarts; only NVCRE acts on it.", examples=[1]
    )


class JobSpec(Strict):
    """NVCRE's ``JobSpec`` (``api/v1alpha1/job_types.go``)."""

    workload: JobWorkload = Field(
        description="The workload object: `trainJob` (cannot be removed).",
        examples=[{"trainJob": {"trainer": {"image": "nvcr.io/nvidia/pytorch:26.01-py3"}}}],
    )
    workload_metadata: WorkloadMetadata | None = Field(
        default=None,
        description="The TrainJob's labels (without the controller-owned ones), under the "
        "rules of `spec.workloadMetadata`; a removed gang queue label is restored.",
        examples=[{"labels": {"team": "ml"}}],
    )
    node_health_monitor: NodeHealthMonitor | None = Field(
        default=None,
        description="NVCRE's node health monitoring; a change is a warning.",
        examples=[{"cel": {"expression": "node.spec.unschedulable == true"}}],
    )
    checkpoint: JobCheckpoint | None = Field(
        default=None,
        description="NVCRE's checkpoint restarts; shown when `spec.checkpoint` is set, a change "
        "is a warning.",
        examples=[{"maxRestarts": 1}],
    )
    stall_multiplier: int | None = Field(
        default=None,
        ge=1,
        description="NVCRE's stall detection; a change is a warning.",
        examples=[10],
    )
    startup_stall_timeout_seconds: int | None = Field(
        default=None,
        ge=1,
        description="NVCRE's startup stall detection; a change is a warning.",
        examples=[600],
    )
    scheduling_stall_grace_seconds: int | None = Field(
        default=None,
        ge=1,
        description="NVCRE's scheduling-stall grace window; a change is a warning.",
        examples=[300],
    )
    thresholds: dict[str, str] | None = Field(
        default=None,
        description="As `spec.thresholds`: the TrainJob's thresholds annotation.",
        examples=[{"busBandwidthGBps": "value >= 380"}],
    )
    goodput_measurement: GoodputMeasurement | None = Field(
        default=None,
        description="As `spec.goodputMeasurement`: the TrainJob's goodput annotation.",
        examples=[{"logProfileRef": "megatron-bridge"}],
    )
    bandwidth_measurement: BandwidthMeasurement | None = Field(
        default=None,
        description="As `spec.bandwidthMeasurement`: the TrainJob's bandwidth annotation.",
        examples=[{"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}],
    )
    measurement_timeout: str | None = Field(
        default=None,
        description="NVCRE's threshold validation timing; a change is a warning.",
        examples=["10m"],
    )


class JobTemplate(Strict):
    """NVCRE's job template (``JobTemplateSpec``), as every TrainJob is shown to an override."""

    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="NVCRE's Job object's metadata; a change is a warning (there is no Job here).",
        examples=[{"labels": {"team": "ml"}}],
    )
    spec: JobSpec = Field(
        description="NVCRE's `JobSpec`.",
        examples=[{"workloadMetadata": {"labels": {"team": "ml"}}}],
    )


class WorkloadRunSpec(Strict):
    """``WorkloadRun.spec``: every field NVCRE defines."""

    image: str = Field(
        min_length=1,
        description="Image of the `node` container of every pod (MPI: launcher and workers).",
        examples=["nvcr.io/nvidia/pytorch:26.01-py3"],
    )
    framework: Framework = Field(
        description="How the workload starts: exactly one of `mpi`, `torch`, `exec`.",
        examples=[{"exec": {"command": ["nvidia-smi"]}}],
    )
    num_nodes: int = Field(
        ge=1,
        description="Nodes per TrainJob (`trainer.numNodes`), not a total: the eligible nodes "
        "are cut into groups of this size, one TrainJob each.",
        examples=[2],
    )
    gpus_per_node: int | None = Field(
        default=None,
        ge=1,
        description="GPUs of each node pod: `nvidia.com/gpu`, `numProcPerNode`, mpirun's `-N`. "
        "Unset: the detected GPU's (8 for H100/H200/B200, 4 for GB200/GB300).",
        examples=[8],
    )
    mlnx_per_node: int | None = Field(
        default=None,
        ge=0,
        description="RDMA NICs each node pod requests under `nicResourceName`; 0 opts out. "
        "Unset: the GPU and platform defaults.",
        examples=[0],
    )
    nic_resource_name: str | None = Field(
        default=None,
        max_length=253,
        description="Extended resource of the RDMA NICs (`<domain>/<name>`, not under "
        "`kubernetes.io`). Unset: the platform catalog's, where it names one.",
        examples=["rdma/ib"],
    )
    enable_mnnvl: bool | None = Field(
        default=None,
        alias="enableMNNVL",
        description="Multi-node NVLink: `NCCL_MNNVL_ENABLE=1` (or `0`). Unset: on for "
        "GB200/GB300, off otherwise.",
        examples=[False],
    )
    env: list[EnvVar] = Field(
        default_factory=list,
        description="Env of the workload containers, over the NCCL defaults (a name set here "
        "wins); MPI also forwards it to the ranks with `-x`.",
        examples=[[{"name": "NCCL_DEBUG", "value": "WARN"}]],
    )
    volumes: list[Volume] = Field(
        default_factory=list,
        description="Extra volumes of the torch/exec pods and MPI workers (`dshm`, "
        "`config-volume` and Trainer's names are reserved).",
        examples=[[{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}]],
    )
    volume_mounts: list[VolumeMount] = Field(
        default_factory=list,
        description="Mounts of those volumes in the workload container, after the built-in ones.",
        examples=[[{"name": "data", "mountPath": "/data"}]],
    )
    init_containers: list[Container] = Field(
        default_factory=list,
        description="Init containers of the torch/exec pods and MPI workers (not `node`).",
        examples=[[{"name": "warmup", "image": "busybox", "command": ["sh", "-c", "true"]}]],
    )
    resources: ResourceRequirements | None = Field(
        default=None,
        description="Resources of the workload container; `nvidia.com/gpu`, the platform's "
        "requests and the NIC request are added where not named.",
        examples=[{"limits": {"memory": "512Gi"}}],
    )
    image_pull_secrets: list[LocalObjectReference] = Field(
        default_factory=list,
        description="Existing pull Secrets, on every pod, before a generated one.",
        examples=[[{"name": "ngc-pull"}]],
    )
    target: Target | None = Field(
        default=None,
        description="Which nodes the run is for (all conditions ANDed), also required node "
        "affinity on every pod. Unset: nodes labelled `nvidia.com/gpu.present=true`.",
        examples=[{"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}],
    )
    orchestration: Orchestration | None = Field(
        default=None,
        description="Placement, grouping, repetition, concurrency and timeout.",
        examples=[{"timeoutPerJob": "2h"}],
    )
    config: ConfigSpec | None = Field(
        default=None,
        description="Files for the workload: volume `config-volume` at `/config` (mode 0755).",
        examples=[{"inline": {"train.sh": "echo hi"}}],
    )
    checkpoint: Checkpoint | None = Field(
        default=None,
        description="A shared ReadWriteMany claim `<run>-checkpoint-pvc` at `/checkpoint`.",
        examples=[{"storageSize": "100Gi"}],
    )
    thresholds: dict[str, str] | None = Field(
        default=None,
        description="Pass/fail thresholds for `workloadrun-fn report` (e.g. `value >= 900`): "
        "annotation `nvcre.nvidia.com/thresholds` of every TrainJob.",
        examples=[{"busBandwidthGBps": "value >= 380"}],
    )
    goodput_measurement: GoodputMeasurement | None = Field(
        default=None,
        description="Measure goodput from the training logs: annotation "
        "`nvcre.nvidia.com/goodput-measurement` of every TrainJob.",
        examples=[{"logProfileRef": "megatron-training"}],
    )
    bandwidth_measurement: BandwidthMeasurement | None = Field(
        default=None,
        description="Measure bus bandwidth from nccl-tests output: annotation "
        "`nvcre.nvidia.com/bandwidth-measurement` of every TrainJob.",
        examples=[{"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}],
    )
    overrides: list[Override] = Field(
        default_factory=list,
        description="Patches applied after the platform catalog, in order, when their `when` "
        "matches; each applied one is listed in `nvcre.nvidia.com/applied-overrides`.",
        examples=[[{"when": {"platform": {"equals": "aws"}}, "mpiArgs": ["-x", "A=1"]}]],
    )
    gang_scheduler: GangScheduler | None = Field(
        default=None,
        description="Gang scheduling (KAI, Run:ai, ...).",
        examples=[{"schedulerName": "kai-scheduler"}],
    )
    workload_metadata: WorkloadMetadata | None = Field(
        default=None,
        description="Metadata of the workload objects (the TrainJobs).",
        examples=[{"labels": {"kueue.x-k8s.io/queue-name": "team-a"}}],
    )

    @field_validator("nic_resource_name")
    @classmethod
    def _nic_name(cls, v: str | None) -> str | None:
        if v is not None and not NIC_RESOURCE_RE.match(v):
            raise ValueError(f"nicResourceName {v!r} must look like <domain>/<name>, e.g. rdma/ib")
        domain = (v or "").split("/", 1)[0]
        if domain in ("kubernetes.io", "k8s.io") or domain.endswith((".kubernetes.io", ".k8s.io")):
            raise ValueError(
                "nicResourceName must not use the reserved kubernetes.io or k8s.io domains"
            )
        return v


class ObjectMeta(BaseModel):
    """The parts of ObjectMeta we read; everything else passes through."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True, defer_build=True)

    name: str = Field(min_length=1)
    namespace: Annotated[str | None, checked(dns_label_problem, "namespace {value!r} {why}")] = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class WorkloadRun(Strict):
    """A ``WorkloadRun`` object."""

    api_version: Literal["nvcre.nvidia.com/v1alpha1"] = Field(
        description="API group and version of the object."
    )
    kind: Literal["WorkloadRun"] = Field(description="Object kind.")
    metadata: ObjectMeta = Field(
        description="Name (at most 63 characters, an RFC 1035 label) and namespace; every "
        "generated object is `<name>-...` in that namespace.",
        examples=[{"name": "my-workload", "namespace": "gpu-validation"}],
    )
    spec: WorkloadRunSpec = Field(description="What to run, on which nodes, and how.")
    status: dict[str, Any] | None = Field(
        default=None, description="Written by NVCRE's controller; ignored here.", examples=[{}]
    )

    @property
    def name(self) -> str:
        """``metadata.name``."""
        return self.metadata.name

    @property
    def namespace(self) -> str | None:
        """``metadata.namespace`` (``None`` when unset)."""
        return self.metadata.namespace
