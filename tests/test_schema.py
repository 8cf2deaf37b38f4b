"""The hand-written validation layer (krm_fn.api.schema) behaves like the pydantic models it
replaced: same results, same error dictionaries in the same order, same public surface.

The pydantic models are kept, verbatim, in tests/pydantic_reference.py; every behaviour case
below is checked against them as well, and hypothesis compares the two on random inputs.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
import time
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from krm_fn.api import config, models, schema
from krm_fn.api.schema import FrozenInstanceError, Model, ValidationError, field
from krm_fn.results import Results
from krm_fn.validate import _known_fields, parse_workloadrun
from tests import pydantic_reference as ref

REPO = Path(__file__).resolve().parents[1]

MODELS = sorted(
    (
        c
        for c in vars(models).values()
        if isinstance(c, type)
        and issubclass(c, Model)
        and c not in (Model, models.Strict, models.Open)
    ),
    key=lambda c: c.__name__,
)
ALL_MODELS = [*MODELS, config.FunctionOptions]


def reference_of(cls: type[Model]) -> type[BaseModel]:
    found: type[BaseModel] = getattr(ref, cls.__name__)
    return found


def _norm_ctx(ctx: dict[str, Any]) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Exception) else v for k, v in ctx.items()}


def normalized(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in errors:
        e = {k: v for k, v in e.items() if k != "url"}
        if "ctx" in e:
            e["ctx"] = _norm_ctx(e["ctx"])
        out.append(e)
    return out


def outcome(cls: type[Any], data: Any, error: type[Exception]) -> tuple[Any, ...]:
    """What validating ``data`` gives, in a form both implementations can be compared by."""
    try:
        obj = cls.model_validate(data)
    except error as exc:
        return ("error", normalized(exc.errors(include_url=False)))  # type: ignore[attr-defined]
    return (
        "ok",
        obj.model_dump(by_alias=True, exclude_none=True),
        obj.model_dump(),
        repr(obj),
    )


def ours(cls: type[Model], data: Any) -> tuple[Any, ...]:
    return outcome(cls, data, ValidationError)


def theirs(cls: type[Model], data: Any) -> tuple[Any, ...]:
    return outcome(reference_of(cls), data, PydanticValidationError)


def errors_of(cls: type[Model], data: Any) -> list[tuple[str, str, str]]:
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
    return {
        "apiVersion": "nvcre.nvidia.com/v1alpha1",
        "kind": "WorkloadRun",
        "metadata": {"name": "r"},
        "spec": spec(**kw),
    }


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
                "Value error, registry, registryUsername and registryPasswordEnv must all be set "
                "together and non-empty",
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
def test_behaviour(cls: type[Model], data: Any, expected: list[tuple[str, str, str]]) -> None:
    assert errors_of(cls, data) == expected


@pytest.mark.parametrize(("cls", "data", "expected"), CASES)
def test_behaviour_is_pydantics(cls: type[Model], data: Any, expected: Any) -> None:
    assert ours(cls, data) == theirs(cls, data)


# --- random inputs: the layer against the pydantic models ------------------------------------

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.text(max_size=3),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(0, 2), max_size=2),
)
WORDS = st.sampled_from(
    [
        "",
        "a",
        "A",
        "x-y",
        "_ok",
        "-bad",
        "1x",
        "4",
        "ab.c",
        "rdma/ib",
        "k8s.io/x",
        "a/b/c",
        "/p",
        "10Gi",
        "1.5Mi",
        "90m",
        "0s",
        "forever",
        "In",
        "Exists",
        "Gt",
        "OpenMPI",
        "emptyDir",
        "hostPath",
        "nvcre.nvidia.com/v1alpha1",
        "WorkloadRun",
    ]
)
STRINGS = st.one_of(WORDS, st.text(max_size=4))
LAX_STRINGS = st.one_of(
    STRINGS, st.binary(max_size=3), st.sampled_from(["yes", "Off", "T", "2", "true"])
)
LAX_BOOLS = st.sampled_from([True, False, 0, 1, 2, -1, 0.0, 1.0, 0.5, "yes", "no", "nope", b"on"])
KEYS = st.one_of(WORDS, st.integers(0, 2))
EXTRA_KEYS = st.sampled_from(["zz", "envv", "emptyDir", "hostPath", "name", 1, None, "image"])


def values_for(tp: Any, strict: bool, depth: int) -> st.SearchStrategy[Any]:
    """Values for annotation ``tp``: mostly of the type (valid or not), sometimes junk."""
    origin = typing.get_origin(tp)
    typed: st.SearchStrategy[Any]
    if origin is typing.Union or origin is types.UnionType:
        typed = st.one_of(*(values_for(a, strict, depth) for a in typing.get_args(tp)))
    elif tp is type(None):
        typed = st.none()
    elif tp is str:
        typed = STRINGS if strict else LAX_STRINGS
    elif tp is int:
        typed = st.integers(-1, 1002)
    elif tp is bool:
        typed = st.booleans() if strict else LAX_BOOLS
    elif tp is Any:
        return JUNK
    elif origin is Literal:
        typed = st.sampled_from([*typing.get_args(tp), "bogus"])
    elif origin is list:
        items = st.lists(values_for(typing.get_args(tp)[0], strict, depth), max_size=3)
        if not strict:  # (not an iterator: both implementations see the same input)
            items = st.one_of(items, items.map(tuple), st.frozensets(STRINGS, max_size=2))
        typed = items
    elif origin is dict:
        typed = st.dictionaries(KEYS, values_for(typing.get_args(tp)[1], strict, depth), max_size=3)
    elif isinstance(tp, type) and issubclass(tp, Model):
        model = tp  # deferred: a short repr, and built only when drawn from
        typed = st.deferred(lambda: inputs_for(model, depth + 1))
    else:  # pragma: no cover - a new annotation in the models
        raise AssertionError(f"no strategy for {tp!r}")
    # One draw in eight is junk; flatmap keeps the strategy's repr short.
    return st.integers(0, 7).flatmap(lambda i: JUNK if i == 0 else typed)


@cache
def inputs_for(cls: type[Model], depth: int = 0) -> st.SearchStrategy[Any]:
    """Input mappings for ``cls``: its fields (by alias or by name) plus a few unknown keys."""
    if depth > 5:
        return st.just({})
    strict = cls.__strict__
    required: dict[Any, st.SearchStrategy[Any]] = {}
    optional: dict[Any, st.SearchStrategy[Any]] = {}
    for f in cls.model_fields.values():
        values = values_for(f.annotation, strict, depth)
        (required if f.required else optional)[f.key] = values
        if f.alias and cls.__by_name__:
            optional[f.name] = values
    extras = st.dictionaries(EXTRA_KEYS, JUNK, max_size=1)
    if cls is models.Volume:
        extras = st.dictionaries(
            st.sampled_from(["emptyDir", "hostPath", "nfs", "bogus"]),
            st.one_of(st.just({}), JUNK),
            max_size=2,
        )
    fields = st.fixed_dictionaries(required, optional=optional)
    return st.tuples(fields, extras).map(lambda fe: {**fe[1], **fe[0]})


@pytest.mark.slow
@pytest.mark.parametrize("cls", ALL_MODELS, ids=lambda c: f"{c.__name__}-matches-pydantic")
@settings(max_examples=60)
@given(data=st.data())
def test_random_inputs_give_what_pydantic_gave(cls: type[Model], data: st.DataObject) -> None:
    value = data.draw(inputs_for(cls))
    assert ours(cls, value) == theirs(cls, value)


def _golden_runs() -> list[dict[str, Any]]:
    runs = []
    for path in sorted((REPO / "tests" / "golden").glob("*/input.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            for item in (doc or {}).get("items", [doc]) if isinstance(doc, dict) else []:
                if isinstance(item, dict) and item.get("kind") == "WorkloadRun":
                    runs.append(item)
    return runs


GOLDEN_RUNS = _golden_runs()


@pytest.mark.slow
@settings(max_examples=300)
@given(value=inputs_for(models.WorkloadRun))
def test_random_workloadruns_give_what_pydantic_gave(value: dict[str, Any]) -> None:
    assert ours(models.WorkloadRun, value) == theirs(models.WorkloadRun, value)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every mapping and list under ``value``."""
    out = [path] if isinstance(value, dict | list) else []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for k, v in items:
        out += _nodes(v, (*path, k))
    return out


