"""The render pipeline: WorkloadRuns + Nodes → Trainer objects, for every run in the input.

The stages are the modules of :mod:`krm_fn.stages`, in the order its docstring lists them;
every problem goes to the run's :class:`RunDiagnostics`, passed explicitly.

Invariants:
    * Every problem of every run is reported; if any is an error, no object is returned at
      all (all or nothing), and no "rendered" note of another run is left to suggest some was.
    * Output depends only on the input's content: runs are rendered in (namespace, name)
      order, nodes in name order, so shuffling the input changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from krm_fn.api.config import FunctionOptions
from krm_fn.fleet.inventory import NodeInfo
from krm_fn.io.results import FileRef, Result, Results
from krm_fn.stages import checks, finalize, overrides, plan, run_flags, waves
from krm_fn.stages import objects as build
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.env import env_and_resources
from krm_fn.stages.nodes import inventory_for
from krm_fn.stages.parse import InputContext, ParsedRun, inputs_ok, parse_runs, registry_password
from krm_fn.stages.partitioning import partition
from krm_fn.stages.platform import resolve
from krm_fn.stages.summary import RenderedRun, RenderOutput, RunSummary, rendered

__all__ = ["DEFAULT_TIMEOUT", "MAX_TRAINJOBS", "RenderOutput", "RunSummary", "render_all"]

DEFAULT_TIMEOUT = checks.DEFAULT_TIMEOUT
MAX_TRAINJOBS = waves.MAX_TRAINJOBS


def render_all(
    runs: Sequence[tuple[dict[str, Any], FileRef | None]],
    nodes: Sequence[NodeInfo],
    options: FunctionOptions,
    results: Results,
    objects: Sequence[Mapping[str, Any]] = (),
) -> RenderOutput:
    """Render every WorkloadRun (see the module invariants).

    ``objects``: every other input object, consulted for references (PersistentVolumeClaims
    the runs mount, LogProfiles their measurements name).
    """
    context = InputContext.of(objects)
    if not inputs_ok(objects, nodes, options, results):
        return RenderOutput()
    password = registry_password(options, results)
    out = RenderOutput()
    notes: list[Result] = []
    seen: set[tuple[str | None, str]] = set()
    for run in parse_runs(runs, results):
        key = (run.model.namespace, run.model.name)
        if key in seen:
            results.error(
                "two WorkloadRuns have this name", resource=run.ref, field_path="metadata.name"
            )
            continue
        seen.add(key)
        diag = RunDiagnostics(results, run.ref, run.file, errors=len(run.bad_whens))
        run = replace(run, model=run_flags.applied(run.model, options))
        done = render_run(run, nodes, options, password, context, diag)
        if done is not None:
            out.objects += [(o, run.raw) for o in done.objects]
            out.summaries.append(done.summary)
            diag.info(done.note)
            notes.append(results.items[-1])
    if results.has_errors:
        # Nothing is written: a "rendered N TrainJob(s)" note of a run that succeeded would
        # read, above "nothing rendered", as if something had been.
        results.items[:] = [r for r in results.items if not any(r is n for n in notes)]
        return RenderOutput(summaries=out.summaries)
    return out


def render_run(
    run: ParsedRun,
    nodes: Sequence[NodeInfo],
    options: FunctionOptions,
    password: str | None,
    context: InputContext,
    diag: RunDiagnostics,
) -> RenderedRun | None:
    """Run one WorkloadRun through the stages; ``None`` when it has an error (reported)."""
    checked = checks.check_run(run.model, context, diag)
    run_nodes = inventory_for(run.model.spec, run.ref, nodes, options, diag.results)  # or stand-ins
    narrowed = run_flags.narrowed(run.model, run_nodes, options, context, diag)
    selection = narrowed.selection
    platform = resolve(narrowed.run.spec, run_nodes, selection, options, context, diag, not nodes)
    wr = run_flags.sized(narrowed.run, len(platform.eligible), options)
    spec = wr.spec
    checks.unpinned_warnings(spec, diag)  # numNodes as the run flags sized it
    parts = partition(spec, platform, options, diag)
    worker = env_and_resources(wr, platform, parts, options, context, diag)
    matched = overrides.match(spec, platform, parts, run.bad_whens, diag)
    matched = replace(matched, applied=(*narrowed.flags, *matched.applied))
    if diag.failed:
        return None
    jobs = waves.schedule(wr, parts, platform.eligible, diag)
    if jobs is None:
        return None
    run_plan = plan.plan(wr, checked, selection, platform, parts, worker, matched)
    built = build.build_objects(spec, run_plan, worker, jobs, checked.deadline, options, password)
    patched = overrides.apply(matched, built.objects, spec, run_plan, selection.tolerations, diag)
    if patched is None:
        return None
    with_dra = build.with_platform_objects(patched, run_plan, platform.overlay)
    mpi_args = (platform.overlay.mpi_args, matched.mpi_args)
    final = finalize.finalize(with_dra, spec, mpi_args, built.launcher_env, diag)
    return None if final is None else rendered(wr, final, platform, parts, jobs, matched)
