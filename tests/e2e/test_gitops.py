"""Argo CD (CMP sidecar and kustomize.buildOptions) and Flux (render in CI), run for real."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.helpers import EXAMPLES, PASSWORD, REPO, copy_example, fn_env, need
from tests.k8s_schemas import validate_all

pytestmark = pytest.mark.e2e
PLUGIN = yaml.safe_load((REPO / "deploy" / "argocd" / "plugin.yaml").read_text())


def _argocd_env(app: str) -> dict[str, str]:
    env = fn_env()
    env.update(
        {
            "ARGOCD_APP_NAME": app,
            "ARGOCD_APP_NAMESPACE": "argocd",
            "ARGOCD_APP_REVISION": "0123456789abcdef",
            "ARGOCD_APP_SOURCE_PATH": f"apps/{app}",
            "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example.com/gpu.git",
            "ARGOCD_ENV_TEAM": "ml-platform",
        }
    )
    return env


def _run_cmp(section: str, cwd: Path, app: str) -> subprocess.CompletedProcess[str]:
    spec = PLUGIN["spec"][section]
    if section == "discover":
        cmd = spec["find"]["command"]
    else:
        cmd = [*spec["command"], *spec.get("args", [])]
    return subprocess.run(
        cmd, cwd=cwd, env=_argocd_env(app), capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "example", ["argocd-app", "basic-mpi"], ids=["plain-directory", "kustomization"]
)
def test_argocd_cmp_generate_like_the_sidecar(example: str, tmp_path: Path) -> None:
    need("kubectl")
    app = copy_example(example, tmp_path)
    found = _run_cmp("discover", app, example)
    assert found.returncode == 0 and found.stdout.strip(), found.stderr
    proc = _run_cmp("generate", app, example)
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    kinds = [d["kind"] for d in docs]
    assert kinds.count("TrainJob") == 4
    assert not {"WorkloadRun", "Node", "List"} & set(kinds)
    assert validate_all(docs) == []
    assert PASSWORD not in proc.stderr


def test_argocd_cmp_generate_fails_on_an_invalid_run(tmp_path: Path) -> None:
    app = copy_example("argocd-app", tmp_path)
    wr = app / "workloadrun.yaml"
    wr.write_text(wr.read_text().replace("numNodes: 4", 'numNodes: "4"'))
    proc = _run_cmp("generate", app, "argocd-app")
    assert proc.returncode != 0
    assert proc.stdout == "", (
        "a failed generate must not hand Argo CD a partial (or empty) manifest"
    )
    assert "spec.numNodes" in proc.stderr


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


@pytest.mark.parametrize(
    "example", ["argocd-app", "basic-mpi"], ids=["plain-directory", "kustomization"]
)
def test_flux_render_in_ci_script(example: str, tmp_path: Path) -> None:
    need("kubectl")
    src = copy_example(example, tmp_path)
    out = tmp_path / "out" / "rendered.yaml"
    proc = subprocess.run(
        ["bash", str(REPO / "deploy" / "flux" / "render-in-ci.sh"), str(src), str(out)],
        env=fn_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(out.read_text()) if d]
    assert [d["kind"] for d in docs].count("TrainJob") == 4
    assert validate_all(docs) == []
    assert "wrote" in proc.stderr


def test_flux_render_in_ci_never_publishes_a_failed_render(tmp_path: Path) -> None:
    src = copy_example("argocd-app", tmp_path)
    (src / "workloadrun.yaml").write_text(
        (src / "workloadrun.yaml").read_text().replace("numNodes: 4", "numNodes: 99")
    )
    out = tmp_path / "out" / "rendered.yaml"
    out.parent.mkdir()
    out.write_text("previous render\n")
    proc = subprocess.run(
        ["bash", str(REPO / "deploy" / "flux" / "render-in-ci.sh"), str(src), str(out)],
        env=fn_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert out.read_text() == "previous render\n"
