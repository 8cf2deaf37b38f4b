"""The shipped WorkloadRun CRD is generated from the models and accepts what they accept."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from krm_fn.api.crd import workloadrun_crd
from krm_fn.io import yamlio
from tests.builders import wr
from tests.k8s_schemas import _strict

REPO = Path(__file__).resolve().parents[1]
CRD_FILE = REPO / "deploy" / "workloadrun-crd.yaml"


def test_shipped_crd_is_in_sync_with_the_models() -> None:
    assert CRD_FILE.read_text() == yamlio.dump(workloadrun_crd()), (
        "regenerate with: workloadrun-fn schema > deploy/workloadrun-crd.yaml"
    )


def test_crd_is_a_valid_customresourcedefinition() -> None:
    kubernetes_validate.validate(yaml.safe_load(CRD_FILE.read_text()), "1.32", strict=True)


def _schema() -> dict:
    crd = yaml.safe_load(CRD_FILE.read_text())
    return _strict(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


def _golden_runs(valid: bool) -> list[dict]:
    runs = []
    for case in sorted((REPO / "tests" / "golden").iterdir()):
        if not (case / "input.yaml").exists() or (case / "expected-error.txt").exists() == valid:
            continue
        for doc in yaml.safe_load_all((case / "input.yaml").read_text()):
            items = doc.get("items", [doc]) if doc else []
            runs += [i for i in items if i.get("kind") == "WorkloadRun"]
    return runs


@pytest.mark.parametrize("run", _golden_runs(valid=True), ids=lambda r: r["metadata"]["name"])
def test_every_valid_golden_workloadrun_passes_the_crd(run: dict) -> None:
    jsonschema.validate(run, _schema())


def test_unknown_fields_are_rejected_by_the_crd() -> None:
    bad = wr(
        "x",
        {"image": "i", "framework": {"exec": {"command": ["c"]}}, "numNodes": 1, "envv": []},
        path=None,
    )
    with pytest.raises(jsonschema.ValidationError, match="envv"):
        jsonschema.validate(bad, _schema())
