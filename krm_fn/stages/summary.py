"""The render's output values: per-run summaries, the objects, and the "rendered" note.

Invariants:
    * The stderr summary (:func:`summary_lines`) stays a screen at fleet scale: past
      :data:`~krm_fn.io.results.LISTED` groups, nodes or TrainJobs it prints counts and the
      first few names ("and N more"); ``verbose`` lists every one. "Untested nodes" counts
      every node no group tests: the nodes left out (target filters, GPU capacity) and the
      remainder ``remainder: skip`` leaves. Its first line per run names the topology label
      the groups were cut by, when they were.
    * The note of a rendered run starts with ``rendered`` and names TrainJobs,
      group sizes, eligible nodes, waves, platform, GPU (with the nodes' product names for
      a model outside the defaults table), GPUs per node and where that count came from, and
      the applied overrides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from krm_fn.api import models
from krm_fn.fleet.partition import Partition
from krm_fn.io.results import LISTED, listed
from krm_fn.stages.overrides import MatchedOverrides
from krm_fn.stages.partitioning import Partitioned
from krm_fn.stages.platform import ResolvedPlatform
from krm_fn.stages.waves import Schedule


@dataclass(frozen=True)
class RunSummary:
    """What was rendered for one run (for the stderr summary)."""

    run: models.WorkloadRun
    part: Partition
    platform: ResolvedPlatform
    waves: tuple[tuple[str, ...], ...]  # TrainJob names per wave
    run_flags: tuple[str, ...]  # the run:<option> entries of the applied overrides
    topology_key: str | None = None  # the label the groups were cut by, if any
    suspended: bool = True  # later waves rendered suspended (waveRelease suspend), not engine


@dataclass
class RenderOutput:
    """All generated objects (in output order, each with its run) and per-run summaries."""

    objects: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    summaries: list[RunSummary] = field(default_factory=list)


@dataclass(frozen=True)
class RenderedRun:
    """One run's share of the output: its final objects in output order, summary and note."""

    objects: tuple[dict[str, Any], ...]
    summary: RunSummary
    note: str  # the "rendered ..." info text


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
    flags = tuple(a for a in matched.applied if a.startswith("run:"))
    key = partitioned.topology_key if partitioned.topology_mode == "topology" else None
    held = any(o.get("kind") == "TrainJob" and o["spec"].get("suspend") for o in objects)
    summary = RunSummary(wr, part, platform, jobs.waves, flags, key, held)
    sizes = sorted({len(g.nodes) or wr.spec.num_nodes for g in part.groups})
    note = (
        f"rendered {len(jobs.jobs)} TrainJob(s) of {'/'.join(map(str, sizes))} node(s) "
        f"from {len(platform.eligible)} eligible node(s) in {len(jobs.waves)} wave(s); "
        f"platform {platform.platform}, GPU {platform.arch}"
        + (f" ({', '.join(platform.unlisted_products)})" if platform.unlisted_products else "")
        + f", {platform.gpus} GPU(s) per node"
        + (f" ({platform.gpus_from})" if platform.gpus_from else "")
        + (f"; overrides: {', '.join(matched.applied)}" if matched.applied else "")
    )
    return RenderedRun(tuple(objects), summary, note)


def summary_lines(summaries: list[RunSummary], verbose: bool = False) -> list[str]:
    """The human summary of each run (``render``'s stderr); see the module invariants."""
    lines = []
    for s in summaries:
        ns = f"{s.run.namespace}/" if s.run.namespace else ""
        groups = s.part.groups
        lines.append(
            f"WorkloadRun {ns}{s.run.name}: {len(groups)} group(s), platform "
            f"{s.platform.platform}, GPU {s.platform.arch}"
            + (f", partitioned by {s.topology_key}" if s.topology_key else "")
        )
        shown = groups if verbose or len(groups) <= LISTED else groups[:3]
        for g in shown:
            nodes = _names(g.nodes, verbose) if g.nodes else "placed by the scheduler (Unpinned)"
            extra = f" (overlaps {g.overlaps}: runs after it)" if g.overlaps else ""
            lines.append(f"  {g.name}: {len(g.nodes) or '-'} node(s): {nodes}{extra}")
        if len(shown) < len(groups):
            more = len(groups) - len(shown)
            lines.append(f"  ... and {more} more group(s) (--verbose lists every group)")
        lines.append("  untested nodes: " + _untested(s, verbose))
        if len(s.waves) > 1:
            how = (
                "later waves are rendered suspended; release each when the previous one completed"
                if s.suspended
                else "the GitOps engine applies each when the previous one completed"
            )
            lines.append(
                f"  {len(s.waves)} waves ({how}): "
                + "; ".join(
                    f"wave {i}: {_names(w, verbose, 'TrainJob(s)')}" for i, w in enumerate(s.waves)
                )
            )
        if s.run_flags:
            lines.append("  run flags applied: " + ", ".join(s.run_flags))
    return lines


def _names(names: Sequence[str], verbose: bool, what: str = "") -> str:
    """Every name, or past :data:`LISTED` (unless ``verbose``) "N <what>: a, b, c and N more"."""
    if verbose or len(names) <= LISTED:
        return ", ".join(names)
    return (f"{len(names)} {what}: " if what else "") + listed(names)


def _untested(s: RunSummary, verbose: bool) -> str:
    """``none``, or how many nodes no group tests and why: left out, or the skipped remainder."""
    out = sorted(s.platform.excluded, key=lambda x: x.node)  # verbose: each with its reason
    excluded = [f"{x.node} ({x.reason})" if verbose else x.node for x in out]
    parts = [
        f"{len(names)} {why}: {_names(names, verbose)}"
        for names, why in (
            (excluded, "left out" + ("" if verbose else " (the warning above says why)")),
            (sorted(s.part.untested), "not filling a last group (remainder: skip)"),
        )
        if names
    ]
    total = len(excluded) + len(s.part.untested)
    return "none" if not parts else parts[0] if len(parts) == 1 else f"{total}: " + "; ".join(parts)
