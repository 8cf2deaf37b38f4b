"""One expression language for ``when`` and thresholds, with one position convention."""

from __future__ import annotations

import pytest

from krm_fn import expressions
from krm_fn.overrides.when import WhenContext, WhenError, matches
from krm_fn.thresholds import ThresholdSyntaxError, parse_threshold


@pytest.mark.parametrize(
    ("dialect", "source", "column"),
    [
        pytest.param(expressions.WHEN, "domainCount = 2", 13, id="when-single-equals"),
        pytest.param(expressions.THRESHOLD, "value = 2", 7, id="threshold-single-equals"),
        pytest.param(expressions.WHEN, "", 1, id="when-empty-is-column-1"),
        pytest.param(expressions.THRESHOLD, "", 1, id="threshold-empty-is-column-1"),
        pytest.param(expressions.THRESHOLD, "value >=", 9, id="end-is-length-plus-one"),
    ],
)
def test_errors_carry_the_1_based_column(
    dialect: expressions.Dialect, source: str, column: int
) -> None:
    with pytest.raises(expressions.ExpressionError) as caught:
        expressions.parse(source, dialect)
    assert caught.value.column == column


def test_both_callers_report_the_same_column_for_the_same_mistake() -> None:
    with pytest.raises(WhenError, match=r"position 13: unexpected character '='"):
        matches(
            {"expression": "domainCount = 2"}, WhenContext(platform="aws", gpu_architecture="h100")
        )
    with pytest.raises(ThresholdSyntaxError) as caught:
        parse_threshold("domainCount = 2".replace("domainCount", "value      "))
    assert caught.value.position == 13
    assert "at position 13" in str(caught.value)


@pytest.mark.parametrize(
    ("dialect", "source", "env", "expected"),
    [
        pytest.param(
            expressions.WHEN,
            "domainCount >= 2 && platform in ['aws']",
            {"domainCount": 2, "platform": "aws"},
            True,
            id="when-and-in",
        ),
        pytest.param(
            expressions.THRESHOLD,
            "value > 1 and value < 3",
            {"value": 2.0},
            True,
            id="threshold-words",
        ),
    ],
)
def test_one_evaluator(
    dialect: expressions.Dialect, source: str, env: dict[str, object], expected: bool
) -> None:
    assert expressions.evaluate(expressions.parse(source, dialect), env) is expected


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        pytest.param("value >= 'a'", "unexpected character", id="no-strings-in-thresholds"),
        pytest.param("!(value > 1)", "did you mean '!='", id="no-negation-in-thresholds"),
        pytest.param("value in [1]", "unknown name 'in'", id="no-in-in-thresholds"),
    ],
)
def test_threshold_dialect_stays_value_op_number(source: str, problem: str) -> None:
    with pytest.raises(expressions.ExpressionError, match=problem):
        expressions.parse(source, expressions.THRESHOLD)


def test_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    with pytest.raises(expressions.ExpressionError, match="nested too deeply"):
        expressions.parse("(" * 200 + "value > 1" + ")" * 200, expressions.THRESHOLD)
