"""The real `kubectl kustomize --enable-alpha-plugins` output of every example through the gate.

For each example with a kustomization.yaml, the objects kustomize emits (in the order it emits
them, which is the order `kubectl kustomize ... | kubectl apply -f -` creates them) are run
through ``trainer_sim.check_render`` with the inputs kustomize handed to the function (the same
kustomization built without the render step). Every check must pass: in particular each
TrainJob must come after the TrainingRuntime it references, which kustomize's default
(legacy) order breaks and ``sortOptions: {order: fifo}`` in each example fixes.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.e2e.helpers import BIN, EXAMPLES, need, run
from tests.e2e.test_kustomize import KUSTOMIZATIONS
from tests.trainer_gate import findings, trainer_sim

pytestmark = pytest.mark.e2e

RENDER_STEP = re.compile(r"^(transformers|generators):\n(?:  - .*\n)+", re.MULTILINE)


@pytest.fixture(scope="module")
def plugin_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    xdg = tmp_path_factory.mktemp("xdg")
    proc = run([str(BIN / "workloadrun-fn"), "install-kustomize-plugin"], XDG_CONFIG_HOME=str(xdg))
    assert proc.returncode == 0, proc.stderr
    return xdg


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def _build(root: Path, plugin_home: Path) -> list[dict]:
    proc = run(
        [need("kubectl"), "kustomize", "--enable-alpha-plugins", str(root)],
        XDG_CONFIG_HOME=str(plugin_home),
    )
    assert proc.returncode == 0, proc.stderr
    return _docs(proc.stdout)


def _inputs(example: str, tmp: Path, plugin_home: Path) -> list[dict]:
    """What the function read: the kustomization built without its render step."""
    top = example.split("/", 1)[0]
    shutil.copytree(EXAMPLES / top, tmp / top)
    kfile = tmp / example / "kustomization.yaml"
    text = kfile.read_text()
    generator_mode = "generators:" in text
    kfile.write_text(RENDER_STEP.sub("", text))
    docs = _build(tmp / example, plugin_home) if "resources:" in text else []
    if generator_mode:  # the WorkloadRun is the generator config; the inventory an option
        for name in ("workloadrun.yaml", "inventory.yaml"):
            docs += _docs((EXAMPLES / example / name).read_text())
    return docs


@pytest.mark.parametrize("example", KUSTOMIZATIONS)
def test_kubectl_kustomize_output_passes_check_render(
    example: str, plugin_home: Path, tmp_path: Path
) -> None:
    out = _build(EXAMPLES / example, plugin_home)
    inputs = _inputs(example, tmp_path, plugin_home)
    assert any(d["kind"] == "WorkloadRun" for d in inputs)
    assert trainer_sim().apply_order_problems(out) == []
    assert findings(out, inputs, label=example) == []


@pytest.mark.parametrize("example", KUSTOMIZATIONS)
def test_without_sort_options_kustomize_would_apply_trainjobs_first(
    example: str, plugin_home: Path, tmp_path: Path
) -> None:
    """Why every example sets sortOptions: kustomize's legacy order breaks the apply."""
    top = example.split("/", 1)[0]
    shutil.copytree(EXAMPLES / top, tmp_path / top)
    kfile = tmp_path / example / "kustomization.yaml"
    text = kfile.read_text()
    assert "sortOptions:\n  order: fifo\n" in text
    kfile.write_text(text.replace("sortOptions:\n  order: fifo\n", ""))
    out = _build(tmp_path / example, plugin_home)
    problems = trainer_sim().apply_order_problems(out)
    assert problems, "kustomize's legacy order used to put TrainJob before TrainingRuntime"
    assert all(p.code == "reject.trainjob.runtime-missing" for p in problems)
