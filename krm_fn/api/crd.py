"""Generate the ``WorkloadRun`` CustomResourceDefinition from the pydantic models.

Invariants:
    * The schema is structural (every node has a ``type``; ``$ref``s are inlined; ``null``
      alternatives become ``nullable``), so ``kubectl apply --dry-run=client`` and editors
      accept it.
    * Free-form Kubernetes pieces (volume sources, probes, dependency objects) are
      ``x-kubernetes-preserve-unknown-fields``; everything else rejects unknown fields.
"""

from __future__ import annotations

from typing import Any

from krm_fn.api.models import API_GROUP, KIND, WorkloadRunSpec


def _structural(node: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(node, dict):
        return {}
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _structural(merged, defs)
    for key in ("anyOf", "oneOf"):
        if key in node:
            alts = [a for a in node[key] if a.get("type") != "null"]
            nullable = len(alts) != len(node[key])
            alt: dict[str, Any]
            if len(alts) == 1:
                alt = _structural({**alts[0], **{k: v for k, v in node.items() if k != key}}, defs)
            elif all(a.get("type") in ("string", "integer") for a in alts):
                alt = {"x-kubernetes-int-or-string": True}
            else:
                alt = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            if nullable:
                alt["nullable"] = True
            return alt
    out: dict[str, Any] = {}
    if "description" in node:
        out["description"] = " ".join(str(node["description"]).split())
    typ = node.get("type")
    if "const" in node:
        out["type"] = "string"
        out["enum"] = [node["const"]]
        return out
    if "enum" in node:
        out["type"] = typ or "string"
        out["enum"] = node["enum"]
        return out
    if typ == "object" or "properties" in node:
        out["type"] = "object"
        props = node.get("properties")
        if props:
            out["properties"] = {k: _structural(v, defs) for k, v in props.items()}
            if node.get("required"):
                out["required"] = list(node["required"])
            if node.get("additionalProperties") not in (None, False):
                out["x-kubernetes-preserve-unknown-fields"] = True
        else:
            ap = node.get("additionalProperties")
            if isinstance(ap, dict) and ap:
                out["additionalProperties"] = _structural(ap, defs)
            else:
                out["x-kubernetes-preserve-unknown-fields"] = True
        return out
    if typ == "array":
        out["type"] = "array"
        out["items"] = _structural(node.get("items", {}), defs) or {
            "x-kubernetes-preserve-unknown-fields": True
        }
        if "minItems" in node:
            out["minItems"] = node["minItems"]
        return out
    if typ in ("string", "integer", "number", "boolean"):
        out["type"] = typ
        for k in ("minimum", "maximum", "minLength", "maxLength", "pattern", "format"):
            if k in node:
                out[k] = node[k]
        if typ == "integer" and "format" not in out:
            out["format"] = "int32"
        return out
    out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def workloadrun_crd() -> dict[str, Any]:
    """The CRD object for ``workloadruns.nvcre.nvidia.com``."""
    schema = WorkloadRunSpec.model_json_schema(by_alias=True, mode="validation")
    defs = schema.pop("$defs", {})
    spec_schema = _structural(schema, defs)
    spec_schema.pop("description", None)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"workloadruns.{API_GROUP}"},
        "spec": {
            "group": API_GROUP,
            "names": {
                "kind": KIND,
                "listKind": f"{KIND}List",
                "plural": "workloadruns",
                "singular": "workloadrun",
                "shortNames": ["wlr"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "description": "WorkloadRun runs a distributed workload (NVCRE).",
                            "type": "object",
                            "required": ["spec"],
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": spec_schema,
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                            },
                        }
                    },
                }
            ],
        },
    }
