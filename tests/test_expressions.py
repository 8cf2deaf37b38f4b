"""CEL for ``when.expression`` and thresholds: NVCRE's environments, what users write, errors.

The expressions NVCRE's own tests evaluate are here as they are there (cited); a property test
compares generated integer and double arithmetic with Python's, so the library is wired right.
"""

from __future__ import annotations

import operator
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn import expressions
from krm_fn.expressions import THRESHOLD, WHEN, ExpressionError, parse
from krm_fn.overrides.when import WhenContext, WhenError, matches
from krm_fn.thresholds import ThresholdSyntaxError, parse_threshold

DOCS = Path(__file__).resolve().parents[1] / "docs"

CTX = {
    "platform": "aws",
    "gpuArchitecture": "gb200",
    "workloadKind": "TrainJob",
    "topologyMode": "topology",
    "domainCount": 3,
}


def test_the_environments_declare_nvcres_variables() -> None:
    # SOURCE: NVIDIA/cluster-readiness-engine pkg/controller/workflow_detect.go (evaluateExpression:
    # cel.Variable platform/gpuArchitecture/workloadKind/topologyMode StringType, domainCount
    # IntType) and pkg/threshold/evaluator.go (compile: cel.Variable("value", cel.DoubleType),
    # cel.CrossTypeNumericComparisons(true)).
    assert dict(WHEN.variables) == {
        "platform": "string",
        "gpuArchitecture": "string",
        "workloadKind": "string",
        "topologyMode": "string",
        "domainCount": "int",
    }
    assert not WHEN.cross_numeric
    assert dict(THRESHOLD.variables) == {"value": "double"} and THRESHOLD.cross_numeric
    assert set(CTX) == set(WhenContext("aws", "gb200").variables())


# SOURCE: NVIDIA/cluster-readiness-engine pkg/threshold/testdata/evaluate/*/input.yaml
# (measured, expression) and the pass verdict of each expected.json / directory name.
NVCRE_THRESHOLD_CASES = [
    ("gte-exact", 900.0, "value >= 900.0", True),
    ("gt-exact-fail", 900.0, "value > 900", False),
    ("lte-pass", 3.0, "value <= 3.0", True),
    ("range-pass", 950.0, "value >= 900 && value <= 1200", True),
    ("range-fail-high", 1300.0, "value >= 900 && value <= 1200", False),
    ("ratio-pass", 0.92, "value >= 0.85", True),
    ("ratio-fail", 0.80, "value >= 0.85", False),
]


@pytest.mark.parametrize(
    ("measured", "expression", "passes"),
    [pytest.param(*case[1:], id=case[0]) for case in NVCRE_THRESHOLD_CASES],
)
def test_nvcres_threshold_cases(measured: float, expression: str, passes: bool) -> None:
    assert parse_threshold(expression).evaluate(measured) is passes


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        # SOURCE: pkg/threshold/testdata/evaluate/{invalid-expr,non-bool-return,syntax-error}
        pytest.param("not_a_variable >= 1", "unknown name 'not_a_variable'", id="invalid-expr"),
        pytest.param("value + 1.0", "the result is double, not a bool", id="non-bool-return"),
        pytest.param("value >=", "the expression ends early", id="syntax-error"),
    ],
)
def test_nvcres_refused_thresholds_are_refused(expression: str, problem: str) -> None:
    with pytest.raises(ThresholdSyntaxError, match=problem):
        parse_threshold(expression)


@pytest.mark.parametrize(
    ("expression", "ctx", "expected"),
    [
        # SOURCE: NVIDIA/cluster-readiness-engine pkg/controller/testdata/matches-when/
        # expression-match/input.yaml and expression-no-match/input.yaml
        pytest.param(
            "gpuArchitecture == 'h100' && platform == 'aws'",
            WhenContext(platform="aws", gpu_architecture="h100"),
            True,
            id="expression-match",
        ),
        pytest.param(
            "gpuArchitecture == 'gb200' || domainCount > 10",
            WhenContext(platform="aws", gpu_architecture="h100", domain_count=2),
            False,
            id="expression-no-match",
        ),
    ],
)
def test_nvcres_when_expression_cases(expression: str, ctx: WhenContext, expected: bool) -> None:
    assert matches({"expression": expression}, ctx) is expected


