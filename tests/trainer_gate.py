"""The acceptance gate: ``trainer_sim.check_render`` from ``../shared/tools`` (read at test time).

``trainer_sim`` replays what Kubeflow Trainer v2.3.0 and JobSet v0.12.0 do with our objects
(admission, webhooks, the JobSet build, pod feasibility, apply order). See
``../shared/tools/README.md``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

import pytest

from krm_fn.io.output import is_generated
from tests.k8s_schemas import shared_dir


def trainer_sim() -> ModuleType:
    """The simulation module; the test is skipped when ``../shared`` is not there."""
    tools = shared_dir() / "tools"
    if not (tools / "trainer_sim.py").exists():
        pytest.skip(f"{tools}/trainer_sim.py not found (set WORKLOADRUN_SHARED)")
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    return importlib.import_module("trainer_sim")


def split(items: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(generated objects, inputs) of a rendered stream or ResourceList's items."""
    gen: list[dict[str, Any]] = []
    inputs: list[dict[str, Any]] = []
    for it in items:
        (gen if is_generated(dict(it)) else inputs).append(dict(it))
    return gen, inputs


def findings(
    generated: list[dict[str, Any]], inputs: list[dict[str, Any]], label: str = ""
) -> list[tuple[str, str]]:
    """Every failed check of ``check_render`` as (check, detail); empty when admitted."""
    sim = trainer_sim()
    return [(n, d) for n, ok, d in sim.check_render(generated, inputs, label=label) if not ok]
