"""Detect the platform of a Kubernetes Node, or of a fleet, from the platform table's rules.

One job: map plain Node dicts (as parsed from YAML) to a platform of the table
(:mod:`krm_fn.platforms.catalog`): its ``detect`` rules are read in table order, the first
that matches wins, and the platform without rules is the fallback. No platform name,
providerID prefix or label is written here.

Invariants:
    * :func:`detect_platform` never raises and always returns a platform of the table,
      whatever shape the node dict has (missing or ``None`` fields are treated as absent).
    * :func:`detect_fleet_platform` returns exactly one platform, or ``platform=None`` plus
      an error whose text depends only on the set of (platform, node name) pairs.
    * An empty fleet detects as the default platform.
    * Pure functions of their arguments (the bundled table when none is given).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from krm_fn.fleet.inventory import HOSTNAME_LABEL
from krm_fn.platforms.catalog import Catalog, bundled

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def __getattr__(name: str) -> Any:
    """``PLATFORMS``: the bundled table's platform names, sorted (read on first use)."""
    if name == "PLATFORMS":
        return bundled().platform_names
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Rule = tuple[str | None, str | None, str | None, str]
"""(providerID prefix, label, allocatable resource, platform) of one detection rule."""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def node_label(node: Mapping[str, Any], key: str) -> str:
    """One label of the node as a string (``""`` when absent or null), without copying all."""
    value = _mapping(_mapping(node.get("metadata")).get("labels")).get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def node_name(node: Mapping[str, Any]) -> str:
    """``metadata.name``, or ``"<unnamed>"`` when the node has none."""
    name = _mapping(node.get("metadata")).get("name")
    return str(name) if name else "<unnamed>"


def _provider_id(node: Mapping[str, Any]) -> str:
    provider_id = _mapping(node.get("spec")).get("providerID")
    return provider_id.strip() if isinstance(provider_id, str) else ""


def rules(catalog: Catalog) -> tuple[Rule, ...]:
    """The table's detection rules, in the order they are tried."""
    return tuple(
        (r.provider_id, r.label, r.allocatable, p.name) for p in catalog.platforms for r in p.detect
    )


def _match(node: Mapping[str, Any], table: Sequence[Rule], default: str) -> str:
    """The platform of the first rule every condition of which the node meets."""
    provider_id = _provider_id(node)
    labels: Mapping[str, Any] | None = None
    for prefix, label, allocatable, platform in table:
        if prefix is not None and (
            provider_id if not prefix else not provider_id.startswith(prefix)
        ):
            continue
        if label is not None:
            if labels is None:
                labels = _mapping(_mapping(node.get("metadata")).get("labels"))
            if label not in labels:
                continue
        if allocatable is not None and allocatable not in _mapping(
            _mapping(node.get("status")).get("allocatable")
        ):
            continue
        return platform
    return default


def detect_platform(node: Mapping[str, Any], catalog: Catalog | None = None) -> str:
    """The platform of one node: the first detection rule of the table it meets.

    NVCRE's ``nodePlatform`` (pkg/controller/workflow_detect.go), except that a hostname
    never decides: see :func:`hostname_only`.
    """
    table = catalog or bundled()
    return _match(node, rules(table), table.default_platform.name)


def unrecognised_provider_ids(
    nodes: Iterable[Mapping[str, Any]], catalog: Catalog | None = None
) -> dict[str, list[str]]:
    """Node names per providerID scheme that no detection rule knows (sorted keys and names).

    Such nodes detect as the default platform (NVCRE does the same); the caller warns, so a
    Hetzner or kind node does not silently receive InfiniBand settings.
    """
    known = tuple(r[0] for r in rules(catalog or bundled()) if r[0])
    found: dict[str, list[str]] = {}
    for node in nodes:
        provider_id = _provider_id(node)
        if provider_id and not provider_id.startswith(known):
            head, sep, _ = provider_id.partition("://")  # the scheme: hcloud:// of hcloud://123
            scheme = f"{head}://" if sep else provider_id[:40]
            found.setdefault(scheme, []).append(node_name(node))
    return {k: sorted(found[k]) for k in sorted(found)}