# What a NVCRE user may write: every part of CEL's standard environment, not a subset.
USER_EXPRESSIONS = [
    ("domainCount % 2 == 1", True, "modulo"),
    ("domainCount * 4 / 3 - 1 == 3", True, "integer-arithmetic-truncates"),
    ("-7 / 2 == -3 && -7 % 2 == -1", True, "division-truncates-toward-zero"),
    ("gpuArchitecture.startsWith('gb') && gpuArchitecture.endsWith('00')", True, "starts-ends"),
    ("gpuArchitecture.contains('b2')", True, "contains"),
    ("gpuArchitecture.matches('^gb[23]00$')", True, "regex"),
    ("size(platform) == 3 && platform.size() == 3", True, "size"),
    ("platform in ['aws', 'gcp']", True, "in-list"),
    ("platform in {'aws': 1}", True, "in-map"),
    ("['aws', 'gcp'].exists(p, p == platform)", True, "exists"),
    ("[1, 2, 3].all(n, n <= domainCount)", True, "all"),
    ("[1, 2, 3].exists_one(n, n == domainCount)", True, "exists-one"),
    ("[1, 2].map(n, n * domainCount) == [3, 6]", True, "map"),
    ("[1, 2, 3, 4].filter(n, n > domainCount) == [4]", True, "filter"),
    ("has({'a': 1}.a) && !has({'a': 1}.b)", True, "has"),
    ("(domainCount > 2 ? 'many' : 'few') == 'many'", True, "ternary"),
    ("double(domainCount) / 2.0 == 1.5", True, "int-to-double"),
    ("uint(domainCount) == 3u && int(3u) == domainCount", True, "uint"),
    ("{'k': null}.k == null", True, "null"),
    ("string(domainCount) + 'x' == '3x'", True, "string-conversion"),
    ("int('42') == 42 && double('1.5') == 1.5", True, "parse-numbers"),
    (
        "timestamp('2026-01-01T00:00:00Z') + duration('90m') > timestamp('2026-01-01T01:00:00Z')",
        True,
        "time",
    ),
    ("duration('1h30m') == duration('5400s')", True, "duration"),
    ("topologyMode == 'topology' && workloadKind == 'TrainJob'", True, "strings"),
    ("platform < 'b'", True, "string-ordering"),
    ("!(platform == 'gcp')", True, "not"),
]


@pytest.mark.parametrize(
    ("expression", "expected"), [pytest.param(e, r, id=i) for e, r, i in USER_EXPRESSIONS]
)
def test_what_users_write(expression: str, expected: bool) -> None:
    assert parse(expression, WHEN).evaluate(CTX) is expected


@pytest.mark.parametrize(
    ("expression", "value", "expected"),
    [
        pytest.param("value >= 900", 950.0, True, id="double-against-int"),
        pytest.param("900 <= value && value < 2000u", 950.0, True, id="int-and-uint-on-the-left"),
        pytest.param("int(value) % 100 == 50", 950.0, True, id="conversion-then-modulo"),
        pytest.param("value / 2.0 >= 475", 950.0, True, id="double-arithmetic"),
        pytest.param("[900.0, 950.0].exists(v, v == value)", 950.0, True, id="macro"),
    ],
)
def test_thresholds_are_cel_too(expression: str, value: float, expected: bool) -> None:
    assert parse_threshold(expression).evaluate(value) is expected


@pytest.mark.parametrize(
    ("dialect", "source", "problems"),
    [
        pytest.param(
            WHEN,
            "cloud == 'aws' ||\n  zone == 1",
            [(1, "unknown name 'cloud'"), (21, "unknown name 'zone'")],
            id="every-unknown-name-at-once-across-lines",
        ),
        pytest.param(
            THRESHOLD,
            "value == 900",
            [(7, "'==' is not defined for (double, int)")],
            id="double-equals-int-is-a-type-error-as-in-cel-go",
        ),
        pytest.param(THRESHOLD, "value >=", [(9, "ends early")], id="end-is-length-plus-one"),
        pytest.param(WHEN, "", [(1, "the expression is empty")], id="empty-is-column-1"),
        pytest.param(
            WHEN, "(" * 40 + "true" + ")" * 40, [(1, "nests deeper than CEL allows")], id="deep"
        ),
        pytest.param(
            WHEN,
            "'é' == platform && zz",
            [(20, "unknown name 'zz'")],
            id="columns-count-characters",
        ),
    ],
)
def test_problems_carry_their_1_based_column(
    dialect: expressions.Dialect, source: str, problems: list[tuple[int, str]]
) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse(source, dialect)
    got = caught.value.problems
    assert [c for c, _ in got] == [c for c, _ in problems]
    for (_, what), (_, fragment) in zip(got, problems, strict=True):
        assert fragment in what


