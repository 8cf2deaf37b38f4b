"""Loading a platform catalog: the bundled one from its snapshot, any other from YAML.

One job: :func:`load_catalog`, deciding where a catalog comes from and caching the bundled
one for the process.

Invariants:
    * The bundled catalog is read from ``krm_fn/data/platforms.json`` (see
      :mod:`krm_fn.platforms.snapshot`) without validation and without importing pydantic or
      a YAML parser, as long as the snapshot embeds exactly the text of
      ``krm_fn/data/platforms.yaml``. Otherwise (no snapshot, a corrupt one, or one made from
      another version of the YAML) the YAML itself is parsed and validated: a stale snapshot
      is never used.
    * Any other catalog (a path) is always parsed and validated in full.
    * The bundled catalog is built once per process; a loaded catalog is immutable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from krm_fn.platforms import snapshot
from krm_fn.platforms.catalog import (
    DEFAULT_CATALOG_PATH,
    DEFAULT_CATALOG_RESOURCE,
    Catalog,
    build_catalog,
    read_text,
)

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["load_catalog"]

_DEFAULT: Catalog | None = None


def _load_default() -> Catalog:
    global _DEFAULT
    if _DEFAULT is None:
        origin = f"krm_fn/{DEFAULT_CATALOG_RESOURCE}"
        text = read_text(DEFAULT_CATALOG_PATH, origin)
        current = snapshot.read_snapshot(snapshot.SNAPSHOT_PATH)
        if current is not None and current.get("yaml") == text:
            _DEFAULT = build_catalog(current["catalog"])
        else:  # no snapshot, or made from another version of the YAML
            from krm_fn.platforms.catalog_file import parse_catalog

            _DEFAULT = parse_catalog(text, origin)
    return _DEFAULT


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load a catalog.

    Args:
        path: A catalog YAML file, always fully validated; ``None`` loads the bundled
            ``krm_fn/data/platforms.yaml`` (from its JSON snapshot when that is current;
            once per process, then cached).

    Returns:
        The catalog.

    Raises:
        CatalogError: The file is unreadable or invalid; the error lists every problem.

    """
    if path is None:
        return _load_default()
    from krm_fn.platforms.catalog_file import parse_catalog

    return parse_catalog(read_text(path, str(path)), str(path))
