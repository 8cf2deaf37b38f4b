"""Threshold expressions: grammar, evaluation, fail-closed on missing data, errors, registry."""

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
        pytest.param("value == 0", 0.0, True, id="eq-matches"),
        pytest.param("value != 0", 0.0, False, id="ne-on-equal-fails"),
        pytest.param("value>=9e2", 900.0, True, id="exponent-without-spaces"),
        pytest.param("value >= 1.5E+2", 150.0, True, id="exponent-with-sign"),
        pytest.param("value > -1", 0.0, True, id="negative-number"),
        pytest.param("value >= .5", 0.5, True, id="leading-dot-number"),
        pytest.param("value >= 400 && value < 500", 450.0, True, id="and-inside-range"),
        pytest.param("value >= 400 && value < 500", 500.0, False, id="and-outside-range"),
        pytest.param("value < 1 || value > 10", 11.0, True, id="or-either-side"),
        pytest.param("value < 1 or value > 10", 5.0, False, id="or-keyword"),
        pytest.param("value > 1 and value < 3", 2.0, True, id="and-keyword"),
        pytest.param("value == 1 || value == 2 && value == 3", 1.0, True, id="and-binds-tighter"),
        pytest.param("(value == 1 || value == 2) && value == 3", 1.0, False, id="parens-override"),
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
        pytest.param("value != 3", id="ne-would-be-true-for-anything-else"),
        pytest.param("value < 0 || value >= 0", id="tautology"),
    ],
)
@pytest.mark.parametrize("missing", [None, math.nan, math.inf], ids=["none", "nan", "inf"])
def test_missing_or_non_finite_value_fails_closed(expression: str, missing: float | None) -> None:
    assert parse_threshold(expression).evaluate(missing) is False


@pytest.mark.parametrize(
    ("expression", "fragment", "position"),
    [
        pytest.param("", "empty expression", 1, id="empty"),
        pytest.param("   ", "empty expression", 1, id="only-spaces"),
        pytest.param("value", "expected a comparison operator", 6, id="no-operator"),
        pytest.param("value >", "expected a number after '>'", 8, id="no-number"),
        pytest.param("value >= x", "unknown name 'x'", 10, id="name-instead-of-number"),
        pytest.param("x >= 1", "unknown name 'x'", 1, id="unknown-variable"),
        pytest.param("900 <= value", "expected 'value' or '('", 1, id="number-first"),
        pytest.param("value = 3", "did you mean '=='", 7, id="single-equals"),
        pytest.param("value >= 1 & value < 2", "did you mean '&&'", 12, id="single-ampersand"),
        pytest.param("value >= 1 | value < 2", "did you mean '||'", 12, id="single-pipe"),
        pytest.param("value >= 900GB", "units are not allowed", 10, id="unit-suffix"),
        pytest.param("value >= 1.2.3", "malformed number", 10, id="two-dots"),
        pytest.param("value >= 1e", "malformed number", 10, id="exponent-without-digits"),
        pytest.param("(value >= 1", "unbalanced '('", 1, id="unclosed-paren"),
        pytest.param("value >= 1)", "unbalanced ')'", 11, id="extra-close-paren"),
        pytest.param("value >= 1 value < 2", "expected '&&', '||'", 12, id="missing-junction"),
        pytest.param("value >= 1 &&", "expected 'value' or '('", 14, id="dangling-and"),
        pytest.param("value >= 1e999", "out of range", 10, id="infinite-number"),
        pytest.param("value >= 1; import os", "unexpected character ';'", 11, id="injection"),
        pytest.param("__import__('os')", "unknown name '__import__'", 1, id="python-call"),
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


def test_canonical_text_reads_back_the_same() -> None:
    threshold = parse_threshold("(value>=1||value<=-2.5e-3)&&value!=7")
    assert str(threshold) == "(value >= 1 || value <= -0.0025) && value != 7"
    assert str(parse_threshold(str(threshold))) == str(threshold)


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


def test_parse_thresholds_names_the_key_of_a_bad_expression() -> None:
    with pytest.raises(ThresholdSyntaxError, match=r"^goodput: expected a number"):
        parse_thresholds({"busBandwidthGBps": "value >= 900", "goodput": "value >="})
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
@given(
    tree=_trees,
    value=_numbers,
    spelling=st.sampled_from([{"and": "&&", "or": "||"}, {"and": "and", "or": "or"}]),
)
def test_random_valid_expressions_evaluate_like_the_reference(
    tree: Tree, value: float, spelling: dict[str, str]
) -> None:
    threshold = parse_threshold(_text(tree, spelling))
    assert threshold.evaluate(value) is _reference(tree, value)
    assert threshold.evaluate(None) is False
    assert parse_threshold(str(threshold)).evaluate(value) is _reference(tree, value)


_alphabet = st.sampled_from(
    [*"value<>=!&|()0123456789.eE+- \tandorx;_'\"\\", "value", "&&", "||", ">=", "and", "or"]
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
