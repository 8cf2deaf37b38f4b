"""`workloadrun-fn report` on the rendered fixture plus a directory of real nccl-tests logs."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.helpers import BIN, REPO, fn_env
from tests.shared import require_shared

LOGS = [
    "aws-awsome-distributed-training_aws-batch-p5_all_reduce.txt",
    "aws-awsome-distributed-training_eks-p5-mpijob_all_reduce_excerpt.txt",
    "coreweave-nccl-tests_h100-64gpu-sharp-mpijob_all_reduce.txt",
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


def _logs(tmp: Path, names: list[str]) -> Path:
    logs = tmp / "logs"
    logs.mkdir()
    for i, name in enumerate(names):
        shutil.copy(
            require_shared("fixtures", "nccl-logs", name), logs / f"my-workload-group-{i}.log"
        )
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
    # aws-batch-p5 log, footer line "# Avg bus bandwidth    : 156.742"
    assert "Avg Bus Bandwidth:   156.74 GB/s" in proc.stdout
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
