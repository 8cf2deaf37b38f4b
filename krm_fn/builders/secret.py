"""The registry pull ``Secret`` (``kubernetes.io/dockerconfigjson``).

Invariants:
    * The content is deterministic: JSON with sorted keys and no whitespace, base64 in ``data``.
    * The password is read from the environment by the caller and appears nowhere but in
      this object's ``.dockerconfigjson``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from krm_fn.builders.plan import RunPlan


def dockerconfigjson(registry: str, username: str, password: str) -> str:
    """The ``.dockerconfigjson`` document for one registry."""
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    doc = {"auths": {registry: {"auth": auth, "password": password, "username": username}}}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def build_pull_secret(
    plan: RunPlan, name: str, registry: str, username: str, password: str
) -> dict[str, Any]:
    """The pull Secret every pod of the run references."""
    payload = base64.b64encode(dockerconfigjson(registry, username, password).encode()).decode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": plan.meta(name),
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": payload},
    }
