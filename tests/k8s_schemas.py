"""Validate generated objects the way the API server and Trainer's webhooks would.

* Trainer kinds against the pinned CRDs in ``../shared/schemas/crds`` (read at test time,
  never copied; a test that needs them skips, naming the path, when they are missing), strictly: an unknown field anywhere is an error (as ``kubectl apply`` with
  strict field validation reports it), plus the CRDs' CEL name rules.
* NVIDIA's ComputeDomain against its pinned CRD, the same way.
* Core kinds (ConfigMap, Secret, PersistentVolumeClaim) and ``resource.k8s.io/v1``
  ResourceClaimTemplate with ``kubernetes-validate`` (strict).
* The Trainer v2.3 webhook rules the render must respect (names, containers, patches).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tests.shared import require_shared, shared_dir  # noqa: F401  (shared_dir: re-exported)

REPO = Path(__file__).resolve().parents[1]


CRD_FILES = {
    "TrainJob": "trainer.kubeflow.org_trainjobs.yaml",
    "TrainingRuntime": "trainer.kubeflow.org_trainingruntimes.yaml",
    "ClusterTrainingRuntime": "trainer.kubeflow.org_clustertrainingruntimes.yaml",
    "JobSet": "jobset.x-k8s.io_jobsets.yaml",
    # NVIDIA DRA driver for GPUs (provenance: ../shared/schemas/crds/SOURCE.md)
    "ComputeDomain": "resource.nvidia.com_computedomains.yaml",
    "ExternalSecret": "external-secrets.io_externalsecrets.yaml",
}
# resource.k8s.io/v1 is GA from Kubernetes 1.34: kubernetes-validate's strict 1.34 schema
# (resourceclaimtemplate-resource-v1.json) validates the DRA kinds; core kinds use 1.32.
K8S_VERSION_OF_KIND = {"ResourceClaimTemplate": "1.34"}


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strict(v) for k, v in node.items() if not k.startswith("x-kubernetes-validations")}
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if (
        out.get("type") in ("object", ["object", "null"])
        and "properties" in out
        and "additionalProperties" not in out
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


@functools.cache
def crd_schema(kind: str) -> dict[str, Any]:
    path = require_shared("schemas", "crds", CRD_FILES[kind])  # skips without ../shared
    crd = yaml.load(path.read_text(), getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    (version,) = [v for v in crd["spec"]["versions"] if v.get("storage")]
    schema = _strict(version["schema"]["openAPIV3Schema"])
    # metadata is {type: object} in CRDs; the API server validates it as ObjectMeta.
    schema["properties"]["metadata"] = {"type": "object"}
    return schema


RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _label_key_ok(key: str) -> bool:
    if key.count("/") > 1:
        return False
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not DNS1123_SUB.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(
        re.match(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$", name)
    )


def validate_metadata(obj: dict[str, Any]) -> list[str]:
    errs = []
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    if not name or len(name) > 253 or not DNS1123_SUB.match(name):
        errs.append(f"metadata.name {name!r} is not a DNS-1123 subdomain")
    for k, v in (meta.get("labels") or {}).items():
        if not _label_key_ok(k):
            errs.append(f"label key {k!r} invalid")
        if not isinstance(v, str) or len(v) > 63 or not LABEL_VALUE.match(v):
            errs.append(f"label {k}: value {v!r} invalid")
    for k, v in (meta.get("annotations") or {}).items():
        if not _label_key_ok(k):
            errs.append(f"annotation key {k!r} invalid")
        if not isinstance(v, str):
            errs.append(f"annotation {k} value must be a string")
    return errs


def validate_object(obj: dict[str, Any]) -> list[str]:
    """Every schema problem of one generated object (empty list: valid)."""
    kind = obj.get("kind", "")
    errs = validate_metadata(obj)
    if kind in CRD_FILES:
        validator = jsonschema.Draft7Validator(crd_schema(kind))
        errs += [
            f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(obj)
        ]
        if kind == "TrainJob":
            name = obj["metadata"]["name"]
            if not RFC1035.match(name) or len(name) > 63:
                errs.append(f"TrainJob name {name!r} violates the CRD's RFC 1035 / 63 rules")
    else:
        import kubernetes_validate

        try:
            kubernetes_validate.validate(obj, K8S_VERSION_OF_KIND.get(kind, "1.32"), strict=True)
        except kubernetes_validate.ValidationError as exc:
            errs.append(str(exc).splitlines()[0])
    return errs


RESERVED_MPI_ENV = {
    "OMPI_MCA_orte_default_hostfile",
    "OMPI_MCA_plm_rsh_args",
    "OMPI_MCA_orte_keep_fqdn_hostnames",
    "OMPI_MCA_orte_set_default_slots",
}


def _rjobs(runtime: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {j["name"]: j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def _containers(rjob: dict[str, Any]) -> set[str]:
    pod = rjob["template"]["spec"]["template"]["spec"]
    return {c["name"] for c in pod.get("containers", [])} | {
        c["name"] for c in pod.get("initContainers", [])
    }


def webhook_errors(objects: list[dict[str, Any]]) -> list[str]:
    """The Trainer v2.3 / JobSet v0.12 admission rules our objects must pass."""
    errs: list[str] = []
    runtimes = {
        (o["metadata"].get("namespace"), o["metadata"]["name"]): o
        for o in objects
        if o.get("kind") == "TrainingRuntime"
    }
    for rt in runtimes.values():
        jobs = rt["spec"]["template"]["spec"]["replicatedJobs"]
        if jobs and jobs[0].get("dependsOn"):
            errs.append(f"{rt['metadata']['name']}: the first replicated job cannot use dependsOn")
        for j in jobs:
            labels = (j["template"].get("metadata") or {}).get("labels") or {}
            if labels.get("trainer.kubeflow.org/trainjob-ancestor-step") == "trainer":
                if j.get("replicas", 1) != 1:
                    errs.append(f"{j['name']}: ancestor job replicas must be 1")
                if "node" not in {
                    c["name"] for c in j["template"]["spec"]["template"]["spec"]["containers"]
                }:
                    errs.append(f"{j['name']}: ancestor job must contain container 'node'")
        if "mpi" in rt["spec"].get("mlPolicy", {}):
            if {j["name"] for j in jobs} != {"launcher", "node"}:
                errs.append("MPI runtime replicated jobs must be named launcher and node")
            if rt["spec"]["mlPolicy"].get("numNodes", 1) != 1:
                errs.append("MPI runtime mlPolicy.numNodes must be 1 (the launcher count)")
    for tj in (o for o in objects if o.get("kind") == "TrainJob"):
        name = tj["metadata"]["name"]
        ref = tj["spec"]["runtimeRef"]
        rt = runtimes.get((tj["metadata"].get("namespace"), ref["name"]))
        if ref.get("kind") != "TrainingRuntime" or rt is None:
            errs.append(f"{name}: runtimeRef {ref} does not name a generated TrainingRuntime")
            continue
        is_mpi = "mpi" in rt["spec"].get("mlPolicy", {})
        if len(name) > (44 if is_mpi else 48):
            errs.append(f"{name}: longer than the JobSet pod-name budget")
        for e in (tj["spec"].get("trainer") or {}).get("env") or []:
            if e["name"] in RESERVED_MPI_ENV or e["name"].startswith("PET_"):
                errs.append(f"{name}: trainer.env {e['name']} is reserved")
        rjobs = _rjobs(rt)
        patches = tj["spec"].get("runtimePatches") or []
        if len(patches) > 16:
            errs.append(f"{name}: more than 16 runtimePatches")
        for p in patches:
            if not re.match(r"^[a-z0-9.-]+\.[a-z]+/[-a-zA-Z0-9_.]+$", p["manager"]):
                errs.append(f"{name}: manager {p['manager']!r} is not domain-prefixed")
            if "time" in p:
                errs.append(f"{name}: runtimePatches[].time is set by the webhook, not by us")
            spec = ((p.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec") or {}
            for rj in spec.get("replicatedJobs") or []:
                if rj["name"] not in rjobs:
                    errs.append(
                        f"{name}: patch names replicated job {rj['name']} not in the runtime"
                    )
                    continue
                pod = ((rj.get("template") or {}).get("spec") or {}).get("template", {}).get(
                    "spec"
                ) or {}
                for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
                    if c["name"] not in _containers(rjobs[rj["name"]]):
                        errs.append(f"{name}: patch container {c['name']} not in {rj['name']}")
                    if c["name"] == "node" and c.get("env"):
                        errs.append(f"{name}: patch sets env on container node")
    return errs


def validate_all(objects: list[dict[str, Any]]) -> list[str]:
    errs = []
    for o in objects:
        errs += [
            f"{o.get('kind')}/{(o.get('metadata') or {}).get('name')}: {e}"
            for e in validate_object(o)
        ]
    return errs + webhook_errors(objects)
