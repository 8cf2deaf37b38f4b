"""The core/v1 types a WorkloadRun embeds, DERIVED from the pinned CRDs, and checks against them.

A WorkloadRun carries Kubernetes' own types (``env``, ``volumes``, ``volumeMounts``,
``initContainers``, ``resources``, ``imagePullSecrets``, ``target.matchExpressions``). They are
not copied field by field: :func:`derive` cuts each type's OpenAPI schema (descriptions
included) out of the pod template of the pinned TrainingRuntime CRD, into the committed
``krm_fn/data/core_v1.json``; ``tests/test_corev1.py`` regenerates it and asserts it is
identical. The models (:class:`krm_fn.api.models.CoreV1`) declare only the fields the render
reads; every field is checked against the derived schema (:func:`problems`), and the
WorkloadRun CRD inlines the schemas, so ``kubectl explain`` gives Kubernetes' own words.

Invariants:
    * :func:`derive` is deterministic: the same CRD gives byte-identical JSON.
    * :func:`problems` reports what the API server's strict validation of the schema reports:
      an undeclared field (with a close match when there is one), a wrong JSON type, a value
      outside an ``enum``, a missing required field; ``null`` is accepted (the server drops it).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from typing import Any, Final

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

TABLE_PATH: Final = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "core_v1.json")


def _at(node: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    for step in path.split("."):
        node = node["properties"][step.removesuffix("[]")]
        if step.endswith("[]"):
            node = node["items"]
    return node


def derive(trainingruntime_crd: Mapping[str, Any]) -> dict[str, Any]:
    """Type name -> its OpenAPI schema, cut from the TrainingRuntime CRD's pod template."""
    (version,) = [v for v in trainingruntime_crd["spec"]["versions"] if v.get("storage")]
    pod = _at(version["schema"]["openAPIV3Schema"], POD_SPEC)
    return {name: _at(pod, path) for name, path in PATHS.items()}


def dumps(table: Mapping[str, Any]) -> str:
    """The table as committed: compact, sorted JSON with a final newline."""
    return json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n"


@functools.cache
def _table() -> dict[str, Any]:
    with open(TABLE_PATH, encoding="utf-8") as fh:
        table: dict[str, Any] = json.load(fh)
    return table


def schema(name: str) -> dict[str, Any]:
    """The derived schema of core/v1 type ``name`` (a fresh copy)."""
    copied: dict[str, Any] = json.loads(json.dumps(_table()[name]))
    return copied


_JSON: Final[dict[str, type | tuple[type, ...]]] = {"object": dict, "array": list, "string": str, "boolean": bool,
                "integer": int, "number": (int, float)}  # fmt: skip
_WORDS: Final = {"object": "a map", "array": "a list", "string": "a string",
                 "boolean": "a boolean", "integer": "an integer", "number": "a number"}  # fmt: skip


def problems(name: str, value: Any) -> list[tuple[str, str]]:
    """``(path inside the value, message)`` for every way ``value`` breaks type ``name``."""
    return _walk(_table()[name], value, "", name)


def _walk(node: Mapping[str, Any], value: Any, path: str, name: str) -> list[tuple[str, str]]:
    if value is None:
        return []
    if node.get("x-kubernetes-int-or-string"):
        ok = isinstance(value, (int, str)) and not isinstance(value, bool)
        return [] if ok else [(path, f"must be an integer or a string, got {_kind(value)}")]
    t = node.get("type")
    if t in _JSON and (
        (t == "boolean") != isinstance(value, bool) or not isinstance(value, _JSON[t])
    ):
        return [(path, f"must be {_WORDS[t]}, got {_kind(value)}")]
    if "enum" in node and value not in node["enum"]:
        return [(path, f"{value!r} is not one of {', '.join(map(str, node['enum']))}")]
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        props: Mapping[str, Any] = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for key, sub in value.items():
            at = f"{path}.{key}" if path else str(key)
            if key in props:
                out += _walk(props[key], sub, at, name)
            elif isinstance(extra, Mapping):
                out += _walk(extra, sub, f"{path}[{key!r}]", name)
            elif not node.get("x-kubernetes-preserve-unknown-fields"):
                out.append((at, _unknown(str(key), props, path or name)))
        for key in node.get("required") or ():
            if key not in value:
                out.append((f"{path}.{key}" if path else key, "required field is missing"))
    elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for i, sub in enumerate(value):
            out += _walk(node["items"], sub, f"{path}[{i}]", name)
    return out


def _kind(value: Any) -> str:
    return {dict: "a map", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _unknown(key: str, props: Mapping[str, Any], where: str) -> str:
    import difflib  # only unknown-field errors need it

    close = difflib.get_close_matches(key, list(props), n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown field {key!r} of {where} (Kubernetes core/v1){hint}"