@st.composite
def mutated_golden_runs(draw: st.DrawFn) -> dict[str, Any]:
    """A golden WorkloadRun with one mapping entry or list item replaced, added or removed."""
    run_ = copy.deepcopy(draw(st.sampled_from(GOLDEN_RUNS)))
    path = draw(st.sampled_from(_nodes(run_)))
    node: Any = run_
    for part in path:
        node = node[part]
    new = st.one_of(JUNK, WORDS, st.just({}), st.just([]), st.just([{}]))
    if isinstance(node, dict):
        key = draw(st.one_of(st.sampled_from(sorted(node) or ["name"]), EXTRA_KEYS, WORDS))
        if key in node and draw(st.booleans()):
            del node[key]
        else:
            node[key] = draw(new)
    elif node and draw(st.booleans()):
        node[draw(st.integers(0, len(node) - 1))] = draw(new)
    else:
        node.append(draw(new))
    return run_


@settings(max_examples=300)
@given(value=mutated_golden_runs())
def test_golden_workloadruns_with_one_change_give_what_pydantic_gave(value: dict[str, Any]) -> None:
    assert ours(models.WorkloadRun, value) == theirs(models.WorkloadRun, value)


def test_every_golden_workloadrun_gives_what_pydantic_gave() -> None:
    assert len(GOLDEN_RUNS) > 30
    for r in GOLDEN_RUNS:
        assert ours(models.WorkloadRun, r) == theirs(models.WorkloadRun, r), r["metadata"]


