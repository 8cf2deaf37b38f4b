"""Normalise NVIDIA GPU product names, vote a fleet's GPU architecture, give per-arch defaults.

One job: turn ``nvidia.com/gpu.product`` label values (GPU Feature Discovery) into one
architecture name and the node defaults that go with it. Pure functions, stdlib only.

Invariants:
    * :func:`parse_gpu_product` never raises and always returns a member of
      :data:`GPU_ARCHITECTURES` or ``"unknown"``; it is idempotent
      (``parse(parse(x)) == parse(x)``).
    * :func:`detect_gpu_architecture` is independent of node order: nodes are sorted
      by name before voting, so the tie-break ("first node by name") is stable.
    * :func:`gpu_defaults` returns a value for every input; unknown architectures get
      the fallback ``(4 GPUs, 0 NICs, no MNNVL)``. Platform overrides have pointer
      semantics: an explicit 0 is a value, a missing field keeps the arch default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from krm_fn.platforms.detect import node_label, node_name, summarize_node_groups
from krm_fn.records import field, record

__all__ = [
    "GPU_ARCHITECTURES",
    "GPU_PRODUCT_LABEL",
    "MNNVL_ARCHITECTURES",
    "UNKNOWN_ARCH",
    "GpuDefaults",
    "GpuDetection",
    "check_gpu_arch_name",
    "detect_gpu_architecture",
    "gpu_defaults",
    "parse_gpu_product",
]

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
UNKNOWN_ARCH = "unknown"

GPU_ARCHITECTURES: tuple[str, ...] = (
    "a100",
    "b200",
    "b300",
    "gb200",
    "gb300",
    "h100",
    "h200",
    "l40",
    "l40s",
    "rtxpro6000",
)
"""Architectures with GPU defaults (the valid ``--gpu-arch`` names), sorted."""

MNNVL_ARCHITECTURES: frozenset[str] = frozenset({"gb200", "gb300"})
"""Grace-Blackwell NVL systems: multi-node NVLink (MNNVL) on by default."""


@record(frozen=True)
class GpuDefaults:
    """Per-node defaults for one GPU architecture on one platform.

    Attributes:
        gpus_per_node: GPUs (ranks) per node.
        nics_per_node: RDMA NICs per node (NVCRE ``mlnxPerNode``); 0 means none.
        mnnvl: Whether multi-node NVLink is enabled by default.

    """

    gpus_per_node: int
    nics_per_node: int
    mnnvl: bool


# (gpusPerNode, nicsPerNode) per architecture (NVCRE gpu-defaults table).
_ARCH_DEFAULTS: Mapping[str, tuple[int, int]] = {
    "a100": (8, 8),
    "b200": (8, 8),
    "b300": (8, 8),
    "gb200": (4, 8),
    "gb300": (4, 8),
    "h100": (8, 8),
    "h200": (8, 8),
    "l40": (8, 4),
    "l40s": (8, 8),
    "rtxpro6000": (8, 0),
}
_FALLBACK_DEFAULTS = (4, 0)

# (platform, arch) -> (gpusPerNode | None, nicsPerNode | None); None = keep the arch default.
_PLATFORM_OVERRIDES: Mapping[tuple[str, str], tuple[int | None, int | None]] = {
    ("oci", "l40s"): (4, 2),
    ("oci", "gb200"): (4, 0),
    ("oci", "gb300"): (4, 4),
    ("nscale", "gb300"): (None, 4),
}

_VENDOR_PREFIX = "NVIDIA-"
_RTX_PRO_6000 = ("RTX-PRO-6000", "RTXPRO-6000", "RTXPRO6000")


def _strip_mig(text: str) -> str:
    """Cut a MIG suffix: the first ``-MIG`` that ends the text or is followed by ``-``."""
    start = text.find("-MIG")
    while start >= 0:
        end = start + len("-MIG")
        if end == len(text) or text[end] == "-":
            return text[:start]
        start = text.find("-MIG", start + 1)
    return text


def parse_gpu_product(product: str) -> str:
    """Return the architecture of a GPU product name.

    Accepts GFD ``nvidia.com/gpu.product`` values (``NVIDIA-H100-80GB-HBM3``), their
    MIG (``…-MIG-1g.10gb``) and sharing (``…-SHARED``) forms, CUDA device names with
    spaces (``NVIDIA GB300``), any letter case, and bare architecture names (``gb300``).

    Args:
        product: The product string.

    Returns:
        A member of :data:`GPU_ARCHITECTURES`, or ``"unknown"``.

    """
    if not isinstance(product, str):
        return UNKNOWN_ARCH
    # Runs of blanks, "_" and "-" become one "-"; no leading or trailing "-" (string
    # methods rather than regular expressions: compiling those cost more than a parse).
    words = "-".join(product.strip().upper().replace("_", " ").split())
    text = "-".join(part for part in words.split("-") if part)
    if text.startswith(_VENDOR_PREFIX):
        text = text[len(_VENDOR_PREFIX) :]
    if text.endswith("-SHARED"):
        text = text[: -len("-SHARED")]
    text = _strip_mig(text)
    if text.startswith(_RTX_PRO_6000):
        return "rtxpro6000"
    arch = text.split("-", 1)[0].lower()
    return arch if arch in _ARCH_DEFAULTS else UNKNOWN_ARCH


def check_gpu_arch_name(name: str) -> str:
    """Validate a GPU architecture given by a user (``--gpu-arch``).

    Product names are accepted and normalised (``NVIDIA-GB300`` → ``gb300``).

    Args:
        name: The requested architecture or product name.

    Returns:
        The architecture name.

    Raises:
        ValueError: ``unknown GPU architecture 'x': must be one of a100, b200, ...``.

    """
    arch = parse_gpu_product(name)
    if arch == UNKNOWN_ARCH:
        raise ValueError(
            f"unknown GPU architecture {name!r}: must be one of {', '.join(GPU_ARCHITECTURES)}"
        )
    return arch


def gpu_defaults(arch: str, platform: str = "") -> GpuDefaults:
    """Return the node defaults for an architecture, with platform overrides applied.

    Args:
        arch: Architecture or product name (normalised with :func:`parse_gpu_product`).
        platform: Platform name; empty skips the platform overrides.

    Returns:
        The defaults; unknown architectures get 4 GPUs, 0 NICs, no MNNVL.

    """
    name = parse_gpu_product(arch)
    gpus, nics = _ARCH_DEFAULTS.get(name, _FALLBACK_DEFAULTS)
    if platform:
        gpu_override, nic_override = _PLATFORM_OVERRIDES.get((platform, name), (None, None))
        gpus = gpus if gpu_override is None else gpu_override
        nics = nics if nic_override is None else nic_override
    return GpuDefaults(gpus_per_node=gpus, nics_per_node=nics, mnnvl=name in MNNVL_ARCHITECTURES)


@record(frozen=True)
class GpuDetection:
    """Result of :func:`detect_gpu_architecture`.

    Attributes:
        architecture: The voted architecture; ``"unknown"`` when no node is labelled
            (or the labelled majority is an unrecognised product).
        products: Distinct raw ``nvidia.com/gpu.product`` values, sorted.
        votes: Number of labelled nodes per architecture, most votes first.
        minority_nodes: Sorted names of labelled nodes whose architecture lost the vote.
        unlabelled_nodes: Sorted names of nodes without the product label (no vote).
        warning: A message naming the minority nodes, or ``None`` when all agree.
        error: In strict mode, the same disagreement as an error; otherwise ``None``.

    """

    architecture: str
    products: tuple[str, ...] = ()
    votes: Mapping[str, int] = field(default_factory=dict)
    minority_nodes: tuple[str, ...] = ()
    unlabelled_nodes: tuple[str, ...] = ()
    warning: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the detection has no error."""
        return self.error is None


