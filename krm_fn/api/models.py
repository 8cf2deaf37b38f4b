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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

API_GROUP = "nvcre.nvidia.com"
API_VERSION = f"{API_GROUP}/v1alpha1"
KIND = "WorkloadRun"

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_RE = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
LABEL_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE_RE = re.compile(r"^$|^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$")
NIC_RESOURCE_RE = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/"
    r"[a-zA-Z0-9]([-A-Za-z0-9_.]{0,61}[a-zA-Z0-9])?$"
)
QUANTITY_RE = re.compile(r"^([0-9]+(\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei)?$")
DNS1123_LABEL_RE = re.compile(rf"^{_DNS1123_LABEL}$")
ENV_NAME_RE = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+$")
MAX_REPEAT_COUNT = 1000
DEFAULT_QUEUE = "default-queue"
DEFAULT_QUEUE_LABEL_KEY = "kai.scheduler/queue"


def _dns_label(value: str, what: str) -> str:
    if len(value) > 63 or not DNS1123_LABEL_RE.match(value):
        raise ValueError(
            f"{what} {value!r} must be a DNS-1123 label: at most 63 lower-case letters, digits "
            "or '-', starting and ending with a letter or digit"
        )
    return value


def _label_key(value: str, what: str) -> str:
    problem = label_key_problem(value)
    if problem:
        raise ValueError(f"{what} {value!r} is not a valid label key: {problem}")
    return value


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
        extra="forbid", strict=True, frozen=True, populate_by_name=True, defer_build=True
    )


