"""WhenSpec matching: each matcher, AND semantics, describe() and CEL expressions."""

from __future__ import annotations

import operator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krm_fn.overrides.when import WhenContext, WhenError, describe, matches

AWS_GB200 = WhenContext(platform="aws", gpu_architecture="gb200")
TOPO_3 = WhenContext(
    platform="oci",
    gpu_architecture="h100",
    topology_mode="topology",
    domain_count=3,
    config={"test": "nccl", "sizes": {"min": "8", "max": "32G"}, "iterations": 20},
)


@pytest.mark.parametrize(
    ("when", "ctx", "expected"),
    [
        pytest.param({}, AWS_GB200, True, id="empty-when-always-matches"),
        pytest.param({"platform": None, "expression": None}, AWS_GB200, True, id="none-is-unset"),
        pytest.param({"platform": {"equals": "aws"}}, AWS_GB200, True, id="platform-equals"),
        pytest.param({"platform": {"equals": "AWS"}}, AWS_GB200, False, id="case-sensitive"),
        pytest.param({"platform": {"in": ["gcp", "aws"]}}, AWS_GB200, True, id="platform-in"),
        # NVCRE's matchesStringSpec (pkg/controller/workflow_detect.go): empty means unset.
        pytest.param({"platform": {"in": []}}, AWS_GB200, True, id="empty-in-is-unset"),
        pytest.param({"platform": {"equals": ""}}, AWS_GB200, True, id="empty-equals-is-unset"),
        pytest.param({"workloadKind": ""}, AWS_GB200, True, id="empty-workload-kind-is-unset"),
        pytest.param({"platform": {"notIn": ["aws"]}}, AWS_GB200, False, id="platform-not-in"),
        pytest.param(
            {"gpuArchitecture": {"in": ["gb200", "gb300"], "notIn": ["gb300"]}},
            AWS_GB200,
            True,
            id="string-match-fields-and-together",
        ),
        pytest.param(
            {"gpuArchitecture": {"equals": "gb200", "notIn": ["gb200"]}},
            AWS_GB200,
            False,
            id="string-match-equals-and-not-in-conflict",
        ),
        pytest.param({"workloadKind": "TrainJob"}, AWS_GB200, True, id="workload-kind"),
        pytest.param({"workloadKind": "Job"}, AWS_GB200, False, id="workload-kind-mismatch"),
        pytest.param({"topology": {"mode": "simple"}}, AWS_GB200, True, id="topology-mode"),
        pytest.param({"topology": {"mode": "simple"}}, TOPO_3, False, id="topology-mode-mismatch"),
        pytest.param(
            {"topology": {"domainCount": {"greaterThan": 2, "lessThan": 4}}},
            TOPO_3,
            True,
            id="domain-count-range",
        ),
        pytest.param(
            {"topology": {"domainCount": {"equals": 2}}}, TOPO_3, False, id="domain-count-equals"
        ),
        pytest.param(
            {"topology": {"domainCount": {"greaterThan": 3}}},
            TOPO_3,
            False,
            id="domain-count-greater-than-is-strict",
        ),
        pytest.param({"config": {"test": "nccl"}}, TOPO_3, True, id="config-subset"),
        pytest.param(
            {"config": {"sizes": {"max": "32G"}}}, TOPO_3, True, id="config-nested-subset"
        ),
        pytest.param({"config": {"test": "NCCL"}}, TOPO_3, False, id="config-value-mismatch"),
        pytest.param({"config": {"missing": 1}}, TOPO_3, False, id="config-missing-key"),
        pytest.param({"config": {"iterations": "20"}}, TOPO_3, False, id="config-type-must-match"),
        pytest.param({"config": {}}, TOPO_3, True, id="empty-config-matches"),
        pytest.param(
            {"platform": {"equals": "aws"}, "gpuArchitecture": {"in": ["gb200"]}},
            AWS_GB200,
            True,
            id="and-all-match",
        ),
        pytest.param(
            {"platform": {"equals": "aws"}, "gpuArchitecture": {"in": ["h100"]}},
            AWS_GB200,
            False,
            id="and-one-fails",
        ),
        pytest.param(
            {"platform": {"equals": "aws"}, "expression": 'gpuArchitecture == "h100"'},
            AWS_GB200,
            False,
            id="and-expression-fails",
        ),
    ],
)
def test_matchers(when: dict[str, Any], ctx: WhenContext, expected: bool) -> None:
    assert matches(when, ctx) is expected


