"""docs/report.md runs as written: each ``console`` example, and the plot it shows.

A block holds one ``$ workloadrun-fn report …`` command, its output (a line ``...`` stands
for any number of lines) and, after ``$ echo $?``, its exit code. The command is run from the
repository root; a ``--plot docs/…`` file is drawn to a temporary path and must equal the
committed one byte for byte (``--update-golden`` rewrites it), so the picture in the doc is
always the one the code draws.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from krm_fn.report.command import report

from .conftest import REPO

DOC = REPO / "docs" / "report.md"
PROMPT = "$ workloadrun-fn report "
BLOCK_RE = re.compile(r"^```console\n(.*?)^```$", re.S | re.M)


@dataclass(frozen=True)
class Example:
    args: list[str]
    expected: list[str]
    exit_code: int


def examples() -> list[Example]:
    found = []
    for block in BLOCK_RE.findall(DOC.read_text("utf-8")):
        command, *rest = block.rstrip("\n").split("\n")
        assert command.startswith(PROMPT), command
        assert rest[-2] == "$ echo $?", "each example ends with its exit code"
        found.append(Example(shlex.split(command.removeprefix(PROMPT)), rest[:-2], int(rest[-1])))
    return found


def matches(actual: str, expected: list[str]) -> bool:
    """Whether ``actual`` is ``expected`` line by line, a ``...`` line standing for any lines."""
    parts = [
        r"(?:[^\n]*\n)*?" if line.strip() == "..." else re.escape(line.rstrip()) + r"\n"
        for line in expected
    ]
    text = "".join(line.rstrip() + "\n" for line in actual.splitlines())
    return re.fullmatch("".join(parts), text) is not None


def test_the_doc_has_its_three_examples() -> None:
    assert [e.exit_code for e in examples()] == [0, 0, 1]


@pytest.mark.parametrize(
    "example", examples(), ids=["log-alone", "nemo2-markdown", "rendered-with-plot"]
)
def test_example_prints_what_the_doc_shows(
    example: Example,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    update_golden: bool,
) -> None:
    monkeypatch.chdir(REPO)
    args, plots = list(example.args), []
    for index, arg in enumerate(args[:-1]):
        if arg == "--plot":
            plots.append((REPO / args[index + 1], tmp_path / Path(args[index + 1]).name))
            args[index + 1] = str(plots[-1][1])
    result = CliRunner().invoke(report, args, catch_exceptions=False)
    assert result.exit_code == example.exit_code, result.output
    assert matches(result.stdout, example.expected), result.stdout
    for committed, drawn in plots:
        if update_golden:
            committed.write_bytes(drawn.read_bytes())
        assert committed.read_bytes() == drawn.read_bytes(), (
            f"{committed} is not the plot the code draws: rerun with --update-golden"
        )


def test_matches_needs_every_line_outside_an_elision() -> None:
    assert matches("a\nb\nc\n", ["a", "...", "c"])
    assert matches("a\nc\n", ["a", "...", "c"])
    assert not matches("a\nb\nc\n", ["a", "c"])
    assert not matches("a\nb\n", ["a", "...", "c"])
