"""What the function writes, read by the real Go readers: kpt (kyaml) and kubectl kustomize.

Issue 24's classes that only show through them, each on the smallest package that showed it:

* class 1: a Node whose local-config key is quoted; the fast reader's line edit went out
  although its grammar check had refused the item, and kpt wrote the key twice;
* class 3: a ``config.inline`` value ending in two newlines; PyYAML's ``...`` after it
  ended the ResourceList, and kpt silently wrote the ConfigMap alone, no TrainJob;
* class 8: env values ``08`` and ``1e3``; written plain, kustomize (yaml.v3) read them as
  the numbers 8 and 1000 when it round-tripped the TrainJob for a patch.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.helpers import BIN, load_docs, need, run

pytestmark = pytest.mark.e2e

RUN = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: WorkloadRun
metadata:
  name: pairs
spec:
  image: nvcr.io/nvidia/pytorch:26.01-py3
  env:
  - name: LEADING_ZERO
    value: "08"
  - name: EXPONENT
    value: "1e3"
  framework:
    mpi:
      mpirunPath: /usr/local/mpi/bin/mpirun
      binary: /usr/local/bin/all_reduce_perf_mpi
  numNodes: 1
  config:
    inline:
      run.sh: |+
        echo hi

"""

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-{i}
  annotations:
    "config.kubernetes.io/local-config": "false"
  labels:
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
spec:
  providerID: aws:///z/i-{i}
status:
  allocatable:
    nvidia.com/gpu: "8"
  conditions:
  - type: Ready
    status: "True"
"""


def _package(root: Path) -> Path:
    root.mkdir()
    (root / "workloadrun.yaml").write_text(RUN)
    (root / "nodes.yaml").write_text("---\n".join(NODE.format(i=i) for i in (1, 2)))
    return root


def _env(docs: list[dict[str, Any]]) -> dict[str, object]:
    job = next(d for d in docs if d["kind"] == "TrainJob")
    out: dict[str, object] = {}
    for step in job["spec"].get("podTemplateOverrides", []) or []:
        for c in step.get("spec", {}).get("containers", []) or []:
            out.update({e["name"]: e.get("value") for e in c.get("env", []) or []})
    runtime = next(d for d in docs if d["kind"] == "TrainingRuntime")
    for rjob in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        for c in rjob["template"]["spec"]["template"]["spec"]["containers"]:
            out.update({e["name"]: e.get("value") for e in c.get("env", []) or []})
    return out


@pytest.fixture(scope="module")
def kpt_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package after ``kpt fn eval --exec workloadrun-fn``: what kpt wrote back."""
    kpt = need("kpt")
    pkg = _package(tmp_path_factory.mktemp("kpt") / "pkg")
    proc = run([kpt, "fn", "eval", ".", "--exec", str(BIN / "workloadrun-fn")], pkg)
    assert proc.returncode == 0, proc.stderr
    return pkg


def test_kpt_writes_back_the_local_config_key_once(kpt_package: Path) -> None:
    """Class 1: the quoted key made the item fail the grammar; its edit goes by PyYAML's marks."""
    nodes_text = (kpt_package / "nodes.yaml").read_text()
    assert nodes_text.count("config.kubernetes.io/local-config") == 2  # once per Node
    for node in load_docs(kpt_package / "nodes.yaml"):
        assert node["metadata"]["annotations"] == {"config.kubernetes.io/local-config": "true"}


def test_kpt_writes_every_generated_object_after_a_keep_chomped_value(kpt_package: Path) -> None:
    """Class 3: no document-end marker after the ``|+`` value of the generated ConfigMap."""
    generated = load_docs(kpt_package / "generated" / "pairs.yaml")
    kinds = [d["kind"] for d in generated]
    assert kinds.count("TrainJob") == 2 and "TrainingRuntime" in kinds, kinds
    config = next(d for d in generated if d["kind"] == "ConfigMap")
    assert config["data"] == {"run.sh": "echo hi\n\n"}


def test_kustomize_reads_string_env_values_as_strings(tmp_path: Path) -> None:
    """Class 8 through ``kubectl kustomize``: a patch makes it decode every TrainJob."""
    kubectl = need("kubectl")
    xdg = tmp_path / "xdg"
    proc = run([str(BIN / "workloadrun-fn"), "install-kustomize-plugin"], XDG_CONFIG_HOME=str(xdg))
    assert proc.returncode == 0, proc.stderr
    base = _package(tmp_path / "base")
    (base / "render.yaml").write_text(
        "apiVersion: fn.nvcre.nvidia.com/v1alpha1\nkind: WorkloadRunRender\n"
        "metadata:\n  name: render\n"
    )
    (base / "kustomization.yaml").write_text(
        "resources: [workloadrun.yaml, nodes.yaml]\ntransformers: [render.yaml]\n"
    )
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources: [../base]\npatches:\n- target: {kind: TrainJob}\n  patch: |-\n"
        "    - op: add\n      path: /metadata/labels/patched\n      value: 'yes'\n"
        "- target: {kind: TrainingRuntime}\n  patch: |-\n"
        "    - op: add\n      path: /metadata/labels/patched\n      value: 'yes'\n"
    )
    proc = run(
        [kubectl, "kustomize", "--enable-alpha-plugins", str(overlay)],
        XDG_CONFIG_HOME=str(xdg),
    )
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    assert all(d["metadata"]["labels"]["patched"] == "yes" for d in docs if "Train" in d["kind"])
    env = _env(docs)
    assert env["LEADING_ZERO"] == "08" and env["EXPONENT"] == "1e3", env
    shutil.rmtree(tmp_path / "xdg")
