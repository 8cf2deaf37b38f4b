"""Normalise NVIDIA GPU product names and vote a fleet's GPU model.

One job: turn what a node says about its GPUs (the GPU Feature Discovery label
``nvidia.com/gpu.product``, GKE's ``cloud.google.com/gke-accelerator``, the ``productName``
of a DRA ``ResourceSlice``) into one GPU model name. The models and their defaults are the
platform table's (:mod:`krm_fn.platforms.catalog`, ``gpus``). Pure functions.

Invariants:
    * :func:`parse_gpu_product` never raises and always returns a GPU model of the table or
      ``"unknown"``; it is idempotent (``parse(parse(x)) == parse(x)``).
    * :func:`gpu_model` returns the table's model for a product it knows and, for any other
      product, its own model name (``NVIDIA-H20`` → ``h20``, ``GRID-A100-10C`` →
      ``grid-a100-10c``): two different models never share a name, so a fleet mixing them is
      seen as mixed. It is ``""`` only for an empty product.
    * :func:`detect_gpu_architecture` is independent of node order: nodes are sorted
      by name before voting, so the tie-break ("first node by name") is stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from krm_fn.fleet.inventory import GPU_PRODUCT_LABEL
from krm_fn.platforms.catalog import UNKNOWN_ARCH, bundled
from krm_fn.platforms.detect import (
    GKE_ACCELERATOR_LABEL,
    node_label,
    node_name,
    summarize_node_groups,
)

__all__ = [
    "UNKNOWN_ARCH",
    "GpuDetection",
    "architectures",
    "check_gpu_arch_name",
    "detect_gpu_architecture",
    "gke_accelerator_model",
    "gpu_model",
    "gpu_product_label_value",
    "node_gpu_product",
    "parse_gpu_product",
]


def __getattr__(name: str) -> Any:
    """``GPU_ARCHITECTURES``: the bundled table's GPU models, sorted (read on first use)."""
    if name == "GPU_ARCHITECTURES":
        return tuple(sorted(architectures()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@lru_cache(maxsize=1)
def architectures() -> frozenset[str]:
    """The GPU models of the bundled table (the valid ``--gpu-arch`` names)."""
    return frozenset(bundled().gpu_names)


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


def _normalised(product: str) -> str:
    """Upper case, one ``-`` between words, without ``NVIDIA-``, ``-SHARED`` and MIG suffixes.

    String methods rather than regular expressions: compiling those cost more than a parse.
    """
    words = "-".join(product.strip().upper().replace("_", " ").split())
    text = "-".join(part for part in words.split("-") if part)
    if text.startswith(_VENDOR_PREFIX):
        text = text[len(_VENDOR_PREFIX) :]
    if text.endswith("-SHARED"):
        text = text[: -len("-SHARED")]
    return _strip_mig(text)


def parse_gpu_product(product: str) -> str:
    """The table's GPU model of a product name, or ``"unknown"``.

    Accepts GFD ``nvidia.com/gpu.product`` values (``NVIDIA-H100-80GB-HBM3``), their
    MIG (``…-MIG-1g.10gb``) and sharing (``…-SHARED``) forms, CUDA device names with
    spaces (``NVIDIA GB300``), any letter case, and bare model names (``gb300``).
    """
    if not isinstance(product, str):
        return UNKNOWN_ARCH
    text = _normalised(product)
    if text.startswith(_RTX_PRO_6000):
        return "rtxpro6000"
    arch = text.split("-", 1)[0].lower()
    return arch if arch in architectures() else UNKNOWN_ARCH


_BRAND_WORDS = frozenset({"TESLA", "QUADRO", "GEFORCE"})
_SERIES_WORDS = frozenset({"RTX", "GTX"})


def gpu_model(product: str) -> str:
    """Return the GPU model of a product name: the architecture when the table knows it.

    Products outside the table keep their own model instead of collapsing into
    ``"unknown"``: NVCRE's rule (the first word after ``NVIDIA-``, lower case: ``NVIDIA-H20``
    → ``h20``, ``NVIDIA-GH200-480GB`` → ``gh200``), except that brand words do not count as
    a model (``Tesla-T4`` → ``t4``, ``NVIDIA-GeForce-RTX-4090`` → ``rtx-4090``) and a GRID
    vGPU profile keeps its whole name (``GRID-A100-10C`` → ``grid-a100-10c``: a 10 GB slice
    of an A100 is not an A100).

    Args:
        product: A GFD product label, a CUDA/NVML device name, or an architecture name.

    Returns:
        The architecture or model name in lower case; ``""`` for an empty product.

    """
    if not isinstance(product, str):
        return ""
    arch = parse_gpu_product(product)
    if arch != UNKNOWN_ARCH:
        return arch
    text = _normalised(product)
    if not text:
        return ""
    if text.startswith("GRID-"):
        return text.lower()
    words = text.split("-")
    while len(words) > 1 and words[0] in _BRAND_WORDS:
        words = words[1:]
    if words[0] in _SERIES_WORDS and len(words) > 1:
        return f"{words[0]}-{words[1]}".lower()
    return words[0].lower()


def gke_accelerator_model(accelerator: str) -> str:
    """Return the GPU model of a ``cloud.google.com/gke-accelerator`` value.

    Read like a product name without the ``nvidia-`` prefix (``nvidia-h100-mega-80gb`` →
    ``h100``, ``nvidia-tesla-t4`` → ``t4``), so a new GKE accelerator still names its model.

    Args:
        accelerator: The label value.

    Returns:
        The model name; ``""`` for an empty value.

    """
    value = accelerator.strip().lower()
    if not value:
        return ""
    return gpu_model(value[len("nvidia-") :] if value.startswith("nvidia-") else value)


def gpu_product_label_value(name: str) -> str:
    """Turn an NVML device name (``NVIDIA GB300``) into the label GFD writes (``NVIDIA-GB300``).

    GFD's rule (NVIDIA/k8s-device-plugin internal/lm/resource.go ``sanitise``, mirrored by
    NVCRE's ``gpu.ProductLabelValue``): drop characters outside ``[A-Za-z0-9-_. ]``, then join
    the blank-separated words with ``-``. The same hardware so gets the same product
    whether GFD labelled the node or its DRA ``ResourceSlice`` named it.

    Args:
        name: The device name.

    Returns:
        The label value.

    """
    kept = "".join(c for c in name if c.isascii() and (c.isalnum() or c in "-_. "))
    return "-".join(kept.split())


def node_gpu_product(node: Mapping[str, Any]) -> tuple[str, str]:
    """The GPU product a node names, and the label it came from.

    ``nvidia.com/gpu.product`` (GPU Feature Discovery) first, else
    ``cloud.google.com/gke-accelerator`` (GKE's own GPU stack, which sets no
    ``nvidia.com/*`` label).

    Args:
        node: A Node object (or its view) as a plain dict.

    Returns:
        ``(product, label key)``, or ``("", "")`` when the node names no GPU.

    """
    product = node_label(node, GPU_PRODUCT_LABEL).strip()
    if product:
        return product, GPU_PRODUCT_LABEL
    accelerator = node_label(node, GKE_ACCELERATOR_LABEL).strip()
    if accelerator:
        return accelerator, GKE_ACCELERATOR_LABEL
    return "", ""


def _node_model(product: str, source: str) -> str:
    if source == GKE_ACCELERATOR_LABEL:
        return gke_accelerator_model(product)
    return gpu_model(product)


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
            f"unknown GPU architecture {name!r}: must be one of {', '.join(sorted(architectures()))}"
        )
    return arch


@dataclass(frozen=True, slots=True)
class GpuDetection:
    """Result of :func:`detect_gpu_architecture`.

    Attributes:
        architecture: The voted GPU model (an architecture of the table, or the model name
            of a product outside it, see :func:`gpu_model`); ``"unknown"`` when no node
            names its GPU.
        products: Distinct raw products (label values) of every voting node, sorted.
        model_products: Distinct raw products of the nodes of the voted model, sorted:
            what those nodes call their GPU, for annotations and the summary.
        votes: Number of voting nodes per model, most votes first.
        minority_nodes: Sorted names of voting nodes whose model lost the vote.
        unlabelled_nodes: Sorted names of nodes that name no GPU (no vote).
        warning: A message naming the minority nodes, or ``None`` when all agree.
        error: In strict mode, the same disagreement as an error; otherwise ``None``.

    """

    architecture: str
    products: tuple[str, ...] = ()
    model_products: tuple[str, ...] = ()
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
    """Vote the GPU model of a fleet from what each node names (:func:`node_gpu_product`).

    Each node that names its GPU votes for its model (:func:`gpu_model`, or
    :func:`gke_accelerator_model` for the GKE label); nodes that name none do not vote. The
    most votes wins; a tie goes to the model of the first node by name (NVCRE's rule).
    Different models are different votes even when neither is in the table (``h20`` and
    ``h800`` do not merge into one "unknown").

    Args:
        nodes: Node objects as plain dicts.
        strict: When true, any voting node whose model differs from the majority is an
            error (``GpuDetection.error``).

    Returns:
        The detection, including the minority node names for a warning.

    """
    tally = _tally(sorted(nodes, key=node_name))
    by_model, products = tally.by_model, tally.products
    if not by_model:
        return GpuDetection(architecture=UNKNOWN_ARCH, unlabelled_nodes=tuple(tally.unlabelled))

    ranking = sorted(by_model, key=lambda a: (-len(by_model[a]), tally.first_index[a]))
    winner = ranking[0]
    votes = {model: len(by_model[model]) for model in ranking}
    minority = {model: by_model[model] for model in ranking[1:]}
    warning, error = _mixed_messages(winner, votes, minority, strict)
    return GpuDetection(
        architecture=winner,
        products=tuple(sorted(p for ps in products.values() for p in ps)),
        model_products=tuple(sorted(products[winner])),
        votes=votes,
        minority_nodes=tuple(sorted(name for names in minority.values() for name in names)),
        unlabelled_nodes=tuple(tally.unlabelled),
        warning=warning,
        error=error,
    )


@dataclass(frozen=True, slots=True)
class _Tally:
    """The votes of a fleet, before ranking.

    Attributes:
        by_model: Each model voted for, with the names of the nodes that voted for it.
        products: Each model with the product names its voters gave.
        unlabelled: The names of the nodes that name no GPU.
        first_index: Each model with the position (by name) of its first voter.

    """

    by_model: dict[str, list[str]]
    products: dict[str, set[str]]
    unlabelled: list[str]
    first_index: dict[str, int]


def _tally(ordered: list[Mapping[str, Any]]) -> _Tally:
    """Count each node's vote for its GPU model.

    Args:
        ordered: The nodes, sorted by name.

    Returns:
        The votes, the products behind them and the nodes that did not vote.

    """
    tally = _Tally({}, {}, [], {})
    for index, node in enumerate(ordered):
        product, source = node_gpu_product(node)
        model = _node_model(product, source) if product else ""
        if not model:
            tally.unlabelled.append(node_name(node))
            continue
        tally.products.setdefault(model, set()).add(product)
        tally.by_model.setdefault(model, []).append(node_name(node))
        tally.first_index.setdefault(model, index)
    return tally


def _mixed_messages(
    winner: str, votes: dict[str, int], minority: dict[str, list[str]], strict: bool
) -> tuple[str | None, str | None]:
    """The warning (and in strict mode the error) for a fleet of mixed GPU models.

    Args:
        winner: The majority model.
        votes: Each model's vote count.
        minority: Each other model with its nodes (empty: the fleet is not mixed).
        strict: Whether a mixed fleet is an error.

    Returns:
        ``(warning, error)``; each ``None`` when it does not apply.

    """
    if not minority:
        return None, None
    detail = (
        f"{winner} on {votes[winner]} of {sum(votes.values())} labelled nodes; "
        f"other architectures: {summarize_node_groups(minority)}"
    )
    warning = f"mixed GPU architectures, using the majority: {detail}"
    if not strict:
        return warning, None
    return warning, f"mixed GPU architectures are not allowed in strict mode: {detail}"
