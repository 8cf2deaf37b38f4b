"""The pydantic models the hand-written :mod:`krm_fn.api.schema` layer replaced, kept as the
reference of tests/test_schema.py's differential tests (not shipped, not on any render path).

Copied verbatim from ``krm_fn/api/models.py`` and ``krm_fn/api/config.py`` as they were before
the rewrite; the helpers (regular expressions, label checks) are the shipped ones, unchanged.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from krm_fn.api.models import (
    CONFIG_KEY_RE,
    ENV_NAME_RE,
    MAX_REPEAT_COUNT,
    NIC_RESOURCE_RE,
    QUANTITY_RE,
    VOLUME_SOURCES,
    _dns_label,
    _label_key,
    label_key_problem,
    label_value_problem,
)


class Strict(BaseModel):
    """Base: unknown fields are errors, types are strict, names are NVCRE's camelCase."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


class Open(BaseModel):
    """Base for Kubernetes objects we pass through verbatim (unknown fields kept)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


# --- core/v1 pieces -------------------------------------------------------------------------


class EnvVar(Strict):
    """A container environment variable (core/v1 EnvVar)."""

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

    def to_k8s(self) -> dict[str, Any]:
        """Render as a core/v1 EnvVar mapping."""
        if self.value_from is not None:
            return {"name": self.name, "valueFrom": self.value_from}
        return {"name": self.name, "value": self.value or ""}


class VolumeMount(Strict):
    """A core/v1 VolumeMount."""

    name: str = Field(min_length=1)
    mount_path: str = Field(alias="mountPath", min_length=1)
    read_only: bool | None = Field(default=None, alias="readOnly")
    sub_path: str | None = Field(default=None, alias="subPath")
    sub_path_expr: str | None = Field(default=None, alias="subPathExpr")
    mount_propagation: str | None = Field(default=None, alias="mountPropagation")
    recursive_read_only: str | None = Field(default=None, alias="recursiveReadOnly")


class Volume(Open):
    """A core/v1 Volume: a name plus exactly one volume source."""

    name: str = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _volume_name(cls, v: str) -> str:
        return _dns_label(v, "volume name")

    @model_validator(mode="after")
    def _one_source(self) -> Volume:
        extra = dict(self.__pydantic_extra__ or {})
        unknown = sorted(k for k in extra if k not in VOLUME_SOURCES)
        if unknown:
            raise ValueError(
                f"unknown volume field(s) {', '.join(unknown)}; "
                "a volume has a name and one volume source"
            )
        if len(extra) != 1:
            raise ValueError(
                f"a volume must have exactly one volume source, found {len(extra)}"
                + (f" ({', '.join(sorted(extra))})" if extra else "")
            )
        for k, v in extra.items():
            if not isinstance(v, dict):
                raise ValueError(f"volume source {k} must be a mapping")
        return self

    @property
    def source(self) -> tuple[str, dict[str, Any]]:
        """The volume source's key and body."""
        ((k, v),) = (self.__pydantic_extra__ or {}).items()
        return k, v

    def to_k8s(self) -> dict[str, Any]:
        """Render as a core/v1 Volume mapping."""
        key, body = self.source
        return {"name": self.name, key: body}


class Container(Strict):
    """A core/v1 Container (used for ``spec.initContainers``)."""

    name: str = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _container_name(cls, v: str) -> str:
        return _dns_label(v, "container name")

    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = Field(default=None, alias="workingDir")
    ports: list[dict[str, Any]] | None = None
    env_from: list[dict[str, Any]] | None = Field(default=None, alias="envFrom")
    env: list[EnvVar] | None = None
    resources: dict[str, Any] | None = None
    resize_policy: list[dict[str, Any]] | None = Field(default=None, alias="resizePolicy")
    restart_policy: str | None = Field(default=None, alias="restartPolicy")
    restart_policy_rules: list[dict[str, Any]] | None = Field(
        default=None, alias="restartPolicyRules"
    )
    volume_mounts: list[VolumeMount] | None = Field(default=None, alias="volumeMounts")
    volume_devices: list[dict[str, Any]] | None = Field(default=None, alias="volumeDevices")
    liveness_probe: dict[str, Any] | None = Field(default=None, alias="livenessProbe")
    readiness_probe: dict[str, Any] | None = Field(default=None, alias="readinessProbe")
    startup_probe: dict[str, Any] | None = Field(default=None, alias="startupProbe")
    lifecycle: dict[str, Any] | None = None
    termination_message_path: str | None = Field(default=None, alias="terminationMessagePath")
    termination_message_policy: str | None = Field(default=None, alias="terminationMessagePolicy")
    image_pull_policy: str | None = Field(default=None, alias="imagePullPolicy")
    security_context: dict[str, Any] | None = Field(default=None, alias="securityContext")
    stdin: bool | None = None
    stdin_once: bool | None = Field(default=None, alias="stdinOnce")
    tty: bool | None = None


