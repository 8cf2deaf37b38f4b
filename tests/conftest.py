from __future__ import annotations

import pytest

QUICK_EXAMPLES = 25
"""Examples a property test marked ``slow`` runs by default; ``--slow`` runs its full count."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*/expected.* from the current output (also: UPDATE_GOLDEN=1)",
    )
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="run the property tests marked slow with their full example count "
        f"(default: at most {QUICK_EXAMPLES} examples each; also: WORKLOADRUN_SLOW=1)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Regenerating goldens runs serially: the suite runs in parallel (``-n auto`` in
    pyproject.toml), and a worker could read a golden file (the catalog snapshot, a derived
    table) while another rewrites it."""
    import os

    if config.getoption("--update-golden") or os.environ.get("UPDATE_GOLDEN"):
        config.option.dist = "no"
        config.option.tx = []
        config.option.numprocesses = 0


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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Cap the hypothesis tests marked ``slow`` at :data:`QUICK_EXAMPLES` examples.

    They still run in every suite (CI included), each property exercised; ``--slow`` (or
    ``WORKLOADRUN_SLOW=1``) gives them the full ``max_examples`` their ``@settings`` ask for.
    Hypothesis reads a test's settings when it is called, so replacing them here takes effect.
    """
    import os

    if config.getoption("--slow") or os.environ.get("WORKLOADRUN_SLOW"):
        return
    from hypothesis import settings

    for item in items:
        if item.get_closest_marker("slow") is None:
            continue
        fn = getattr(item, "obj", None)
        fn = getattr(fn, "__func__", fn)
        current = getattr(fn, "_hypothesis_internal_use_settings", None)
        if isinstance(current, settings) and current.max_examples > QUICK_EXAMPLES:
            fn._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
                current, max_examples=QUICK_EXAMPLES
            )
