"""The registry pull ``ExternalSecret`` (``external-secrets.io/v1``).

A pull Secret whose password never leaves the user's secret store.

The External Secrets Operator reads the password from the store the user names and writes the
``kubernetes.io/dockerconfigjson`` Secret ``<run>-pull-secret`` in the cluster; the rendered
object holds only the registry, the user name and where the password lives, so a GitOps
repository may commit it.

Invariants:
    * No password, ever: the ``.dockerconfigjson`` is a template the operator fills in.
    * The template yields the same document as :func:`krm_fn.builders.secret.dockerconfigjson`
      (``auths.<registry>`` with ``auth``, ``password``, ``username``), JSON-escaped.
    * Only fields of the pinned CRD (``external-secrets.io_externalsecrets.yaml``, v1).
"""

from __future__ import annotations

import json
import string
from typing import Any

from krm_fn.builders.plan import RunPlan

ESO_API = "external-secrets.io/v1"
PASSWORD_KEY = "password"
REFRESH_INTERVAL = "1h"


def store_ref(store: str) -> dict[str, str]:
    """``secretStoreRef`` from ``NAME``, ``SecretStore/NAME`` or ``ClusterSecretStore/NAME``."""
    kind, _, name = store.rpartition("/")
    return {"kind": kind or "SecretStore", "name": name}


_TEMPLATE = string.Template(
    '{"auths":{$registry:{"auth":"{{ printf "%s:%s" $user .$key | b64enc }}",'
    '"password":{{ .$key | toJson }},"username":$user}}}'
)


def dockerconfig_template(registry: str, username: str) -> str:
    """The ``.dockerconfigjson`` template (ESO template engine v2, Go templates with sprig)."""
    user = json.dumps(username)  # a JSON string is a valid Go string literal here
    return _TEMPLATE.substitute(registry=json.dumps(registry), user=user, key=PASSWORD_KEY)


def build_external_secret(
    plan: RunPlan, name: str, registry: str, username: str, store: str, key: str, prop: str | None
) -> dict[str, Any]:
    """The ExternalSecret that makes the pull Secret ``name`` in the cluster."""
    remote: dict[str, str] = {"key": key}
    if prop:
        remote["property"] = prop
    return {
        "apiVersion": ESO_API,
        "kind": "ExternalSecret",
        "metadata": plan.meta(name),
        "spec": {
            "refreshInterval": REFRESH_INTERVAL,
            "secretStoreRef": store_ref(store),
            "target": {
                "name": name,
                "creationPolicy": "Owner",
                "template": {
                    "type": "kubernetes.io/dockerconfigjson",
                    "engineVersion": "v2",
                    "data": {".dockerconfigjson": dockerconfig_template(registry, username)},
                },
            },
            "data": [{"secretKey": PASSWORD_KEY, "remoteRef": remote}],
        },
    }
