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
from dataclasses import dataclass
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


def __getattr__(name: str) -> Any:
    """``GPU_ARCHITECTURES``: the bundled table's GPU models, sorted (read on first use)."""
    if name == "GPU_ARCHITECTURES":
        return tuple(sorted(architectures()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@lru_cache(maxsize=1)
def architectures() -> frozenset[str]:
    """The GPU models of the bundled table (the valid ``--gpu-arch`` names)."""
    return frozenset(bundled().gpu_names)


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
    return _strip_mig(text.removeprefix("NVIDIA-").removesuffix("-SHARED"))


def parse_gpu_product(product: str) -> str:
    """The table's GPU model of a product name, or ``"unknown"``.

    GFD ``nvidia.com/gpu.product`` values (``NVIDIA-H100-80GB-HBM3``), their MIG
    (``…-MIG-1g.10gb``) and sharing (``…-SHARED``) forms, CUDA device names with spaces
    (``NVIDIA GB300``), any letter case, bare model names (``gb300``).
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
    """The GPU model of a product name (lower case; ``""`` for none): the table's when known.

    Other products keep their own model instead of collapsing into ``"unknown"``: NVCRE's
    rule (the first word after ``NVIDIA-``: ``NVIDIA-H20`` → ``h20``), except that brand words
    do not count (``Tesla-T4`` → ``t4``, ``NVIDIA-GeForce-RTX-4090`` → ``rtx-4090``) and a GRID
    vGPU profile keeps its whole name (``GRID-A100-10C``: a 10 GB slice is not an A100).
    """
    if not isinstance(product, str):
        return ""
    arch = parse_gpu_product(product)
    if arch != UNKNOWN_ARCH:
        return arch
    text = _normalised(product)
    if not text or text.startswith("GRID-"):
        return text.lower()
    words = text.split("-")
    while len(words) > 1 and words[0] in _BRAND_WORDS:
        words = words[1:]
    if words[0] in _SERIES_WORDS and len(words) > 1:
        return f"{words[0]}-{words[1]}".lower()
    return words[0].lower()


def gke_accelerator_model(accelerator: str) -> str:
    """The GPU model of a ``cloud.google.com/gke-accelerator`` value (``""`` for none).

    Read as a product name without ``nvidia-`` (``nvidia-h100-mega-80gb`` → ``h100``,
    ``nvidia-tesla-t4`` → ``t4``), so a new GKE accelerator still names its model.
    """
    value = accelerator.strip().lower()
    return gpu_model(value.removeprefix("nvidia-")) if value else ""


def gpu_product_label_value(name: str) -> str:
    """The label GFD writes (``NVIDIA-GB300``) for an NVML device name (``NVIDIA GB300``).

    GFD's rule (NVIDIA/k8s-device-plugin internal/lm/resource.go ``sanitise``, NVCRE's
    ``gpu.ProductLabelValue``): drop characters outside ``[A-Za-z0-9-_. ]``, join the words
    with ``-``; so a node and its DRA ``ResourceSlice`` name the same hardware alike.
    """
    kept = "".join(c for c in name if c.isascii() and (c.isalnum() or c in "-_. "))
    return "-".join(kept.split())


def check_gpu_arch_name(name: str) -> str:
    """The GPU model a user gave (``--gpu-arch``; ``NVIDIA-GB300`` → ``gb300``), or ValueError."""
    arch = parse_gpu_product(name)
    if arch == UNKNOWN_ARCH:
        known = ", ".join(sorted(architectures()))
        raise ValueError(f"unknown GPU architecture {name!r}: must be one of {known}")
    return arch


@dataclass(frozen=True, slots=True)
class GpuDetection:
    """The voted model (``"unknown"`` when no node names its GPU) and its nodes' products.

    ``warning`` names the minority; in strict mode ``error`` does the same.
    """

    architecture: str
    model_products: tuple[str, ...] = ()
    warning: str | None = None
    error: str | None = None


def detect_gpu_architecture(
    nodes: Iterable[Mapping[str, Any]], strict: bool = False
) -> GpuDetection:
    """Vote the GPU model of a fleet: each node that names its GPU votes for its model.

    The most votes wins; a tie goes to the model of the first node by name (NVCRE's rule).
    Models outside the table are votes of their own (``h20`` and ``h800`` do not merge).
    ``strict``: a voting node of another model is an error.
    """
    by_model: dict[str, list[str]] = {}
    products: dict[str, set[str]] = {}
    for node in sorted(nodes, key=node_name):  # dicts keep the first voter's order
        # GPU Feature Discovery's label, else GKE's (its own GPU stack sets no nvidia.com/*)
        product = node_label(node, GPU_PRODUCT_LABEL).strip()
        model = gpu_model(product)
        if not product:
            product = node_label(node, GKE_ACCELERATOR_LABEL).strip()
            model = gke_accelerator_model(product)
        if not model:
            continue
        products.setdefault(model, set()).add(product)
        by_model.setdefault(model, []).append(node_name(node))
    if not by_model:
        return GpuDetection(UNKNOWN_ARCH)
    ranking = sorted(by_model, key=lambda m: -len(by_model[m]))  # stable: first voter first
    winner, minority = ranking[0], {m: by_model[m] for m in ranking[1:]}
    warning = error = None
    if minority:
        voters = sum(map(len, by_model.values()))
        detail = (
            f"{winner} on {len(by_model[winner])} of {voters} labelled nodes; "
            f"other architectures: {summarize_node_groups(minority)}"
        )
        warning = f"mixed GPU architectures, using the majority: {detail}"
        if strict:
            error = f"mixed GPU architectures are not allowed in strict mode: {detail}"
    return GpuDetection(winner, tuple(sorted(products[winner])), warning, error)
