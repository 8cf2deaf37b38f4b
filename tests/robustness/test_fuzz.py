"""Bounded fuzzing of the input parser and the whole function: only documented outcomes.

Raw bytes, "token soup" (random sequences of YAML syntax, tags, anchors, bad bytes), byte-level
mutations of the golden inputs and random WorkloadRun specs are fed to ``parse_input`` and
``run_krm`` (see :mod:`tests.robustness.fuzzing` for the contract). The fuzzers that currently
find crashes (``run_krm`` on mutated golden inputs, random Node fields, random WorkloadRun
metadata) are in ``test_regressions.py``. Examples are derandomized: a failure reproduces on
every run.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.robustness.fuzzing import (
    FUZZ,
    check_parse_input,
    check_run_krm,
    mutated_inputs,
    token_soup,
)
from tests.robustness.helpers import dump, nodes, rl, wr


@FUZZ
@given(st.binary(max_size=512))
def test_parse_input_on_raw_bytes_raises_only_documented_errors(data: bytes) -> None:
    check_parse_input(data)


@FUZZ
@given(st.binary(max_size=512))
def test_run_krm_on_raw_bytes_exits_0_or_1(data: bytes) -> None:
    check_run_krm(data)


@pytest.mark.slow
@FUZZ
@given(mutated_inputs())
def test_parse_input_on_mutated_golden_inputs_raises_only_documented_errors(data: bytes) -> None:
    check_parse_input(data)


@FUZZ
@given(token_soup)
def test_parse_input_on_yaml_token_soup_raises_only_documented_errors(data: bytes) -> None:
    check_parse_input(data)


@pytest.mark.slow
@FUZZ
@given(token_soup)
def test_run_krm_on_yaml_token_soup_exits_0_or_1(data: bytes) -> None:
    check_run_krm(data)


SPEC_KEYS = [
    "image",
    "framework",
    "numNodes",
    "gpusPerNode",
    "env",
    "volumes",
    "volumeMounts",
    "initContainers",
    "resources",
    "target",
    "orchestration",
    "config",
    "overrides",
    "gangScheduler",
    "workloadMetadata",
    "thresholds",
    "bandwidthMeasurement",
    "mpi",
    "torch",
    "exec",
    "script",
    "command",
    "args",
    "name",
    "value",
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**6) | st.sampled_from(["", "x", "1h", "In"]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from(SPEC_KEYS), kids),
    max_leaves=25,
)


@pytest.mark.slow
@FUZZ
@given(st.dictionaries(st.sampled_from(SPEC_KEYS), json_values, max_size=8))
def test_run_krm_on_any_workloadrun_spec_exits_0_or_1(spec: dict[str, object]) -> None:
    run = wr("fuzz", {"image": "img", "framework": {"exec": {"command": ["x"]}}, "numNodes": 1})
    run["spec"].update(spec)
    check_run_krm(dump(rl([run, *nodes(2)])))
