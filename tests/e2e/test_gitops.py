"""Argo CD (CMP sidecar and kustomize.buildOptions) and Flux (render in CI), run for real."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.helpers import EXAMPLES, REPO, fn_env, need
from tests.k8s_schemas import validate_all

pytestmark = pytest.mark.e2e
# The CMP plugin's tests (with only the image's tools) are in tests/gitops/test_argocd.py.


def test_argocd_buildoptions_enable_exec() -> None:
    cm = yaml.safe_load((REPO / "deploy" / "argocd" / "argocd-cm-kustomize.yaml").read_text())
    assert cm["data"]["kustomize.buildOptions"] == "--enable-alpha-plugins --enable-exec"


def test_standalone_kustomize_runs_the_exec_krm_function(tmp_path: Path) -> None:
    kustomize = shutil.which("kustomize")
    if kustomize is None:
        pytest.skip(
            "no standalone kustomize binary on this machine (kubectl's embedded one lacks --enable-exec)"
        )
    proc = subprocess.run(
        [
            kustomize,
            "build",
            "--enable-alpha-plugins",
            "--enable-exec",
            str(EXAMPLES / "krm-exec-standalone"),
        ],
        env=fn_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    assert [d["kind"] for d in docs].count("TrainJob") == 4
    assert validate_all(docs) == []


def test_kubectl_kustomize_silently_skips_exec_krm_functions() -> None:
    """Why the legacy plugin exists: kubectl ignores `exec:` functions without a word."""
    kubectl = need("kubectl")
    proc = subprocess.run(
        [kubectl, "kustomize", "--enable-alpha-plugins", str(EXAMPLES / "krm-exec-standalone")],
        env=fn_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0
    kinds = [d["kind"] for d in yaml.safe_load_all(proc.stdout) if d]
    assert "TrainJob" not in kinds and "WorkloadRun" in kinds


# The Flux script's tests (with only a fresh runner's tools) are in tests/gitops/test_flux.py.
