"""The acceptance gate: every golden output passes ``trainer_sim.check_render`` with no finding.

``check_render`` replays the objects through a simulation of Kubeflow Trainer v2.3.0 and
JobSet v0.12.0 (admission with the pinned CRDs, webhooks, the JobSet build, Job/pod
validation, pod feasibility on the case's Nodes, apply order, MPI wiring and env at the ranks);
see ``../shared/tools/README.md``. The real ``kubectl kustomize`` output of every example goes
through the same gate in ``tests/e2e/test_kustomize_gate.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.trainer_gate import findings, split

HERE = Path(__file__).parent
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

XFAIL: dict[str, str] = {}
"""Cases whose finding belongs to another branch's issue: case -> the finding and the owner."""


def _items(path: Path) -> list[dict]:
    docs = [d for d in yaml.load_all(path.read_text(), Loader=_LOADER) if d]
    if len(docs) == 1 and docs[0].get("kind") == "ResourceList":
        return list(docs[0]["items"])
    return docs


def _cases() -> list[object]:
    out: list[object] = []
    for p in sorted((HERE / "golden").glob("*/expected.yaml")):
        out.append(("golden", p.parent.name, p, p.parent / "input.yaml"))
    for p in sorted((HERE / "golden_catalog").glob("*/*.yaml")):
        out.append(("catalog", f"{p.parent.name}/{p.stem}", p, p))
    params = []
    for kind, name, expected, inputs in out:  # type: ignore[misc]
        marks = [pytest.mark.xfail(strict=True, reason=XFAIL[name])] if name in XFAIL else []
        params.append(pytest.param(expected, inputs, id=f"{kind}:{name}", marks=marks))
    return params


@pytest.mark.parametrize(("expected", "inputs"), _cases())
def test_golden_output_is_admitted_and_runs_as_written(expected: Path, inputs: Path) -> None:
    generated, _ = split(_items(expected))
    _, input_objects = split(_items(inputs))
    assert generated
    assert findings(generated, input_objects, label=expected.parent.name) == []
