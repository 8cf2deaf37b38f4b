from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*/expected.* from the current output (also: UPDATE_GOLDEN=1)",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    import os

    return bool(request.config.getoption("--update-golden") or os.environ.get("UPDATE_GOLDEN"))


def _hypothesis_profile() -> None:
    """Two cores, shared with kpt/kubectl subprocesses: never fail on slow data generation."""
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "workloadrun-fn",
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile("workloadrun-fn")


_hypothesis_profile()