class Open(BaseModel):
    """Base for Kubernetes objects we pass through verbatim (unknown fields kept)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True, defer_build=True)


# --- core/v1 pieces: thin views of Kubernetes' types, checked against their derived schemas ---


class CoreV1(BaseModel):
    """A Kubernetes core/v1 type, written as in a Pod.

    Declares only the fields the render reads; every field, declared or not, is checked
    against the type's schema DERIVED from the pinned CRDs (:mod:`krm_fn.api.corev1`), and
    :meth:`to_k8s` gives the object back as written (declared fields first, unset ones left out).
    """

    model_config = ConfigDict(
        extra="allow", strict=True, frozen=True, populate_by_name=True, defer_build=True
    )

    @model_validator(mode="after")
    def _derived_schema(self) -> CoreV1:
        if self.model_extra:
            from krm_fn.api import corev1

            dumped = self.model_dump(by_alias=True, exclude_none=True)
            problems = corev1.problems(type(self).__name__, dumped)
            if problems:
                raise ValueError(
                    "; ".join(m if m.startswith("unknown") else f"{p}: {m}" for p, m in problems)
                )
        return self

    def to_k8s(self) -> dict[str, Any]:
        """The object as Kubernetes reads it."""
        return self.model_dump(by_alias=True, exclude_none=True)


class EnvVar(CoreV1):
    """A container environment variable."""

    name: str = Field(min_length=1)
    value: str | None = None
    value_from: dict[str, Any] | None = Field(default=None, alias="valueFrom")

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
    mount_path: str = Field(alias="mountPath", min_length=1)
    read_only: bool | None = Field(default=None, alias="readOnly")


class Volume(CoreV1):
    """A pod volume: a name plus exactly one volume source."""

    name: str = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _volume_name(cls, v: str) -> str:
        return _dns_label(v, "volume name")

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

    name: str = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _container_name(cls, v: str) -> str:
        return _dns_label(v, "container name")


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

    binary: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    mpi_args: list[str] = Field(default_factory=list, alias="mpiArgs")
    mpi_implementation: Literal["OpenMPI"] = Field(default="OpenMPI", alias="mpiImplementation")
    mpirun_path: str = Field(alias="mpirunPath", min_length=1)


class TorchFramework(Strict):
    """``spec.framework.torch``: torchrun with a script or a module."""

    script: str | None = Field(default=None, min_length=1)
    module: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _script_xor_module(self) -> TorchFramework:
        if self.script is not None and self.module is not None:
            raise ValueError("script and module are mutually exclusive")
        if self.script is None and self.module is None:
            raise ValueError("either script or module must be set")
        return self


class ExecFramework(Strict):
    """``spec.framework.exec``: a command run verbatim on every node pod."""

    command: list[str] = Field(min_length=1)
    args: list[str] = Field(default_factory=list)


FrameworkName = Literal["mpi", "torch", "exec"]


class Framework(Strict):
    """``spec.framework``: exactly one of ``mpi``, ``torch``, ``exec``."""

    mpi: MPIFramework | None = None
    torch: TorchFramework | None = None
    exec_: ExecFramework | None = Field(default=None, alias="exec")

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
        if self.mpi is not None:
            return "mpi"
        if self.torch is not None:
            return "torch"
        return "exec"


# --- target / orchestration -----------------------------------------------------------------


class NodeSelectorRequirement(CoreV1):
    """A node selector requirement."""

    key: str = Field(min_length=1)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] = Field(default_factory=list)

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        return _label_key(v, "key")

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

    def to_k8s(self) -> dict[str, Any]:
        """Render as a core/v1 NodeSelectorRequirement mapping."""
        out: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            out["values"] = list(self.values)
        return out


class TaintSelector(Strict):
    """``spec.target.taintSelectors[]``: tainted nodes to select and tolerate."""

    key: str = Field(min_length=1)
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        return _label_key(v, "taint key")

    def to_toleration(self) -> dict[str, Any]:
        """The pod toleration this selector implies."""
        tol: dict[str, Any] = {"key": self.key}
        if self.value:
            tol["operator"] = "Equal"
            tol["value"] = self.value
        else:
            tol["operator"] = "Exists"
        if self.effect:
            tol["effect"] = self.effect
        return tol


class Target(Strict):
    """``spec.target``: which nodes the run is for (all conditions ANDed)."""

    node_selector: dict[str, str] = Field(default_factory=dict, alias="nodeSelector")
    match_expressions: list[NodeSelectorRequirement] = Field(
        default_factory=list, alias="matchExpressions"
    )
    node_names: list[str] = Field(default_factory=list, alias="nodeNames")
    taint_selectors: list[TaintSelector] = Field(default_factory=list, alias="taintSelectors")

    @field_validator("node_selector")
    @classmethod
    def _selector(cls, v: dict[str, str]) -> dict[str, str]:
        problems = []
        for key, value in v.items():
            kp = label_key_problem(key)
            vp = label_value_problem(value)
            if kp:
                problems.append(f"key {key!r}: {kp}")
            if vp:
                problems.append(f"value {value!r} of {key!r}: {vp}")
        if problems:
            raise ValueError("; ".join(problems))
        return v


class Topology(Strict):
    """``spec.orchestration.topology``."""

    topology_key: str = Field(alias="topologyKey", min_length=1)
    strict_domain: bool = Field(default=False, alias="strictDomain")


class Orchestration(Strict):
    """``spec.orchestration``."""

    test_scale: Literal["intra-node", "intra-rack", "full-scale"] | None = Field(
        default=None, alias="testScale"
    )
    placement: Literal["Pinned", "Unpinned"] | None = None
    topology: Topology | None = None
    repeat_count: int | None = Field(default=None, alias="repeatCount", ge=1, le=MAX_REPEAT_COUNT)
    max_concurrent: int | None = Field(default=None, alias="maxConcurrent", ge=0)
    timeout_per_job: str | None = Field(default=None, alias="timeoutPerJob")

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

    inline: dict[str, str] | None = None
    config_map_ref: LocalObjectReference | None = Field(default=None, alias="configMapRef")

    @field_validator("inline")
    @classmethod
    def _keys(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        bad = [k for k in (v or {}) if len(k) > 253 or not CONFIG_KEY_RE.match(k)]
        if bad:
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

    storage_size: str = Field(alias="storageSize")
    storage_class_name: str | None = Field(default=None, alias="storageClassName")
    max_restarts: int = Field(default=0, alias="maxRestarts", ge=0)

    @field_validator("storage_size")
    @classmethod
    def _quantity(cls, v: str) -> str:
        if not QUANTITY_RE.match(v):
            raise ValueError(f"storageSize {v!r} is not a quantity such as 100Gi")
        return v


class GoodputMeasurement(Strict):
    """``spec.goodputMeasurement``."""

    log_profile_ref: str = Field(alias="logProfileRef", min_length=1)
    sample_interval: str = Field(default="60s", alias="sampleInterval")


class BandwidthMeasurement(Strict):
    """``spec.bandwidthMeasurement``."""

    log_profile_ref: str = Field(alias="logProfileRef", min_length=1)
    sample_interval: str | None = Field(default=None, alias="sampleInterval")
    test_type: str | None = Field(default=None, alias="testType")


class StringMatch(Strict):
    """A WhenSpec string matcher."""

    equals: str | None = None
    in_: list[str] | None = Field(default=None, alias="in")
    not_in: list[str] | None = Field(default=None, alias="notIn")


class IntMatch(Strict):
    """A WhenSpec integer matcher."""

    equals: int | None = None
    greater_than: int | None = Field(default=None, alias="greaterThan")
    less_than: int | None = Field(default=None, alias="lessThan")


class TopologyMatch(Strict):
    """A WhenSpec topology matcher."""

    mode: Literal["simple", "topology"] | None = None
    domain_count: IntMatch | None = Field(default=None, alias="domainCount")


class When(Strict):
    """``spec.overrides[].when``: all set matchers must match."""

    gpu_architecture: StringMatch | None = Field(default=None, alias="gpuArchitecture")
    platform: StringMatch | None = None
    workload_kind: str | None = Field(default=None, alias="workloadKind")
    topology: TopologyMatch | None = None
    config: dict[str, Any] | None = None
    expression: str | None = None


class Override(Strict):
    """``spec.overrides[]``."""

    when: When
    job_template: dict[str, Any] | None = Field(default=None, alias="jobTemplate")
    job_template_patch: list[dict[str, Any]] | None = Field(default=None, alias="jobTemplatePatch")
    dependencies: list[dict[str, Any]] | None = None
    orchestration: dict[str, Any] | None = None
    mpi_args: list[str] | None = Field(default=None, alias="mpiArgs")
    pre_command: list[str] | None = Field(default=None, alias="preCommand")


class GangScheduler(Strict):
    """``spec.gangScheduler``: NVCRE's defaults fill a queue or key written empty."""

    scheduler_name: str = Field(alias="schedulerName", min_length=1)
    queue: str = DEFAULT_QUEUE
    queue_label_key: str = Field(default=DEFAULT_QUEUE_LABEL_KEY, alias="queueLabelKey")

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

    labels: dict[str, str] = Field(default_factory=dict)


