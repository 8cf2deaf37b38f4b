"""Built-in LogProfiles (verbatim regexes) and user LogProfiles from the input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import krm_fn
from krm_fn.report.logprofiles import (
    BUILTIN_PROFILES,
    LogProfileError,
    compile_profile,
    profiles_with_overrides,
    resolve_profile,
    translate_go_regex,
)
from tests.shared import require_shared

from .conftest import FIXTURES

REFERENCE = FIXTURES.parent / "reference" / "nvcre-workloadrun.md"
BUILTIN_FILE = Path(krm_fn.__file__).parent / "data" / "logprofiles.yaml"
BUILTIN_SPECS = {
    o["metadata"]["name"]: o["spec"] for o in yaml.safe_load(BUILTIN_FILE.read_text())["items"]
}
NCCL_BANDWIDTH_REGEX = BUILTIN_PROFILES["nccl-bandwidth"].patterns["bandwidthResult"].regex
NCCL_BANDWIDTH_EXAMPLE = BUILTIN_SPECS["nccl-bandwidth"]["patterns"]["bandwidthResult"]["example"]
MEGATRON_TRAINING_STEP_REGEX = BUILTIN_PROFILES["megatron-training"].patterns["trainingStep"].regex
MEGATRON_BRIDGE_STEP_REGEX = BUILTIN_PROFILES["megatron-bridge"].patterns["trainingStep"].regex


def test_builtin_profile_names() -> None:
    assert sorted(BUILTIN_PROFILES) == [
        "megatron-bridge",
        "megatron-training",
        "nccl-bandwidth",
        "nccl-loopback",
        "nemo2-training",
    ]


def test_builtin_regexes_are_verbatim_from_the_reference() -> None:
    text = require_shared("reference", REFERENCE.name).read_text("utf-8")
    # §1.9 quotes each regex in backticks; the bridge one is given as the training one with
    # an optional TFLOPs group, its prefix elided as "...".
    assert f"`bandwidthResult: '{NCCL_BANDWIDTH_REGEX}'`" in text
    assert f"`{MEGATRON_TRAINING_STEP_REGEX}`" in text
    bridge_suffix = MEGATRON_BRIDGE_STEP_REGEX.split(r"(?P<iteration>\d+)/\s*\d+\s*\|.*", 1)[1]
    assert bridge_suffix in text
    for key in ("checkpointRestore", "applicationStart"):
        regex = BUILTIN_PROFILES["megatron-training"].patterns[key].regex
        assert f"`{regex}`" in text
    assert "NCCL INFO Using network (?P<transport>.+)" in text


@pytest.mark.parametrize(
    ("name", "warmup", "interval", "replicated_job"),
    [
        pytest.param("nccl-bandwidth", 0, 1, "launcher", id="nccl-bandwidth-reads-the-launcher"),
        pytest.param("nccl-loopback", 0, 1, "node", id="nccl-loopback-reads-the-node"),
        pytest.param("megatron-training", 10, 10, "trainer", id="megatron-training"),
        pytest.param("megatron-bridge", 5, 1, "trainer", id="megatron-bridge"),
    ],
)
def test_builtin_settings(name: str, warmup: int, interval: int, replicated_job: str) -> None:
    profile = BUILTIN_PROFILES[name]
    spec = profile.spec
    assert (spec.warmup_steps, spec.log_interval, spec.worker_strategy.replicated_job_name) == (
        warmup,
        interval,
        replicated_job,
    )
    assert profile.origin == "built-in"


def test_builtin_examples_match_their_regexes() -> None:
    nccl = BUILTIN_PROFILES["nccl-bandwidth"].patterns["bandwidthResult"].pattern
    found = nccl.search(NCCL_BANDWIDTH_EXAMPLE)
    assert found is not None and found.group("size") == "8"
    bridge = BUILTIN_PROFILES["megatron-bridge"].patterns["trainingStep"].pattern
    without_tflops = (
        "[2026-04-10 05:07:38] iteration 2/ 50 | elapsed time per iteration (ms): 26333.1 | "
        "lm loss: 1.189539E+01"
    )
    matched = bridge.search(without_tflops)
    assert matched is not None and matched.group("tflops") is None
    assert (
        BUILTIN_PROFILES["megatron-training"]
        .patterns["trainingStep"]
        .pattern.search(without_tflops)
        is None
    )


def _profile(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "nvcre.nvidia.com/v1alpha1",
        "kind": "LogProfile",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_user_profile_overrides_builtin_and_adds_new() -> None:
    profiles = profiles_with_overrides(
        [
            _profile(
                "megatron-training",
                {
                    "timestamp": {"layout": "2006-01-02 15:04:05"},
                    "warmupSteps": 2,
                    "patterns": {
                        "trainingStep": {
                            "regex": r"iteration (?<iteration>\d+) (?P<elapsedTime>\d+)"
                        }
                    },
                },
            ),
            _profile(
                "mine",
                {
                    "timestamp": {"layout": "Jan _2 15:04:05 2006"},
                    "patterns": {"bandwidthResult": {"regex": NCCL_BANDWIDTH_REGEX}},
                },
            ),
        ]
    )
    assert profiles["megatron-training"].origin == "input"
    assert profiles["megatron-training"].spec.warmup_steps == 2
    # Go named groups (?<name>...) are translated
    assert "iteration" in profiles["megatron-training"].patterns["trainingStep"].pattern.groupindex
    assert resolve_profile("mine", profiles, needs="bandwidthResult").name == "mine"
    assert profiles["nccl-bandwidth"].origin == "built-in"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        pytest.param({"patterns": {}}, "timestamp: Field required", id="layout-required"),
        pytest.param(
            {"timestamp": {"layout": "15:04:05"}}, "must contain year", id="layout-without-date"
        ),
        pytest.param(
            {"timestamp": {"layout": "2006-01-02 15:04"}, "warmupStep": 3},
            "warmupStep",
            id="unknown-field-typo",
        ),
        pytest.param(
            {
                "timestamp": {"layout": "2006-01-02 15:04"},
                "patterns": {"trainStep": {"regex": "x"}},
            },
            "trainStep",
            id="unknown-pattern-name",
        ),
        pytest.param(
            {
                "timestamp": {"layout": "2006-01-02 15:04"},
                "patterns": {"bandwidthResult": {"regex": "(unclosed"}},
            },
            "does not compile",
            id="bad-regex",
        ),
        pytest.param(
            {
                "timestamp": {"layout": "2006-01-02 15:04"},
                "patterns": {"bandwidthResult": {"regex": r"(?P<size>\d+)"}},
            },
            "lacks the named group(s) busBW",
            id="missing-required-group",
        ),
        pytest.param(
            {
                "timestamp": {"layout": "2006-01-02 15:04"},
                "patterns": {"bandwidthResult": {"regex": NCCL_BANDWIDTH_REGEX, "example": "nope"}},
            },
            "does not match its own example",
            id="example-mismatch",
        ),
        pytest.param(
            {
                "timestamp": {"layout": "2006-01-02 15:04"},
                "patterns": {
                    "bandwidthResult": {"regex": NCCL_BANDWIDTH_REGEX, "units": {"busBW": "MB/s"}}
                },
            },
            "unit 'MB/s' for busBW not supported",
            id="nccl-units-must-be-gbps",
        ),
        pytest.param(
            {
                "timestamp": {"layout": "2006-01-02 15:04"},
                "patterns": {
                    "trainingStep": {
                        "regex": r"(?P<iteration>\d+) (?P<elapsedTime>\d+)",
                        "units": {"elapsedTime": "fortnights"},
                    }
                },
            },
            "not supported",
            id="unknown-time-unit",
        ),
        pytest.param(
            {"timestamp": {"layout": "2006-01-02 15:04"}, "warmupSteps": -1},
            "warmupSteps",
            id="negative-warmup",
        ),
    ],
)
def test_invalid_user_profile_is_an_error(spec: dict[str, Any], fragment: str) -> None:
    with pytest.raises(LogProfileError, match="LogProfile 'bad'") as caught:
        compile_profile("bad", spec, "input")
    assert fragment in str(caught.value)


def test_unknown_profile_ref_lists_known_names() -> None:
    with pytest.raises(LogProfileError, match=r"unknown logProfileRef 'nccl'.*nccl-bandwidth"):
        resolve_profile("nccl", BUILTIN_PROFILES)


def test_profile_without_the_needed_pattern_is_an_error() -> None:
    with pytest.raises(LogProfileError, match="has no bandwidthResult pattern"):
        resolve_profile("megatron-training", BUILTIN_PROFILES, needs="bandwidthResult")


def test_duplicate_and_nameless_profiles_are_errors() -> None:
    spec = {"timestamp": {"layout": "2006-01-02 15:04"}}
    with pytest.raises(LogProfileError, match="defined twice"):
        profiles_with_overrides([_profile("a", spec), _profile("a", spec)])
    with pytest.raises(LogProfileError, match=r"no metadata\.name"):
        profiles_with_overrides(
            [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "LogProfile", "spec": spec}]
        )
    with pytest.raises(LogProfileError, match="apiVersion must be"):
        profiles_with_overrides([{**_profile("a", spec), "apiVersion": "v1"}])


def test_go_regex_translation() -> None:
    assert translate_go_regex(r"(?<n>\d+)\z") == r"(?P<n>\d+)\Z"
    assert translate_go_regex(r"a\\z") == r"a\\z"  # an escaped backslash followed by z
