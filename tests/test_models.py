"""The WorkloadRun API and option models (pydantic v2): what users see of validation.

Error types and messages per case (strict types, lax options, every problem at once), and the
public surface the render relies on (immutability, aliases, dumps, copies).
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from krm_fn.api import config, models
from tests.builders import wr as workloadrun


def errors_of(cls: type[BaseModel], data: Any) -> list[tuple[str, str, str]]:
    """``(path, type, msg)`` of each error, for readable expectations."""
    try:
        cls.model_validate(data)
    except ValidationError as exc:
        return [(".".join(map(str, e["loc"])), e["type"], e["msg"]) for e in exc.errors()]
    return []


# --- behaviour, case by case -----------------------------------------------------------------

MPI = {"binary": "b", "mpirunPath": "/usr/bin/mpirun"}


def spec(**kw: Any) -> dict[str, Any]:
    return {"image": "img", "framework": {"mpi": MPI}, "numNodes": 2, **kw}


def run(**kw: Any) -> dict[str, Any]:
    return workloadrun("r", spec(**kw), path=None)


class Str(str):
    """A str subclass (ruamel and friends hand these out)."""


CASES = [
    pytest.param(
        models.WorkloadRunSpec,
        spec(numNodes="4"),
        [("numNodes", "int_type", "Input should be a valid integer")],
        id="string-for-int-is-refused-not-coerced",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(numNodes=True),
        [("numNodes", "int_type", "Input should be a valid integer")],
        id="bool-for-int-is-refused",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(numNodes=4.0),
        [("numNodes", "int_type", "Input should be a valid integer")],
        id="float-for-int-is-refused-even-when-integral",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(numNodes=0),
        [("numNodes", "greater_than_equal", "Input should be greater than or equal to 1")],
        id="int-below-ge-bound",
    ),
    pytest.param(
        models.Orchestration,
        {"repeatCount": 1001},
        [("repeatCount", "less_than_equal", "Input should be less than or equal to 1000")],
        id="int-above-le-bound",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(image=""),
        [("image", "string_too_short", "String should have at least 1 character")],
        id="empty-string-under-min-length",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(nicResourceName="a/" + "b" * 252),
        [("nicResourceName", "string_too_long", "String should have at most 253 characters")],
        id="string-over-max-length-skips-the-field-validator",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(image=3),
        [("image", "string_type", "Input should be a valid string")],
        id="int-for-string-is-refused",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(enableMNNVL="true"),
        [("enableMNNVL", "bool_type", "Input should be a valid boolean")],
        id="string-for-bool-is-refused-in-strict-models",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(enableMNNVL=1),
        [("enableMNNVL", "bool_type", "Input should be a valid boolean")],
        id="int-for-bool-is-refused-in-strict-models",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(env={"A": "1"}),
        [("env", "list_type", "Input should be a valid list")],
        id="mapping-for-list-is-refused",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(thresholds=["a"]),
        [("thresholds", "dict_type", "Input should be a valid dictionary")],
        id="list-for-mapping-is-refused",
    ),
    pytest.param(
        models.ExecFramework,
        {"command": []},
        [("command", "too_short", "List should have at least 1 item after validation, not 0")],
        id="empty-list-under-min-length",
    ),
    pytest.param(
        models.MPIFramework,
        {**MPI, "mpiImplementation": "MPICH"},
        [("mpiImplementation", "literal_error", "Input should be 'OpenMPI'")],
        id="single-literal-names-the-one-value",
    ),
    pytest.param(
        models.Orchestration,
        {"placement": "pinned"},
        [("placement", "literal_error", "Input should be 'Pinned' or 'Unpinned'")],
        id="two-literals-joined-with-or",
    ),
    pytest.param(
        models.NodeSelectorRequirement,
        {"key": "k", "operator": "Has"},
        [
            (
                "operator",
                "literal_error",
                "Input should be 'In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt' or 'Lt'",
            )
        ],
        id="many-literals-comma-separated-then-or",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        {"framework": {"mpi": MPI}},
        [("image", "missing", "Field required"), ("numNodes", "missing", "Field required")],
        id="missing-fields-reported-by-alias-in-declaration-order",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(envv=[], zzz=1),
        [
            ("envv", "extra_forbidden", "Extra inputs are not permitted"),
            ("zzz", "extra_forbidden", "Extra inputs are not permitted"),
        ],
        id="unknown-fields-refused-in-input-order",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        {**spec(), 7: "x", "zz": 1},
        [
            ("7", "invalid_key", "Keys should be strings"),
            ("zz", "extra_forbidden", "Extra inputs are not permitted"),
        ],
        id="non-string-key-is-an-invalid-key",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        {"image": "i", "framework": {"mpi": MPI}, "num_nodes": "2"},
        [("num_nodes", "int_type", "Input should be a valid integer")],
        id="python-name-accepted-and-reported-under-that-name",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        {**spec(), "num_nodes": 3},
        [("num_nodes", "extra_forbidden", "Extra inputs are not permitted")],
        id="python-name-next-to-the-alias-is-unknown",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(numNodes="4", image="", env=[{"name": "1x"}, {"name": "ok", "value": 1}], envv=1),
        [
            ("image", "string_too_short", "String should have at least 1 character"),
            ("numNodes", "int_type", "Input should be a valid integer"),
            (
                "env.0.name",
                "value_error",
                "Value error, environment variable name '1x' must consist of letters, digits, "
                "'_', '-' or '.', and must not start with a digit",
            ),
            ("env.1.value", "string_type", "Input should be a valid string"),
            ("envv", "extra_forbidden", "Extra inputs are not permitted"),
        ],
        id="every-error-reported-at-once-fields-then-items-then-unknown",
    ),
    pytest.param(
        models.EnvVar,
        {"name": "A", "value": "x", "valueFrom": {}},
        [("", "value_error", "Value error, value and valueFrom are mutually exclusive")],
        id="model-validator-runs-when-every-field-is-valid",
    ),
    pytest.param(
        models.EnvVar,
        {"name": "1A", "value": "x", "valueFrom": {}},
        [
            (
                "name",
                "value_error",
                "Value error, environment variable name '1A' must consist of letters, digits, "
                "'_', '-' or '.', and must not start with a digit",
            )
        ],
        id="model-validator-skipped-when-a-field-failed",
    ),
    pytest.param(
        models.Framework,
        {"mpi": MPI, "torch": {"script": 1}},
        [("torch.script", "string_type", "Input should be a valid string")],
        id="nested-model-failure-skips-the-parent-validator",
    ),
    pytest.param(
        models.Framework,
        {"torch": {}},
        [("torch", "value_error", "Value error, either script or module must be set")],
        id="nested-model-validator-error-at-the-nested-path",
    ),
    pytest.param(
        models.Framework,
        {"mpi": ["b"]},
        [("mpi", "model_type", "Input should be a valid dictionary or instance of MPIFramework")],
        id="list-for-model-is-a-model-type-error",
    ),
    pytest.param(
        models.ResourceRequirements,
        {"limits": {"cpu": 1.5, "memory": "1Gi", "gpu": 8}},
        [
            ("limits.cpu.str", "string_type", "Input should be a valid string"),
            ("limits.cpu.int", "int_type", "Input should be a valid integer"),
        ],
        id="str-or-int-union-reports-each-member",
    ),
    pytest.param(
        models.Target,
        {"nodeSelector": {1: 2, "a": None}},
        [
            ("nodeSelector.1.[key]", "string_type", "Input should be a valid string"),
            ("nodeSelector.1", "string_type", "Input should be a valid string"),
            ("nodeSelector.a", "string_type", "Input should be a valid string"),
        ],
        id="mapping-key-error-before-its-value-error",
    ),
    pytest.param(
        models.Volume,
        {"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}},
        [
            (
                "",
                "value_error",
                "Value error, a volume must have exactly one volume source, found 2 "
                "(emptyDir, hostPath)",
            )
        ],
        id="open-model-keeps-unknown-keys-for-its-validator",
    ),
    pytest.param(
        models.ObjectMeta,
        {"name": "n", "uid": "u", 3: "x"},
        [("3", "invalid_key", "Keys should be strings")],
        id="open-model-still-refuses-non-string-keys",
    ),
    pytest.param(
        models.Orchestration,
        {"timeoutPerJob": "forever"},
        [
            (
                "timeoutPerJob",
                "value_error",
                "Value error, 'forever' is not a Go duration such as 90m, 1h30m or 24h",
            )
        ],
        id="field-validator-value-error-keeps-its-message",
    ),
    pytest.param(
        models.WorkloadRunSpec,
        spec(image=Str("img"), env=[{"name": Str("A"), "value": Str("v")}]),
        [],
        id="string-subclass-accepted-as-a-string",
    ),
    pytest.param(
        models.WorkloadRun,
        [],
        [("", "model_type", "Input should be a valid dictionary or instance of WorkloadRun")],
        id="top-level-non-mapping-is-a-model-type-error",
    ),
    pytest.param(
        config.FunctionOptions,
        {"strictGpuArch": "yes", "inventory": ("a",), "registry": b"r"},
        [
            (
                "",
                "value_error",
                "Value error, a generated pull Secret needs registry, registryUsername and "
                "registryPasswordEnv (the name of the variable holding the password, e.g. "
                "NGC_API_KEY); missing: registryUsername, registryPasswordEnv. Without a "
                "generated Secret: registryPullSecret alone names a Secret in the cluster, or "
                "registrySecretStore and registrySecretKey (instead of registryPasswordEnv) make "
                "an ExternalSecret",
            )
        ],
        id="options-are-lax-yes-is-true-tuple-is-a-list-bytes-are-a-string",
    ),
    pytest.param(
        config.FunctionOptions,
        {"strictGpuArch": "maybe", "remainder": "Skip", "inventory": "a", "registry": 1},
        [
            ("registry", "string_type", "Input should be a valid string"),
            ("remainder", "literal_error", "Input should be 'overflow' or 'skip'"),
            (
                "strictGpuArch",
                "bool_parsing",
                "Input should be a valid boolean, unable to interpret input",
            ),
            ("inventory", "list_type", "Input should be a valid list"),
        ],
        id="options-lax-mode-still-refuses-what-it-cannot-read",
    ),
    pytest.param(
        config.FunctionOptions,
        {"strictGpuArch": 2, "registryPassword": "hunter2"},
        [
            (
                "strictGpuArch",
                "bool_parsing",
                "Input should be a valid boolean, unable to interpret input",
            )
        ],
        id="options-int-other-than-0-or-1-is-not-a-bool",
    ),
]


@pytest.mark.parametrize(("cls", "data", "expected"), CASES)
def test_behaviour(cls: type[BaseModel], data: Any, expected: list[tuple[str, str, str]]) -> None:
    assert errors_of(cls, data) == expected


# --- the public surface ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def wr() -> models.WorkloadRun:
    return models.WorkloadRun.model_validate(
        run(
            volumes=[{"name": "data", "emptyDir": {}}],
            volumeMounts=[{"name": "data", "mountPath": "/data"}],
            env=[{"name": "A", "value": "1"}],
        )
    )


def test_instances_are_immutable(wr: models.WorkloadRun) -> None:
    with pytest.raises(ValidationError, match="frozen_instance"):
        wr.spec.num_nodes = 3  # type: ignore[misc]


def test_attributes_are_python_names_and_properties_work(wr: models.WorkloadRun) -> None:
    assert wr.name == "r" and wr.namespace is None
    assert wr.spec.framework.name == "mpi"
    assert wr.spec.framework.mpi is not None and wr.spec.framework.mpi.mpirun_path.endswith("run")
    assert wr.spec.volumes[0].source == ("emptyDir", {})
    assert wr.spec.volumes[0].to_k8s() == {"name": "data", "emptyDir": {}}
    assert wr.spec.volumes[0].model_extra == {"emptyDir": {}}
    assert wr.spec.env[0].model_extra == {}


def test_core_types_are_given_back_as_written_without_unset_fields() -> None:
    c = models.Container.model_validate(
        {"name": "c", "env": [{"name": "A", "valueFrom": {"fieldRef": None}}], "stdin": None}
    )
    assert c.to_k8s() == {"name": "c", "env": [{"name": "A", "valueFrom": {"fieldRef": None}}]}
    mount = {"name": "a", "mountPath": "/m", "subPath": "x", "readOnly": True}
    assert models.VolumeMount.model_validate(mount).to_k8s() == {
        "name": "a",
        "mountPath": "/m",
        "readOnly": True,
        "subPath": "x",
    }  # declared fields first, then the others in the order written


@pytest.mark.parametrize(
    ("cls", "data", "message"),
    [
        pytest.param(
            models.Container,
            {"name": "c", "imagee": "x"},
            "unknown field 'imagee'; did you mean 'image'?",
            id="unknown-field-with-a-close-match",
        ),
        pytest.param(
            models.Container,
            {"name": "c", "command": "ls", "ports": [{"containerPort": "80"}]},
            "command: must be a list, got str; ports[0].containerPort: must be an integer, got str",
            id="nested-types-from-the-derived-schema",
        ),
        pytest.param(
            models.VolumeMount,
            {"name": "a", "mountPath": "/m", "mountPropagation": 1},
            "mountPropagation: must be a string, got int",
            id="undeclared-field-still-typed",
        ),
    ],
)
def test_core_types_are_checked_against_the_derived_schema(
    cls: type[BaseModel], data: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError) as exc:
        cls.model_validate(data)
    assert [e["msg"] for e in exc.value.errors()] == [f"Value error, {message}"]


def test_model_copy_updates_by_python_name_without_validating() -> None:
    options = config.FunctionOptions()
    changed = options.model_copy(update={"platform": "gke", "gpu_arch": "h100"})
    assert (changed.platform, changed.gpu_arch, options.platform) == ("gke", "h100", None)
    assert changed.inventory == options.inventory


def test_keyword_construction_validates_like_model_validate() -> None:
    assert config.FunctionOptions() == config.FunctionOptions.model_validate({})
    with pytest.raises(ValidationError, match="registryPassword is refused"):
        config.FunctionOptions(registryPassword="x")


def test_model_fields_introspection() -> None:
    fields = models.VolumeMount.model_fields
    assert list(fields) == ["name", "mount_path", "read_only"]
    assert fields["mount_path"].alias == "mountPath" and fields["name"].alias == "name"
    assert fields["mount_path"].is_required() and not fields["read_only"].is_required()
    assert fields["read_only"].annotation == bool | None


def test_equality_hash_repr_copy_and_pickle() -> None:
    a = models.LocalObjectReference.model_validate({"name": "s"})
    b = models.LocalObjectReference.model_validate({"name": "s"})
    assert a == b and hash(a) == hash(b) and a != models.EnvVar.model_validate({"name": "s"})
    assert repr(a) == "LocalObjectReference(name='s')"
    assert "registry_password=" not in repr(config.FunctionOptions())
    for twin in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert twin == a and twin is not a
    v = models.Volume.model_validate({"name": "v", "emptyDir": {}})
    assert copy.deepcopy(v).source == ("emptyDir", {})


def test_instance_input_is_returned_as_is() -> None:
    target = models.Target.model_validate({"nodeNames": ["a"]})
    assert models.Target.model_validate(target) is target
    spec_ = models.WorkloadRunSpec.model_validate(spec(target=target))
    assert spec_.target is target


def test_validated_containers_are_copies() -> None:
    names = ["a", "b"]
    target = models.Target.model_validate({"nodeNames": names})
    assert target.node_names == names and target.node_names is not names
