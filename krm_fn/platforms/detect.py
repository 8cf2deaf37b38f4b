"""Detect the cloud/platform a Kubernetes Node runs on, for one node or a whole fleet.

One job: map plain Node dicts (as parsed from YAML) to one of the platform names in
:data:`PLATFORMS`. Everything here is a pure function of its arguments; no I/O, no
globals mutated, stdlib only (cheap to import).

Invariants:
    * :func:`detect_platform` never raises and always returns a member of
      :data:`PLATFORMS`, whatever shape the node dict has (missing or ``None``
      fields are treated as absent).
    * :func:`detect_fleet_platform` returns exactly one platform, or ``platform=None``
      plus an error message whose text depends only on the set of (platform, node
      name) pairs, never on input order.
    * An empty fleet detects as ``onprem`` (the default platform).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "COREWEAVE_LABELS",
    "FORGE_SITE_LABEL",
    "GKE_ACCELERATOR_LABEL",
    "HOSTNAME_LABEL",
    "INSTANCE_TYPE_LABEL",
    "KNOWN_PROVIDER_PREFIXES",
    "NSCALE_RDMA_RESOURCE",
    "PLATFORMS",
    "TOGETHERAI_WORKER_LABEL",
    "PlatformDetection",
    "check_platform_name",
    "detect_fleet_platform",
    "detect_platform",
    "forge_by_hostname_only",
    "node_gke_accelerators",
    "node_instance_types",
    "node_label",
    "node_name",
    "provider_scheme",
    "summarize_node_groups",
    "unrecognised_provider_ids",
]

PLATFORMS: tuple[str, ...] = (
    "aws",
    "azure",
    "coreweave",
    "forge",
    "gcp",
    "mistral",
    "nscale",
    "oci",
    "onprem",
    "togetherai",
)
"""Every platform name detection can return (and ``--platform`` accepts), sorted."""

DEFAULT_PLATFORM = "onprem"

HOSTNAME_LABEL = "kubernetes.io/hostname"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
FORGE_SITE_LABEL = "nke.nvidia.com/site-name"
TOGETHERAI_WORKER_LABEL = "node-role.together.ai/worker"
NSCALE_RDMA_RESOURCE = "nscale.com/rdmashare"
COREWEAVE_LABELS: tuple[str, ...] = ("node.coreweave.cloud/type", "ds.coreweave.com/nvlink.domain")
"""Node labels that identify CoreWeave (its providerID format is not documented)."""

# providerID prefixes that identify a platform on their own, checked in order.
_CLOUD_PREFIXES: tuple[tuple[str, str], ...] = (
    ("aws://", "aws"),
    ("gce://", "gcp"),
    ("azure://", "azure"),
    ("ocid1.", "oci"),
    ("oci://", "oci"),
)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def node_label(node: Mapping[str, Any], key: str) -> str:
    """Return one label of the node as a string (``""`` when absent or null).

    One lookup, not a copy of all (often a hundred) labels: at 10,000 Nodes such copies
    were most of the detection time.

    Args:
        node: A Node object as a plain dict.
        key: The label key.

    Returns:
        The value, converted with ``str`` when it is not a string.

    """
    value = _mapping(_mapping(node.get("metadata")).get("labels")).get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def node_name(node: Mapping[str, Any]) -> str:
    """Return ``metadata.name``, or ``"<unnamed>"`` when the node has none.

    Args:
        node: A Node object as a plain dict.

    Returns:
        The node name.

    """
    name = _mapping(node.get("metadata")).get("name")
    return str(name) if name else "<unnamed>"


def detect_platform(node: Mapping[str, Any]) -> str:
    """Detect the platform of one node.

    Rules, first match wins (NVCRE ``nodePlatform``, pkg/controller/workflow_detect.go,
    except rule 6):

    1. ``spec.providerID`` starting with ``aws://`` → aws, ``gce://`` → gcp,
       ``azure://`` → azure, ``ocid1.`` or ``oci://`` → oci.
    2. A CoreWeave label (:data:`COREWEAVE_LABELS`) or a ``coreweave://`` providerID →
       coreweave.
    3. ``nscale://`` → nscale; ``openstack://`` → nscale if ``status.allocatable`` has
       ``nscale.com/rdmashare``, else onprem.
    4. ``kubevirt://`` → togetherai if the node has label
       ``node-role.together.ai/worker``, else onprem.
    5. ``metal3://`` → mistral.
    6. Empty providerID → forge if label ``nke.nvidia.com/site-name`` exists, else onprem.
       A hostname never decides: NVCRE also calls a node forge when its hostname contains
       ``forge``; here such a node stays onprem and :func:`forge_by_hostname_only` names it
       for a warning.
    7. Anything else → onprem (:func:`unrecognised_provider_ids` names it for a warning).

    Args:
        node: A Node object as a plain dict.

    Returns:
        A member of :data:`PLATFORMS`.

    """
    provider_id = _provider_id(node)
    labels = _mapping(_mapping(node.get("metadata")).get("labels"))

    for prefix, platform in _CLOUD_PREFIXES:
        if provider_id.startswith(prefix):
            return platform
    if provider_id.startswith("coreweave://") or any(k in labels for k in COREWEAVE_LABELS):
        return "coreweave"
    if provider_id.startswith("nscale://"):
        return "nscale"
    if provider_id.startswith("openstack://"):
        allocatable = _mapping(_mapping(node.get("status")).get("allocatable"))
        return "nscale" if NSCALE_RDMA_RESOURCE in allocatable else DEFAULT_PLATFORM
    if provider_id.startswith("kubevirt://"):
        return "togetherai" if TOGETHERAI_WORKER_LABEL in labels else DEFAULT_PLATFORM
    if provider_id.startswith("metal3://"):
        return "mistral"
    if not provider_id and FORGE_SITE_LABEL in labels:
        return "forge"
    return DEFAULT_PLATFORM


def _provider_id(node: Mapping[str, Any]) -> str:
    provider_id = _mapping(node.get("spec")).get("providerID")
    return provider_id.strip() if isinstance(provider_id, str) else ""


KNOWN_PROVIDER_PREFIXES: tuple[str, ...] = (
    *(prefix for prefix, _ in _CLOUD_PREFIXES),
    "coreweave://",
    "nscale://",
    "openstack://",
    "kubevirt://",
    "metal3://",
)
"""providerID prefixes :func:`detect_platform` reads; any other non-empty one is unrecognised."""


def provider_scheme(provider_id: str) -> str:
    """The part of a providerID that names the provider: ``hcloud://`` for ``hcloud://123``."""
    head, sep, _ = provider_id.partition("://")
    return f"{head}://" if sep else provider_id[:40]