# --- NVCRE's job template: what jobTemplate and jobTemplatePatch patch ----------------------


class JobWorkload(Strict):
    """NVCRE's ``WorkloadSpec``: the workload object of the Job, here always a TrainJob."""

    train_job: dict[str, Any] = Field(alias="trainJob")


class NodeHealthMonitor(Strict):
    """NVCRE's ``nodeHealthMonitor``."""

    cel: dict[str, Any] | None = None


class JobCheckpoint(Strict):
    """NVCRE's Job ``checkpoint``."""

    pvc_name: str | None = Field(default=None, alias="pvcName")
    max_restarts: int | None = Field(default=None, alias="maxRestarts", ge=0)


class JobSpec(Strict):
    """NVCRE's ``JobSpec`` (``api/v1alpha1/job_types.go``)."""

    workload: JobWorkload
    workload_metadata: WorkloadMetadata | None = Field(default=None, alias="workloadMetadata")
    node_health_monitor: NodeHealthMonitor | None = Field(default=None, alias="nodeHealthMonitor")
    checkpoint: JobCheckpoint | None = None
    stall_multiplier: int | None = Field(default=None, alias="stallMultiplier", ge=1)
    startup_stall_timeout_seconds: int | None = Field(
        default=None, alias="startupStallTimeoutSeconds", ge=1
    )
    scheduling_stall_grace_seconds: int | None = Field(
        default=None, alias="schedulingStallGraceSeconds", ge=1
    )
    thresholds: dict[str, str] | None = None
    goodput_measurement: GoodputMeasurement | None = Field(default=None, alias="goodputMeasurement")
    bandwidth_measurement: BandwidthMeasurement | None = Field(
        default=None, alias="bandwidthMeasurement"
    )
    measurement_timeout: str | None = Field(default=None, alias="measurementTimeout")


