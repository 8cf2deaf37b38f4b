"""The Flux path: the workflow's own `run:` steps on a fresh runner, and the per-wave layout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gitops.image_env import DEBIAN_BASE_TOOLS, REPO, tool_dir
from tests.k8s_schemas import validate_all
from tests.trainer_gate import trainer_sim

WORKFLOW = yaml.safe_load((REPO / "deploy" / "flux" / "github-workflow.yaml").read_text())
SCRIPT = REPO / "deploy" / "flux" / "render-in-ci.sh"
EXAMPLES = REPO / "kustomization-examples"
PASSWORD = "flux-test-password-7781"
# An ubuntu-24.04 GitHub runner after actions/setup-python: bash, the Debian/Ubuntu base tools,
# git, kubectl (with kustomize v5) and python3 with venv.
RUNNER_TOOLS = (*DEBIAN_BASE_TOOLS, "bash", "git", "kubectl", "awk", "basename", "python3")


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def _checkout_of_this_repository(dst: Path) -> None:
    files = _git(REPO, "ls-files", "-co", "--exclude-standard").splitlines()
    for f in files:
        src = REPO / f
        if src.is_file():
            (dst / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / f)


def _if_holds(cond: str | None, env: dict[str, str]) -> bool:
    if cond is None:
        return True
    m = re.fullmatch(r"env\.(\w+) (==|!=) ''", cond.strip())
    assert m, f"the test runner does not understand if: {cond}"
    empty = env.get(m.group(1), "") == ""
    return empty if m.group(2) == "==" else not empty


@pytest.mark.e2e
def test_the_workflow_run_steps_install_render_and_commit_on_a_fresh_runner(
    tmp_path: Path,
) -> None:
    # The GitOps repository (what the first actions/checkout gives), with a remote to push to.
    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "-q", "--bare", str(origin))
    ws = tmp_path / "ws"
    shutil.copytree(EXAMPLES / "argocd-app", ws / "gpu-validation")
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "gpu-validation")
    _git(ws, "remote", "add", "origin", str(origin))
    _git(ws, "push", "-q", "-u", "origin", "main")
    # The second actions/checkout: this repository at the pinned ref (here: this checkout).
    _checkout_of_this_repository(ws / ".workloadrun-fn")

    job = WORKFLOW["jobs"]["render"]
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    github_path = tmp_path / "github-path"
    github_path.write_text("")
    bin_dir = tool_dir(tmp_path, RUNNER_TOOLS, kustomize=False)
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "TMPDIR": str(runner_temp),
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_PATH": str(github_path),
        "GITHUB_SHA": _git(ws, "rev-parse", "HEAD").strip(),
        "NGC_API_KEY": PASSWORD,  # a runner secret in the environment must never leak
        **{k: str(v) for k, v in job["env"].items()},
    }
    for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE"):
        if key in os.environ:  # how this machine reaches the package index, like a runner does
            env[key] = os.environ[key]
    ran = []
    for step in job["steps"]:
        if "run" not in step or not _if_holds(step.get("if"), env):
            continue
        assert "${{" not in step["run"], "a step the test runs must not need GitHub expressions"
        script = tmp_path / "step.sh"
        script.write_text(step["run"])
        extra = [p for p in github_path.read_text().splitlines() if p]
        step_env = {**env, "PATH": os.pathsep.join([*reversed(extra), env["PATH"]])}
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=ws, env=step_env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, f"step {step.get('name')}: {proc.stderr}"
        assert PASSWORD not in proc.stdout + proc.stderr
        ran.append(step["name"])
    assert ran == [
        "Install workloadrun-fn from the pinned checkout",
        "Render into per-wave Flux Kustomizations (and push them when FLUX_OCI_URL is set)",
        "Commit the render",
    ]
    out = ws / "rendered" / "gpu-validation"
    assert sorted(p.name for p in out.iterdir()) == ["dependencies", "flux", "wave-0"]
    pushed = _git(origin, "ls-tree", "-r", "--name-only", "main")
    assert "rendered/gpu-validation/flux/kustomizations.yaml" in pushed
    for f in out.rglob("*"):
        if f.is_file():
            assert PASSWORD not in f.read_text()
    assert validate_all(_docs(out / "dependencies" / "resources.yaml")) == []


def _render(src: Path, out: Path, tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    bin_dir = tool_dir(tmp, RUNNER_TOOLS, kustomize=False)
    return subprocess.run(
        ["bash", str(SCRIPT), str(src), str(out)],
        cwd=tmp, capture_output=True, text=True, timeout=300, check=False,
        env={"PATH": str(bin_dir), "HOME": str(tmp), "TMPDIR": str(tmp / "tmp"),
             "NGC_API_KEY": PASSWORD, **env},
    )  # fmt: skip


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "tmp").mkdir()
    return tmp_path


def _waves_example(tmp: Path) -> Path:
    case = REPO / "tests" / "golden" / "repeat-count-and-max-concurrent-make-suspended-waves"
    rl = yaml.safe_load((case / "input.yaml").read_text())
    src = tmp / "waves"
    src.mkdir()
    (src / "input.yaml").write_text(yaml.safe_dump_all(rl["items"]))
    return src


@pytest.mark.e2e
@pytest.mark.parametrize(
    "example", ["argocd-app", "basic-mpi", "waves"],
    ids=["plain-directory", "kustomization", "four-waves"],
)  # fmt: skip
def test_each_flux_stage_passes_the_server_side_dry_run_of_its_batch(
    example: str, tmp: Path
) -> None:
    src = _waves_example(tmp) if example == "waves" else EXAMPLES / example
    out = tmp / "rendered" / "gpu"
    proc = _render(src, out, tmp)
    assert proc.returncode == 0, proc.stderr
    sim = trainer_sim()
    stages = [
        "dependencies",
        *sorted((p.name for p in out.glob("wave-*")), key=lambda n: int(n[5:])),
    ]
    have: set[tuple[str, str]] = set()
    everything: list[dict[str, Any]] = []
    for stage in stages:
        objs = _docs(out / stage / "resources.yaml")
        assert sim.flux_batch_problems(objs, have) == [], stage
        have |= {
            ((o["metadata"].get("namespace") or "default"), o["metadata"]["name"])
            for o in objs if o["kind"] == "TrainingRuntime"
        }  # fmt: skip
        everything += objs
        if stage != "dependencies":
            assert all(o["kind"] == "TrainJob" and "suspend" not in o["spec"] for o in objs)
    assert validate_all(everything) == []
    # the split matters: one batch of everything fails Flux's dry run
    assert sim.flux_batch_problems(everything) != []
    ks = {k["metadata"]["name"]: k["spec"] for k in _docs(out / "flux" / "kustomizations.yaml")}
    assert list(ks) == ["gpu-dependencies", *[f"gpu-{s}" for s in stages[1:]]]
    for i, stage in enumerate(stages[1:]):
        spec = ks[f"gpu-{stage}"]
        want = [{"name": "gpu-dependencies"}] + ([{"name": f"gpu-{stages[i]}"}] if i else [])
        assert spec["dependsOn"] == want
        assert spec["wait"] is True and spec["path"] == f"./{out}/{stage}"
        (check,) = spec["healthCheckExprs"]
        assert check["kind"] == "TrainJob" and "'Complete'" in check["current"]
        assert "'Failed'" in check["failed"]
    for f in out.rglob("*"):
        if f.is_file():
            assert PASSWORD not in f.read_text()
    assert not any((tmp / "tmp").iterdir())


@pytest.mark.e2e
def test_a_failed_render_leaves_the_previous_output_in_place(tmp: Path) -> None:
    src = tmp / "src"
    shutil.copytree(EXAMPLES / "argocd-app", src)
    wr = src / "workloadrun.yaml"
    wr.write_text(wr.read_text().replace("numNodes: 4", "numNodes: 99"))
    out = tmp / "out"
    out.mkdir()
    (out / "previous.yaml").write_text("previous render\n")
    proc = _render(src, out, tmp)
    assert proc.returncode != 0
    assert (out / "previous.yaml").read_text() == "previous render\n"


@pytest.mark.e2e
def test_the_plain_secret_is_refused_unless_asked_for(tmp: Path) -> None:
    src = tmp / "src"
    shutil.copytree(EXAMPLES / "argocd-app", src)
    cfg = (
        "apiVersion: fn.nvcre.nvidia.com/v1alpha1\nkind: WorkloadRunRender\n"
        "metadata: {name: render}\nspec: {registry: nvcr.io, registryUsername: $oauthtoken,"
        " registryPasswordEnv: NGC_API_KEY}\n"
    )
    (src / "render.yaml").write_text(cfg)
    refused = _render(src, tmp / "out", tmp)
    assert refused.returncode != 0 and "plainPullSecret" in refused.stderr
    assert not (tmp / "out").exists()
    # the test opts in: only then the Secret, with the password, is written
    (src / "render.yaml").write_text(cfg.replace("}\n", ", plainPullSecret: true}\n"))
    asked = _render(src, tmp / "out", tmp)
    assert asked.returncode == 0, asked.stderr
    deps = _docs(tmp / "out" / "dependencies" / "resources.yaml")
    assert [d["kind"] for d in deps].count("Secret") == 1
