"""The ``ConfigMap`` rendered from ``spec.config.inline`` (nothing for ``configMapRef``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krm_fn.builders.plan import RunPlan


def build_config_map(plan: RunPlan, name: str, inline: Mapping[str, str]) -> dict[str, Any]:
    """``<run>-config`` holding the inline files, in the user's order."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": plan.meta(name),
        "data": dict(inline),
    }
