"""The render's output values: per-run summaries, the objects, and the "rendered" note.

Invariants:
    * The note of a rendered run starts with :data:`RENDERED_NOTE` and names TrainJobs,
      group sizes, eligible nodes, waves, platform, GPU (with the nodes' product names for
      a model outside the defaults table), GPUs per node and where that count came from, and
      the applied overrides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from krm_fn.api import models
from krm_fn.fleet.partition import Group
from krm_fn.stages.overrides import MatchedOverrides
from krm_fn.stages.partitioning import Partitioned
from krm_fn.stages.plan import unlisted_products
from krm_fn.stages.platform import ResolvedPlatform
from krm_fn.stages.waves import Schedule

RENDERED_NOTE = "rendered"
"""First word of the info result a run that rendered reports (retracted when another failed)."""


@dataclass
class RunSummary:
    """What was rendered for one run (for the stderr summary)."""

    name: str
    namespace: str | None
    groups: list[Group]
    untested: list[str]
    excluded: list[str]
    platform: str
    gpu_arch: str
    waves: list[list[str]] = field(default_factory=list)
    run_flags: list[str] = field(default_factory=list)


@dataclass
class RenderOutput:
    """All generated objects (in output order, each with its run) and per-run summaries."""

    objects: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    summaries: list[RunSummary] = field(default_factory=list)


@dataclass(frozen=True)
class RenderedRun:
    """One run's share of the output.

    Attributes:
        objects: The run's final objects, in output order.
        summary: Its summary.
        note: Its "rendered ..." info text.

    """

    objects: tuple[dict[str, Any], ...]
    summary: RunSummary
    note: str


def rendered(
    wr: models.WorkloadRun,
    objects: list[dict[str, Any]],
    platform: ResolvedPlatform,
    partitioned: Partitioned,
    jobs: Schedule,
    matched: MatchedOverrides,
) -> RenderedRun:
    """The run's output, summary and note."""
    part = partitioned.part
    summary = RunSummary(
        wr.name,
        wr.namespace,
        list(part.groups),
        list(part.untested),
        [x.node for x in platform.excluded],
        platform.platform,
        platform.arch,
        waves=[list(w) for w in jobs.waves],
        run_flags=[a for a in matched.applied if a.startswith("run:")],
    )
    sizes = sorted({len(g.nodes) or wr.spec.num_nodes for g in part.groups})
    products = unlisted_products(platform)
    plat = platform.plan
    note = (
        f"{RENDERED_NOTE} {len(jobs.jobs)} TrainJob(s) of {'/'.join(map(str, sizes))} node(s) "
        f"from {len(platform.eligible)} eligible node(s) in {len(jobs.waves)} wave(s); "
        f"platform {platform.platform}, GPU {platform.arch}"
        + (f" ({', '.join(products)})" if products else "")
        + f", {platform.gpus} GPU(s) per node"
        + (f" ({plat.gpus_from})" if plat and plat.gpus_from else "")
        + (f"; overrides: {', '.join(matched.applied)}" if matched.applied else "")
    )
    return RenderedRun(tuple(objects), summary, note)