def detect_gpu_architecture(
    nodes: Iterable[Mapping[str, Any]], strict: bool = False
) -> GpuDetection:
    """Vote the GPU architecture of a fleet from the ``nvidia.com/gpu.product`` labels.

    Each labelled node votes for ``parse_gpu_product(label)``; unlabelled nodes do not
    vote. The most votes wins; a tie goes to the tied architecture of the first node by
    name.

    Args:
        nodes: Node objects as plain dicts.
        strict: When true, any labelled node that disagrees with the majority is an
            error (``GpuDetection.error``).

    Returns:
        The detection, including the minority node names for a warning.

    """
    ordered = sorted(nodes, key=node_name)
    by_arch: dict[str, list[str]] = {}
    products: set[str] = set()
    unlabelled: list[str] = []
    first_index: dict[str, int] = {}
    for index, node in enumerate(ordered):
        product = node_label(node, GPU_PRODUCT_LABEL).strip()
        if not product:
            unlabelled.append(node_name(node))
            continue
        products.add(product)
        arch = parse_gpu_product(product)
        by_arch.setdefault(arch, []).append(node_name(node))
        first_index.setdefault(arch, index)

    if not by_arch:
        return GpuDetection(architecture=UNKNOWN_ARCH, unlabelled_nodes=tuple(unlabelled))

    ranking = sorted(by_arch, key=lambda a: (-len(by_arch[a]), first_index[a]))
    winner = ranking[0]
    votes = {arch: len(by_arch[arch]) for arch in ranking}
    minority = {arch: by_arch[arch] for arch in ranking[1:]}
    minority_nodes = tuple(sorted(name for names in minority.values() for name in names))

    warning = error = None
    if minority:
        labelled = sum(votes.values())
        detail = (
            f"{winner} on {votes[winner]} of {labelled} labelled nodes; "
            f"other architectures: {summarize_node_groups(minority)}"
        )
        warning = f"mixed GPU architectures, using the majority: {detail}"
        if strict:
            error = f"mixed GPU architectures are not allowed in strict mode: {detail}"
    return GpuDetection(
        architecture=winner,
        products=tuple(sorted(products)),
        votes=votes,
        minority_nodes=minority_nodes,
        unlabelled_nodes=tuple(unlabelled),
        warning=warning,
        error=error,
    )