def hostname_only(
    nodes: Iterable[Mapping[str, Any]], catalog: Catalog | None = None
) -> dict[str, tuple[list[str], str, list[str]]]:
    """``{platform: (node names, hint, its labels)}``: nodes NVCRE gives it by hostname only.

    A platform's ``hostnameHint`` (NVCRE: a Forge node is one whose hostname contains
    ``forge``): nodes without a providerID whose hostname contains it, that no rule of that
    platform detects.
    """
    table = catalog or bundled()
    node_list = list(nodes)
    out: dict[str, tuple[list[str], str, list[str]]] = {}
    for p in table.platforms:
        if not p.hostname_hint:
            continue
        own = rules(table.model_copy(update={"platforms": [p]}))
        names = sorted(
            node_name(n)
            for n in node_list
            if not _provider_id(n)
            and p.hostname_hint in node_label(n, HOSTNAME_LABEL)
            and _match(n, own, "") != p.name
        )
        if names:
            out[p.name] = (names, p.hostname_hint, p.detection_labels())
    return out


def shown(names: Sequence[str]) -> str:
    """``a, b, c and 2 more``: at most three names."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def summarize_node_groups(groups: Mapping[str, Sequence[str]], limit: int = 3) -> str:
    """``{key: [node names]}`` as ``"key: 2 nodes (a, b); other: 1 node (c)"``.

    Keys in the mapping's order; names sorted, at most ``limit`` shown per key, then
    ``and N more``.
    """
    parts = []
    for key, names in groups.items():
        ordered = sorted(names)
        shown = ", ".join(ordered[:limit])
        if len(ordered) > limit:
            shown += f", and {len(ordered) - limit} more"
        noun = "node" if len(ordered) == 1 else "nodes"
        parts.append(f"{key}: {len(ordered)} {noun} ({shown})")
    return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class PlatformDetection:
    """The fleet's platform (``None`` when the nodes disagree, ``error`` then says how)."""

    platform: str | None
    nodes_by_platform: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None


def detect_fleet_platform(
    nodes: Iterable[Mapping[str, Any]], catalog: Catalog | None = None
) -> PlatformDetection:
    """The single platform of a set of nodes (the eligible nodes of a WorkloadRun).

    Returns the platform when all nodes agree (the default platform for no nodes), otherwise
    ``platform=None`` and an error such as ``heterogeneous platforms detected: aws: 2 nodes
    (a, b); gcp: 1 node (c); every eligible node must be on the same platform``.
    """
    table = catalog or bundled()
    compiled, default = rules(table), table.default_platform.name
    found: dict[str, list[str]] = {}
    for node in nodes:
        found.setdefault(_match(node, compiled, default), []).append(node_name(node))
    by_platform = {p: tuple(sorted(found[p])) for p in sorted(found)}
    if not by_platform:
        return PlatformDetection(platform=default, nodes_by_platform={})
    if len(by_platform) == 1:
        return PlatformDetection(platform=next(iter(by_platform)), nodes_by_platform=by_platform)
    message = (
        f"heterogeneous platforms detected: {summarize_node_groups(by_platform)}; "
        "every eligible node must be on the same platform"
    )
    return PlatformDetection(platform=None, nodes_by_platform=by_platform, error=message)


def check_platform_name(name: str, catalog: Catalog | None = None) -> str:
    """The canonical (lower-case) platform name a user gave (``--platform``).

    Raises:
        ValueError: ``unknown platform 'x': must be one of aws, azure, ...``.

    """
    names = (catalog or bundled()).platform_names
    canonical = name.strip().lower()
    if canonical not in names:
        raise ValueError(f"unknown platform {name!r}: must be one of {', '.join(names)}")
    return canonical


def distinct_label_values(nodes: Iterable[Mapping[str, Any]], key: str) -> frozenset[str]:
    """The distinct non-empty values of one label (``node.kubernetes.io/instance-type`` ...)."""
    values = (node_label(node, key) for node in nodes)
    return frozenset(v for v in values if v)
