"""Shared helpers for the report tests: where the real logs are, and how to read them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # so that plain `pytest` (without `python -m`) finds krm_fn
    sys.path.insert(0, str(REPO))

from krm_fn.report.loglines import LogSource  # noqa: E402
from krm_fn.report.model import Report  # noqa: E402
from tests.shared import require_shared, shared_dir  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
REAL = DATA / "real"
"""Real public logs found for issue 15; each file's line 1 and README.md say where from."""


def real_log(name: str) -> Path:
    path = REAL / name
    assert path.is_file(), path
    return path


def shared_fixtures() -> Path:
    """The shared fixture logs: $WORKLOADRUN_SHARED/fixtures, else ../shared/fixtures.

    Possibly missing: the helpers below skip (naming the path) when it is.
    """
    return shared_dir() / "fixtures"


FIXTURES = shared_fixtures()
NCCL_LOGS = FIXTURES / "nccl-logs"
MEGATRON_LOGS = FIXTURES / "megatron-logs"


def logs_in(directory: Path) -> list[Path]:
    """The files of a shared log directory, sorted; skips the module when it is missing."""
    return sorted(require_shared("fixtures", directory.name).iterdir())


def nccl_log(name: str) -> Path:
    path = require_shared("fixtures", "nccl-logs") / name
    assert path.is_file(), path
    return path


def megatron_log(name: str) -> Path:
    path = require_shared("fixtures", "megatron-logs") / name
    assert path.is_file(), path
    return path


def source(path: Path, text: str | None = None) -> LogSource:
    """The log as the parsers see it; ``text`` replaces the content (cut/garbled copies)."""
    return LogSource.from_text(path.name, path.read_text("utf-8") if text is None else text)


@pytest.fixture()
def rendered_sample() -> Path:
    return DATA / "rendered.yaml"


def trainjob_yaml(
    name: str = "run-group-0",
    *,
    run: str = "run",
    group: str = "group-0",
    nodes: str | None = "node-a,node-b",
    thresholds: str | None = None,
    bandwidth: str | None = None,
    goodput: str | None = None,
    num_nodes: int = 2,
    gpus_per_node: int = 8,
) -> str:
    """One rendered TrainJob, following the render contract."""
    annotations = {
        "nvcre.nvidia.com/detected-platform": "aws",
        "nvcre.nvidia.com/detected-gpu-architecture": "h100",
        "nvcre.nvidia.com/framework": "mpi",
    }
    if nodes is not None:
        annotations["nvcre.nvidia.com/group-nodes"] = nodes
    if thresholds is not None:
        annotations["nvcre.nvidia.com/thresholds"] = thresholds
    if bandwidth is not None:
        annotations["nvcre.nvidia.com/bandwidth-measurement"] = bandwidth
    if goodput is not None:
        annotations["nvcre.nvidia.com/goodput-measurement"] = goodput
    lines = [
        "apiVersion: trainer.kubeflow.org/v1alpha1",
        "kind: TrainJob",
        "metadata:",
        f"  name: {name}",
        "  namespace: default",
        "  labels:",
        "    app.kubernetes.io/managed-by: workloadrun-fn",
        f"    nvcre.nvidia.com/workload-run: {run}",
        f"    nvcre.nvidia.com/group: {group}",
        "  annotations:",
        *(f"    {key}: {json.dumps(value)}" for key, value in annotations.items()),
        "spec:",
        f"  trainer: {{numNodes: {num_nodes}, numProcPerNode: {gpus_per_node}}}",
    ]
    return "\n".join(lines) + "\n"


def judge(rendered: str, logs: dict[str, str]) -> Report:
    """Evaluate ``rendered`` against in-memory logs (TrainJob name to text)."""
    from krm_fn.report.collect_logs import LogIndex
    from krm_fn.report.evaluate import evaluate
    from krm_fn.report.load_rendered import load_rendered

    index = LogIndex(
        {name: [LogSource.from_text(f"{name}.log", text)] for name, text in logs.items()}
    )
    return evaluate(load_rendered(rendered), index)