class JobTemplate(Strict):
    """NVCRE's job template (``JobTemplateSpec``), as every TrainJob is shown to an override."""

    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: JobSpec


class WorkloadRunSpec(Strict):
    """``WorkloadRun.spec``: every field NVCRE defines."""

    image: str = Field(min_length=1)
    framework: Framework
    num_nodes: int = Field(alias="numNodes", ge=1)
    gpus_per_node: int | None = Field(default=None, alias="gpusPerNode", ge=1)
    mlnx_per_node: int | None = Field(default=None, alias="mlnxPerNode", ge=0)
    nic_resource_name: str | None = Field(default=None, alias="nicResourceName", max_length=253)
    enable_mnnvl: bool | None = Field(default=None, alias="enableMNNVL")
    env: list[EnvVar] = Field(default_factory=list)
    volumes: list[Volume] = Field(default_factory=list)
    volume_mounts: list[VolumeMount] = Field(default_factory=list, alias="volumeMounts")
    init_containers: list[Container] = Field(default_factory=list, alias="initContainers")
    resources: ResourceRequirements | None = None
    image_pull_secrets: list[LocalObjectReference] = Field(
        default_factory=list, alias="imagePullSecrets"
    )
    target: Target | None = None
    orchestration: Orchestration | None = None
    config: ConfigSpec | None = None
    checkpoint: Checkpoint | None = None
    thresholds: dict[str, str] | None = None
    goodput_measurement: GoodputMeasurement | None = Field(default=None, alias="goodputMeasurement")
    bandwidth_measurement: BandwidthMeasurement | None = Field(
        default=None, alias="bandwidthMeasurement"
    )
    overrides: list[Override] = Field(default_factory=list)
    gang_scheduler: GangScheduler | None = Field(default=None, alias="gangScheduler")
    workload_metadata: WorkloadMetadata | None = Field(default=None, alias="workloadMetadata")

    @field_validator("nic_resource_name")
    @classmethod
    def _nic_name(cls, v: str | None) -> str | None:
        if v is None:
            return v
        if not NIC_RESOURCE_RE.match(v):
            raise ValueError(f"nicResourceName {v!r} must look like <domain>/<name>, e.g. rdma/ib")
        domain = v.split("/", 1)[0]
        if domain in ("kubernetes.io", "k8s.io") or domain.endswith((".kubernetes.io", ".k8s.io")):
            raise ValueError(
                "nicResourceName must not use the reserved kubernetes.io or k8s.io domains"
            )
        return v


class ObjectMeta(Open):
    """The parts of ObjectMeta we read; everything else passes through."""

    name: str = Field(min_length=1)
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str | None) -> str | None:
        return v if v is None else _dns_label(v, "namespace")


class WorkloadRun(Strict):
    """A ``WorkloadRun`` object."""

    api_version: Literal["nvcre.nvidia.com/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["WorkloadRun"]
    metadata: ObjectMeta
    spec: WorkloadRunSpec
    status: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        """``metadata.name``."""
        return self.metadata.name

    @property
    def namespace(self) -> str | None:
        """``metadata.namespace`` (``None`` when unset)."""
        return self.metadata.namespace