def unrecognised_provider_ids(nodes: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Node names per providerID scheme that no detection rule knows (sorted keys and names).

    Such nodes detect as onprem (NVCRE does the same); the caller warns, naming the scheme
    and the settings onprem brings, so a Hetzner or kind node does not silently receive
    InfiniBand settings.

    Args:
        nodes: Node objects as plain dicts.

    Returns:
        ``{scheme: [node names]}``, empty when every providerID is recognised or empty.

    """
    found: dict[str, list[str]] = {}
    for node in nodes:
        provider_id = _provider_id(node)
        if provider_id and not provider_id.startswith(KNOWN_PROVIDER_PREFIXES):
            found.setdefault(provider_scheme(provider_id), []).append(node_name(node))
    return {k: sorted(found[k]) for k in sorted(found)}


def forge_by_hostname_only(nodes: Iterable[Mapping[str, Any]]) -> list[str]:
    """Nodes NVCRE would call forge only because their hostname contains ``forge``.

    They have no providerID and no ``nke.nvidia.com/site-name`` label; this function detects
    them as onprem, and the caller warns so the difference from NVCRE is visible.

    Args:
        nodes: Node objects as plain dicts.

    Returns:
        Their names, sorted.

    """
    return sorted(
        node_name(node)
        for node in nodes
        if not _provider_id(node)
        and "forge" in node_label(node, HOSTNAME_LABEL)
        and FORGE_SITE_LABEL not in _mapping(_mapping(node.get("metadata")).get("labels"))
    )


def summarize_node_groups(groups: Mapping[str, Sequence[str]], limit: int = 3) -> str:
    """Format ``{key: [node names]}`` as ``"key: 2 nodes (a, b); other: 1 node (c)"``.

    Keys are listed in the mapping's order; names are sorted and at most ``limit``
    are shown per key, followed by ``and N more``.

    Args:
        groups: Node names per key (platform or GPU architecture).
        limit: Maximum number of names shown per key.

    Returns:
        The one-line summary.

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
    """Result of :func:`detect_fleet_platform`.

    Attributes:
        platform: The fleet's platform, or ``None`` when the nodes disagree.
        nodes_by_platform: Sorted node names per detected platform, platforms sorted.
        error: ``None`` on success, else a message naming every platform seen and up
            to 3 node names for each.

    """

    platform: str | None
    nodes_by_platform: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether exactly one platform was detected."""
        return self.error is None


def detect_fleet_platform(nodes: Iterable[Mapping[str, Any]]) -> PlatformDetection:
    """Detect the single platform of a set of nodes.

    Args:
        nodes: Node objects as plain dicts (the eligible nodes of a WorkloadRun).

    Returns:
        The platform when all nodes agree (``onprem`` for no nodes), otherwise
        ``platform=None`` and an error such as ``heterogeneous platforms detected:
        aws: 2 nodes (a, b); gcp: 1 node (c); every eligible node must be on the same
        platform``.

    """
    found: dict[str, list[str]] = {}
    for node in nodes:
        found.setdefault(detect_platform(node), []).append(node_name(node))
    by_platform = {p: tuple(sorted(found[p])) for p in sorted(found)}
    if not by_platform:
        return PlatformDetection(platform=DEFAULT_PLATFORM, nodes_by_platform={})
    if len(by_platform) == 1:
        return PlatformDetection(platform=next(iter(by_platform)), nodes_by_platform=by_platform)
    message = (
        f"heterogeneous platforms detected: {summarize_node_groups(by_platform)}; "
        "every eligible node must be on the same platform"
    )
    return PlatformDetection(platform=None, nodes_by_platform=by_platform, error=message)


def check_platform_name(name: str) -> str:
    """Validate a platform name given by a user (``--platform``).

    Args:
        name: The requested platform; surrounding blanks and case are ignored.

    Returns:
        The canonical (lower-case) platform name.

    Raises:
        ValueError: ``unknown platform 'x': must be one of aws, azure, ...``.

    """
    canonical = name.strip().lower()
    if canonical not in PLATFORMS:
        raise ValueError(f"unknown platform {name!r}: must be one of {', '.join(PLATFORMS)}")
    return canonical


def _distinct_label_values(nodes: Iterable[Mapping[str, Any]], key: str) -> frozenset[str]:
    values = (node_label(node, key) for node in nodes)
    return frozenset(v for v in values if v)


def node_instance_types(nodes: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Return the distinct non-empty ``node.kubernetes.io/instance-type`` values.

    Args:
        nodes: Node objects as plain dicts.

    Returns:
        The set of instance types (empty when no node carries the label).

    """
    return _distinct_label_values(nodes, INSTANCE_TYPE_LABEL)


def node_gke_accelerators(nodes: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Return the distinct non-empty ``cloud.google.com/gke-accelerator`` values.

    Args:
        nodes: Node objects as plain dicts.

    Returns:
        The set of GKE accelerator names (empty when no node carries the label).

    """
    return _distinct_label_values(nodes, GKE_ACCELERATOR_LABEL)
