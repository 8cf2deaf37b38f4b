"""Next grouping to isolate a bad node."""

from __future__ import annotations

import pytest

from krm_fn.report.regroup import suggest_regrouping


@pytest.mark.parametrize(
    ("nodes", "good", "suspects", "expected"),
    [
        pytest.param(
            ["a", "b", "c", "d"], [], [], [["a", "b"], ["c", "d"]], id="four-nodes-split-into-pairs"
        ),
        pytest.param(
            ["a", "b", "c"],
            ["g"],
            [],
            [["a", "b"], ["c", "g"]],
            id="odd-node-paired-with-known-good",
        ),
        pytest.param(
            ["a", "b", "c"], [], [], [["a", "b"], ["c"]], id="odd-node-alone-without-known-good"
        ),
        pytest.param(
            ["a", "b"], ["g", "h"], [], [["a", "g"], ["b", "g"]], id="pair-each-with-known-good"
        ),
        pytest.param(["a", "b"], [], [], [["a"], ["b"]], id="pair-split-into-single-nodes"),
        pytest.param(["a"], ["g"], [], [], id="single-node-is-already-isolated"),
        pytest.param(
            ["a", "b", "c", "d"], [], ["c"], [["c", "a"], ["b", "d"]], id="suspect-tested-first"
        ),
        pytest.param(
            ["a", "b"], ["a"], [], [["a"], ["b"]], id="known-good-never-from-the-failed-group"
        ),
    ],
)
def test_suggest_regrouping(
    nodes: list[str], good: list[str], suspects: list[str], expected: list[list[str]]
) -> None:
    result = suggest_regrouping(nodes, good, suspects)
    assert result == expected
    tested = [n for group in result for n in group if n in nodes]
    assert sorted(tested) == (sorted(nodes) if len(nodes) > 1 else [])
