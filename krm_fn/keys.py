"""Every label, annotation and API name the render writes and the report reads, in one place.

The render (``krm_fn.builders``, ``krm_fn.render``) writes these keys onto the generated
objects and the report (``krm_fn.report``) reads them back, so both import them from here
and never spell them out.

Invariants:
    * This module imports nothing from the package: every layer (and the report) may use it.
    * A key is defined once; modules that used another name for it import it under that name.
    * The values are part of the output format: changing one changes every golden.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Final

MANAGER: Final = "workloadrun-fn"
"""Value of :data:`LABEL_MANAGED_BY` on every generated object."""
LABEL_MANAGED_BY: Final = "app.kubernetes.io/managed-by"
PATCH_MANAGER: Final = "nvcre.nvidia.com/workloadrun-fn"
"""``manager`` of the TrainJobs' ``runtimePatches`` entries."""

RESERVED_PREFIX: Final = "nvcre.nvidia.com/"
"""Labels and annotations under this prefix are NVCRE's (and ours): users may not set them."""
WORKLOADRUN_API_GROUP: Final = "nvcre.nvidia.com"
WORKLOADRUN_KIND: Final = "WorkloadRun"

LABEL_RUN: Final = "nvcre.nvidia.com/workload-run"
LABEL_GROUP: Final = "nvcre.nvidia.com/group"
LABEL_WAVE: Final = "nvcre.nvidia.com/wave"
LABEL_TRAINER_STEP: Final = "trainer.kubeflow.org/trainjob-ancestor-step"

ANN_GROUP_NODES: Final = "nvcre.nvidia.com/group-nodes"
ANN_GROUP_NODES_GZIP: Final = "nvcre.nvidia.com/group-nodes-gzip"
ANN_PLATFORM: Final = "nvcre.nvidia.com/detected-platform"
ANN_GPU_ARCH: Final = "nvcre.nvidia.com/detected-gpu-architecture"
ANN_GPU_PRODUCT: Final = "nvcre.nvidia.com/detected-gpu-product"
ANN_FRAMEWORK: Final = "nvcre.nvidia.com/framework"
ANN_APPLIED: Final = "nvcre.nvidia.com/applied-overrides"
ANN_RUNS_AFTER: Final = "nvcre.nvidia.com/runs-after"
ANN_THRESHOLDS: Final = "nvcre.nvidia.com/thresholds"
ANN_BANDWIDTH: Final = "nvcre.nvidia.com/bandwidth-measurement"
ANN_GOODPUT: Final = "nvcre.nvidia.com/goodput-measurement"


def is_workloadrun(obj: Any) -> bool:
    """Whether ``obj`` (a mapping) is a WorkloadRun of any ``nvcre.nvidia.com`` version."""
    return isinstance(obj, Mapping) and is_workloadrun_kind(obj.get("apiVersion"), obj.get("kind"))


def is_workloadrun_kind(api_version: Any, kind: Any) -> bool:
    """Whether ``apiVersion``/``kind`` name a WorkloadRun (``nvcre.nvidia.com/<version>``)."""
    return (
        kind == WORKLOADRUN_KIND
        and isinstance(api_version, str)
        and api_version.startswith(WORKLOADRUN_API_GROUP + "/")
    )


@cache
def builtin_log_profiles() -> frozenset[str]:
    """The ``logProfileRef`` names the report knows without a LogProfile object.

    Read from the report's own definitions (``krm_fn/data/logprofiles.yaml``), so the render
    accepts exactly the profiles the report has built in.
    """
    import yaml

    text = (Path(__file__).parent / "data" / "logprofiles.yaml").read_text(encoding="utf-8")
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return frozenset(item["metadata"]["name"] for item in data["items"])
