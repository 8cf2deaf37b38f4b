"""``workloadrun-fn inventory``: a compact, deterministic Node inventory for a GitOps repository.

``kubectl get nodes -o yaml`` of a 10,000-node fleet is ~115 MB and changes with every image
pull and heartbeat. The render reads only a few fields of a Node (:mod:`krm_fn.fleet.inventory`);
this module keeps exactly those, so the committed inventory is small and a git diff shows
only real fleet changes.

Invariants:
    * Kept per Node: ``metadata.name``; the labels of :func:`label_kept` (sorted);
      ``spec.providerID``; ``spec.unschedulable`` when true; ``spec.taints`` (``key``,
      ``value``, ``effect``; ``timeAdded`` dropped; sorted); the ``Ready`` condition
      (``type`` and ``status`` only); the extended resources of ``status.allocatable``
      (keys with a ``/``: GPUs, NICs, RDMA devices; ``hugepages-*`` and the core resources
      cpu, memory, pods, ephemeral-storage dropped).
    * Every Node carries ``config.kubernetes.io/local-config: "true"``: kpt and kustomize-based
      engines use it as an input and never apply it to the cluster.
    * Output: one ``v1`` ``Node`` document per node, sorted by name; the same input (whatever
      its order, form -- List, NodeList or a stream, YAML or JSON -- or volatile fields) gives
      the same bytes. Running it on its own output changes nothing.
    * The render of the compact inventory equals the render of the full one (a property test
      checks it on every golden case and on the bench inventories).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from krm_fn.fleet.inventory import GPU_PRESENT_LABEL, GPU_PRODUCT_LABEL, HOSTNAME_LABEL
from krm_fn.platforms import detect
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

KEPT_LABEL_PREFIXES: tuple[str, ...] = (
    "topology.kubernetes.io/",  # region, zone
    "cloud.google.com/gke-accelerator",  # GKE accelerator and its count
)
"""Label families the render reads on every platform (zone, GPU description)."""

CORE_RESOURCES = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})


def catalog_label_keys(catalog: Catalog | None = None) -> frozenset[str]:
    """The labels the platform table reads: detection labels and every topology key."""
    table = catalog or load_catalog()
    return frozenset(table.kept_labels() | set(table.topology_keys()))


def target_label_keys(workloadruns: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every label key a WorkloadRun's target names (selectors, expressions, topologyKey)."""
    out: set[str] = set()
    for wr in workloadruns:
        spec = wr.get("spec") if isinstance(wr.get("spec"), Mapping) else {}
        target = spec.get("target") if isinstance(spec, Mapping) else None
        if isinstance(target, Mapping):
            sel = target.get("nodeSelector")
            if isinstance(sel, Mapping):
                out.update(str(k) for k in sel)
            for req in target.get("matchExpressions") or []:
                if isinstance(req, Mapping) and req.get("key"):
                    out.add(str(req["key"]))
        orch = spec.get("orchestration") if isinstance(spec, Mapping) else None
        topo = orch.get("topology") if isinstance(orch, Mapping) else None
        if isinstance(topo, Mapping) and topo.get("topologyKey"):
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
    out = {k: t[k] for k in ("key", "value", "effect") if t.get(k) not in (None, "")}
    return out


def compact_node(node: Mapping[str, Any], policy: LabelPolicy) -> dict[str, Any]:
    """The compact form of one Node (see the module invariants)."""
    meta = node.get("metadata") if isinstance(node.get("metadata"), Mapping) else {}
    spec = node.get("spec") if isinstance(node.get("spec"), Mapping) else {}
    status = node.get("status") if isinstance(node.get("status"), Mapping) else {}
    assert isinstance(meta, Mapping) and isinstance(spec, Mapping) and isinstance(status, Mapping)
    labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
    assert isinstance(labels, Mapping)
    out_meta: dict[str, Any] = {"name": str(meta.get("name", ""))}
    kept = {str(k): str(v) for k, v in labels.items() if policy.kept(str(k))}
    if kept:
        out_meta["labels"] = dict(sorted(kept.items()))
    out_meta["annotations"] = {LOCAL_CONFIG: "true"}
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": out_meta}
    out_spec: dict[str, Any] = {}
    if spec.get("providerID"):
        out_spec["providerID"] = str(spec["providerID"])
    if spec.get("unschedulable"):
        out_spec["unschedulable"] = True
    taints = [_taint(t) for t in spec.get("taints") or [] if isinstance(t, Mapping)]
    if taints:
        out_spec["taints"] = sorted(taints, key=lambda t: json.dumps(t, sort_keys=True))
    if out_spec:
        out["spec"] = out_spec
    out_status: dict[str, Any] = {}
    alloc = status.get("allocatable")
    if isinstance(alloc, Mapping):
        ext = {
            str(k): str(v)
            for k, v in alloc.items()
            if "/" in str(k) and str(k) not in CORE_RESOURCES
        }
        if ext:
            out_status["allocatable"] = dict(sorted(ext.items()))
    for cond in status.get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            out_status["conditions"] = [{"type": "Ready", "status": str(cond.get("status"))}]
            break
    if out_status:
        out["status"] = out_status
    return out


def nodes_of(docs: Iterable[Any]) -> list[Mapping[str, Any]]:
    """Every Node in the documents: single Nodes, ``v1`` ``List``/``NodeList`` items."""
    out: list[Mapping[str, Any]] = []
    for doc in docs:
        if not isinstance(doc, Mapping):
            continue
        if doc.get("kind") == "Node":
            out.append(doc)
        elif doc.get("kind") in ("List", "NodeList"):
            out.extend(
                i
                for i in doc.get("items") or []
                if isinstance(i, Mapping) and i.get("kind", "Node") == "Node"
            )
    return out


def parse(text: bytes, source: str) -> list[Any]:
    """Documents of ``kubectl get nodes -o json`` or ``-o yaml`` (a List or a stream).

    Raises:
        ValueError: Malformed input, naming ``source``.

    """
    import yaml

    stripped = text.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{source}: malformed JSON: {exc}") from None
        return doc if isinstance(doc, list) else [doc]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return list(yaml.load_all(text, Loader=loader))
    except yaml.YAMLError as exc:
        raise ValueError(f"{source}: malformed YAML: {exc}") from None


def compact(
    sources: Sequence[tuple[bytes, str]], policy: LabelPolicy
) -> tuple[list[dict[str, Any]], list[str]]:
    """The compact inventory of every Node in ``sources``; and the problems found.

    Problems (a Node without a name, two Nodes with one name but different content) are all
    reported; the caller writes nothing when there is one.
    """
    problems: list[str] = []
    by_name: dict[str, dict[str, Any]] = {}
    for text, source in sources:
        for i, node in enumerate(nodes_of(parse(text, source))):
            c = compact_node(node, policy)
            name = c["metadata"]["name"]
            if not name:
                problems.append(f"{source}: Node #{i} has no metadata.name")
                continue
            if name in by_name and by_name[name] != c:
                problems.append(f"{source}: Node {name} appears twice with different content")
            by_name.setdefault(name, c)
    if not by_name and not problems:
        problems.append("no Node in the input (expected kubectl get nodes -o yaml|json)")
    return [by_name[n] for n in sorted(by_name)], problems


def dump(nodes: Sequence[dict[str, Any]]) -> str:
    """The inventory text: a header comment, then one YAML document per Node."""
    from krm_fn.io import yamlio

    head = (
        "# Compact Node inventory written by `workloadrun-fn inventory` (only what the render\n"
        "# reads; regenerate it, do not edit it).\n"
    )
    return head + yamlio.dump_all(nodes)
