"""Stage 7, plan: gather what the stages resolved into the run's plan (built in ``builders``).

Invariants:
    * Runs only for a run without errors; reports nothing itself.
    * Every generated object carries the detected platform, GPU architecture, framework and
      the applied overrides (``nvcre.nvidia.com/applied-overrides``, always present, empty when
      nothing applied: "no override" is visible, not inferred); GPU models outside the
      defaults table also carry the nodes' own product names.
"""

from __future__ import annotations

from krm_fn.api import models
from krm_fn.builders.plan import RunPlan, WorkerEnv, build_plan
from krm_fn.keys import ANN_APPLIED, ANN_FRAMEWORK, ANN_GPU_ARCH, ANN_GPU_PRODUCT, ANN_PLATFORM
from krm_fn.stages.checks import RunChecks
from krm_fn.stages.nodes import NodeSelection
from krm_fn.stages.overrides import MatchedOverrides
from krm_fn.stages.partitioning import Partitioned
from krm_fn.stages.platform import ResolvedPlatform


def plan(
    wr: models.WorkloadRun,
    checks: RunChecks,
    selection: NodeSelection,
    platform: ResolvedPlatform,
    partitioned: Partitioned,
    worker: WorkerEnv,
    matched: MatchedOverrides,
) -> RunPlan:
    """The run's plan from every stage before it."""
    annotations = {
        ANN_PLATFORM: platform.platform,
        ANN_GPU_ARCH: platform.arch,
        ANN_FRAMEWORK: wr.spec.framework.name,
    }
    if platform.unlisted_products:
        annotations[ANN_GPU_PRODUCT] = ",".join(platform.unlisted_products)
    annotations[ANN_APPLIED] = ",".join(matched.applied)
    return build_plan(
        wr,
        per_group=partitioned.per_group,
        gpus=platform.gpus,
        overlay=platform.overlay,
        worker=worker,
        override_mpi_args=matched.mpi_args,
        pre_command=matched.pre_command,
        tolerations=selection.tolerations,
        annotations=annotations,
        trainjob_annotations=checks.trainjob_annotations,
    )
