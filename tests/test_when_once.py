"""``spec.overrides[].when`` is validated once, with the model, and evaluated once (issue 13).

A ``when.expression`` that does not parse used to be reported only by the render, so a run
with another model error showed it only after that one was fixed; and render and
``apply_overrides`` each evaluated every ``when``.
"""

from __future__ import annotations

import copy
from typing import Any

from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import node_info
from krm_fn.io.results import Results
from krm_fn.overrides.apply import apply_overrides
from krm_fn.render import render_all
from tests.builders import IMAGE, node, wr

BAD_EXPRESSION = 'platform == "aws" &&'
RUN: dict[str, Any] = wr(
    "nccl",
    {
        "image": IMAGE,
        "framework": {"torch": {"script": "train.py"}},
        "numNodes": 1,
        "overrides": [{"when": {"expression": BAD_EXPRESSION}, "mpiArgs": ["-v"]}],
    },
    path=None,
)
NODE = node("gpu-node-01")  # H100, Ready, providerID aws:///us-east-1a/i-001


def _render(run: dict[str, Any]) -> tuple[Results, int]:
    results = Results()
    out = render_all([(run, None)], [node_info(NODE)], FunctionOptions(), results)
    return results, len(out.objects)


def _errors(results: Results) -> list[tuple[str | None, str]]:
    return [(r.field_path, r.message) for r in results.items if r.severity == "error"]


def test_a_bad_when_expression_is_reported_with_the_other_model_errors() -> None:
    run = copy.deepcopy(RUN)
    run["spec"]["numNodez"] = 1
    results, objects = _render(run)
    paths = [path for path, _ in _errors(results)]
    assert "spec.numNodez" in paths
    assert "spec.overrides[0].when" in paths
    assert objects == 0


def test_a_bad_when_expression_is_reported_once_and_nothing_renders() -> None:
    results, objects = _render(copy.deepcopy(RUN))
    errors = _errors(results)
    assert [path for path, _ in errors] == ["spec.overrides[0].when"]
    assert BAD_EXPRESSION in errors[0][1]
    assert objects == 0


def test_a_when_that_matches_nothing_is_warned_about_once() -> None:
    run = copy.deepcopy(RUN)
    run["spec"]["overrides"][0]["when"] = {"expression": 'platform == "gcp"'}
    results, objects = _render(run)
    warnings = [r for r in results.items if r.field_path == "spec.overrides[0].when"]
    assert [w.severity for w in warnings] == ["warning"]
    assert "matched nothing" in warnings[0].message
    assert objects > 0


def test_apply_overrides_takes_the_callers_answers_without_evaluating_when() -> None:
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    patch = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    overrides = [{"when": {"expression": BAD_EXPRESSION}, "dependencies": [patch]}]
    hit = apply_overrides(overrides, [configmap], None, matched=[True])
    assert hit.errors == []
    assert hit.objects[0]["data"] == {"k": "v"}
    missed = apply_overrides(overrides, [configmap], None, matched=[False])
    assert missed.errors == [] and missed.applied == []
    assert missed.objects[0]["data"] == {}
