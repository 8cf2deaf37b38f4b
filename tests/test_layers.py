"""The package's layers hold: import-linter's contracts (``pyproject.toml``) are all kept.

io → api → fleet → platforms → builders/overrides → stages → render → gitops → entry, each
importing only the layers below it, and the report a separate package sharing only
:mod:`krm_fn.keys`, :mod:`krm_fn.expressions` and :mod:`krm_fn.thresholds` (README,
Development). A back-edge fails here, naming the import chain.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _lint_imports() -> list[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    return [str(exe)] if exe.exists() else [shutil.which("lint-imports") or "lint-imports"]


def test_every_import_linter_contract_is_kept() -> None:
    proc = subprocess.run(
        [*_lint_imports(), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "BROKEN" not in proc.stdout
    assert proc.stdout.count("KEPT") == 3, proc.stdout


def test_a_back_edge_would_break_a_contract(tmp_path: Path) -> None:
    """The check can fail: the same contracts on a copy where io imports the render."""
    pkg = tmp_path / "krm_fn"
    shutil.copytree(REPO / "krm_fn", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "io" / "backedge.py").write_text("from krm_fn import render  # noqa: F401\n")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    proc = subprocess.run(
        [*_lint_imports(), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode != 0
    assert "krm_fn.io.backedge -> krm_fn.render" in proc.stdout
