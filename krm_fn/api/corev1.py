"""The core/v1 types a WorkloadRun embeds, DERIVED from the pinned CRDs, and checks against them.

A WorkloadRun carries Kubernetes' own types (``env``, ``volumes``, ``volumeMounts``,
``initContainers``, ``resources``, ``imagePullSecrets``, ``target.matchExpressions``). They are
not copied field by field: :func:`derive` cuts each type's OpenAPI schema (descriptions
included) out of the pod template of the pinned TrainingRuntime CRD, into the committed
``krm_fn/data/core_v1.json``; ``tests/test_corev1.py`` regenerates it and asserts it is
identical. The WorkloadRun CRD inlines these schemas, so ``kubectl explain`` gives Kubernetes' own
words; the models (:class:`krm_fn.api.models.CoreV1`) declare only the fields the render
reads and check every field against the pinned CRD (:func:`problems`).

Invariants:
    * :func:`derive` is deterministic: the same CRD gives byte-identical JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from krm_fn.api.crdshape import data_path, dumps, read_table, storage_schema, unknown_fields

__all__ = ["DOCS", "PATHS", "TABLE_PATH", "derive", "dumps", "problems", "schema"]

POD_SPEC: Final = "spec.template.spec.replicatedJobs[].template.spec.template.spec"
"""Where the pod spec sits in the pinned ``trainer.kubeflow.org_trainingruntimes.yaml``."""

PATHS: Final[Mapping[str, str]] = {
    "Container": "containers[]",
    "EnvVar": "containers[].env[]",
    "VolumeMount": "containers[].volumeMounts[]",
    "ResourceRequirements": "containers[].resources",
    "Volume": "volumes[]",
    "LocalObjectReference": "imagePullSecrets[]",
    "NodeSelectorRequirement": "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
    "Execution.nodeSelectorTerms[].matchExpressions[]",
}
"""Each core/v1 type the WorkloadRun embeds -> its path in the pinned pod spec."""

_API: Final = "https://kubernetes.io/docs/reference/kubernetes-api/"
DOCS: Final[Mapping[str, str]] = {
    "Container": _API + "workload-resources/pod-v1/#Container",
    "EnvVar": _API + "workload-resources/pod-v1/#environment-variables",
    "VolumeMount": _API + "workload-resources/pod-v1/#volumes-1",
    "ResourceRequirements": _API + "workload-resources/pod-v1/#resources",
    "Volume": _API + "config-and-storage-resources/volume/",
    "LocalObjectReference": _API + "common-definitions/local-object-reference/",
    "NodeSelectorRequirement": _API + "common-definitions/node-selector-requirement/",
    "ObjectMeta": _API + "common-definitions/object-meta/",
}
"""The Kubernetes API reference page of each embedded type (the field reference links it)."""

TABLE_PATH: Final = data_path("core_v1.json")


def _at(node: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    for step in path.split("."):
        node = node["properties"][step.removesuffix("[]")]
        if step.endswith("[]"):
            node = node["items"]
    return node


def derive(trainingruntime_crd: Mapping[str, Any]) -> dict[str, Any]:
    """Type name -> its OpenAPI schema, cut from the TrainingRuntime CRD's pod template."""
    pod = _at(storage_schema(trainingruntime_crd), POD_SPEC)
    return {name: _at(pod, path) for name, path in PATHS.items()}


def schema(name: str) -> dict[str, Any]:
    """The derived schema of core/v1 type ``name`` (a fresh copy)."""
    copied: dict[str, Any] = json.loads(json.dumps(read_table(TABLE_PATH)[name]))
    return copied


def problems(name: str, value: Any) -> list[tuple[str, str]]:
    """``(path inside the value, message)`` for every way ``value`` breaks type ``name``.

    The check is the pinned CRDs' run-time one (:func:`krm_fn.api.crdshape.unknown_fields`),
    walked from where the type sits in the TrainingRuntime's pod template.
    """
    at = f"{POD_SPEC}.{PATHS[name]}".replace("[]", "[0]")
    return [(p.removeprefix(at)[1:], m) for p, m in unknown_fields("TrainingRuntime", value, at)]
