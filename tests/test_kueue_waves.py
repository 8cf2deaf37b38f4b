"""Kueue and waves: a warning when Kueue would start later waves as soon as quota allows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.entry.run import run_krm

CASE = Path(__file__).parent / "golden" / "basic-mpi-16-nodes-four-groups-with-pull-secret"
QUEUE = "kueue.x-k8s.io/queue-name"


@pytest.fixture(autouse=True)
def _password(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in (yaml.safe_load((CASE / "env.yaml").read_text()) or {}).items():
        monkeypatch.setenv(k, str(v))


def _run(**spec: Any) -> list[str]:
    rl = yaml.safe_load((CASE / "input.yaml").read_text())
    wr = next(i for i in rl["items"] if i["kind"] == "WorkloadRun")
    wr["spec"].update(spec)
    out = run_krm(yaml.safe_dump(rl, sort_keys=False).encode())
    assert out.exit_code == 0, out.stderr
    return out.stderr


KUEUE_LABELS = {"workloadMetadata": {"labels": {QUEUE: "gpu-queue"}}}
KUEUE_GANG = {
    "gangScheduler": {"schedulerName": "default-scheduler", "queueLabelKey": QUEUE, "queue": "q"}
}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({**KUEUE_LABELS, "orchestration": {"repeatCount": 2}}, "spec.workloadMetadata.labels"),
        ({**KUEUE_GANG, "orchestration": {"maxConcurrent": 2}}, "spec.gangScheduler.queueLabelKey"),
    ],
    ids=["queue-label-from-workload-metadata", "queue-label-from-the-gang-scheduler"],
)
def test_kueue_queue_label_with_several_waves_warns(spec: dict[str, Any], field: str) -> None:
    stderr = "\n".join(_run(**spec))
    assert f"carry Kueue's queue label {QUEUE} and the run has 2 waves" in stderr
    assert "start as soon as quota allows" in stderr
    assert field in stderr


@pytest.mark.parametrize(
    "spec",
    [KUEUE_LABELS, {"orchestration": {"repeatCount": 2}}],
    ids=["kueue-with-one-wave", "several-waves-without-kueue"],
)
def test_no_warning_when_kueue_cannot_reorder_waves(spec: dict[str, Any]) -> None:
    assert not any("Kueue" in line for line in _run(**spec))
