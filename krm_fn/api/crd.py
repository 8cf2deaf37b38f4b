"""Generate the ``WorkloadRun`` CustomResourceDefinition from the API models.

Invariants:
    * The schema is structural (every node has a ``type``; nested models are inlined;
      optional fields are ``nullable``), so ``kubectl apply --dry-run=client`` and editors
      accept it.
    * Free-form Kubernetes pieces (volume sources, probes, dependency objects) are
      ``x-kubernetes-preserve-unknown-fields``; everything else rejects unknown fields.
    * It is what the pydantic models' JSON schema gave once made structural: a field's
      ``description`` is its ``Field(description=...)`` (so ``kubectl explain`` answers), a
      model's is its docstring (whitespace collapsed), its ``required`` list names the fields
      without a default, ``min_length`` / ``ge`` / ``le`` become ``minLength`` /
      ``minItems``, ``minimum``, ``maximum``, and integers are ``int32``.
    * The core/v1 types are the schemas derived from the pinned CRDs
      (:mod:`krm_fn.api.corev1`), Kubernetes' descriptions included.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

from pydantic import BaseModel

from krm_fn.api import corev1
from krm_fn.api.fields import FieldView, fields_of
from krm_fn.api.models import CoreV1, WorkloadRun, WorkloadRunSpec
from krm_fn.keys import WORKLOADRUN_API_GROUP as API_GROUP
from krm_fn.keys import WORKLOADRUN_KIND as KIND


def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if model.__doc__:
        out["description"] = " ".join(model.__doc__.split())
    out["type"] = "object"
    if not (fields := fields_of(model)):
        out["x-kubernetes-preserve-unknown-fields"] = True
        return out
    out["properties"] = {f.key: _described(_structural(f.annotation, f), f) for f in fields}
    if required := [f.key for f in fields if f.required]:
        out["required"] = required
    if model.model_config.get("extra") == "allow":
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def _described(schema: dict[str, Any], f: FieldView) -> dict[str, Any]:
    """The field's own description first (a core/v1 type keeps Kubernetes' words below it)."""
    return {"description": f.description, **schema} if f.description else schema


_SCALARS = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _structural(tp: Any, spec: FieldView | None = None) -> dict[str, Any]:
    """The structural schema of annotation ``tp`` (``spec``: the field's constraints)."""
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = typing.get_args(tp)
        alts = [a for a in args if a is not type(None)]
        alt: dict[str, Any]
        if len(alts) == 1:
            alt = _structural(alts[0], spec)
        elif all(a in (str, int) for a in alts):
            alt = {"x-kubernetes-int-or-string": True}
        else:
            alt = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        if len(alts) != len(args):
            alt["nullable"] = True
        return alt
    if isinstance(tp, type) and issubclass(tp, CoreV1):
        return corev1.schema(tp.__name__)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _model_schema(tp)
    if origin is Literal:
        return {"type": "string", "enum": list(typing.get_args(tp))}
    if origin is dict:
        _, value = typing.get_args(tp)
        if value is Any:
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return {"type": "object", "additionalProperties": _structural(value)}
    if origin is list:
        (item,) = typing.get_args(tp)
        out: dict[str, Any] = {"type": "array", "items": _structural(item)}
        if spec is not None and spec.min_length is not None:
            out["minItems"] = spec.min_length
        return out
    if tp in _SCALARS:
        out = {"type": _SCALARS[tp]}
        if spec is not None:
            names = ("minimum", "maximum", "minLength", "maxLength")
            bounds = zip(names, (spec.ge, spec.le, spec.min_length, spec.max_length), strict=True)
            out.update((k, v) for k, v in bounds if v is not None)
        if tp is int:
            out["format"] = "int32"
        return out
    return {"x-kubernetes-preserve-unknown-fields": True}


_ROOT: dict[str, dict[str, Any]] = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}
"""Top-level fields the API server owns the schema of; ``spec`` comes from the models."""


def workloadrun_crd() -> dict[str, Any]:
    """The CRD object for ``workloadruns.nvcre.nvidia.com``."""
    spec_schema = _model_schema(WorkloadRunSpec)
    del spec_schema["description"]
    root = {
        "description": "WorkloadRun runs a distributed workload (NVCRE).",
        "type": "object",
        "required": ["spec"],
        "properties": {
            f.key: _described(dict(_ROOT.get(f.key) or spec_schema), f)
            for f in fields_of(WorkloadRun)
        },
    }
    names = {"kind": KIND, "listKind": f"{KIND}List", "plural": "workloadruns"}
    version = {"name": "v1alpha1", "served": True, "storage": True, "subresources": {"status": {}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"workloadruns.{API_GROUP}"},
        "spec": {
            "group": API_GROUP,
            "names": {**names, "singular": "workloadrun", "shortNames": ["wlr"]},
            "scope": "Namespaced",
            "versions": [{**version, "schema": {"openAPIV3Schema": root}}],
        },
    }
