"""Threshold expressions (CEL over ``value``): evaluation, fail-closed on missing data, errors, registry."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn.thresholds import (
    KNOWN_THRESHOLD_KEYS,
    ThresholdKeyError,
    ThresholdSyntaxError,
    check_threshold_key,
    parse_threshold,
    parse_thresholds,
)


@pytest.mark.parametrize(
    ("expression", "value", "expected"),
    [
        pytest.param("value >= 900", 900.0, True, id="ge-at-bound-passes"),
        pytest.param("value >= 900", 899.99, False, id="ge-below-bound-fails"),
        pytest.param("value > 900", 900.0, False, id="gt-at-bound-fails"),
        pytest.param("value <= 5.5", 5.5, True, id="le-at-bound-passes"),
        pytest.param("value < 5.5", 5.5, False, id="lt-at-bound-fails"),
        pytest.param("value == 0.0", 0.0, True, id="eq-matches"),
        pytest.param("value != 0.0", 0.0, False, id="ne-on-equal-fails"),
        pytest.param("value>=9e2", 900.0, True, id="exponent-without-spaces"),
        pytest.param("value >= 1.5E+2", 150.0, True, id="exponent-with-sign"),
        pytest.param("value > -1", 0.0, True, id="negative-number"),
        pytest.param("value >= .5", 0.5, True, id="leading-dot-number"),
        pytest.param("value >= 400 && value < 500", 450.0, True, id="and-inside-range"),
        pytest.param("value >= 400 && value < 500", 500.0, False, id="and-outside-range"),
        pytest.param("value < 1 || value > 10", 11.0, True, id="or-either-side"),
        pytest.param("value < 1 || value > 10", 5.0, False, id="or-neither-side"),
        pytest.param("value > 1 && value < 3", 2.0, True, id="and-both-sides"),
        pytest.param("value == 1.0 || value == 2.0 && value == 3.0", 1.0, True, id="and-first"),
        pytest.param("(value == 1.0 || value == 2.0) && value == 3.0", 1.0, False, id="parens"),
        pytest.param("900 <= value", 900.0, True, id="number-first"),
        pytest.param("value >= 1e999", 1e300, False, id="huge-literal-is-infinity"),
        pytest.param("((value >= 1))", 1.0, True, id="nested-parens"),
    ],
)
def test_threshold_evaluates(expression: str, value: float, expected: bool) -> None:
    assert parse_threshold(expression).evaluate(value) is expected


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param("value >= 900", id="ge"),
        pytest.param("value < 1e9", id="lt"),
        pytest.param("value != 3.0", id="ne-would-be-true-for-anything-else"),
        pytest.param("value < 0 || value >= 0", id="tautology"),
    ],
)
@pytest.mark.parametrize("missing", [None, math.nan, math.inf], ids=["none", "nan", "inf"])
def test_missing_or_non_finite_value_fails_closed(expression: str, missing: float | None) -> None:
    assert parse_threshold(expression).evaluate(missing) is False


@pytest.mark.parametrize(
    ("expression", "fragment", "position"),
    [
        pytest.param("", "the expression is empty", 1, id="empty"),
        pytest.param("   ", "the expression is empty", 1, id="only-spaces"),
        pytest.param("value", "the result is double, not a bool", 1, id="no-operator"),
        pytest.param("value >", "the expression ends early: expected a value", 8, id="no-number"),
        pytest.param("value >= x", "unknown name 'x': the variables are value", 10, id="name"),
        pytest.param("x >= 1", "unknown name 'x'", 1, id="unknown-variable"),
        pytest.param("value = 3", "did you mean '=='", 7, id="single-equals"),
        pytest.param("value >= 1 & value < 2", "did you mean '&&'", 12, id="single-ampersand"),
        pytest.param("value >= 1 | value < 2", "did you mean '||'", 12, id="single-pipe"),
        pytest.param("value < 1 or value > 10", "did you mean '||'", 11, id="or-is-||"),
        pytest.param("value > 1 and value < 3", "did you mean '&&'", 11, id="and-is-&&"),
        pytest.param("value >= 900GB", "unexpected 'GB' after a complete", 13, id="unit-suffix"),
        pytest.param("value >= 1.2.3", "unexpected '.3'", 13, id="two-dots"),
        pytest.param("value >= 1e", "unexpected 'e'", 11, id="exponent-without-digits"),
        pytest.param("(value >= 1", "the expression ends early: expected ')'", 12, id="unclosed"),
        pytest.param("value >= 1)", "it closes no '('", 11, id="extra-close-paren"),
        pytest.param(
            "value >= 1 value < 2", "join conditions with '&&' or '||'", 12, id="junction"
        ),
        pytest.param("value >= 1 &&", "the expression ends early", 14, id="dangling-and"),
        pytest.param("value == 900", "write the number as a double, 900.0", 7, id="double-eq-int"),
        pytest.param("value >= 'a'", "'>=' is not defined for (double, string)", 7, id="string"),
        pytest.param("value >= 1; import os", "unexpected character ';'", 11, id="injection"),
        pytest.param("__import__('os')", "unknown name '__import__'", 11, id="python-call"),
    ],
)
def test_syntax_error_names_problem_and_position(
    expression: str, fragment: str, position: int
) -> None:
    with pytest.raises(ThresholdSyntaxError) as caught:
        parse_threshold(expression)
    assert fragment in str(caught.value)
    assert f"position {position}" in str(caught.value)
    assert caught.value.position == position


def test_the_expression_is_kept_as_written() -> None:
    text = "(value>=1||value<=-2.5e-3)&&value!=7.0"
    threshold = parse_threshold(text)
    assert threshold.expression == text
    assert threshold.evaluate(2.0) and not threshold.evaluate(7.0) and threshold.evaluate(-1.0)


def test_registry_lists_every_documented_key_with_its_source() -> None:
    assert {key: info.source for key, info in KNOWN_THRESHOLD_KEYS.items()} == {
        # NVCRE's registry (pkg/threshold/evaluator.go), in its order
        "busBandwidthGBps": "nccl",
        "algBandwidthGBps": "nccl",
        "goodputRatio": "megatron",
        "avgTFLOPsPerGPU": "megatron",
        "avgStepTimeSec": "megatron",
        "c2cCPUToGPUBandwidthGBps": "c2c",
        "c2cGPUToCPUBandwidthGBps": "c2c",
        "c2cVerified": "c2c",
        # ours
        "avgBusBandwidthGBps": "nccl",
        "tokensPerSecond": "megatron",
        # our earlier names
        "goodput": "megatron",
        "tflopsPerGPU": "megatron",
        "stepTimeSeconds": "megatron",
    }
    assert all(info.description for info in KNOWN_THRESHOLD_KEYS.values())
    with pytest.raises(TypeError):
        KNOWN_THRESHOLD_KEYS["new"] = KNOWN_THRESHOLD_KEYS["goodput"]  # type: ignore[index]


def test_earlier_names_are_aliases_of_nvcre_keys() -> None:
    aliases = {k: v.alias_of for k, v in KNOWN_THRESHOLD_KEYS.items() if v.alias_of}
    assert aliases == {
        "goodput": "goodputRatio",
        "tflopsPerGPU": "avgTFLOPsPerGPU",
        "stepTimeSeconds": "avgStepTimeSec",
    }
    for alias, target in aliases.items():
        assert KNOWN_THRESHOLD_KEYS[alias].source == KNOWN_THRESHOLD_KEYS[target].source
        assert KNOWN_THRESHOLD_KEYS[alias].metric == target


def test_unknown_key_is_an_error_listing_the_known_keys() -> None:
    with pytest.raises(ThresholdKeyError, match=r"unknown threshold key 'busBandwidth'.*goodput"):
        check_threshold_key("busBandwidth")
    with pytest.raises(ThresholdKeyError):
        parse_thresholds({"busBandwidthGBps": "value >= 1", "latency": "value < 5"})


def test_parse_thresholds_names_the_key_of_every_bad_expression() -> None:
    with pytest.raises(ThresholdSyntaxError) as caught:
        parse_thresholds(
            {"busBandwidthGBps": "value >=", "goodput": "value > 0.9", "c2cVerified": "v"}
        )
    lines = [line for line in str(caught.value).splitlines() if not line.startswith(" ")]
    assert lines == [
        "busBandwidthGBps: position 9: the expression ends early: expected a value, a name, "
        "'(', '[', '-' or '!'",
        "c2cVerified: position 1: unknown name 'v': the variables are value; the functions are "
        "CEL's standard ones (size, contains, startsWith, endsWith, matches, int, uint, double, "
        "string, timestamp, duration, has, all, exists, exists_one, map, filter, ...)",
    ]
    assert caught.value.position == 9
    parsed = parse_thresholds({"busBandwidthGBps": "value >= 900", "goodput": "value > 0.9"})
    assert list(parsed) == ["busBandwidthGBps", "goodput"]
    assert parsed["goodput"].evaluate(0.95) and not parsed["goodput"].evaluate(None)


def test_non_string_expression_is_a_syntax_error() -> None:
    with pytest.raises(ThresholdSyntaxError, match="must be a string"):
        parse_thresholds({"goodput": 0.9})


# --- property tests -------------------------------------------------------------------------

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}
_numbers = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)

# An expression tree as nested tuples, rendered to text and evaluated by a reference.
Tree = tuple[object, ...]


def _comparisons() -> st.SearchStrategy[Tree]:
    return st.tuples(st.just("cmp"), st.sampled_from(sorted(_OPS)), _numbers)


_trees: st.SearchStrategy[Tree] = st.recursive(
    _comparisons(),
    lambda children: st.tuples(st.sampled_from(["and", "or"]), children, children),
    max_leaves=8,
)


def _text(tree: Tree, spelling: dict[str, str]) -> str:
    if tree[0] == "cmp":
        return f"value {tree[1]} {tree[2]!r}"
    left, right = _text(tree[1], spelling), _text(tree[2], spelling)  # type: ignore[arg-type]
    return f"({left}) {spelling[str(tree[0])]} ({right})"


def _reference(tree: Tree, value: float) -> bool:
    if tree[0] == "cmp":
        return _OPS[str(tree[1])](value, float(tree[2]))  # type: ignore[arg-type]
    left = _reference(tree[1], value)  # type: ignore[arg-type]
    right = _reference(tree[2], value)  # type: ignore[arg-type]
    return left and right if tree[0] == "and" else left or right


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(tree=_trees, value=_numbers)
def test_random_valid_expressions_evaluate_like_the_reference(tree: Tree, value: float) -> None:
    threshold = parse_threshold(_text(tree, {"and": "&&", "or": "||"}))
    assert threshold.evaluate(value) is _reference(tree, value)
    assert threshold.evaluate(None) is False


_alphabet = st.sampled_from(
    [*"value<>=!&|()0123456789.eE+- \tandorx;_'\"\\[]{}?:%", "value", "&&", "||", ">=", "in"]
)


@settings(max_examples=500, deadline=None)
@given(junk=st.one_of(st.text(max_size=40), st.lists(_alphabet, max_size=20).map("".join)))
def test_random_junk_raises_only_threshold_syntax_error(junk: str) -> None:
    try:
        threshold = parse_threshold(junk)
    except ThresholdSyntaxError as err:
        assert err.position is None or 1 <= err.position <= len(junk) + 1
        assert "position" in str(err)
    else:
        assert isinstance(threshold.evaluate(1.0), bool)