class ResourceRequirements(Strict):
    """core/v1 ResourceRequirements; quantities as strings or integers."""

    limits: dict[str, str | int] | None = None
    requests: dict[str, str | int] | None = None
    claims: list[dict[str, Any]] | None = None


class LocalObjectReference(Strict):
    """A reference by name (core/v1 LocalObjectReference)."""

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


class NodeSelectorRequirement(Strict):
    """core/v1 NodeSelectorRequirement."""

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
            from krm_fn.durations import parse_go_duration

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
    """``spec.gangScheduler``."""

    scheduler_name: str = Field(alias="schedulerName", min_length=1)
    queue: str = "default-queue"
    queue_label_key: str = Field(default="kai.scheduler/queue", alias="queueLabelKey")


class WorkloadMetadata(Strict):
    """``spec.workloadMetadata``."""

    labels: dict[str, str] = Field(default_factory=dict)


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


class FunctionOptions(BaseModel):
    """Options of one function run (see the README's option table)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    registry: str | None = None
    registry_username: str | None = Field(default=None, alias="registryUsername")
    registry_password_env: str | None = Field(default=None, alias="registryPasswordEnv")
    registry_password: Any = Field(default=None, alias="registryPassword", repr=False)
    registry_pull_secret: str | None = Field(default=None, alias="registryPullSecret")
    registry_secret_store: str | None = Field(default=None, alias="registrySecretStore")
    registry_secret_key: str | None = Field(default=None, alias="registrySecretKey")
    registry_secret_property: str | None = Field(default=None, alias="registrySecretProperty")
    plain_pull_secret: bool = Field(default=False, alias="plainPullSecret")
    wave_release: Literal["suspend", "engine"] = Field(default="suspend", alias="waveRelease")
    remainder: Literal["overflow", "skip"] = "overflow"
    output_dir: str = Field(default="generated", alias="outputDir")
    platform: str | None = None
    gpu_arch: str | None = Field(default=None, alias="gpuArch")
    strict_gpu_arch: bool = Field(default=False, alias="strictGpuArch")
    inventory: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _registry_together(self) -> FunctionOptions:
        if self.registry_password is not None:
            raise ValueError(
                "registryPassword is refused: a password must never be stored in a file; "
                "put it in an environment variable and set registryPasswordEnv to its name"
            )
        if self.registry_pull_secret:
            extra = [
                n
                for n, v in (
                    ("registry", self.registry),
                    ("registryUsername", self.registry_username),
                    ("registryPasswordEnv", self.registry_password_env),
                    ("registrySecretStore", self.registry_secret_store),
                    ("registrySecretKey", self.registry_secret_key),
                )
                if v
            ]
            if extra:
                raise ValueError(
                    "registryPullSecret references an existing Secret that already holds the "
                    f"credentials; leave out {', '.join(extra)}"
                )
            return self
        if self.registry_secret_store or self.registry_secret_key:
            need = [
                n
                for n, v in (
                    ("registry", self.registry),
                    ("registryUsername", self.registry_username),
                    ("registrySecretStore", self.registry_secret_store),
                    ("registrySecretKey", self.registry_secret_key),
                )
                if not v
            ]
            if need:
                raise ValueError(
                    "an ExternalSecret needs registry, registryUsername, registrySecretStore and "
                    f"registrySecretKey; missing: {', '.join(need)}"
                )
            if self.registry_password_env:
                raise ValueError(
                    "registrySecretStore and registryPasswordEnv exclude each other: the "
                    "ExternalSecret fetches the password in the cluster; leave out "
                    "registryPasswordEnv"
                )
            kind, _, name = (self.registry_secret_store or "").rpartition("/")
            if kind not in ("", "SecretStore", "ClusterSecretStore") or not name:
                raise ValueError(
                    f"registrySecretStore {self.registry_secret_store!r}: write NAME, "
                    "SecretStore/NAME or ClusterSecretStore/NAME"
                )
            return self
        given = [self.registry, self.registry_username, self.registry_password_env]
        if any(given) and not all(given):
            raise ValueError(
                "registry, registryUsername and registryPasswordEnv must all be set together "
                "and non-empty"
            )
        return self
