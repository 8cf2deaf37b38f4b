"""The platform options of a run: forced names checked, and the offline preview's nodes.

Invariants:
    * The table is the bundled one with the ``platformCatalog`` files (``load_catalog``);
      the ``platform``/``gpuArch`` options name one of its platforms and GPU models.
    * Offline preview: without Nodes and with a forced platform or GPU, ``numNodes``
      synthetic nodes from the table (detection written backwards) stand in.
"""

from __future__ import annotations

from typing import Any

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import (
    GPU_PRESENT_LABEL,
    GPU_PRODUCT_LABEL,
    HOSTNAME_LABEL,
    NodeInfo,
    node_info,
)
from krm_fn.platforms import detect as pdetect
from krm_fn.platforms import gpu as pgpu
from krm_fn.platforms.catalog import Catalog, CatalogError, load_catalog

SYNTHETIC_PREFIX = "synthetic-node-"


def forced_platform(options: FunctionOptions) -> str | None:
    """The ``platform`` option, canonical (checked by :func:`check_forced_names` before)."""
    return options.platform.strip().lower() if options.platform else None


def target_gpu_product(target: models.Target | None) -> str | None:
    """The GPU product a target names (nodeSelector, else an ``In`` expression), as NVCRE."""
    product = target.node_selector.get(GPU_PRODUCT_LABEL) if target else None
    for r in target.match_expressions if target and not product else []:
        if r.key == GPU_PRODUCT_LABEL and r.operator == "In" and r.values:
            return r.values[0]
    return product or None


def _target_labels(target: models.Target | None) -> dict[str, str]:
    """Labels a node needs to satisfy the target's nodeSelector and expressions."""
    labels = dict(target.node_selector) if target else {}
    for r in target.match_expressions if target else []:
        if r.key in labels:
            continue
        if r.operator == "In" and r.values:
            labels[r.key] = r.values[0]
        elif r.operator == "Exists":
            labels[r.key] = "synthetic"
        elif r.operator in ("Gt", "Lt") and r.values and r.values[0].lstrip("-").isdigit():
            labels[r.key] = str(int(r.values[0]) + (1 if r.operator == "Gt" else -1))
    return labels


def synthetic_nodes(
    count: int,
    platform: str | None,
    arch: str | None,
    target: models.Target | None = None,
    catalog: Catalog | None = None,
) -> list[NodeInfo]:
    """Stand-in nodes for an offline preview (``render --platform X [--gpu-arch Y]``).

    The platform's first detection rule written backwards (providerID prefix, label,
    allocatable resource); the table's GFD product of ``arch``, else the target's (as NVCRE);
    the target's nodeSelector, ``In``/``Exists``/``Gt``/``Lt`` expressions, taintSelectors
    (as taints) and nodeNames (as names); every topology label of the table with one value,
    so any topology key partitions them as one domain.
    """
    table = catalog or load_catalog()
    names = list(target.node_names) if target and target.node_names else []
    gpu = table.gpu(arch) if arch else None
    product = (gpu.product if gpu else arch) if arch else target_gpu_product(target)
    own = table.platform(platform) if platform else None
    rule = own.detect[0] if own and own.detect else None
    labels = {key: "synthetic-domain-0" for key in table.topology_keys()}
    labels |= {GPU_PRESENT_LABEL: "true", **_target_labels(target)}
    labels |= {GPU_PRODUCT_LABEL: product} if product else {}
    labels |= {rule.label: "synthetic"} if rule and rule.label else {}
    taints = [
        {
            "key": t.key,
            **({"value": t.value} if t.value else {}),
            "effect": t.effect or "NoSchedule",
        }
        for t in (target.taint_selectors if target else [])
    ]
    nodes = []
    for i, name in enumerate(names or [f"{SYNTHETIC_PREFIX}{i}" for i in range(count)]):
        spec: dict[str, Any] = {"taints": taints} if taints else {}
        if rule and rule.provider_id:
            spec["providerID"] = f"{rule.provider_id}synthetic/{i}"
        obj: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME_LABEL: name, **labels}},
            "spec": spec,
        }
        if rule and rule.allocatable:
            obj["status"] = {"allocatable": {rule.allocatable: "1"}}
        nodes.append(node_info(obj))
    return nodes


def check_forced_names(options: FunctionOptions) -> list[tuple[str, str]]:
    """An invalid ``platformCatalog`` (each problem), unknown ``platform``/``gpuArch`` values."""
    try:
        table = load_catalog(options.platform_catalog)
    except CatalogError as exc:
        return [("platformCatalog", f"{exc.origin}: {p}") for p in exc.problems]
    out = []
    if options.platform:
        try:
            pdetect.check_platform_name(options.platform, table)
        except ValueError as exc:
            out.append(("platform", str(exc)))
    if options.gpu_arch:
        try:
            pgpu.check_gpu_arch_name(options.gpu_arch)
        except ValueError as exc:
            out.append(("gpuArch", str(exc)))
    return out