@pytest.mark.parametrize(
    ("when", "message"),
    [
        pytest.param(
            {"plat": {}},
            "when.plat: unknown field 'plat'; known fields: gpuArchitecture, platform, "
            "workloadKind, topology, config, expression",
            id="unknown-matcher-lists-the-known-ones",
        ),
        pytest.param(
            {"platform": "aws"}, "when.platform: Input should be a valid dictionary", id="shape"
        ),
        pytest.param(
            {"platform": {"equals": 1}},
            "when.platform.equals: Input should be a valid string; got int 1",
            id="equals-type",
        ),
        pytest.param(
            {"gpuArchitecture": {"in": "gb200"}},
            "when.gpuArchitecture.in: Input should be a valid list",
            id="in-must-be-a-list",
        ),
        pytest.param(
            {"gpuArchitecture": {"oneOf": ["a"]}},
            "unknown field 'oneOf'; known fields: equals, in, notIn",
            id="string-match-key",
        ),
        pytest.param(
            {"workloadKind": ["TrainJob"]},
            "when.workloadKind: Input should be a valid string",
            id="workload-kind-type",
        ),
        pytest.param(
            {"topology": {"mode": "Topology"}},
            "value 'Topology' is not allowed; expected 'simple' or 'topology'",
            id="topology-mode-value",
        ),
        pytest.param(
            {"topology": {"domainCount": {"greaterThan": "2"}}},
            "when.topology.domainCount.greaterThan: Input should be a valid integer",
            id="domain-count-type",
        ),
        pytest.param({"config": ["a"]}, "when.config: Input should be a valid dict", id="config"),
        pytest.param(
            {"expression": 5}, "when.expression: Input should be a valid string", id="expr"
        ),
        pytest.param(
            {"plat": 1, "topology": {"mode": "x"}},
            "when.topology.mode: value 'x' is not allowed; expected 'simple' or 'topology'; "
            "when.plat: unknown field 'plat'",
            id="every-problem-at-once",
        ),
        pytest.param(
            {"platform": {"equals": "gcp"}, "expression": "platform = 1"},
            "position 10",
            id="bad-expression-reported-even-after-a-mismatch",
        ),
    ],
)
def test_bad_when_raises(when: dict[str, Any], message: str) -> None:
    with pytest.raises(WhenError) as info:
        matches(when, AWS_GB200)
    assert message in str(info.value)


