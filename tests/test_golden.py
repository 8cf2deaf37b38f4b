"""Golden end-to-end cases: tests/golden/<case>/ holds the input and the expected output.

Each case directory has:
  * ``input.yaml``: what the function reads on stdin (a ResourceList or a plain stream);
  * ``env.yaml`` (optional): environment variables for the run;
  * ``expected.yaml``: the exact stdout, for cases that succeed;
  * ``expected-error.txt``: the exact stderr, for cases that must fail (exit code 1).

Every successful case is also run a second time on its own output (idempotence), and every
generated object is validated against the pinned CRDs and Trainer's webhook rules.
Regenerate with ``pytest tests/test_golden.py --update-golden``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.entry.run import run_krm
from krm_fn.io.output import is_generated
from tests.k8s_schemas import validate_all

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").exists())


def _env(case: Path) -> dict[str, str]:
    f = case / "env.yaml"
    return yaml.safe_load(f.read_text()) if f.exists() else {}


def run_case(case: Path, stdin: bytes, monkeypatch: pytest.MonkeyPatch) -> Any:
    for k, v in _env(case).items():
        monkeypatch.setenv(k, str(v))
    return run_krm(stdin, cwd=case)


def _generated(text: str) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(text) if d]
    items = docs[0]["items"] if len(docs) == 1 and docs[0].get("kind") == "ResourceList" else docs
    return [i for i in items if is_generated(i)]


def _with_function_config(text: str, case: Path) -> bytes:
    """The orchestrator passes the functionConfig again on every run."""
    original = yaml.safe_load_all((case / "input.yaml").read_text())
    first = next(iter(original), None) or {}
    if first.get("kind") != "ResourceList" or "functionConfig" not in first:
        return text.encode()
    rl = yaml.safe_load(text)
    rl["functionConfig"] = first["functionConfig"]
    return yaml.safe_dump(rl, sort_keys=False).encode()


@pytest.mark.parametrize("name", CASES)
def test_golden_case(name: str, monkeypatch: pytest.MonkeyPatch, update_golden: bool) -> None:
    case = GOLDEN / name
    out = run_case(case, (case / "input.yaml").read_bytes(), monkeypatch)
    expected_out = case / "expected.yaml"
    expected_err = case / "expected-error.txt"
    stderr = "".join(line + "\n" for line in out.stderr)
    if update_golden:
        if out.exit_code == 0:
            expected_out.write_text(out.stdout)
            expected_err.unlink(missing_ok=True)
        else:
            expected_err.write_text(stderr)
            expected_out.unlink(missing_ok=True)
    if expected_err.exists():
        assert out.exit_code == 1, out.stdout
        assert stderr == expected_err.read_text()
        return
    assert out.exit_code == 0, stderr
    assert out.stdout == expected_out.read_text()
    generated = _generated(out.stdout)
    assert generated, "a successful case must generate objects"
    assert validate_all(generated) == []
    again = run_case(case, _with_function_config(out.stdout, case), monkeypatch)
    assert again.exit_code == 0
    assert again.stdout == out.stdout, "running on its own output must change nothing"


def test_the_generator_writes_every_committed_golden_input_as_it_is() -> None:
    """tests/golden/make_inputs.py and the committed inputs cannot drift apart unnoticed."""
    from tests.golden.make_inputs import HERE, generated_inputs

    generated = generated_inputs()
    assert generated
    stale = [rel for rel, text in generated.items() if (HERE / rel).read_text() != text]
    assert stale == [], f"run `python tests/golden/make_inputs.py` and review: {stale}"
