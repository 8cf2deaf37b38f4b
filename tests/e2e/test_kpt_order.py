"""Under the real kpt 1.0.0-beta.56: the rendered package is in apply order for `kpt live apply`.

`kpt live apply` (cli-utils) orders objects by `config.kubernetes.io/depends-on` and refuses
the whole apply when a reference names an object outside the package ("external dependency",
e.g. kptdev/kpt#2579 and GoogleCloudPlatform/pubsec-declarative-toolkit#422). No cluster runs
here, so the test checks what cli-utils checks before applying: every reference parses
(`<group>/namespaces/<ns>/<kind>/<name>`) and names an object of the package.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_fn.builders.apply_order import ANN_DEPENDS_ON, ANN_SYNC_WAVE
from tests.e2e.helpers import PASSWORD, copy_example, load_docs, need, run
from tests.trainer_gate import trainer_sim

pytestmark = pytest.mark.e2e


def _ref(o: dict) -> str:
    api = o["apiVersion"]
    group = api.split("/", 1)[0] if "/" in api else ""
    return f"{group}/namespaces/{o['metadata']['namespace']}/{o['kind']}/{o['metadata']['name']}"


def test_kpt_render_with_a_namespace_gives_depends_on_that_resolve_in_the_package(
    tmp_path: Path,
) -> None:
    kpt = need("kpt")
    pkg = copy_example("kpt-basic", tmp_path)
    wr = pkg / "workloadrun.yaml"
    wr.write_text(
        wr.read_text().replace("  name: my-workload #", "  namespace: gpu\n  name: my-workload #")
    )
    proc = run([kpt, "fn", "render", "--allow-exec", str(pkg)])
    assert proc.returncode == 0, proc.stderr
    docs = load_docs(pkg / "generated" / "gpu" / "my-workload.yaml")
    # the example pulls through an ExternalSecret (kpt writes into the package: no password)
    assert [d["kind"] for d in docs] == ["ExternalSecret", "TrainingRuntime"] + ["TrainJob"] * 4
    assert all(PASSWORD not in p.read_text() for p in pkg.rglob("*") if p.is_file())
    present = {_ref(d) for d in docs}
    deps = [_ref(d) for d in docs if d["kind"] != "TrainJob"]
    for d in docs:
        ann = d["metadata"]["annotations"]
        if d["kind"] == "TrainJob":
            refs = ann[ANN_DEPENDS_ON].split(",")
            assert refs == deps
            assert set(refs) <= present
            assert ann[ANN_SYNC_WAVE] == "1"
        else:
            assert ANN_DEPENDS_ON not in ann and ann[ANN_SYNC_WAVE] == "0"
    assert trainer_sim().apply_order_problems(docs) == []
