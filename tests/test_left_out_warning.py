"""The warning about left-out nodes stays readable at fleet size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from krm_fn.entry.run import run_krm

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "krm" / "resourcelist.yaml"


def _render_with_not_ready(count: int) -> str:
    rl = yaml.safe_load(FIXTURE.read_text())
    nodes = [n for i in rl["items"] if i.get("kind") == "List" for n in i["items"]]
    assert len(nodes) == 16
    for node in nodes[:count]:
        for cond in node["status"]["conditions"]:
            if cond["type"] == "Ready":
                cond["status"] = "False"
    os.environ.setdefault("NGC_API_KEY", "test-registry-password")
    outcome = run_krm(yaml.safe_dump(rl).encode())
    assert outcome.exit_code == 0, outcome.stderr
    (line,) = [s for s in outcome.stderr if "left out" in s]
    return line


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        pytest.param(2, ": NotReady; ", id="few-left-out-nodes-are-listed-one-by-one"),
        pytest.param(12, "NotReady: 12 (", id="many-left-out-nodes-are-counted-per-reason"),
    ],
)
def test_left_out_nodes(count: int, expected: str) -> None:
    line = _render_with_not_ready(count)
    assert f"{count} node(s) matching the target are left out" in line
    assert expected in line


def test_summary_shows_three_examples_and_how_many_more() -> None:
    line = _render_with_not_ready(12)
    assert "and 9 more)" in line
    assert line.count("gpu-") == 3
