"""Strategic-merge keys of the kinds workloadrun-fn patches, DERIVED from the pinned CRDs.

The function cannot read ``../shared/schemas/crds`` when it runs, so it carries the merge keys
as a small committed table (``krm_fn/data/smp_keys.json``) that :func:`derive` builds from:

* the pinned CRDs (TrainJob, TrainingRuntime, ClusterTrainingRuntime; JobSet's replicated jobs
  are embedded in the runtimes): a list's ``x-kubernetes-patch-merge-key`` where the CRD
  carries one, else its ``x-kubernetes-list-map-keys`` when ``x-kubernetes-list-type: map``;
* the Kubernetes OpenAPI for the core types a CRD embeds (the JobSet's
  ``replicatedJobs[].template`` is a ``batch/v1`` ``JobTemplateSpec``, so its pod template is a
  core ``PodSpec``): there ``kubectl patch --type strategic`` merges on the Go struct tag
  ``patchMergeKey`` (published as ``x-kubernetes-patch-merge-key`` with
  ``x-kubernetes-patch-strategy: merge``), which wins over the list-map keys. That is why
  ``ports`` merge on ``containerPort`` alone and ``topologySpreadConstraints`` on
  ``topologyKey`` alone, as kubectl does, although their list-map keys have two fields. The
  core schema is ``kubernetes-validate``'s ``v1.34.0-local/_definitions.json`` (the
  Kubernetes ``api/openapi-spec``), read at test time like the CRDs.

Every other list (``tolerations``, ``args``, ``nodeSelectorTerms``, ...) is atomic: replaced.
``tests/test_mergekeys.py`` regenerates the table and asserts it is identical to the committed
file, and checks the merge against the real ``kubectl patch --local --type strategic``.

Invariants:
    * :func:`derive` is deterministic: the same inputs give byte-identical JSON.
    * ``kinds[kind]`` maps a field path (dotted property names, list positions left out, e.g.
      ``spec.template.spec.replicatedJobs.template.spec.template.spec.hostAliases``) to the
      field names its items merge on; ``status`` is left out (never patched).
    * ``fields`` maps a list's field name to its keys for fragments and kinds outside
      ``kinds`` (a ConfigMap, a patch with no kind): the key the TrainingRuntime gives that
      name, else the TrainJob's (first found in that order, paths sorted).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from krm_fn.api.crdshape import data_path, read_table, storage_schema

__all__ = ["ANCHORS", "CORE_SCHEMA", "KINDS", "TABLE_PATH", "derive", "dumps", "load_table"]

KINDS: Final[Mapping[str, str]] = {
    "TrainingRuntime": "trainer.kubeflow.org_trainingruntimes.yaml",
    "ClusterTrainingRuntime": "trainer.kubeflow.org_clustertrainingruntimes.yaml",
    "TrainJob": "trainer.kubeflow.org_trainjobs.yaml",
}
"""Kinds the table covers, and the pinned CRD each is derived from (in ``fields`` order)."""

ANCHORS: Final[Mapping[str, Mapping[str, str]]] = {
    # JobSet v0.12.0 api/jobset/v1alpha2/jobset_types.go: ReplicatedJob.Template is
    # batchv1.JobTemplateSpec; Trainer v2.3.0 embeds JobSetSpec in TrainingRuntimeSpec.
    kind: {"spec.template.spec.replicatedJobs.template": "io.k8s.api.batch.v1.JobTemplateSpec"}
    for kind in ("TrainingRuntime", "ClusterTrainingRuntime")
}
"""Per kind, field paths where a core Kubernetes type (its OpenAPI definition name) begins.

TrainJob embeds no core type with merge-keyed lists: its ``runtimePatches`` use Trainer's own
patch types (whose ``volumeMounts`` merge on ``name``), taken from the CRD as they are.
"""

CORE_SCHEMA: Final = "v1.34.0-local"
"""The ``kubernetes-validate`` schema directory the core patch-merge keys come from."""

TABLE_PATH: Final = data_path("smp_keys.json")
"""The committed table."""

_REF_MARK: Final = "$defs/"


def dumps(table: Mapping[str, Any]) -> str:
    """The table as committed: indented, sorted JSON with a final newline (reviewable)."""
    return json.dumps(table, sort_keys=True, indent=1) + "\n"


def _core_keys(node: Mapping[str, Any] | None) -> list[str] | None:
    if node is None:
        return None
    strategy = str(node.get("x-kubernetes-patch-strategy", "")).split(",")
    key = node.get("x-kubernetes-patch-merge-key")
    if isinstance(key, str) and "merge" in strategy:
        return [key]
    return None


def derive(crds: Mapping[str, Mapping[str, Any]], core_defs: Mapping[str, Any]) -> dict[str, Any]:
    """The table (``kinds`` and ``fields``, as above) from parsed CRDs and the core ``$defs``."""

    def resolve(node: Any) -> Mapping[str, Any] | None:
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            node = core_defs.get(node["$ref"].rpartition(_REF_MARK)[2])
        return node if isinstance(node, Mapping) else None

    def walk(
        crd: Mapping[str, Any],
        core: Mapping[str, Any] | None,
        path: tuple[str, ...],
        anchors: Mapping[str, str],
        out: dict[str, list[str]],
    ) -> None:
        anchor = anchors.get(".".join(path))
        if anchor is not None:
            core = resolve(core_defs[anchor])
        if crd.get("type") == "array":
            keys = _core_keys(crd) or _core_keys(core)
            map_keys = crd.get("x-kubernetes-list-map-keys")
            if keys is None and crd.get("x-kubernetes-list-type") == "map":
                keys = [str(k) for k in map_keys] if isinstance(map_keys, list) else None
            if keys:
                out[".".join(path)] = keys
            items = crd.get("items")
            if isinstance(items, Mapping):
                walk(items, resolve((core or {}).get("items")), path, anchors, out)
            return
        props = crd.get("properties")
        if isinstance(props, Mapping):
            core_props = (core or {}).get("properties") or {}
            for name, sub in sorted(props.items()):
                if not path and name == "status":
                    continue
                if isinstance(sub, Mapping):
                    walk(sub, resolve(core_props.get(name)), (*path, name), anchors, out)

    kinds: dict[str, dict[str, list[str]]] = {}
    for kind in KINDS:
        table: dict[str, list[str]] = {}
        walk(storage_schema(crds[kind]), None, (), ANCHORS.get(kind, {}), table)
        kinds[kind] = table
    fields: dict[str, list[str]] = {}
    for kind in KINDS:
        for path, keys in sorted(kinds[kind].items()):
            fields.setdefault(path.rsplit(".", 1)[-1], keys)
    return {"kinds": kinds, "fields": fields}


def load_table() -> dict[str, Any]:
    """The committed table (``krm_fn/data/smp_keys.json``)."""
    return read_table(TABLE_PATH)
