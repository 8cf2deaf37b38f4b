"""``workloadrun-fn discover DIR``: does DIR render WorkloadRuns? (Argo CD's plugin discovery).

A directory matches when one of its non-hidden ``*.yaml|*.yml|*.json`` files holds a
``WorkloadRun`` or ``WorkloadRunRender``, or when its kustomization builds on one that does:
``resources``, ``bases``, ``components``, ``generators`` and ``transformers`` entries are
followed (directories through their kustomization, files directly), so an overlay whose
WorkloadRun lives in a base matches. Remote entries (URLs) are not followed. Hidden files
(``.argocd-source.yaml``, ...) are never read.

Invariants:
    * Prints the matching file (relative to DIR) and returns 0; prints nothing and returns 1
      when nothing matches. Never raises on unreadable or malformed files (they do not match).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

KINDS = re.compile(r"^kind:\s*['\"]?(WorkloadRun|WorkloadRunRender)['\"]?\s*$", re.MULTILINE)
JSON_KINDS = re.compile(r'"kind"\s*:\s*"(WorkloadRun|WorkloadRunRender)"')
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
FOLLOWED = ("resources", "bases", "components", "generators", "transformers")
SUFFIXES = (".yaml", ".yml", ".json")


def _holds_run(path: Path) -> bool:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    return bool(KINDS.search(text) or (path.suffix == ".json" and JSON_KINDS.search(text)))


def _kustomization(d: Path) -> dict[str, Any] | None:
    import yaml

    for name in KUSTOMIZATION_FILES:
        f = d / name
        if f.is_file():
            try:
                doc = yaml.safe_load(f.read_text())
            except (OSError, yaml.YAMLError):
                return None
            return doc if isinstance(doc, dict) else None
    return None


def find(directory: Path, _seen: set[Path] | None = None) -> Path | None:
    """The first file that makes ``directory`` render WorkloadRuns, or ``None``."""
    seen = _seen if _seen is not None else set()
    d = directory.resolve()
    if d in seen or not d.is_dir():
        return None
    seen.add(d)
    for f in sorted(d.iterdir()):
        if f.is_file() and not f.name.startswith(".") and f.suffix in SUFFIXES and _holds_run(f):
            return f
    kust = _kustomization(d)
    if kust is None:
        return None
    for key in FOLLOWED:
        for entry in kust.get(key) or []:
            if not isinstance(entry, str) or "://" in entry or entry.startswith("git@"):
                continue
            target = d / entry
            if target.is_dir():
                hit = find(target, seen)
                if hit is not None:
                    return hit
            elif target.is_file() and not target.name.startswith(".") and _holds_run(target):
                return target
    return None
