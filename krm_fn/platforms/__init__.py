"""Platform and GPU detection plus the typed platform override catalog.

One job: answer "which platform and GPU architecture is this fleet, and which platform
settings apply to it" for the render pipeline.

* :mod:`krm_fn.platforms.detect` — platform from ``spec.providerID`` and node labels.
* :mod:`krm_fn.platforms.gpu` — GPU product parsing, architecture vote, GPU defaults.
* :mod:`krm_fn.platforms.catalog` — ``krm_fn/data/platforms.yaml`` model, loader, resolver.

Invariants: nothing here imports a third-party package. Detection and GPU helpers are
imported eagerly; the catalog names are imported on first use, and the bundled catalog is
read (from its JSON snapshot) on the first :func:`load_catalog` call only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from krm_fn.platforms.detect import (
    PLATFORMS,
    PlatformDetection,
    check_platform_name,
    detect_fleet_platform,
    detect_platform,
    node_gke_accelerators,
    node_instance_types,
)
from krm_fn.platforms.gpu import (
    GPU_ARCHITECTURES,
    UNKNOWN_ARCH,
    GpuDefaults,
    GpuDetection,
    check_gpu_arch_name,
    detect_gpu_architecture,
    gpu_defaults,
    parse_gpu_product,
)

if TYPE_CHECKING:
    from krm_fn.platforms.catalog import (
        FRAMEWORKS,
        Catalog,
        CatalogEntry,
        CatalogError,
        EnvVar,
        NodeCounts,
        PlatformContext,
        ResolvedOverlay,
        default_node_counts,
        load_catalog,
        make_context,
        matching_entries,
        parse_catalog,
        resolve,
    )

__all__ = [
    "FRAMEWORKS",
    "GPU_ARCHITECTURES",
    "PLATFORMS",
    "UNKNOWN_ARCH",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "EnvVar",
    "GpuDefaults",
    "GpuDetection",
    "NodeCounts",
    "PlatformContext",
    "PlatformDetection",
    "ResolvedOverlay",
    "check_gpu_arch_name",
    "check_platform_name",
    "default_node_counts",
    "detect_fleet_platform",
    "detect_gpu_architecture",
    "detect_platform",
    "gpu_defaults",
    "load_catalog",
    "make_context",
    "matching_entries",
    "node_gke_accelerators",
    "node_instance_types",
    "parse_catalog",
    "parse_gpu_product",
    "resolve",
]

_LAZY_CATALOG_NAMES = frozenset(
    {
        "FRAMEWORKS",
        "Catalog",
        "CatalogEntry",
        "CatalogError",
        "EnvVar",
        "NodeCounts",
        "PlatformContext",
        "ResolvedOverlay",
        "default_node_counts",
        "load_catalog",
        "make_context",
        "matching_entries",
        "parse_catalog",
        "resolve",
    }
)


def __getattr__(name: str) -> Any:
    """Import catalog names only when first used."""
    if name in _LAZY_CATALOG_NAMES:
        value = getattr(importlib.import_module("krm_fn.platforms.catalog"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
