"""The JSON snapshot of the bundled catalog, ``krm_fn/data/platforms.json``.

One job: write the snapshot from ``krm_fn/data/platforms.yaml`` and read it back.
``python -m krm_fn.platforms.snapshot`` regenerates it; ``tests/platforms/
test_catalog_snapshot.py`` fails while it is stale (``--update-golden`` rewrites it).

Invariants:
    * The snapshot is ``{"comment", "yaml": <the YAML text>, "catalog": <the parsed
      document>}``, written only for a catalog the file schema accepts; it embeds the YAML it
      was made from, so a reader can tell a stale snapshot from a current one.
    * Reading (:func:`read_snapshot`) is stdlib only and never validates: the render loads
      the bundled catalog without pydantic. Writing imports the file schema (lazily).
    * The text is deterministic: one key per line, ``ensure_ascii=False``, ending in a
      newline, so regenerating an unchanged catalog changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from krm_fn.platforms.catalog import DEFAULT_CATALOG_PATH, read_text

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["SNAPSHOT_PATH", "read_snapshot", "snapshot_text", "write_snapshot"]

SNAPSHOT_PATH = os.path.join(os.path.dirname(DEFAULT_CATALOG_PATH), "platforms.json")
"""The generated JSON snapshot of the bundled catalog (see :func:`snapshot_text`)."""


def snapshot_text(yaml_text: str, origin: str = "<string>") -> str:
    """The JSON snapshot of catalog YAML text, as ``krm_fn/data/platforms.json`` holds it.

    The loader uses ``catalog`` only while ``yaml`` equals the bundled YAML file.

    Args:
        yaml_text: The catalog YAML.
        origin: Name used in error messages.

    Returns:
        The JSON text (one key per line, ending in a newline).

    Raises:
        CatalogError: The YAML is not a valid catalog (no snapshot is made of it).

    """
    import json

    from krm_fn.platforms.catalog_file import read_catalog_document

    snapshot = {
        "comment": "generated from platforms.yaml by python -m krm_fn.platforms.snapshot; "
        "do not edit",
        "yaml": yaml_text,
        "catalog": read_catalog_document(yaml_text, origin),
    }
    return json.dumps(snapshot, ensure_ascii=False, indent=1) + "\n"


def write_snapshot(
    yaml_path: str | Path | None = None, json_path: str | Path | None = None
) -> bool:
    """Regenerate the JSON snapshot of a catalog file.

    Args:
        yaml_path: The catalog YAML (default: the bundled ``platforms.yaml``).
        json_path: The snapshot to write (default: the bundled ``platforms.json``).

    Returns:
        Whether the snapshot file changed.

    Raises:
        CatalogError: The YAML is unreadable or invalid.

    """
    yaml_path = DEFAULT_CATALOG_PATH if yaml_path is None else yaml_path
    json_path = SNAPSHOT_PATH if json_path is None else json_path
    wanted = snapshot_text(read_text(yaml_path, str(yaml_path)), str(yaml_path))
    try:
        with open(json_path, encoding="utf-8") as handle:
            if handle.read() == wanted:
                return False
    except OSError:
        pass
    with open(json_path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(wanted)
    return True


def read_snapshot(path: str | Path) -> Mapping[str, Any] | None:
    """The snapshot at ``path``; ``None`` when it is missing, not JSON or not a mapping."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    import json  # the render imports it anyway (Secret builder)

    try:
        snapshot = json.loads(text)
    except ValueError:
        return None
    return snapshot if isinstance(snapshot, dict) else None


if __name__ == "__main__":  # python -m krm_fn.platforms.snapshot: regenerate platforms.json
    print(f"{SNAPSHOT_PATH}: {'rewritten' if write_snapshot() else 'up to date'}")
