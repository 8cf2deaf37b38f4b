"""The README's and docs' examples, executed as written.

Shell examples of the GitOps paths (README, docs/gitops.md): only two things are substituted:
``/tmp/`` becomes the test's own directory, and a line marked ``# needs a cluster`` is
replaced by its output from test data (a realistic ``kubectl get nodes -o yaml`` from
bench/make_inventory.py); ``workloadrun-fn release`` reaches its "cluster" through the
documented kubectl seam (``WORKLOADRUN_FN_KUBECTL``) replaying recorded TrainJob states.

Every ```` ```yaml ```` block of the README and of ``docs/*.md`` is an example, and each is run
the way its shape says (:func:`_run_yaml_example`): a WorkloadRun, or a fragment of its
``spec``, is rendered on the shipped fixture's Nodes; a function config, or a fragment of its
``spec``, configures that render; a kustomization fragment is built with the real
``kubectl kustomize``; an Argo CD Application must name the shipped plugin; a function
annotation must be the one the standalone-kustomize example uses. A block of any other shape
fails the test: a shape that is not an example belongs in a ```` ```text ```` block. Every
```` ```python ```` block runs as a script in a fresh interpreter.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.api.models import WorkloadRunSpec
from krm_fn.gitops.env_options import argocd_exports
from krm_fn.platforms.catalog import load_catalog
from tests.e2e.helpers import BIN, EXAMPLES, need
from tests.gitops.image_env import REPO
from tests.gitops.test_flux import _checkout_of_this_repository
from tests.gitops.test_inventory_command import bench_inventory

HERE = Path(__file__).parent
README = (REPO / "README.md").read_text()
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SECTIONS = {
    "inventory": "Node inventory for GitOps (`workloadrun-fn inventory`)",
    "argocd": "Argo CD",
    "flux": "Flux",
    "release": "Plain kubectl: releasing waves (`workloadrun-fn release`)",
}


def _sections(heading: str) -> list[str]:
    """The bodies of the sections titled ``heading`` in the README and the docs pages."""
    out = []
    for page in PAGES:
        text = page.read_text()
        for m in re.finditer(rf"^(#+) {re.escape(heading)}\n", text, re.M):
            end = re.search(rf"^#{{1,{len(m.group(1))}}} ", text[m.end() :], re.M)
            out.append(text[m.end() : m.end() + end.start() if end else None])
    return out


def _sh_blocks(heading: str) -> list[str]:
    """The shell examples of every section titled ``heading`` (README, then docs/)."""
    return [b for s in _sections(heading) for b in re.findall(r"```sh\n(.*?)```", s, re.DOTALL)]


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


# --- every YAML example of the README and docs/ ---------------------------------------------


def _yaml_examples() -> list[Any]:
    out = []
    for page in PAGES:
        text = page.read_text()
        for m in re.finditer(r"^( *)```yaml\n(.*?)^\1```", text, re.S | re.M):
            block = "\n".join(line[len(m.group(1)) :] for line in m.group(2).splitlines())
            where = f"{page.relative_to(REPO)}:{text[: m.start()].count(chr(10)) + 1}"
            out.append(pytest.param(block, id=where))
    return out


FIXTURE_RUN = REPO / "fixtures" / "workloadrun-basic-mpi.yaml"
FIXTURE_NODES = REPO / "fixtures" / "nodes-16.yaml"
SPEC_FIELDS = {f.alias or name for name, f in WorkloadRunSpec.model_fields.items()}


def _render(tmp: Path, run: dict[str, Any], config: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Render ``run`` on the fixture's 16 Nodes (with ``config``), as a user would, in ``tmp``."""
    (tmp / "run.yaml").write_text(yaml.safe_dump(run))
    args = [str(BIN / "workloadrun-fn"), "render", str(tmp / "run.yaml"), str(FIXTURE_NODES)]
    if config is not None:
        (tmp / "config.yaml").write_text(yaml.safe_dump(config))
        args += ["--config", str(tmp / "config.yaml")]
    proc = subprocess.run(
        args, capture_output=True, text=True, timeout=120, cwd=tmp,
        env={**os.environ, "NGC_API_KEY": "example-api-key"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    assert [d["kind"] for d in docs].count("TrainJob") >= 1
    return docs


def _build_with_sort_options(tmp: Path, sort_options: dict[str, Any]) -> list[str]:
    """The kinds ``kubectl kustomize`` emits for basic-mpi with these sortOptions."""
    kubectl = need("kubectl")
    root = tmp / "basic-mpi"
    shutil.copytree(EXAMPLES / "basic-mpi", root)
    kust = yaml.safe_load((root / "kustomization.yaml").read_text())
    (root / "kustomization.yaml").write_text(yaml.safe_dump({**kust, **sort_options}))
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "xdg")}
    for cmd in ([str(BIN / "workloadrun-fn"), "install-kustomize-plugin"],
                [kubectl, "kustomize", "--enable-alpha-plugins", str(root)]):  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr
    return [d["kind"] for d in yaml.safe_load_all(proc.stdout) if d]


