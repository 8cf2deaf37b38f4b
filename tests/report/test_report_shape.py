"""The report stays a set of small, named steps (issue 13): an AST check of its modules.

Every function and method of ``krm_fn/report`` (the ``report`` subcommand: log parsers,
failure detection, verdicts, renderers and the SVG plot) is at most
:data:`~tests.test_render_shape.MAX_LINES` lines long, docstring included, counted by the same
:func:`~tests.test_render_shape.long_functions` as the render path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_render_shape import MAX_LINES, long_functions

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "krm_fn" / "report"
REPORT_MODULES = sorted(REPORT.rglob("*.py"))


def _id(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@pytest.mark.parametrize("path", REPORT_MODULES, ids=_id)
def test_no_function_of_the_report_is_longer_than_60_lines(path: Path) -> None:
    too_long = long_functions(path.read_text(encoding="utf-8"))
    assert not too_long, (
        f"{_id(path)}: {too_long} longer than {MAX_LINES} lines; split it into named steps"
    )


def test_the_check_covers_the_parsers_the_verdicts_and_the_plot() -> None:
    names = {p.stem for p in REPORT_MODULES}
    assert {"nccl_tests", "training", "megatron", "nemo2", "detect_failures", "evaluate"} <= names
    assert {"plot_svg", "render_text", "render_md", "model", "command"} <= names
