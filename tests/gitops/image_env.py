"""The tools an image or runner will hold, as a PATH for the tests.

Each test of a GitOps path runs its command with PATH = one directory holding only what the
image (or CI runner) will have, so a missing tool fails here rather than in a cluster.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from tests.e2e.helpers import need

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent

# Essential packages of the Debian bookworm base of python:3.11.11-slim-bookworm
# (dash, coreutils, findutils, sed, grep): what the plugin's shell commands call.
DEBIAN_BASE_TOOLS = ("sh", "env", "sed", "mktemp", "rm", "find", "cat", "grep", "mkdir", "mv",
                     "dirname", "head", "sort", "tr", "printf", "test", "[")  # fmt: skip


def tool_dir(tmp: Path, tools: tuple[str, ...], kustomize: bool) -> Path:
    """A directory of links to exactly ``tools`` (from the machine), ``workloadrun-fn`` (the
    package under test) and, when ``kustomize``, a ``kustomize`` command.

    The image copies the official kustomize v5.5.0 binary; this machine has that kustomize
    only inside kubectl 1.32, so ``kustomize build ARGS`` runs ``kubectl kustomize ARGS``
    (same library and version, same flags for what the plugin uses).
    """
    bin_dir = tmp / "image-bin"
    if bin_dir.exists():
        return bin_dir
    bin_dir.mkdir()
    for t in tools:
        # python3: the interpreter itself (as actions/setup-python puts it), not a pyenv shim
        found = (
            str(Path(sys.base_prefix) / "bin" / "python3") if t == "python3" else shutil.which(t)
        )
        if found is None:
            found = need(t)  # skips the test, naming the binary
        (bin_dir / t).symlink_to(found)
    (bin_dir / "workloadrun-fn").symlink_to(VENV_BIN / "workloadrun-fn")
    if kustomize:
        kubectl = need("kubectl")  # with kustomize v5.5.0
        shim = bin_dir / "kustomize"
        shim.write_text(
            "#!/bin/sh\n"
            '[ "$1" = build ] || { echo "kustomize shim: only build" >&2; exit 2; }\n'
            f'shift; exec {kubectl} kustomize "$@"\n'
        )
        shim.chmod(0o755)
    return bin_dir


def clean_env(path: Path, tmpdir: Path, **extra: str) -> dict[str, str]:
    """An environment with only ``path`` on PATH, a private TMPDIR, HOME and ``extra``."""
    env = {"PATH": str(path), "TMPDIR": str(tmpdir), "HOME": str(tmpdir), "LANG": "C.UTF-8"}
    env.update(extra)
    return env


def is_empty(d: Path) -> bool:
    return not any(d.iterdir())


__all__ = ["DEBIAN_BASE_TOOLS", "REPO", "clean_env", "is_empty", "os", "tool_dir"]