def test_each_problem_shows_its_line_with_a_caret_under_the_column() -> None:
    with pytest.raises(ExpressionError) as caught:
        parse("platform == 'aws' ||\n  zone == 1", WHEN)
    assert str(caught.value) == (
        "position 24: unknown name 'zone': the variables are platform, gpuArchitecture, "
        "workloadKind, topologyMode, domainCount; the functions are CEL's standard ones "
        "(size, contains, startsWith, endsWith, matches, int, uint, double, string, timestamp, "
        "duration, has, all, exists, exists_one, map, filter, ...)\n"
        "      zone == 1\n"
        "      ^"
    )


@pytest.mark.parametrize(
    ("source", "hint"),
    [
        pytest.param("domainCount = 2", "did you mean '=='?", id="single-equals"),
        pytest.param("domainCount > 1 and true", "did you mean '&&'?", id="and-is-&&"),
        pytest.param("domainCount > 1 & true", "did you mean '&&'?", id="single-ampersand"),
        pytest.param("domainCount == 2.0", "write 2 or 2.0 alike", id="int-with-double"),
        pytest.param("platform && true", "it needs bools", id="logic-on-a-string"),
        pytest.param("platform", "not a bool, e.g. platform == 'aws'", id="non-bool-result"),
        pytest.param("platform == 'aws'  x", "join conditions with '&&' or '||'", id="junction"),
        pytest.param("platform == 'aws')", "it closes no '('", id="stray-paren"),
        pytest.param("platform == 'a\\q'", "unknown escape", id="escape"),
        pytest.param("platform.lowerAscii() == 'aws'", "CEL's standard ones", id="no-extensions"),
    ],
)
def test_errors_say_what_is_allowed_and_how_to_fix(source: str, hint: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse(source, WHEN)
    assert hint in caught.value.what


def test_both_callers_report_the_same_column_for_the_same_mistake() -> None:
    with pytest.raises(WhenError, match=r"position 13: unexpected character '='"):
        matches(
            {"expression": "domainCount = 2"}, WhenContext(platform="aws", gpu_architecture="h100")
        )
    with pytest.raises(ThresholdSyntaxError) as caught:
        parse_threshold("value       = 2")
    assert caught.value.position == 13
    assert str(caught.value).startswith("position 13: unexpected character '='")


def test_a_failed_evaluation_is_an_expression_error_naming_the_values() -> None:
    compiled = parse("domainCount / 0 == 1", WHEN)
    with pytest.raises(ExpressionError) as caught:
        compiled.evaluate(CTX)
    assert caught.value.column is None
    assert "domainCount=3" in str(caught.value) and "divide by zero" in str(caught.value)


def _doc_rows(page: str, heading: str, row: str) -> list[tuple[str, ...]]:
    section = (DOCS / page).read_text().split(heading, 1)[1].split("\n#", 1)[0]
    return [tuple(c.replace("\\|", "|") for c in m) for m in re.findall(row, section, re.M)]


def test_the_when_expression_examples_of_the_docs_match_as_they_say() -> None:
    rows = _doc_rows("rendering.md", "#### `when.expression`", r"^\| `(.+)` \| (true|false) \|$")
    assert len(rows) >= 5
    ctx = WhenContext("aws", "gb200", topology_mode="topology", domain_count=1)  # as the doc says
    assert [matches({"expression": e}, ctx) for e, _ in rows] == [r == "true" for _, r in rows]


def test_the_threshold_examples_of_the_docs_give_their_verdicts() -> None:
    rows = _doc_rows("report.md", "## Thresholds", r"^\| `(.+)` \| ([\d.]+) \| (pass|fail) \|$")
    assert len(rows) >= 5
    got = [parse_threshold(e).evaluate(float(v)) for e, v, _ in rows]
    assert got == [verdict == "pass" for _, _, verdict in rows]
    shown = (DOCS / "report.md").read_text().split("threshold 'value == 900' does not parse: ")[1]
    with pytest.raises(ThresholdSyntaxError) as caught:
        parse_threshold("value == 900")
    assert shown.startswith(str(caught.value) + "\n```")


def test_importing_the_module_does_not_import_the_library() -> None:
    code = "import sys, krm_fn.expressions; print('cel_expr_python' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- property tests: the library against Python's arithmetic --------------------------------

INT64 = (-(2**63), 2**63 - 1)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


INT_OPS: dict[str, Callable[[int, int], int]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": _trunc_div,  # CEL's int division truncates toward zero
    "%": lambda a, b: a - b * _trunc_div(a, b),  # and its remainder takes the dividend's sign
}
IntTree = tuple[str, int | None, object, object]


def _int_text(tree: object) -> str:
    if isinstance(tree, int):
        return f"({tree})" if tree >= 0 else f"(-{-tree})"
    if tree == "domainCount":
        return "domainCount"
    op, left, right = tree  # type: ignore[misc]
    return f"({_int_text(left)} {op} {_int_text(right)})"


def _int_value(tree: object, domain_count: int) -> int:
    """Python's value of the tree; ZeroDivisionError or OverflowError where CEL errs."""
    if isinstance(tree, int):
        return tree
    if tree == "domainCount":
        return domain_count
    op, left, right = tree  # type: ignore[misc]
    a, b = _int_value(left, domain_count), _int_value(right, domain_count)
    if op in "/%" and b == 0:
        raise ZeroDivisionError
    result = INT_OPS[op](a, b)
    if not INT64[0] <= result <= INT64[1]:
        raise OverflowError
    return result


_int_trees = st.recursive(
    st.one_of(st.integers(-(10**6), 10**6), st.just("domainCount")),
    lambda inner: st.tuples(st.sampled_from(sorted(INT_OPS)), inner, inner),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(tree=_int_trees, domain_count=st.integers(0, 64), probe=st.integers(-(10**9), 10**9))
def test_integer_arithmetic_is_pythons_with_cels_division(
    tree: object, domain_count: int, probe: int
) -> None:
    compiled = parse(f"{_int_text(tree)} != {_int_text(probe)}", WHEN)
    try:
        expected: bool | None = _int_value(tree, domain_count) != probe
    except (ZeroDivisionError, OverflowError):
        expected = None
    ctx = {**CTX, "domainCount": domain_count}
    if expected is None:
        with pytest.raises(ExpressionError):
            compiled.evaluate(ctx)
    else:
        assert compiled.evaluate(ctx) is expected


DOUBLE_OPS: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
}


def _double_text(tree: object) -> str:
    if isinstance(tree, float):
        return repr(tree) if tree >= 0 else f"(-{-tree!r})"
    if tree == "value":
        return "value"
    op, left, right = tree  # type: ignore[misc]
    return f"({_double_text(left)} {op} {_double_text(right)})"


def _double_value(tree: object, value: float) -> float:
    if isinstance(tree, float):
        return tree
    if tree == "value":
        return value
    op, left, right = tree  # type: ignore[misc]
    return DOUBLE_OPS[op](_double_value(left, value), _double_value(right, value))


_finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
_double_trees = st.recursive(
    st.one_of(_finite, st.just("value")),
    lambda inner: st.tuples(st.sampled_from(sorted(DOUBLE_OPS)), inner, inner),
    max_leaves=8,
)
COMPARISONS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


@settings(max_examples=200, deadline=None)
@given(
    tree=_double_trees,
    value=_finite,
    op=st.sampled_from(sorted(COMPARISONS)),
    bound=st.integers(-(2**40), 2**40),
)
def test_threshold_arithmetic_and_int_bounds_are_pythons(
    tree: object, value: float, op: str, bound: int
) -> None:
    """IEEE doubles as Python's, compared with an int as cel-go's cross-type comparison."""
    threshold = parse_threshold(f"{_double_text(tree)} {op} {bound}")
    assert threshold.evaluate(value) is COMPARISONS[op](_double_value(tree, value), bound)
