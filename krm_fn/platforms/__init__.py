"""Platform and GPU detection plus the typed platform override catalog.

One job: answer "which platform and GPU architecture is this fleet, and which platform
settings apply to it" for the render pipeline.

* :mod:`krm_fn.platforms.detect` — platform from ``spec.providerID`` and node labels.
* :mod:`krm_fn.platforms.gpu` — GPU product parsing, architecture vote, GPU defaults.
* :mod:`krm_fn.platforms.catalog` — the catalog's values (frozen dataclasses).
* :mod:`krm_fn.platforms.catalog_file` — the catalog file's schema (pydantic) and validation.
* :mod:`krm_fn.platforms.templates` — ``{gpusPerNode}``-style templates in catalog values.
* :mod:`krm_fn.platforms.snapshot` — the bundled catalog's JSON snapshot.
* :mod:`krm_fn.platforms.load` — loading a catalog (the bundled one from its snapshot).
* :mod:`krm_fn.platforms.overlay` — matching entries to a context and merging them.
* :mod:`krm_fn.platforms.run_platform` — the render's platform stage (detection + overlay).

Invariants: importing this package imports no third-party package. Detection and GPU
helpers are imported eagerly; the catalog names are imported on first use, and the bundled
catalog is read (from its JSON snapshot) on the first :func:`load_catalog` call only; the
pydantic file schema only when YAML is parsed (:func:`parse_catalog`).
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
    )
    from krm_fn.platforms.catalog_file import parse_catalog
    from krm_fn.platforms.load import load_catalog
    from krm_fn.platforms.overlay import (
        NodeCounts,
        PlatformContext,
        ResolvedOverlay,
        default_node_counts,
        make_context,
        matching_entries,
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

_LAZY_NAMES: dict[str, str] = {
    "FRAMEWORKS": "krm_fn.platforms.catalog",
    "Catalog": "krm_fn.platforms.catalog",
    "CatalogEntry": "krm_fn.platforms.catalog",
    "CatalogError": "krm_fn.platforms.catalog",
    "EnvVar": "krm_fn.platforms.catalog",
    "parse_catalog": "krm_fn.platforms.catalog_file",
    "load_catalog": "krm_fn.platforms.load",
    "NodeCounts": "krm_fn.platforms.overlay",
    "PlatformContext": "krm_fn.platforms.overlay",
    "ResolvedOverlay": "krm_fn.platforms.overlay",
    "default_node_counts": "krm_fn.platforms.overlay",
    "make_context": "krm_fn.platforms.overlay",
    "matching_entries": "krm_fn.platforms.overlay",
    "resolve": "krm_fn.platforms.overlay",
}
"""Catalog names re-exported here → the module defining each (imported on first use)."""


def __getattr__(name: str) -> Any:
    """Import catalog names only when first used."""
    module = _LAZY_NAMES.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
