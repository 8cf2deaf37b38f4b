"""The render stays a pipeline of small stages (issue 13): an AST check of its modules.

Every function on the render path (``krm_fn/render.py``, the stage modules under
``krm_fn/stages/``, the builders, ``krm_fn/platforms/run_platform.py`` with the catalog's
``overlay``, ``templates`` and ``load``, and ``krm_fn/overrides/apply.py``) is at most
:data:`MAX_LINES` lines long, docstring included, and every stage module states its
invariants in a Google-style module docstring.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 60
RENDER_PATH = sorted(
    [
        REPO / "krm_fn" / "render.py",
        REPO / "krm_fn" / "platforms" / "run_platform.py",
        REPO / "krm_fn" / "platforms" / "overlay.py",
        REPO / "krm_fn" / "platforms" / "templates.py",
        REPO / "krm_fn" / "platforms" / "load.py",
        REPO / "krm_fn" / "overrides" / "apply.py",
        *(REPO / "krm_fn" / "stages").glob("*.py"),
        *(REPO / "krm_fn" / "builders").glob("*.py"),
    ]
)
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


def test_the_render_path_has_the_stage_modules() -> None:
    names = {p.stem for p in STAGES}
    assert {"parse", "nodes", "platform", "partitioning", "env", "overrides", "plan"} <= names
    assert {"waves", "objects", "finalize"} <= names
