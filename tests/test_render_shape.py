"""The code stays a pipeline of small functions (issue 13): an AST check of its modules.

Every function and method of every module under ``krm_fn/`` (the render path: ``render.py``,
the stages, the builders, the platform and override code; and everything around it: the
entry points, the readers and writers under ``io/``, the models under ``api/``, the fleet,
GitOps and CLI code) is at most :data:`MAX_LINES` lines long, docstring included.
``krm_fn/report/`` is left out here: ``tests/report/test_report_shape.py`` checks it. Every
stage module states its invariants in a Google-style module docstring.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 60
KRM_FN = REPO / "krm_fn"
REPORT = KRM_FN / "report"
RENDER_PATH = sorted(p for p in KRM_FN.rglob("*.py") if not p.is_relative_to(REPORT))
"""Every module of ``krm_fn/`` but the report's (which has its own check)."""
STAGES = sorted(p for p in (REPO / "krm_fn" / "stages").glob("*.py") if p.name != "__init__.py")


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """(qualified name, lines) of every function or method longer than ``limit`` lines."""
    out: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = (child.end_lineno or child.lineno) - child.lineno + 1
                    if lines > limit:
                        out.append((name, lines))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def _id(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.mark.parametrize("path", RENDER_PATH, ids=_id)
def test_no_function_on_the_render_path_is_longer_than_60_lines(path: Path) -> None:
    too_long = long_functions(path.read_text(encoding="utf-8"))
    assert not too_long, (
        f"{_id(path)}: {too_long} longer than {MAX_LINES} lines; split it into named steps"
    )


@pytest.mark.parametrize("path", STAGES, ids=_id)
def test_every_stage_module_states_its_invariants(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and "Invariants" in doc, f"{_id(path)} needs a docstring with an Invariants section"


def test_the_check_finds_a_long_function_nested_in_a_class() -> None:
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_LINES))
    source = f"class A:\n    def long(self) -> None:\n{body}\n\ndef short() -> None:\n    pass\n"
    assert long_functions(source) == [("A.long", MAX_LINES + 1)]


def test_every_module_but_the_reports_is_checked() -> None:
    checked = {_id(p) for p in RENDER_PATH}
    assert {
        "krm_fn/render.py",
        "krm_fn/io/fastio/reader.py",
        "krm_fn/entry/run.py",
        "krm_fn/api/rules.py",
        "krm_fn/fleet/topology.py",
        "krm_fn/gitops/flux.py",
    } <= checked
    packages = {p.parent for p in KRM_FN.rglob("__init__.py") if not p.is_relative_to(REPORT)}
    assert {p.parent for p in RENDER_PATH} == packages, "every package but the report's"
    assert not any(name.startswith("krm_fn/report/") for name in checked)


def test_the_render_path_has_the_stage_modules() -> None:
    names = {p.stem for p in STAGES}
    assert {"parse", "nodes", "platform", "partitioning", "env", "overrides", "plan"} <= names
    assert {"waves", "objects", "finalize"} <= names


MAX_PACKAGE_LINES = 21_000
"""Issue 25's measure of facts written once: the Python of ``krm_fn/`` (25,300 lines before)."""


def test_the_package_stays_within_its_line_budget() -> None:
    total = sum(len(p.read_text().splitlines()) for p in KRM_FN.rglob("*.py"))
    assert total <= MAX_PACKAGE_LINES, f"krm_fn has {total} lines of Python"
