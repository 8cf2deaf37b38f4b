"""Stage 8, waves: one TrainJob per group and iteration, in waves that never share a node.

Invariants:
    * ``-iter-<k>`` is appended only when ``repeatCount`` > 1; names are Trainer-valid
      (:func:`krm_fn.api.naming.trainjob_name`).
    * Under Unpinned every iteration counts as using every target node, so iterations never
      run at the same time; ``maxConcurrent`` caps a wave's size (0: no cap).
    * A run is refused, before anything is built, when it would render more than
      :data:`MAX_TRAINJOBS` TrainJobs.
    * A suspended TrainJob names the TrainJobs it runs after, or their wave when the list
      would exceed :data:`RUNS_AFTER_MAX` bytes (the API server's annotation limit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from krm_fn.api import models, naming
from krm_fn.fleet import topology
from krm_fn.fleet.inventory import NodeInfo
from krm_fn.fleet.partition import Group
from krm_fn.keys import LABEL_WAVE
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.partitioning import Partitioned

MAX_TRAINJOBS = 20_000
RUNS_AFTER_MAX = 16 * 1024
"""Longest ``nvcre.nvidia.com/runs-after`` list (bytes); a longer one names the wave instead."""


@dataclass(frozen=True)
class Job:
    """One TrainJob to build, on its group, in its wave (0-based)."""

    name: str
    group: Group
    nodes: tuple[str, ...]  # the nodes it counts as using (all target nodes under Unpinned)
    wave: int = 0
    runs_after: str | None = None  # what it runs after (None in wave 0)


@dataclass(frozen=True)
class Schedule:
    """The run's TrainJobs (iteration by iteration, group by group) and their names per wave."""

    jobs: tuple[Job, ...]
    waves: tuple[tuple[str, ...], ...]


def schedule(
    wr: models.WorkloadRun,
    partitioned: Partitioned,
    eligible: Sequence[NodeInfo],
    diag: RunDiagnostics,
) -> Schedule | None:
    """Name the TrainJobs and put them in waves; ``None`` (reported) when there are too many."""
    orch = wr.spec.orchestration
    groups = partitioned.part.groups
    repeat = (orch.repeat_count if orch and orch.repeat_count else None) or 1
    if len(groups) * repeat > MAX_TRAINJOBS:
        diag.error(
            f"{len(groups)} group(s) x repeatCount {repeat} would render "
            f"{len(groups) * repeat} TrainJobs, more than the {MAX_TRAINJOBS} allowed per run",
            "spec.orchestration.repeatCount",
        )
        return None
    unpinned = tuple(n.name for n in eligible) if partitioned.unpinned else None
    jobs = [  # one TrainJob per group and iteration
        Job(
            naming.trainjob_name(wr.name, f"{g.name}-iter-{k}" if repeat > 1 else g.name),
            g,
            g.nodes if unpinned is None else unpinned,
        )
        for k in range(1, repeat + 1)
        for g in groups
    ]
    waves = topology.run_waves(
        [Group(j.name, j.nodes) for j in jobs], (orch.max_concurrent if orch else None) or 0
    )
    wave_of = {name: i for i, wave in enumerate(waves) for name in wave}
    after = [None, *(_runs_after(waves[w - 1], w - 1) for w in range(1, len(waves)))]
    placed = tuple(
        Job(j.name, j.group, j.nodes, wave_of[j.name], after[wave_of[j.name]]) for j in jobs
    )
    return Schedule(placed, tuple(tuple(w) for w in waves))


def _runs_after(previous: Sequence[str], wave: int) -> str:
    """The TrainJobs a suspended TrainJob runs after, or their wave when the list is long.

    Every TrainJob of wave ``w`` carries the list, so 10,000 single-node TrainJobs of wave 0
    would give each later one ~300 KiB of annotation, over the API server's 256 KiB.
    """
    text = ",".join(previous)
    if len(text) <= RUNS_AFTER_MAX:
        return text
    return f"wave {wave} ({len(previous)} TrainJobs labelled {LABEL_WAVE}={wave})"
