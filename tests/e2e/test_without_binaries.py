"""On a machine without kpt or kubectl the end-to-end tests skip, naming the binary.

Runs pytest in a subprocess on end-to-end modules with a PATH that holds only this
virtualenv's scripts (no kpt, no kubectl), as a laptop without them would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import BIN, REPO


@pytest.mark.parametrize(
    ("module", "tool"),
    [("tests/e2e/test_kpt.py", "kpt"), ("tests/e2e/test_kustomize.py", "kubectl")],
    ids=["kpt-tests-skip-without-kpt", "kustomize-tests-skip-without-kubectl"],
)
def test_end_to_end_tests_skip_naming_the_missing_binary(
    module: str, tool: str, tmp_path: Path
) -> None:
    env = {**os.environ, "PATH": str(BIN), "HOME": str(tmp_path)}
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-rs", module],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    last = out.strip().splitlines()[-1]
    assert " skipped" in last and "failed" not in last and "error" not in last, last
    reason = f"needs {tool} on PATH (not found): install {tool} to run this test"
    skipped = [ln for ln in out.splitlines() if ln.startswith("SKIPPED")]
    assert skipped and all(reason in ln for ln in skipped), "\n".join(skipped)
