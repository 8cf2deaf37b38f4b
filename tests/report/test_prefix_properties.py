"""Property tests: the saved-log wrappers (ANSI colour, ``kubectl logs --prefix`` and
``--timestamps``) never change what a parser sees of a line."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from krm_fn.report.prefixes import strip_ansi, strip_prefixes

# Log lines as nccl-tests and Megatron print them: printable text without escape characters.
LINES = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=0, max_size=120
)
PODS = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?", fullmatch=True)
SGR = st.lists(st.integers(min_value=0, max_value=107), min_size=0, max_size=3).map(
    lambda codes: "\x1b[" + ";".join(map(str, codes)) + "m"
)


@given(LINES, PODS)
def test_kubectl_prefix_is_removed_and_names_the_pod(line: str, pod: str) -> None:
    plain = strip_prefixes(line)
    wrapped = strip_prefixes(f"[pod/{pod}/node] {line}")
    assert (wrapped.text, wrapped.rank, wrapped.pod) == (plain.text, plain.rank, pod)


@given(LINES, PODS)
def test_kubectl_prefix_and_timestamps_stack(line: str, pod: str) -> None:
    assume(strip_prefixes(line).timestamp is None)  # only one --timestamps prefix is removed
    wrapped = strip_prefixes(f"[pod/{pod}/node] 2026-12-03T09:41:37.123456789Z {line}")
    assert wrapped.text == strip_prefixes(line).text
    assert wrapped.timestamp == "2026-12-03T09:41:37.123456789Z"


@given(st.lists(st.tuples(SGR, LINES), max_size=5))
def test_ansi_colour_codes_are_removed_and_nothing_else(parts: list[tuple[str, str]]) -> None:
    coloured = "".join(code + text for code, text in parts)
    assert strip_ansi(coloured) == "".join(text for _, text in parts)
