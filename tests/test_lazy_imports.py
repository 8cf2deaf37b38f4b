"""The function run imports only what it uses (the cold start is a target of bench/run.py).

A KRM function starts once per pipeline step, so its start-up is paid on every
``kpt fn render`` and ``kubectl kustomize``. These checks run the real entry point in a fresh
interpreter and list what got imported: a module here that a run does not need is a
regression of the cold start even when no timing shows it yet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "krm" / "resourcelist.yaml"

NOT_ON_THE_RENDER_PATH = (
    "click",  # only the subcommands need it
    "jsonpatch",  # only jobTemplatePatch needs it
    "difflib",  # only unknown-field errors need it
    "hashlib",  # only names over the length limits need it
    "pickle",  # only the fast reader's helper process (inputs of 4 MiB or more) needs it
    "importlib.metadata",
    "krm_fn.report",
    "krm_fn.overrides",  # only a run with spec.overrides needs it
    "krm_fn.expressions",  # only a `when.expression` or a threshold needs it
    "cel_expr_python",  # the CEL library, likewise
    "ruamel",
)

_PROBE = """
import io, json, os, sys
sys.argv = ["workloadrun-fn", *sys.argv[1:]]
data = open(os.environ["PROBE_INPUT"], "rb").read()
sys.stdin = io.TextIOWrapper(io.BytesIO(data))
out = open(os.devnull, "w")
real_stdout, sys.stdout = sys.stdout, out
from krm_fn.entry.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
sys.stdout = real_stdout
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _modules_after(path: Path, *args: str) -> list[str]:
    env = {**os.environ, "PROBE_INPUT": str(path), "NGC_API_KEY": "probe-password"}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stderr
    modules: list[str] = report["modules"]
    return modules


@pytest.fixture(scope="module")
def loaded() -> list[str]:
    """The modules a render of the shipped fixture leaves in ``sys.modules``."""
    return _modules_after(FIXTURE)


_PYDANTIC_PROBE = """
import json, sys
from pydantic import BaseModel, ConfigDict, Field
class Probe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
Probe.model_validate({"name": "x"})
print(json.dumps(sorted(sys.modules)))
"""


@pytest.fixture(scope="module")
def pydantic_needs() -> set[str]:
    """What pydantic itself imports to build and use a model (allowed on the render path:
    the API models are pydantic's); anything beyond this the function imported itself."""
    proc = subprocess.run(
        [sys.executable, "-c", _PYDANTIC_PROBE], capture_output=True, text=True, check=True
    )
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("module", NOT_ON_THE_RENDER_PATH)
def test_rendering_the_fixture_does_not_import(
    module: str, loaded: list[str], pydantic_needs: set[str]
) -> None:
    hits = [
        m for m in loaded if (m == module or m.startswith(module + ".")) and m not in pydantic_needs
    ]
    assert not hits, f"a plain render imported {hits}"


def test_the_pydantic_allowance_does_not_cover_click_or_the_report(
    pydantic_needs: set[str],
) -> None:
    """The allowance cannot hide what the function's path must never load."""
    assert "pydantic" in pydantic_needs
    assert not {m for m in pydantic_needs if m.split(".")[0] in ("click", "krm_fn", "ruamel")}


def test_subcommands_still_load_click() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "krm_fn", "--version"], capture_output=True, text=True, check=True
    )
    assert "workloadrun-fn" in proc.stdout


def test_probe_sees_the_modules_a_render_needs(loaded: list[str]) -> None:
    """The probe can fail: the render's own modules must be listed."""
    assert {"krm_fn.render", "krm_fn.api.models", "yaml"} <= set(loaded)
