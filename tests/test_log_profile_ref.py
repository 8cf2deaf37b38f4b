"""``logProfileRef`` of a measurement: the render accepts the report's built-in profiles and
warns about a name that is neither built in nor a LogProfile of the input."""

from __future__ import annotations

import pytest
import yaml

from krm_fn.entry.run import run_krm
from krm_fn.keys import builtin_log_profiles
from tests.robustness.helpers import mpi_run, nodes, rl


def _render(profile: str) -> str:
    run = mpi_run("x", bandwidthMeasurement={"logProfileRef": profile})
    out = run_krm(yaml.safe_dump(rl([run, *nodes(2)])).encode())
    assert out.exit_code == 0, out.stderr
    return "\n".join(out.stderr)


@pytest.mark.parametrize("profile", sorted(builtin_log_profiles()))
def test_a_builtin_profile_draws_no_warning(profile: str) -> None:
    assert "logProfileRef" not in _render(profile)


def test_an_unknown_profile_is_named_in_a_warning_with_the_builtin_ones() -> None:
    assert "nemo2-training" in builtin_log_profiles()  # once missing from the render's list
    err = _render("nccl-bandwith")
    assert "logProfileRef 'nccl-bandwith' is neither built in" in err
    assert "nemo2-training" in err