def test_unknown_field_hints_walk_the_same_fields_as_pydantic() -> None:
    def walk(m: type[BaseModel], prefix: str, where: dict[str, list[str]], depth: int) -> None:
        if depth > 6:
            return
        for n, f in m.model_fields.items():
            path = f"{prefix}.{f.alias or n}" if prefix else f.alias or n
            where.setdefault(f.alias or n, []).append(path)
            for sub in _pydantic_models_in(f.annotation):
                walk(sub, path, where, depth + 1)

    expected: dict[str, list[str]] = {}
    walk(ref.WorkloadRun, "", expected, 0)
    assert _known_fields() == expected


def _pydantic_models_in(tp: Any) -> list[type[BaseModel]]:
    out: list[type[BaseModel]] = []
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        out.append(tp)
    for arg in getattr(tp, "__args__", ()) or ():
        out += _pydantic_models_in(arg)
    return out


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
    with pytest.raises(FrozenInstanceError):
        wr.spec.num_nodes = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del wr.kind  # type: ignore[misc]


def test_attributes_are_python_names_and_properties_work(wr: models.WorkloadRun) -> None:
    assert wr.name == "r" and wr.namespace is None
    assert wr.spec.framework.name == "mpi"
    assert wr.spec.framework.mpi is not None and wr.spec.framework.mpi.mpirun_path.endswith("run")
    assert wr.spec.volumes[0].source == ("emptyDir", {})
    assert wr.spec.volumes[0].to_k8s() == {"name": "data", "emptyDir": {}}
    assert wr.spec.volumes[0].model_extra == {"emptyDir": {}}
    assert wr.spec.env[0].model_extra is None


