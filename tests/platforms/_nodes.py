"""Builders for plain Node dicts used by the platform tests."""

from __future__ import annotations

from typing import Any


def make_node(
    name: str,
    provider_id: str | None = None,
    labels: dict[str, str] | None = None,
    allocatable: dict[str, str] | None = None,
    product: str | None = None,
) -> dict[str, Any]:
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
    }
    if product is not None:
        node["metadata"]["labels"]["nvidia.com/gpu.product"] = product
    if provider_id is not None:
        node["spec"] = {"providerID": provider_id}
    if allocatable is not None:
        node["status"] = {"allocatable": allocatable}
    return node
