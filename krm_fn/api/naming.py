"""Names of generated objects, kept within Kubeflow Trainer's limits.

Invariants:
    * Every name is derived only from the WorkloadRun name and the group name, so it is
      stable across runs and machines.
    * TrainJob names are RFC 1035 labels of at most :data:`TRAINJOB_NAME_MAX` characters: the
      JobSet webhook checks the pod name ``<trainjob>-launcher-0-0-<5 random>`` (and
      ``<trainjob>-node-0-<index>-<5 random>``) against 63 characters, which leaves 44.
    * A name that would be too long is shortened to a prefix plus ``-`` and 8 hex characters of
      the SHA-256 of the full name, so two different long names never collide in practice.
"""

from __future__ import annotations

import re

TRAINJOB_NAME_MAX = 44
SUBDOMAIN_MAX = 253
RFC1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def shorten(name: str, limit: int) -> str:
    """Return ``name`` or, when longer than ``limit``, a deterministic hashed form."""
    if len(name) <= limit:
        return name
    import hashlib  # long names only

    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    prefix = name[: limit - len(digest) - 1].rstrip("-.")
    return f"{prefix}-{digest}"


def trainjob_name(run: str, group: str) -> str:
    """The TrainJob name for one group of a run, within the Trainer limit."""
    return shorten(f"{run}-{group}", TRAINJOB_NAME_MAX)


def object_name(prefix: str, suffix: str) -> str:
    """``<prefix>-<suffix>`` (``<run>-runtime``, ``<run>-config``, ...), within 253 characters."""
    return shorten(f"{prefix}-{suffix}", SUBDOMAIN_MAX)


def run_name_problem(run: str) -> str | None:
    """Why a WorkloadRun name cannot prefix TrainJob names, or ``None`` when it can."""
    if len(run) > 63:
        return (
            f"a WorkloadRun name of {len(run)} characters cannot be used: it becomes the value "
            "of the nvcre.nvidia.com/workload-run label on every object, and label values are "
            "at most 63 characters"
        )
    if not RFC1035_RE.match(run):
        return (
            f"{run!r} cannot prefix TrainJob names, which must be RFC 1035 labels "
            "(lower-case letters, digits and '-', starting with a letter); "
            "rename the WorkloadRun"
        )
    return None