def _function_annotation_of_the_standalone_example() -> dict[str, Any]:
    for path in sorted((EXAMPLES / "krm-exec-standalone").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            ann = ((doc or {}).get("metadata") or {}).get("annotations") or {}
            if "config.kubernetes.io/function" in ann:
                return dict(yaml.safe_load(ann["config.kubernetes.io/function"]))
    raise AssertionError("krm-exec-standalone has no function annotation")


def _site_catalog_example() -> dict[str, Any]:
    """The site catalog file the docs show (``platformCatalog`` examples name it)."""
    docs = (yaml.safe_load(b.values[0]) for b in _yaml_examples())
    return next(d for d in docs if isinstance(d, dict) and set(d) == {"version", "platforms"})


def _run_yaml_example(doc: Any, tmp: Path) -> None:
    """Run one example the way its shape says (see the module docstring)."""
    run = yaml.safe_load(FIXTURE_RUN.read_text())
    keys = set(doc) if isinstance(doc, dict) else set()
    if doc.get("kind") == "WorkloadRun":
        _render(tmp, doc, None)
    elif doc.get("kind") == "WorkloadRunRender":
        for path in (doc.get("spec") or {}).get("platformCatalog") or []:
            (tmp / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp / path).write_text(yaml.safe_dump(_site_catalog_example()))
        _render(tmp, run, doc)
    elif keys == {"version", "platforms"}:  # a site platform catalog file
        (tmp / "site.yaml").write_text(yaml.safe_dump(doc))
        names = {p.name for p in load_catalog([tmp / "site.yaml"]).platforms}
        assert {p["name"] for p in doc["platforms"]} <= names
    elif doc.get("kind") == "Application":
        plugin = yaml.safe_load((REPO / "deploy" / "argocd" / "plugin.yaml").read_text())
        src = doc["spec"]["source"]["plugin"]
        assert src["name"] == f"{plugin['metadata']['name']}-{plugin['spec']['version']}"
        env = {f"ARGOCD_ENV_{e['name']}": e["value"] for e in src["env"]}
        exports, problems = argocd_exports(env)
        assert not problems and len(exports) == len(env), problems
    elif keys == {"spec"}:  # the options of a WorkloadRunRender
        config = {"apiVersion": "fn.nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRunRender"}
        configured = _render(tmp, run, {**config, "metadata": {"name": "render"}, **doc})
        assert configured != _render(tmp, run, None), "the options changed nothing"
    elif keys == {"sortOptions"}:
        kinds = _build_with_sort_options(tmp, doc)
        assert kinds.index("TrainingRuntime") < kinds.index("TrainJob"), kinds
    elif keys == {"metadata"} and "config.kubernetes.io/function" in doc["metadata"]["annotations"]:
        shown = yaml.safe_load(doc["metadata"]["annotations"]["config.kubernetes.io/function"])
        assert shown == _function_annotation_of_the_standalone_example()
    elif keys and keys <= SPEC_FIELDS:  # fields of a WorkloadRun's spec
        run["spec"].update(doc)
        _render(tmp, run, None)
    else:
        raise AssertionError(f"no way to run this example (keys {sorted(keys)}): {doc!r}")


@pytest.mark.parametrize("block", _yaml_examples())
def test_every_yaml_example_of_the_readme_and_docs_runs(block: str, tmp_path: Path) -> None:
    doc = yaml.safe_load(block)
    assert isinstance(doc, dict), "an example is a mapping"
    _run_yaml_example(doc, tmp_path)


def test_an_example_of_an_unknown_shape_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="no way to run this example"):
        _run_yaml_example({"replicas": 3}, tmp_path)


def _python_examples() -> list[Any]:
    blocks = [
        pytest.param(block, id=f"{page.name}-python-{i}")
        for page in PAGES
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S))
    ]
    assert blocks, "the docs show Python examples (docs/detection.md, docs/report.md)"
    return blocks


@pytest.mark.parametrize("block", _python_examples())
def test_every_python_example_of_the_readme_and_docs_runs(block: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
