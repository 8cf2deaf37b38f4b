"""Strategic-merge patch: merge keys, atomic lists, directives, errors, immutability."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn.overrides.smp import SMPError, dotted, strategic_merge
from tests.builders import runtime_spec


def pod(spec: dict[str, Any]) -> dict[str, Any]:
    """Wrap a pod spec in a one-job TrainingRuntime."""
    return {
        "kind": "TrainingRuntime",
        "spec": runtime_spec("node", spec),
    }


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "node", **fields}


CASES: list[Any] = [
    pytest.param(
        pod(
            {
                "containers": [
                    container(
                        image="img",
                        volumeMounts=[{"name": "dshm", "mountPath": "/dev/shm"}],
                        securityContext={"capabilities": {"add": ["IPC_LOCK"]}},
                    )
                ]
            }
        ),
        pod({"containers": [container(securityContext={"privileged": True})]}),
        pod(
            {
                "containers": [
                    container(
                        image="img",
                        volumeMounts=[{"name": "dshm", "mountPath": "/dev/shm"}],
                        securityContext={"capabilities": {"add": ["IPC_LOCK"]}, "privileged": True},
                    )
                ]
            }
        ),
        id="containers-merge-by-name-keeping-built-in-mounts",
    ),
    pytest.param(
        {"volumeMounts": [{"name": "a", "mountPath": "/data"}, {"name": "b", "mountPath": "/b"}]},
        {
            "volumeMounts": [
                {"name": "renamed", "mountPath": "/data", "readOnly": True},
                {"name": "c", "mountPath": "/c"},
            ]
        },
        {
            "volumeMounts": [
                {"name": "renamed", "mountPath": "/data", "readOnly": True},
                {"name": "b", "mountPath": "/b"},
                {"name": "c", "mountPath": "/c"},
            ]
        },
        id="volume-mounts-merge-by-mount-path",
    ),
    pytest.param(
        {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"env": [{"name": "B", "value": "20"}]},
        {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}]},
        id="env-merges-by-name",
    ),
    pytest.param(
        {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]},
        {"env": [{"name": "A", "value": "plain", "valueFrom": None}]},
        {"env": [{"name": "A", "value": "plain"}]},
        id="null-inside-a-merged-item-deletes-that-field",
    ),
    pytest.param(
        pod({"volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}),
        pod({"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}]}),
        pod(
            {
                "volumes": [
                    {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                    {"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}},
                ]
            }
        ),
        id="volumes-merge-by-name",
    ),
    pytest.param(
        pod({"tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b"}]}),
        pod({"tolerations": [{"key": "c", "operator": "Exists"}]}),
        pod({"tolerations": [{"key": "c", "operator": "Exists"}]}),
        id="tolerations-are-replaced-wholesale",
    ),
    pytest.param(
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "a", "operator": "Exists"}]}
                        ]
                    }
                },
                "podAntiAffinity": {"x": 1},
            }
        },
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "b", "operator": "Exists"}]}
                        ]
                    }
                }
            }
        },
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "b", "operator": "Exists"}]}
                        ]
                    }
                },
                "podAntiAffinity": {"x": 1},
            }
        },
        id="affinity-merges-but-node-selector-terms-are-atomic",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]},
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["3"]}]},
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["3"]}]},
        id="match-expressions-are-atomic",
    ),
    pytest.param(
        {"containers": [container(command=["sh", "-c"], args=["a", "b"])]},
        {"containers": [container(args=["c"])]},
        {"containers": [container(command=["sh", "-c"], args=["c"])]},
        id="args-are-replaced-command-kept",
    ),
    pytest.param(
        {"nodeSelector": {"a": "1", "b": "2"}},
        {"nodeSelector": {"b": "20", "c": "3"}},
        {"nodeSelector": {"a": "1", "b": "20", "c": "3"}},
        id="node-selector-merges-key-by-key",
    ),
    pytest.param(
        {"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"x": 1}},
        {"metadata": {"labels": {"a": None}}, "spec": None},
        {"metadata": {"labels": {"b": "2"}}},
        id="null-deletes-a-key",
    ),
    pytest.param(
        {"securityContext": {"capabilities": {"add": ["IPC_LOCK"]}, "runAsUser": 0}},
        {"securityContext": {"$patch": "replace", "privileged": True}},
        {"securityContext": {"privileged": True}},
        id="patch-replace-directive",
    ),
    pytest.param(
        {"containers": [container(image="a", env=[{"name": "X", "value": "1"}])]},
        {"containers": [{"$patch": "replace", "name": "node", "image": "b"}]},
        {"containers": [container(image="b")]},
        id="patch-replace-directive-on-a-list-item",
    ),
    pytest.param(
        {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"env": [{"$patch": "replace"}, {"name": "C", "value": "3"}]},
        {"env": [{"name": "C", "value": "3"}]},
        id="patch-replace-item-replaces-the-whole-list",
    ),
    pytest.param(
        {"volumes": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        {"volumes": [{"name": "b", "$patch": "delete"}, {"name": "zzz", "$patch": "delete"}]},
        {"volumes": [{"name": "a"}, {"name": "c"}]},
        id="patch-delete-directive",
    ),
    pytest.param(
        {"securityContext": {"privileged": True}, "image": "a"},
        {"securityContext": {"$patch": "delete"}},
        {"image": "a"},
        id="patch-delete-directive-on-a-map",
    ),
    pytest.param(
        {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
        {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}},
        {"strategy": {"type": "Recreate"}},
        id="retain-keys-directive",
    ),
    pytest.param(
        {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"$setElementOrder/env": [{"name": "B"}, {"name": "A"}], "env": [{"name": "A"}]},
        {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        id="set-element-order-is-ignored-base-order-kept",
    ),
    pytest.param(
        {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"env": [{"name": "Z", "value": "z"}, {"name": "A", "value": "10"}, {"name": "M"}]},
        {
            "env": [
                {"name": "A", "value": "10"},
                {"name": "B", "value": "2"},
                {"name": "Z", "value": "z"},
                {"name": "M"},
            ]
        },
        id="new-items-appended-in-patch-order",
    ),
    pytest.param(
        {
            "replicatedJobs": [
                {"name": "node", "replicas": 1},
                {"name": "launcher", "replicas": 1, "dependsOn": [{"name": "node"}]},
            ]
        },
        {"replicatedJobs": [{"name": "launcher", "dependsOn": [{"name": "x"}]}]},
        {
            "replicatedJobs": [
                {"name": "node", "replicas": 1},
                {
                    "name": "launcher",
                    "replicas": 1,
                    "dependsOn": [{"name": "node"}, {"name": "x"}],
                },
            ]
        },
        id="replicated-jobs-and-their-dependsOn-merge-by-name",
    ),
    pytest.param(
        {"ports": [{"containerPort": 22, "name": "ssh"}, {"containerPort": 29500}]},
        {"ports": [{"containerPort": 29500, "protocol": "TCP"}, {"containerPort": 8080}]},
        {
            "ports": [
                {"containerPort": 22, "name": "ssh"},
                {"containerPort": 29500, "protocol": "TCP"},
                {"containerPort": 8080},
            ]
        },
        id="ports-merge-by-container-port",
    ),
    pytest.param(
        {
            "imagePullSecrets": [{"name": "a"}],
            "schedulingGates": [{"name": "g"}],
            "resourceClaims": [{"name": "r", "resourceClaimName": "x"}],
        },
        {
            "imagePullSecrets": [{"name": "b"}],
            "schedulingGates": [{"name": "g"}],
            "resourceClaims": [{"name": "r", "resourceClaimName": "y"}],
        },
        {
            "imagePullSecrets": [{"name": "a"}, {"name": "b"}],
            "schedulingGates": [{"name": "g"}],
            "resourceClaims": [{"name": "r", "resourceClaimName": "y"}],
        },
        id="pull-secrets-gates-and-resource-claims-merge-by-name",
    ),
    pytest.param(
        {"resources": {"claims": [{"name": "gpu"}], "limits": {"cpu": "1"}}},
        {"resources": {"claims": [{"name": "nic"}], "limits": {"memory": "1Gi"}}},
        {
            "resources": {
                "claims": [{"name": "gpu"}, {"name": "nic"}],
                "limits": {"cpu": "1", "memory": "1Gi"},
            }
        },
        id="resource-claims-merge-by-name-limits-by-key",
    ),
    pytest.param(
        {"targets": [{"jobName": "node", "containerNames": ["a"]}]},
        {"targets": [{"jobName": "node", "containerNames": ["b"]}, {"jobName": "x"}]},
        {"targets": [{"jobName": "node", "containerNames": ["b"]}, {"jobName": "x"}]},
        id="env-injection-targets-merge-by-job-name",
    ),
    pytest.param(
        {
            "kind": "TrainJob",
            "spec": {
                "trainer": {"env": [{"name": "A", "value": "1"}], "args": ["x"], "image": "i"}
            },
        },
        {"spec": {"trainer": {"env": [{"name": "B", "value": "2"}], "args": ["y"]}}},
        {
            "kind": "TrainJob",
            "spec": {
                "trainer": {"env": [{"name": "B", "value": "2"}], "args": ["y"], "image": "i"}
            },
        },
        id="trainjob-trainer-env-and-args-are-atomic",
    ),
    pytest.param(
        {"kind": "TrainJob", "spec": {"runtimePatches": [{"manager": "a.io/x", "v": 1}]}},
        {"spec": {"runtimePatches": [{"manager": "b.io/y", "v": 2}]}},
        {
            "kind": "TrainJob",
            "spec": {
                "runtimePatches": [{"manager": "a.io/x", "v": 1}, {"manager": "b.io/y", "v": 2}]
            },
        },
        id="trainjob-runtime-patches-merge-by-manager",
    ),
    pytest.param(
        {"kind": "ConfigMap", "data": {"a": "1", "b": "2"}},
        {"data": {"b": None, "c": "3"}},
        {"kind": "ConfigMap", "data": {"a": "1", "c": "3"}},
        id="configmap-data-merges-key-by-key",
    ),
    pytest.param(
        {"kind": "Widget", "spec": {"containers": [{"name": "a", "x": 1}], "m": {"k": 1}}},
        {"spec": {"containers": [{"name": "a", "y": 2}], "m": {"j": 2}}},
        {"kind": "Widget", "spec": {"containers": [{"name": "a", "y": 2}], "m": {"k": 1, "j": 2}}},
        id="unknown-kind-is-plain-json-merge",
    ),
    pytest.param(
        {"a": 1},
        {"b": {"c": None, "d": {"$patch": "replace", "e": 1}, "env": [{"name": "X"}]}},
        {"a": 1, "b": {"d": {"e": 1}, "env": [{"name": "X"}]}},
        id="new-subtree-drops-nulls-and-directives",
    ),
    pytest.param(
        {"a": {"x": 1}, "b": "s", "c": [1, 2]},
        {"a": "scalar", "b": {"now": "map"}, "c": {"k": 1}},
        {"a": "scalar", "b": {"now": "map"}, "c": {"k": 1}},
        id="values-of-another-type-replace",
    ),
]


@pytest.mark.parametrize(("base", "patch", "expected"), CASES)
def test_strategic_merge(base: Any, patch: Any, expected: Any) -> None:
    base_before, patch_before = copy.deepcopy(base), copy.deepcopy(patch)
    result = strategic_merge(base, patch)
    assert result == expected
    assert base == base_before, "base was mutated"
    assert patch == patch_before, "patch was mutated"
    assert not _shared(result, base) and not _shared(result, patch)


def test_merged_keys_keep_their_position_new_keys_follow() -> None:
    result = strategic_merge({"a": 1, "b": 2, "c": 3}, {"d": 4, "b": 20})
    assert list(result) == ["a", "b", "c", "d"]


ERRORS: list[Any] = [
    pytest.param(
        pod({"containers": [container(image="i")]}),
        pod({"containers": [{"image": "x"}]}),
        "spec.template.spec.replicatedJobs[name=node].template.spec.template.spec"
        ".containers[0]: list item has no 'name'",
        id="missing-merge-key-is-an-error",
    ),
    pytest.param(
        {"volumeMounts": [{"name": "a", "mountPath": "/a"}]},
        {"volumeMounts": [{"name": "a", "mountPath": "/a"}, {"name": "b"}]},
        "volumeMounts[1]: list item has no 'mountPath'",
        id="missing-mount-path-is-an-error",
    ),
    pytest.param(
        {},
        {"env": ["A=1"]},
        "env[0]: list item must be a map with a 'name' field",
        id="keyed-list-item-must-be-a-map",
    ),
    pytest.param(
        {},
        {"env": [{"$patch": "delete"}]},
        "env[0]: list item has no 'name'",
        id="delete-directive-needs-the-key",
    ),
    pytest.param(
        {},
        {"spec": {"$deleteFromPrimitiveList/args": ["x"]}},
        "spec.$deleteFromPrimitiveList/args: unsupported patch directive",
        id="unsupported-directive-is-an-error",
    ),
    pytest.param(
        {},
        {"spec": {"$patch": "merge-please"}},
        "spec.$patch: unknown $patch value 'merge-please'",
        id="unknown-patch-value-is-an-error",
    ),
    pytest.param(
        {},
        {"spec": {"$retainKeys": "type"}},
        "spec.$retainKeys: $retainKeys must be a list of field names",
        id="retain-keys-must-be-a-list",
    ),
    pytest.param(
        {"kind": "Widget", "spec": {}},
        {"spec": {"$patch": "replace"}},
        "spec.$patch: SMP directives are not supported for kind Widget",
        id="directives-on-an-unknown-kind-are-an-error",
    ),
    pytest.param(
        {"kind": "ConfigMap"},
        {"$patch": "delete"},
        "'$patch: delete' cannot delete the object being patched",
        id="deleting-the-root-is-an-error",
    ),
]


@pytest.mark.parametrize(("base", "patch", "message"), ERRORS)
def test_strategic_merge_errors(base: Any, patch: Any, message: str) -> None:
    before = copy.deepcopy(patch)
    with pytest.raises(SMPError) as info:
        strategic_merge(base, patch)
    assert message in str(info.value)
    assert patch == before


def test_error_carries_path_and_reason() -> None:
    with pytest.raises(SMPError) as info:
        strategic_merge({}, {"spec": {"volumes": [{"name": "a"}, {}]}})
    assert info.value.path == ("spec", "volumes", "[1]")
    assert info.value.reason == "list item has no 'name'"


def test_path_argument_prefixes_error_paths() -> None:
    where = ("spec", "template", "spec", "replicatedJobs", "[name=node]")
    with pytest.raises(SMPError) as info:
        strategic_merge({}, {"containers": [{"image": "x"}]}, where)
    assert str(info.value) == (
        "spec.template.spec.replicatedJobs[name=node].containers[0]: list item has no 'name'"
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ((), ""),
        (("spec",), "spec"),
        (
            ("spec", "replicatedJobs", "[name=node]", "template"),
            "spec.replicatedJobs[name=node].template",
        ),
        (("containers", "[0]", "[1]"), "containers[0][1]"),
        (("[0]", "a"), "[0].a"),
    ],
)
def test_dotted(path: tuple[str, ...], expected: str) -> None:
    assert dotted(path) == expected


def test_explicit_kind_overrides_the_objects_kind() -> None:
    base = {"kind": "Widget", "env": [{"name": "A", "value": "1"}]}
    patch = {"env": [{"name": "B"}]}
    assert strategic_merge(base, patch)["env"] == [{"name": "B"}]
    assert strategic_merge(base, patch, kind="ConfigMap")["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B"},
    ]


# ----------------------------------------------------------------------------- properties


def _shared(result: Any, source: Any) -> bool:
    """Whether ``result`` holds any dict/list object that also lives in ``source``."""
    ids: set[int] = set()

    def collect(v: Any) -> None:
        if isinstance(v, dict | list):
            ids.add(id(v))
            for child in v.values() if isinstance(v, dict) else v:
                collect(child)

    def hit(v: Any) -> bool:
        if isinstance(v, dict | list):
            if id(v) in ids:
                return True
            return any(hit(c) for c in (v.values() if isinstance(v, dict) else v))
        return False

    collect(source)
    return hit(result)


PLAIN_KEYS = st.sampled_from(["a", "b", "c", "image", "labels", "spec", "value"])
SCALARS = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=4))


@st.composite
def _maps(draw: st.DrawFn, inner: st.SearchStrategy[Any]) -> dict[str, Any]:
    m: dict[str, Any] = draw(st.dictionaries(PLAIN_KEYS, inner, max_size=3))
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(["x", "y", "z"]), unique=True, max_size=3))
        m["containers"] = [
            {**draw(st.dictionaries(PLAIN_KEYS, inner, max_size=2)), "name": n} for n in names
        ]
    return m


VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | _maps(inner), max_leaves=12
)
MAPS = _maps(VALUES)


@given(MAPS)
def test_merging_an_empty_patch_is_identity(obj: dict[str, Any]) -> None:
    assert strategic_merge(obj, {}) == obj


@given(MAPS)
def test_merging_a_map_with_itself_is_identity(obj: dict[str, Any]) -> None:
    assert strategic_merge(obj, obj) == obj


@pytest.mark.slow
@given(MAPS, MAPS)
def test_disjoint_keys_keep_both_sides(left: dict[str, Any], right: dict[str, Any]) -> None:
    right = {f"r-{k}": v for k, v in right.items()}
    merged = strategic_merge(left, right)
    assert merged == {**left, **right}


@pytest.mark.slow
@settings(max_examples=200)
@given(MAPS, MAPS)
def test_merge_is_idempotent_and_never_mutates(base: dict[str, Any], patch: dict[str, Any]) -> None:
    base_before, patch_before = copy.deepcopy(base), copy.deepcopy(patch)
    once = strategic_merge(base, patch)
    assert strategic_merge(once, patch) == once
    assert base == base_before and patch == patch_before
    assert not _shared(once, base) and not _shared(once, patch)
