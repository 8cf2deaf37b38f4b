"""``workloadrun-fn inventory``: a compact, deterministic Node inventory for a GitOps repository.

``kubectl get nodes -o yaml`` of a 10,000-node fleet is ~115 MB and changes with every image
pull and heartbeat. The render reads only a few fields of a Node (:mod:`krm_fn.fleet.inventory`);
this module keeps exactly those, so the committed inventory is small and a git diff shows
only real fleet changes.

Invariants:
    * Nodes are read by the function's reader, as the render reads them: only their view
      (:data:`krm_fn.io.nodes.NODE_FIELDS`) is seen here. Kept of it per Node:
      ``metadata.name``; the labels of :class:`LabelPolicy` (sorted); ``spec.providerID``;
      ``spec.unschedulable`` when true; ``spec.taints`` (``key``, ``value``, ``effect``;
      ``timeAdded`` dropped; sorted); the ``Ready`` condition (``type`` and ``status``); the
      extended resources of ``status.allocatable`` (keys with a ``/``: GPUs, NICs, RDMA
      devices; ``hugepages-*`` and the core resources cpu, memory, pods, ephemeral-storage
      dropped).
    * ``gpu.nvidia.com`` ResourceSlices (``kubectl get nodes,resourceslices``: the GPUs of
      DRA-only nodes) are kept as :func:`krm_fn.platforms.node_gpus.slice_view` reads them;
      other drivers' slices are dropped.
    * Every Node and ResourceSlice carries ``config.kubernetes.io/local-config: "true"``: kpt and kustomize-based
      engines use it as an input and never apply it to the cluster.
    * Output: one document per Node, then per ResourceSlice, each sorted by name; the same input (whatever
      its order, form -- List, NodeList or a stream, YAML or JSON -- or volatile fields) gives
      the same bytes. Running it on its own output changes nothing.
    * The render of the compact inventory equals the render of the full one (a property test
      checks it on every golden case and on the bench inventories).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from krm_fn.fleet.inventory import GPU_PRESENT_LABEL, GPU_PRODUCT_LABEL, HOSTNAME_LABEL, NodeInfo
from krm_fn.io.nodes import as_list, as_mapping
from krm_fn.platforms import detect, node_gpus
from krm_fn.platforms.catalog import Catalog, load_catalog

LOCAL_CONFIG = "config.kubernetes.io/local-config"

KEPT_LABEL_KEYS: frozenset[str] = frozenset(
    {
        HOSTNAME_LABEL,
        GPU_PRESENT_LABEL,
        GPU_PRODUCT_LABEL,
        detect.INSTANCE_TYPE_LABEL,
        detect.GKE_ACCELERATOR_LABEL,
        # GPU Feature Discovery: what describes the GPUs (not the operator's deploy.* state)
        "nvidia.com/gpu.count",
        "nvidia.com/gpu.family",
        "nvidia.com/gpu.memory",
        "nvidia.com/gpu.machine",
        "nvidia.com/gpu.clique",
    }
)
"""Labels GPU detection and shape matching read (and GFD's description of the GPUs); the
labels of platform detection and the topology keys come from the platform table."""

KEPT_LABEL_PREFIXES: dict[str, str] = {
    "topology.kubernetes.io/": "region and zone, on every platform",
    "cloud.google.com/gke-accelerator": "GKE's GPU model and count",
}
"""Label families the render reads on every platform, and why (docs/gitops.md lists them)."""


def catalog_label_keys(catalog: Catalog | None = None) -> frozenset[str]:
    """The labels the platform table reads: detection labels and every topology key."""
    table = catalog or load_catalog()
    return frozenset(table.kept_labels() | set(table.topology_keys()))


def target_label_keys(workloadruns: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every label key a WorkloadRun's target names (selectors, expressions, topologyKey)."""
    out: set[str] = set()
    for wr in workloadruns:
        spec = as_mapping(wr.get("spec"))
        target = as_mapping(spec.get("target"))
        out.update(str(k) for k in as_mapping(target.get("nodeSelector")))
        for req in as_list(target.get("matchExpressions")):
            if isinstance(req, Mapping) and req.get("key"):
                out.add(str(req["key"]))
        topo = as_mapping(as_mapping(spec.get("orchestration")).get("topology"))
        if topo.get("topologyKey"):
            out.add(str(topo["topologyKey"]))
    return out


class LabelPolicy:
    """Which labels the compact inventory keeps (see :data:`KEPT_LABEL_KEYS`)."""

    def __init__(self, extra: Iterable[str] = (), catalog: Catalog | None = None) -> None:
        keys = set(KEPT_LABEL_KEYS) | catalog_label_keys(catalog)
        prefixes = list(KEPT_LABEL_PREFIXES)
        for item in extra:
            if item.endswith("*"):
                prefixes.append(item[:-1])
            else:
                keys.add(item)
        self.keys = frozenset(keys)
        self.prefixes = tuple(prefixes)

    def kept(self, key: str) -> bool:
        """Whether the label ``key`` is kept."""
        return key in self.keys or key.startswith(self.prefixes)


def _taint(t: Mapping[str, Any]) -> dict[str, Any]:
    return {k: t[k] for k in ("key", "value", "effect") if t.get(k) not in (None, "")}


def compact_node(node: NodeInfo, policy: LabelPolicy) -> dict[str, Any]:
    """The compact form of one Node, from what the reader read of it (its view)."""
    meta: dict[str, Any] = {"name": node.name}
    kept = {k: v for k, v in node.labels.items() if policy.kept(k)}
    if kept:
        meta["labels"] = dict(sorted(kept.items()))
    meta["annotations"] = {LOCAL_CONFIG: "true"}
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": meta}
    spec: dict[str, Any] = {}
    if node.provider_id:
        spec["providerID"] = node.provider_id
    if node.unschedulable:
        spec["unschedulable"] = True
    taints = sorted((_taint(t) for t in node.taints), key=lambda t: json.dumps(t, sort_keys=True))
    if taints:
        spec["taints"] = taints
    if spec:
        out["spec"] = spec
    status: dict[str, Any] = {}
    view = as_mapping(node.raw.get("status"))
    alloc = view.get("allocatable")
    if isinstance(alloc, Mapping):
        ext = {str(k): str(v) for k, v in alloc.items() if "/" in str(k)}
        if ext:
            status["allocatable"] = dict(sorted(ext.items()))
    for cond in view.get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            status["conditions"] = [{"type": "Ready", "status": str(cond.get("status"))}]
            break
    if status:
        out["status"] = status
    return out


def compact_slice(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The compact form of one ``gpu.nvidia.com`` ResourceSlice (its view, local-config)."""
    out = node_gpus.slice_view(obj)
    out["metadata"]["annotations"] = {LOCAL_CONFIG: "true"}
    return out


def compact(
    sources: Sequence[tuple[bytes, str]], policy: LabelPolicy
) -> tuple[list[dict[str, Any]], list[str]]:
    """The compact inventory of every Node and GPU ResourceSlice in ``sources``; and problems.

    Each source is read by the function's own reader (every form, YAML or JSON; a Node it
    cannot use is refused with its message, raised as a ``ValueError``). Two objects of one
    kind and name but different content are a problem; every problem is reported, and the
    caller writes nothing when there is one.
    """
    from krm_fn.io.resourcelist import parse_input

    problems: list[str] = []
    found: dict[tuple[str, str], dict[str, Any]] = {}

    def keep(kind: str, name: str, c: dict[str, Any], source: str) -> None:
        if found.setdefault((kind, name), c) != c:
            problems.append(f"{source}: {kind} {name} appears twice with different content")

    for text, source in sources:
        fi = parse_input(text, source, documents=False)
        for entry in fi.entries():
            for node in entry.nodes:
                keep("Node", node.name, compact_node(node, policy), source)
            obj = fi.load(entry) if entry.kind == "ResourceSlice" else entry.obj
            for s in node_gpus.gpu_slices([obj] if obj is not None else []):
                keep("ResourceSlice", str(s["metadata"]["name"]), compact_slice(s), source)
    if not any(kind == "Node" for kind, _ in found) and not problems:
        problems.append("no Node in the input (expected kubectl get nodes -o yaml|json)")
    return [found[k] for k in sorted(found, key=lambda k: (k[0] != "Node", k))], problems


def dump(nodes: Sequence[dict[str, Any]]) -> str:
    """The inventory text: a header comment, then one YAML document per Node."""
    from krm_fn.io import yamlio

    head = (
        "# Compact Node inventory written by `workloadrun-fn inventory` (only what the render\n"
        "# reads; regenerate it, do not edit it).\n"
    )
    return head + yamlio.dump_all(nodes)
