"""`workloadrun-fn report` on the rendered fixture plus a directory of real nccl-tests logs."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.helpers import BIN, REPO, fn_env
from tests.shared import require_shared

# The fixture renders four groups of 4 nodes x 8 GPUs. A log must cover its group (its
# '# Using devices' lines name 4 hosts with 8 devices each): the one real log we have of that
# shape (nccl-tests#309, tests/report/data/real/) stands in for each group's launcher log.
# The shared fixtures list no (or too few) rank lines, so they fail closed.
FOUR_BY_EIGHT = (
    REPO
    / "tests"
    / "report"
    / "data"
    / "real"
    / "nvidia-nccl-tests-issue-309_h100-4node-32rank_all_reduce_perf_mpi.txt"
)
LOGS = [FOUR_BY_EIGHT] * 4
SHARED = [
    "aws-awsome-distributed-training_aws-batch-p5_all_reduce.txt",
    "lessizzmore-create-a3mega_gce-a3-mega-vm-2node_all_reduce.txt",
]


def _render_fixture(tmp: Path) -> Path:
    proc = subprocess.run(
        [str(BIN / "workloadrun-fn"), "render", str(REPO / "fixtures")],
        env=fn_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    out = tmp / "rendered.yaml"
    out.write_text(proc.stdout)
    return out


def _logs(tmp: Path, paths: list[Path]) -> Path:
    logs = tmp / "logs"
    logs.mkdir()
    for i, path in enumerate(paths):
        shutil.copy(path, logs / f"my-workload-group-{i}.log")
    return logs


def test_report_prints_the_table_and_writes_the_plot(tmp_path: Path) -> None:
    rendered = _render_fixture(tmp_path)
    logs = _logs(tmp_path, LOGS)
    plot = tmp_path / "busbw.svg"
    proc = subprocess.run(
        [
            str(BIN / "workloadrun-fn"),
            "report",
            str(rendered),
            "--logs",
            str(logs),
            "--plot",
            str(plot),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Groups:    4/4 passed" in proc.stdout
    # nccl-tests#309 log, footer line "# Avg bus bandwidth    : 107.51 "
    assert "Avg Bus Bandwidth:        107.51 GB/s" in proc.stdout
    assert ET.parse(plot).getroot().tag.endswith("svg")


def test_report_fails_when_a_group_has_no_log(tmp_path: Path) -> None:
    rendered = _render_fixture(tmp_path)
    logs = _logs(tmp_path, LOGS[:3])
    proc = subprocess.run(
        [str(BIN / "workloadrun-fn"), "report", str(rendered), "--logs", str(logs)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "my-workload-group-3" in proc.stdout


@pytest.mark.parametrize("fmt", ["json", "md"])
def test_report_other_formats(fmt: str, tmp_path: Path) -> None:
    rendered = _render_fixture(tmp_path)
    logs = _logs(tmp_path, LOGS)
    proc = subprocess.run(
        [str(BIN / "workloadrun-fn"), "report", str(rendered), "--logs", str(logs), "-o", fmt],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "my-workload" in proc.stdout


def test_report_fails_closed_on_logs_that_do_not_cover_the_group(tmp_path: Path) -> None:
    rendered = _render_fixture(tmp_path)
    shared = [require_shared("fixtures", "nccl-logs", name) for name in SHARED]
    logs = _logs(tmp_path, [*shared, FOUR_BY_EIGHT, FOUR_BY_EIGHT])
    proc = subprocess.run(
        [str(BIN / "workloadrun-fn"), "report", str(rendered), "--logs", str(logs)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "Groups:    2/4 passed" in proc.stdout
    # aws-batch-p5 lists no rank lines; lessizzmore ran on 2 hosts for a 4-node group
    assert "'# Rank N ... on HOST device D' lines under '# Using devices'" in proc.stdout
    assert "2 of the group's 4 nodes: the ranks ran on 2 host(s)" in proc.stdout
