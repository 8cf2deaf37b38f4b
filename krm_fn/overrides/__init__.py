"""WorkloadRun ``spec.overrides``: ``when`` matching, strategic merge and application.

Modules, one job each:
    * :mod:`~krm_fn.overrides.smp`: Kubernetes strategic-merge patch for the generated kinds.
    * :mod:`~krm_fn.overrides.when`: matching a WhenSpec against the render context.
    * :mod:`~krm_fn.overrides.apply`: applying matching overrides to the generated objects.

Nothing here mutates its inputs.
"""

from krm_fn.overrides.apply import AppliedOverride, OverrideOutcome, apply_overrides
from krm_fn.overrides.smp import SMPError, dotted, strategic_merge
from krm_fn.overrides.when import WhenContext, WhenError, describe, matches

__all__ = [
    "AppliedOverride",
    "OverrideOutcome",
    "SMPError",
    "WhenContext",
    "WhenError",
    "apply_overrides",
    "describe",
    "dotted",
    "matches",
    "strategic_merge",
]
