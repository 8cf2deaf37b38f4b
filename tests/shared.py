"""Where the shared, read-only material lives (pinned CRDs, real logs, NVCRE reference).

It is not in the repository: ``../shared`` beside the checkout, or the directory named by
``WORKLOADRUN_SHARED`` (which wins). On a fresh clone without it, every test that needs a
piece of it skips with a reason naming the missing path; collection never fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """The shared directory: ``$WORKLOADRUN_SHARED``, else ``../shared`` beside the repo."""
    env = os.environ.get("WORKLOADRUN_SHARED")
    return Path(env) if env else REPO.parent / "shared"


def shared_missing(*parts: str) -> str | None:
    """Why ``shared_dir()/parts`` cannot be used (a skip reason), or ``None`` when it exists."""
    path = shared_dir().joinpath(*parts)
    if path.exists():
        return None
    return (
        f"needs the shared material {path}, which does not exist: put the shared/ folder "
        "beside the repository (../shared) or set WORKLOADRUN_SHARED to it"
    )


def require_shared(*parts: str) -> Path:
    """``shared_dir()/parts``; skips the test (or, at import time, the module) when missing."""
    reason = shared_missing(*parts)
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)
    return shared_dir().joinpath(*parts)