def test_model_dump_by_alias_excludes_none_recursively() -> None:
    c = models.Container.model_validate(
        {"name": "c", "env": [{"name": "A", "valueFrom": {"x": None}}], "stdin": False}
    )
    assert c.model_dump(by_alias=True, exclude_none=True) == {
        "name": "c",
        "env": [{"name": "A", "valueFrom": {"x": None}}],
        "stdin": False,
    }
    assert models.VolumeMount.model_validate({"name": "a", "mountPath": "/m"}).model_dump() == {
        "name": "a",
        "mount_path": "/m",
        "read_only": None,
        "sub_path": None,
        "sub_path_expr": None,
        "mount_propagation": None,
        "recursive_read_only": None,
    }


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
    assert list(fields) == [
        "name",
        "mount_path",
        "read_only",
        "sub_path",
        "sub_path_expr",
        "mount_propagation",
        "recursive_read_only",
    ]
    assert fields["mount_path"].alias == "mountPath" and fields["name"].alias is None
    assert fields["mount_path"].required and not fields["read_only"].required
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


# --- declaring models ------------------------------------------------------------------------


class Declared(Model):
    """A model declared in a test."""

    count: int = field(default=1, ge=0)
    tags: list[str] = field(default_factory=list)


def test_defining_a_class_resolves_nothing_until_first_use() -> None:
    class Lazy(Model):
        """Refers to a name that does not exist yet."""

        later: NotYetDefined  # type: ignore[name-defined]  # noqa: F821

    assert schema._SCHEMA not in Lazy.__dict__
    with pytest.raises(NameError):
        Lazy.model_validate({})


def test_default_factories_give_each_instance_its_own_value() -> None:
    a, b = Declared.model_validate({}), Declared.model_validate({})
    assert a.tags == [] and a.tags is not b.tags and a.count == 1


def test_unsupported_annotation_is_a_type_error_at_first_use() -> None:
    class Floaty(Model):
        """``float`` is not supported: no model needs it."""

        x: float = 0.0

    with pytest.raises(TypeError, match="not supported"):
        Floaty.model_validate({})


def test_validator_for_an_unknown_field_is_a_type_error() -> None:
    class Typo(Model):
        """The validator names a field that does not exist."""

        x: int = 0

        @schema.field_validator("y")
        @classmethod
        def _y(cls, v: int) -> int:
            return v

    with pytest.raises(TypeError, match="unknown fields"):
        Typo.model_validate({})


def test_validation_error_is_a_value_error_and_reads_like_pydantics() -> None:
    with pytest.raises(ValueError) as info:
        Declared.model_validate({"count": -1, "tags": [1]})
    assert str(info.value).splitlines() == [
        "2 validation errors for Declared",
        "count",
        "  Input should be greater than or equal to 0 [type=greater_than_equal, input_value=-1, "
        "input_type=int]",
        "tags.0",
        "  Input should be a valid string [type=string_type, input_value=1, input_type=int]",
    ]


# --- cost ------------------------------------------------------------------------------------

_PROBE = """
import json, sys, time
t = time.perf_counter()
import krm_fn.api.models, krm_fn.api.config, krm_fn.validate
took = time.perf_counter() - t
print(json.dumps({"modules": sorted(sys.modules), "seconds": took}))
"""


def test_importing_the_models_does_not_import_pydantic() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    report = json.loads(proc.stdout)
    heavy = [
        m
        for m in report["modules"]
        if m.split(".")[0] in ("pydantic", "pydantic_core", "dataclasses", "inspect", "difflib")
        or m.startswith("importlib.metadata")
    ]
    assert not heavy, heavy


def test_validating_a_workloadrun_is_cheap() -> None:
    runs = [r for r in GOLDEN_RUNS if r["metadata"]["name"] != "bad"]
    parse_workloadrun(runs[0], Results(), None)  # the first use resolves the classes
    rounds = 20
    start = time.process_time()  # CPU time: parallel test workers do not inflate it
    for _ in range(rounds):
        for r in runs:
            parse_workloadrun(r, Results(), None)
    per_run = (time.process_time() - start) / (rounds * len(runs))
    assert per_run < 0.002, f"{per_run * 1e6:.0f} µs per WorkloadRun"
