"""NVCRE's job-template view of a TrainJob: shape, and an unpatched view maps back unchanged."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn.api.fields import fields_of
from krm_fn.api.models import JobSpec
from krm_fn.keys import ANN_THRESHOLDS
from krm_fn.overrides import jobtemplate as jt
from tests.overrides.objects import trainjob

LABEL = st.from_regex(r"[a-z][a-z0-9]{0,8}(/[a-z][a-z0-9]{0,8})?", fullmatch=True)
VALUE = st.from_regex(r"[a-z0-9]{0,10}", fullmatch=True)


def test_view_has_nvcre_shape_and_paths() -> None:
    tj = trainjob("run", 0, ["n1"])
    tj["metadata"]["labels"].update({"app.kubernetes.io/managed-by": "x", "team": "ml"})
    tj["metadata"]["annotations"] = {ANN_THRESHOLDS: json.dumps({"goodputRatio": "value > 0"})}
    ctx = jt.TemplateContext(checkpoint={"pvcName": "p", "maxRestarts": 2})
    view = jt.to_view(tj, ctx)
    assert view["metadata"] == {}
    assert view["spec"]["workload"]["trainJob"] == tj["spec"]
    assert view["spec"]["workloadMetadata"] == {"labels": {"team": "ml"}}  # no owned keys
    assert view["spec"]["nodeHealthMonitor"] == {
        "cel": {"expression": "node.spec.unschedulable == true"}
    }
    assert view["spec"]["checkpoint"] == {"pvcName": "p", "maxRestarts": 2}
    assert view["spec"]["thresholds"] == {"goodputRatio": "value > 0"}
    assert set(view["spec"]) <= {f.key for f in fields_of(JobSpec)}


@settings(max_examples=60, deadline=None)
@given(
    labels=st.dictionaries(LABEL, VALUE, max_size=6),
    thresholds=st.dictionaries(
        st.sampled_from(["busBandwidthGBps", "avgStepTimeSec", "goodput"]),
        st.sampled_from(["value > 1", "value <= 3.5"]),
        max_size=3,
    ),
    health=st.booleans(),
)
def test_unpatched_view_maps_back_to_the_same_trainjob(
    labels: dict[str, str], thresholds: dict[str, str], health: bool
) -> None:
    tj: dict[str, Any] = trainjob("run", 1, ["a", "b"])
    tj["metadata"]["labels"].update(labels)
    if thresholds:
        tj["metadata"]["annotations"] = {
            ANN_THRESHOLDS: json.dumps(thresholds, sort_keys=True, separators=(",", ":"))
        }
    ctx = jt.TemplateContext(health_monitor=health, runtimes=frozenset({"run-runtime"}))
    before = copy.deepcopy(tj)
    mapped = jt.from_view(jt.to_view(tj, ctx), tj, ctx)
    assert mapped.errors == []
    assert mapped.controller_only == []
    assert mapped.trainjob == before
    assert json.dumps(mapped.trainjob) == json.dumps(before)  # same key order too
    assert tj == before  # input not mutated
