"""Running the real kpt and kubectl binaries against copies of the example packages."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "kustomization-examples"
BIN = Path(sys.executable).parent
PASSWORD = "e2e-registry-password-7f3a"


def fn_env(**extra: str) -> dict[str, str]:
    """The environment of an orchestrator run: our console script first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["NGC_API_KEY"] = PASSWORD
    env.update(extra)
    return env


def need(tool: str) -> str:
    """The path of ``tool`` on PATH; without it the test is skipped, naming the binary.

    So the README's test command passes on a laptop without kpt or kubectl, as the tests that
    need ../shared skip without it (``pytest -rs`` lists the reasons; .ci/run has both).
    """
    path = shutil.which(tool)
    if not path:
        pytest.skip(f"needs {tool} on PATH (not found): install {tool} to run this test")
    return path


def run(cmd: list[str], cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env=fn_env(**env), capture_output=True, text=True, timeout=300
    )


def copy_example(name: str, tmp: Path) -> Path:
    dst = tmp / name
    shutil.copytree(EXAMPLES / name, dst)
    return dst


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    return not (cmp.left_only or cmp.right_only or cmp.diff_files) and all(
        same_tree(a / d, b / d) for d in cmp.common_dirs
    )


def load_docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]