def test_when_must_be_a_map() -> None:
    with pytest.raises(WhenError, match="when: Input should be a valid dictionary"):
        matches(["platform"], AWS_GB200)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expression", "ctx", "expected"),
    [
        ('platform == "aws"', AWS_GB200, True),
        ("platform == 'aws'", AWS_GB200, True),
        ('platform != "aws"', AWS_GB200, False),
        ('gpuArchitecture in ["gb200", "gb300"]', AWS_GB200, True),
        ('gpuArchitecture in ["h100"]', AWS_GB200, False),
        ("gpuArchitecture in []", AWS_GB200, False),
        ('workloadKind == "TrainJob" && topologyMode == "simple"', AWS_GB200, True),
        ('platform == "gcp" || platform == "aws"', AWS_GB200, True),
        ('!(platform == "aws")', AWS_GB200, False),
        ('!!(platform == "aws")', AWS_GB200, True),
        ("domainCount > 2 && domainCount < 4", TOPO_3, True),
        ("domainCount >= 3 && domainCount <= 3", TOPO_3, True),
        ("domainCount in [1, 2]", TOPO_3, False),
        ("domainCount > -1", AWS_GB200, True),
        ('topologyMode == "topology"', TOPO_3, True),
        ("true", AWS_GB200, True),
        ("false || true == false", AWS_GB200, False),
        # && binds tighter than ||
        ('platform == "x" && false || platform == "aws"', AWS_GB200, True),
        ('platform == "aws" || platform == "x" && false', AWS_GB200, True),
        ('(platform == "aws" || true) && false', AWS_GB200, False),
        ('platform == "a\\"b"', WhenContext(platform='a"b', gpu_architecture="x"), True),
        ('  platform=="aws"  ', AWS_GB200, True),
        ('platform < "b"', AWS_GB200, True),  # CEL orders strings
        ("platform in [platform]", AWS_GB200, True),
        ('platform == "aws" == true', AWS_GB200, True),
        ("domainCount % 2 == 1", TOPO_3, True),
        ("gpuArchitecture.startsWith('gb') && size(platform) == 3", AWS_GB200, True),
        ("['aws', 'oci'].exists(p, p == platform)", TOPO_3, True),
        ("(domainCount > 2 ? 'many' : 'few') == 'many'", TOPO_3, True),
        ("", AWS_GB200, True),  # NVCRE: an empty expression is unset (Expression != "")
    ],
)
def test_expression(expression: str, ctx: WhenContext, expected: bool) -> None:
    assert matches({"expression": expression}, ctx) is expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("   ", "position 1: the expression is empty"),
        ('platform = "aws"', "position 10: unexpected character '='; did you mean '=='?"),
        ('platform == "aws" & true', "position 19: unexpected character '&'; did you mean '&&'?"),
        ('(platform == "aws"', "position 19: the expression ends early: expected ')'"),
        ('platform == "aws")', "position 18: unexpected ')' after a complete expression"),
        ("platform == 'aws", "position 13: a string that does not end"),
        ("cloud == 'aws'", "position 1: unknown name 'cloud': the variables are platform, "),
        ("platform", "the result is string, not a bool"),
        ("domainCount", "the result is int, not a bool"),
        ('domainCount == "2"', "position 13: '==' is not defined for (int, string)"),
        ("!platform", "position 1: '!' is not defined for (string): it needs bools"),
        ("platform && true", "'&&' is not defined for (string, bool): it needs bools"),
        ('platform in "aws"', "'in' is not defined for (string, string)"),
        ("platform in [1]", "'in' is not defined for (string, list(int))"),
        ('platform in ["a" "b"]', "position 18: unexpected '\"b\"': expected ']' or ','"),
        ("platform == ", "position 13: the expression ends early: expected a value, a name"),
        ("in == 1", "position 1: unexpected 'in': expected a value"),
        ("'a\\q' == platform", "position 1: a string that does not end, or has an unknown escape"),
        ("domainCount > 1.5", "CEL does not mix int and double here; write 2 or 2.0 alike"),
        ("(" * 100 + "true" + ")" * 100, "nests deeper than CEL allows"),
    ],
)
def test_expression_errors(expression: str, message: str) -> None:
    with pytest.raises(WhenError) as info:
        matches({"expression": expression}, AWS_GB200)
    assert message in str(info.value)
    assert repr(expression) in str(info.value)


def test_a_bad_expression_is_reported_even_when_another_matcher_fails() -> None:
    with pytest.raises(WhenError, match="unknown name 'cloud'"):
        matches({"platform": {"equals": "gcp"}, "expression": "cloud == 'x'"}, AWS_GB200)


def test_the_expression_is_evaluated_only_when_the_others_match() -> None:
    """As NVCRE's matchesWhen: a failure at evaluation counts only when it decides."""
    failing = "domainCount / 0 == 1"
    assert matches({"platform": {"equals": "gcp"}, "expression": failing}, AWS_GB200) is False
    with pytest.raises(WhenError, match=r"evaluating with platform='aws', .*divide by zero"):
        matches({"expression": failing}, AWS_GB200)


