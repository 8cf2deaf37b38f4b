"""Input generators and the contract every fuzzer checks (shared by the fuzz and bug tests).

The documented behaviour of the two entry points:
    * ``krm_fn.io.resourcelist.parse_input`` returns a ``FunctionInput`` or raises
      ``InputError`` / ``yamlio.YAMLInputError``; nothing else.
    * ``krm_fn.entry.run.run_krm`` returns exit code 0 or 1 and never raises (the console script
      turns any exception into exit 70, "internal error": a bug).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from krm_fn.entry.run import run_krm
from krm_fn.io import yamlio
from krm_fn.io.resourcelist import InputError, parse_input
from tests.golden.make_inputs import HERE as GOLDEN

DOCUMENTED = (InputError, yamlio.YAMLInputError)

FUZZ = settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,  # same examples every run: a red fuzzer is a reproducible bug
    suppress_health_check=list(HealthCheck),
)

YAML_TOKENS = [
    b"apiVersion: ",
    b"kind: ",
    b"ResourceList",
    b"config.kubernetes.io/v1",
    b"items:",
    b"functionConfig:",
    b"metadata:",
    b"name: x",
    b"WorkloadRun",
    b"nvcre.nvidia.com/v1alpha1",
    b"ConfigMap",
    b"v1",
    b"\n",
    b"\n  ",
    b"- ",
    b"  ",
    b"{",
    b"}",
    b"[",
    b"]",
    b", ",
    b": ",
    b"? ",
    b"&a ",
    b"*a",
    b"<<: *a",
    b"!!str ",
    b"!!binary ",
    b"!!python/object/apply:os.system ",
    b"!local ",
    b"'",
    b'"',
    b"# c",
    b"---\n",
    b"...\n",
    b"|\n",
    b">-\n",
    b"%YAML 1.1\n",
    b"%TAG ! tag:x,2000:\n",
    b"\t",
    b"\r\n",
    b"\xff",
    b"\xc3",
    b"\x00",
    b"\xef\xbb\xbf",
    b"null",
    b"~",
    b"0x1F",
    b"1e3",
    b"yes",
    b"2001-12-14",
    b".inf",
]

token_soup = st.lists(st.sampled_from(YAML_TOKENS), max_size=60).map(b"".join)

SEEDS = sorted(p.read_bytes() for p in GOLDEN.glob("*/input.yaml"))
_MUTATION_BYTES = b":-[]{}&*!'\"\n #|>%@`?,0123456789abxyz\t\\"


@st.composite
def mutated_inputs(draw: st.DrawFn) -> bytes:
    """A golden input with a few byte-level insertions, deletions and replacements."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        byte = draw(st.sampled_from(list(_MUTATION_BYTES)))
        if op == "insert":
            data[pos:pos] = bytes([byte])
        elif pos < len(data):
            if op == "delete":
                del data[pos : pos + draw(st.integers(1, 20))]
            else:
                data[pos] = byte
    return bytes(data)


def check_parse_input(data: bytes) -> None:
    with contextlib.suppress(*DOCUMENTED):
        parse_input(data)


def check_run_krm(data: bytes) -> None:
    out = run_krm(data, cwd=Path("/nonexistent-cwd-for-fuzzing"))
    assert out.exit_code in (0, 1), out.exit_code
    if out.exit_code == 1:
        assert out.stderr[-1].endswith("nothing rendered")
