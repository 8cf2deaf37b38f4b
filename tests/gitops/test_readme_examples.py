"""Every GitOps path's copy-paste example in the README, executed as written.

Only two things are substituted: ``/tmp/`` becomes the test's own directory, and a line marked
``# needs a cluster`` is replaced by its output from test data (a realistic
``kubectl get nodes -o yaml`` from bench/make_inventory.py); ``workloadrun-fn release`` reaches
its "cluster" through the documented kubectl seam (``WORKLOADRUN_FN_KUBECTL``) replaying
recorded TrainJob states.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.gitops.image_env import REPO
from tests.gitops.test_flux import _checkout_of_this_repository
from tests.gitops.test_inventory_command import bench_inventory

HERE = Path(__file__).parent
README = (REPO / "README.md").read_text()
SECTIONS = {
    "inventory": "### Node inventory for GitOps (`workloadrun-fn inventory`)",
    "argocd": "### Argo CD",
    "flux": "### Flux",
    "release": "### Plain kubectl: releasing waves (`workloadrun-fn release`)",
}


def _sh_blocks(heading: str) -> list[str]:
    start = README.index("\n" + heading + "\n")
    end = README.find("\n### ", start + 1)
    body = README[start : end if end > 0 else None]
    return re.findall(r"```sh\n(.*?)```", body, re.DOTALL)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    _checkout_of_this_repository(repo)
    return repo


def _run(script: str, cwd: Path, tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    text = script.replace("/tmp/", f"{tmp}/")
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", text],
        cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
             **env},
    )  # fmt: skip


def test_every_gitops_section_has_a_copy_paste_example() -> None:
    for heading in SECTIONS.values():
        assert _sh_blocks(heading), heading


def test_readme_inventory_example(checkout: Path, tmp_path: Path) -> None:
    (block,) = _sh_blocks(SECTIONS["inventory"])
    lines = block.splitlines()
    cluster = [line for line in lines if line.endswith("# needs a cluster")]
    assert cluster == ["kubectl get nodes -o yaml > /tmp/nodes-full.yaml   # needs a cluster"]
    nodes = bench_inventory().nodes(16, seed=0, platform="aws")
    (tmp_path / "nodes-full.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes})
    )
    script = "\n".join(line for line in lines if line not in cluster)
    proc = _run(script, checkout, tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = checkout / "kustomization-examples" / "argocd-app" / "nodes.yaml"
    docs = list(yaml.safe_load_all(out.read_text()))
    assert len(docs) == 16 and all(d["kind"] == "Node" for d in docs)


def test_readme_argocd_example(checkout: Path, tmp_path: Path) -> None:
    (block,) = _sh_blocks(SECTIONS["argocd"])
    proc = _run(block, checkout, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "render.yaml"  # discover: the WorkloadRunRender matches
    docs = [d for d in yaml.safe_load_all((tmp_path / "argocd-generated.yaml").read_text()) if d]
    runtime = next(d for d in docs if d["kind"] == "TrainingRuntime")
    assert "ngc-pull" in str(runtime)
    assert all("suspend" not in d["spec"] for d in docs if d["kind"] == "TrainJob")


def test_readme_argocd_application_uses_the_plugin_and_its_env_mapping() -> None:
    start = README.index("\n" + SECTIONS["argocd"] + "\n")
    (app,) = [
        yaml.safe_load(b)
        for b in re.findall(r"```yaml\n(.*?)```", README[start:], re.DOTALL)
        if "kind: Application" in b
    ][:1]
    plugin = yaml.safe_load((REPO / "deploy" / "argocd" / "plugin.yaml").read_text())
    src = app["spec"]["source"]["plugin"]
    assert src["name"] == f"{plugin['metadata']['name']}-{plugin['spec']['version']}"
    allowed = re.search(r"case \"\$var\" in\n\s+(\S+)\)", plugin["spec"]["generate"]["args"][0])
    assert allowed
    assert {e["name"] for e in src["env"]} <= set(allowed.group(1).split("|"))


def test_readme_flux_example(checkout: Path, tmp_path: Path) -> None:
    (block,) = _sh_blocks(SECTIONS["flux"])
    proc = _run(block, checkout, tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = checkout / "rendered" / "gpu-validation"
    assert (out / "flux" / "kustomizations.yaml").is_file()
    assert (out / "dependencies" / "resources.yaml").is_file()


def test_readme_release_example(checkout: Path, tmp_path: Path) -> None:
    (block,) = _sh_blocks(SECTIONS["release"])
    # the last states of the recorded run: wave 2 due, then wave 3, then all complete
    replay = tmp_path / "recorded"
    replay.mkdir()
    for i, name in enumerate(["03.json", "05.json", "07.json"]):
        shutil.copy(HERE / "recorded" / "all-waves-complete" / name, replay / f"{i:02d}.json")
    proc = _run(
        block, checkout, tmp_path,
        WORKLOADRUN_FN_KUBECTL=f"{sys.executable} {HERE / 'replay_kubectl.py'}",
        REPLAY_DIR=str(replay), REPLAY_LOG=str(tmp_path / "patches.jsonl"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "patches.jsonl").read_text().splitlines()) == 2
    assert "all 4 wave(s) completed" in proc.stderr
