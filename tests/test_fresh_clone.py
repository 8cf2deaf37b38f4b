"""On a fresh clone without ../shared the suite still collects, and what needs it skips.

Runs pytest in a subprocess with ``WORKLOADRUN_SHARED`` naming an empty directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    empty = tmp_path / "no-shared"
    empty.mkdir()
    env = {**os.environ, "WORKLOADRUN_SHARED": str(empty)}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_whole_suite_collects_without_shared(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, "--collect-only", "-q", "-rs")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "error" not in proc.stdout.lower().split("short test summary")[-1]
    assert "needs the shared material" in proc.stdout
    assert "no-shared/fixtures/nccl-logs, which does not exist" in proc.stdout


def test_tests_needing_shared_skip_naming_what_is_missing(tmp_path: Path) -> None:
    proc = _pytest(
        tmp_path,
        "-q",
        "-rs",
        "tests/report/test_evaluate.py",
        "tests/report/test_parse_nccl.py::test_every_nccl_fixture_has_an_expectation",
        "tests/test_golden.py::test_golden_case[basic-mpi-16-nodes-four-groups-with-pull-secret]",
    )
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    assert " passed" not in out.splitlines()[-1] and "failed" not in out and "error" not in out
    assert "no-shared/fixtures/nccl-logs, which does not exist" in out
    assert "no-shared/schemas/crds/trainer.kubeflow.org_" in out
    assert "set WORKLOADRUN_SHARED" in out
