"""The function under the real `kubectl kustomize --enable-alpha-plugins` (kustomize v5.5.0).

kubectl has no `--enable-exec`, so exec KRM functions are skipped silently there; the
legacy exec-plugin protocol works, and `workloadrun-fn install-kustomize-plugin` installs it.
Every example under kustomization-examples/ with a kustomization.yaml is built, compared
with its `expected.yaml` (regenerate with --update-golden) and validated.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
import yaml

from tests.e2e.helpers import BIN, EXAMPLES, REPO, need, run
from tests.k8s_schemas import validate_all

pytestmark = pytest.mark.e2e

_KEY = re.search(r"NGC_API_KEY=(\S+) kubectl kustomize", (REPO / "README.md").read_text())
assert _KEY, "the README's kubectl kustomize command sets NGC_API_KEY"
README_KEY = _KEY.group(1)

KUSTOMIZATIONS = sorted(
    str(p.parent.relative_to(EXAMPLES))
    for p in EXAMPLES.rglob("kustomization.yaml")
    if not (p.parent / "Kptfile").exists()
    and not (p.parent / ".standalone-kustomize-only").exists()
    and "base" not in p.parent.parts
)


@pytest.fixture(scope="module")
def plugin_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    xdg = tmp_path_factory.mktemp("xdg")
    proc = run([str(BIN / "workloadrun-fn"), "install-kustomize-plugin"], XDG_CONFIG_HOME=str(xdg))
    assert proc.returncode == 0, proc.stderr
    assert "installed" in proc.stdout
    return xdg


def test_installer_places_both_plugin_kinds(plugin_home: Path) -> None:
    root = plugin_home / "kustomize" / "plugin"
    for rel in (
        "fn.nvcre.nvidia.com/v1alpha1/workloadrunrender/WorkloadRunRender",
        "nvcre.nvidia.com/v1alpha1/workloadrun/WorkloadRun",
    ):
        path = root / rel
        assert path.is_file()
        assert path.stat().st_mode & 0o111
        assert str(BIN / "workloadrun-fn") in path.read_text()


@pytest.mark.parametrize("example", KUSTOMIZATIONS)
def test_example_builds_with_kubectl_kustomize(
    example: str, plugin_home: Path, update_golden: bool
) -> None:
    kubectl = need("kubectl")
    root = EXAMPLES / example
    proc = run(  # the key the README's commands use, so a reader gets exactly expected.yaml
        [kubectl, "kustomize", "--enable-alpha-plugins", str(root)],
        XDG_CONFIG_HOME=str(plugin_home),
        NGC_API_KEY=README_KEY,
    )
    assert proc.returncode == 0, proc.stderr
    expected = root / "expected.yaml"
    if update_golden:
        expected.write_text(proc.stdout)
    assert proc.stdout == expected.read_text()
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    kinds = {d["kind"] for d in docs}
    assert "TrainJob" in kinds and "TrainingRuntime" in kinds
    assert not kinds & {"WorkloadRun", "Node", "List", "WorkloadRunRender"}
    assert validate_all(docs) == []
    assert README_KEY not in proc.stderr
    for secret in (d for d in docs if d["kind"] == "Secret"):
        auth = json.loads(base64.b64decode(secret["data"][".dockerconfigjson"]))
        assert {a["password"] for a in auth["auths"].values()} == {README_KEY}


def test_without_alpha_plugins_kustomize_refuses_rather_than_skipping(plugin_home: Path) -> None:
    kubectl = need("kubectl")
    proc = run(
        [kubectl, "kustomize", str(EXAMPLES / "basic-mpi")], XDG_CONFIG_HOME=str(plugin_home)
    )
    assert proc.returncode != 0
    assert "plugins" in proc.stderr


def test_an_invalid_workloadrun_fails_the_build_with_our_message(
    tmp_path: Path, plugin_home: Path
) -> None:
    import shutil

    kubectl = need("kubectl")
    dst = tmp_path / "bad"
    shutil.copytree(EXAMPLES / "basic-mpi", dst)
    wr = dst / "workloadrun.yaml"
    wr.write_text(wr.read_text().replace("numNodes: 4", "numNodes: 40"))
    proc = run(
        [kubectl, "kustomize", "--enable-alpha-plugins", str(dst)], XDG_CONFIG_HOME=str(plugin_home)
    )
    assert proc.returncode != 0
    assert "not enough eligible nodes: need 40 (numNodes), found 16" in proc.stderr
    assert proc.stdout == ""
