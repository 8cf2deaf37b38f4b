"""Detect the platform of a Kubernetes Node, or of a fleet, from the platform table's rules.

One job: map plain Node dicts (as parsed from YAML) to a platform of the table
(:mod:`krm_fn.platforms.catalog`): its ``detect`` rules are read in table order, the first
that matches wins, and the platform without rules is the fallback. No platform name,
providerID prefix or label is written here.

Invariants:
    * Never raises, whatever shape a node dict has (missing or ``None`` fields are absent).
    * :func:`detect_fleet_platform` returns exactly one platform of the table (NVCRE's
      ``nodePlatform``, pkg/controller/workflow_detect.go, per node, except that a hostname
      never decides: :func:`hostname_only`), or ``platform=None`` plus an error whose text
      depends only on the set of (platform, node name) pairs.
    * An empty fleet detects as the default platform.
    * Pure functions of their arguments (the bundled table when none is given).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn.fleet.inventory import HOSTNAME_LABEL
from krm_fn.io.nodes import as_mapping
from krm_fn.io.results import some
from krm_fn.platforms.catalog import Catalog, Platform, bundled

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def __getattr__(name: str) -> Any:
    """``PLATFORMS``: the bundled table's platform names, sorted (read on first use)."""
    if name == "PLATFORMS":
        return bundled().platform_names
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def node_label(node: Mapping[str, Any], key: str) -> str:
    """One label of the node as a string (``""`` when absent or null), without copying all."""
    value = as_mapping(as_mapping(node.get("metadata")).get("labels")).get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def node_name(node: Mapping[str, Any]) -> str:
    """``metadata.name``, or ``"<unnamed>"`` when the node has none."""
    name = as_mapping(node.get("metadata")).get("name")
    return str(name) if name else "<unnamed>"


def _provider_id(node: Mapping[str, Any]) -> str:
    provider_id = as_mapping(node.get("spec")).get("providerID")
    return provider_id.strip() if isinstance(provider_id, str) else ""


Rule = tuple[str | None, str | None, str | None, str]
"""(providerID prefix, label, allocatable resource, platform) of one detection rule."""


def _rules(platforms: Iterable[Platform]) -> list[Rule]:
    """The detection rules of ``platforms``, in the order they are tried."""
    return [(r.provider_id, r.label, r.allocatable, p.name) for p in platforms for r in p.detect]


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
                labels = as_mapping(as_mapping(node.get("metadata")).get("labels"))
            if label not in labels:
                continue
        if allocatable is not None and allocatable not in as_mapping(
            as_mapping(node.get("status")).get("allocatable")
        ):
            continue
        return platform
    return default


def unrecognised_provider_ids(
    nodes: Iterable[Mapping[str, Any]], catalog: Catalog | None = None
) -> dict[str, list[str]]:
    """Node names per providerID scheme that no detection rule knows (sorted keys and names).

    Such nodes detect as the default platform (NVCRE does the same); the caller warns, so a
    Hetzner or kind node does not silently receive InfiniBand settings.
    """
    known = tuple(r[0] for r in _rules((catalog or bundled()).platforms) if r[0])
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
        own = _rules([p])
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


def summarize_node_groups(groups: Mapping[str, Sequence[str]]) -> str:
    """``{key: [node names]}`` as ``"key: 2 nodes (a, b); other: 1 node (c)"`` (names sorted)."""
    return "; ".join(
        f"{key}: {len(names)} node{'' if len(names) == 1 else 's'} ({some(sorted(names))})"
        for key, names in groups.items()
    )


@dataclass(frozen=True, slots=True)
class PlatformDetection:
    """The fleet's platform (``None`` when the nodes disagree, ``error`` then says how)."""

    platform: str | None
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
    compiled, default = _rules(table.platforms), table.default_platform.name
    found: dict[str, list[str]] = {}
    for node in nodes:
        found.setdefault(_match(node, compiled, default), []).append(node_name(node))
    if len(found) <= 1:
        return PlatformDetection(next(iter(found), default))
    by_platform = {p: found[p] for p in sorted(found)}
    return PlatformDetection(
        None,
        f"heterogeneous platforms detected: {summarize_node_groups(by_platform)}; "
        "every eligible node must be on the same platform",
    )


def check_platform_name(name: str, catalog: Catalog | None = None) -> str:
    """The canonical (lower-case) platform name a user gave (``--platform``), or ValueError."""
    names = (catalog or bundled()).platform_names
    canonical = name.strip().lower()
    if canonical not in names:
        raise ValueError(f"unknown platform {name!r}: must be one of {', '.join(names)}")
    return canonical


def distinct_label_values(nodes: Iterable[Mapping[str, Any]], key: str) -> frozenset[str]:
    """The distinct non-empty values of one label (``node.kubernetes.io/instance-type`` ...)."""
    values = (node_label(node, key) for node in nodes)
    return frozenset(v for v in values if v)