@given(st.text(alphabet=st.sampled_from(list("pladomCunt =!&|()[],<>'\"\\01-9 ")), max_size=30))
def test_junk_expressions_raise_only_when_error(junk: str) -> None:
    try:
        result = matches({"expression": junk}, AWS_GB200)
    except WhenError:
        return
    assert isinstance(result, bool)


@given(st.text(max_size=20))
def test_arbitrary_text_raises_only_when_error(junk: str) -> None:
    try:
        result = matches({"expression": junk}, TOPO_3)
    except WhenError:
        return
    assert isinstance(result, bool)


# A generated expression evaluates like the same expression written in Python.
_PY_OPS = {
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_VARS = {"platform": "aws", "gpuArchitecture": "gb200", "topologyMode": "simple"}
_ATOMS = st.one_of(
    st.builds(
        lambda var, op, value: (f'{var} {op} "{value}"', (_VARS[var] == value) == (op == "==")),
        st.sampled_from(sorted(_VARS)),
        st.sampled_from(["==", "!="]),
        st.sampled_from(["aws", "gb200", "simple", "gcp"]),
    ),
    st.builds(
        lambda op, n: (f"domainCount {op} {n}", _PY_OPS[op](0, n)),
        st.sampled_from(sorted(_PY_OPS)),
        st.integers(-2, 2),
    ),
)


def _combine(inner: st.SearchStrategy[tuple[str, bool]]) -> st.SearchStrategy[tuple[str, bool]]:
    return st.one_of(
        st.builds(lambda a: (f"!({a[0]})", not a[1]), inner),
        st.builds(lambda a, b: (f"({a[0]}) && ({b[0]})", a[1] and b[1]), inner, inner),
        st.builds(lambda a, b: (f"({a[0]}) || ({b[0]})", a[1] or b[1]), inner, inner),
    )


@given(st.recursive(_ATOMS, _combine, max_leaves=8))
def test_generated_expressions_evaluate_like_python(case: tuple[str, bool]) -> None:
    expression, expected = case
    assert matches({"expression": expression}, AWS_GB200) is expected


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ({}, "always"),
        ({"platform": None}, "always"),
        ({"gpuArchitecture": {"in": ["gb200", "gb300"]}}, "gpuArchitecture=in [gb200,gb300]"),
        (
            {"platform": {"equals": "aws"}, "gpuArchitecture": {"in": ["gb200", "gb300"]}},
            "gpuArchitecture=in [gb200,gb300], platform=aws",
        ),
        (
            {"gpuArchitecture": {"equals": "gb200"}, "platform": {"equals": "aws"}},
            "gpuArchitecture=gb200, platform=aws",
        ),
        ({"platform": {"notIn": ["gcp"]}}, "platform=notIn [gcp]"),
        ({"workloadKind": "TrainJob"}, "workloadKind=TrainJob"),
        (
            {"topology": {"mode": "topology", "domainCount": {"greaterThan": 2, "lessThan": 5}}},
            "topology.mode=topology, topology.domainCount>2, topology.domainCount<5",
        ),
        ({"config": {"b": 1, "a": "x"}}, 'config={"a":"x","b":1}'),
        ({"expression": 'platform == "aws"'}, 'expression=platform == "aws"'),
        ({"expression": ""}, "always"),
    ],
)
def test_describe(when: dict[str, Any], expected: str) -> None:
    assert describe(when) == expected


def test_context_defaults() -> None:
    ctx = WhenContext(platform="aws", gpu_architecture="gb200")
    assert (ctx.workload_kind, ctx.topology_mode, ctx.domain_count, dict(ctx.config)) == (
        "TrainJob",
        "simple",
        0,
        {},
    )
