"""The render pipeline: WorkloadRuns + Nodes → Trainer objects, for every run in the input.

Stages, in order, for each WorkloadRun (sorted by namespace and name):
    validate the model → check names → select eligible nodes → detect platform and GPU →
    resolve env, resources, volumes → partition into groups → build Secret, ConfigMap,
    TrainingRuntime and one TrainJob per group.

Invariants:
    * Every problem of every run is reported; if any is an error, no object is returned at
      all (all or nothing).
    * Output depends only on the input's content: runs are rendered in (namespace, name)
      order, nodes in name order, so shuffling the input changes nothing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from krm_fn import (
    MANAGER,
    apply_order,
    fleet,
    mpi_forward,
    naming,
    rules,
    topology,
    trainer_limits,
)
from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.builders import (
    checkpoint,
    configmap,
    dra,
    mpi_runtime,
    secret,
    torch_runtime,
    trainjob,
)
from krm_fn.builders.plan import (
    ANN_FRAMEWORK,
    ANN_GPU_ARCH,
    ANN_PLATFORM,
    LABEL_MANAGED_BY,
    LABEL_RUN,
    LABEL_WAVE,
    GangPlan,
    RunPlan,
)
from krm_fn.durations import parse_go_duration
from krm_fn.inventory import GPU_PRESENT_LABEL, NodeInfo, select_nodes
from krm_fn.launch import framework_argv, mpi_argv, wrap_pre_command
from krm_fn.nccl_env import Env, base_nccl_env, merge_env, merge_named, user_wins_in_mpi_args
from krm_fn.overrides import jobtemplate as jt
from krm_fn.overrides.apply import apply_overrides
from krm_fn.overrides.jobtemplate import ANN_BANDWIDTH, ANN_GOODPUT, ANN_THRESHOLDS
from krm_fn.overrides.placement import Expect
from krm_fn.overrides.when import WhenContext, WhenError
from krm_fn.overrides.when import describe as describe_when
from krm_fn.overrides.when import matches as when_matches
from krm_fn.partition import Group, Partition, PartitionError, partition_simple
from krm_fn.resolve_platform import (
    PlatformPlan,
    check_forced_names,
    resolve_platform,
    synthetic_nodes,
)
from krm_fn.results import FileRef, ResourceRef, Result, Results
from krm_fn.validate import parse_workloadrun

DEFAULT_TIMEOUT = "24h"
"""NVCRE's ``catalog.DefaultWorkloadRunTimeoutPerJob``; an unset timeoutPerJob is 24 hours."""
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MAX_TRAINJOBS = 20_000
MPI_DEFAULT_ARGS_TAIL = (
    "--allow-run-as-root",
    "--mca",
    "plm_rsh_args",
    "-o StrictHostKeyChecking=no -o ConnectionAttempts=10",
)


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


@dataclass
class RenderOutput:
    """All generated objects (in output order) and per-run summaries."""

    objects: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    summaries: list[RunSummary] = field(default_factory=list)


RENDERED_NOTE = "rendered"
"""First word of the info result a run that rendered reports (retracted when another failed)."""


def render_all(
    runs: Sequence[tuple[dict[str, Any], FileRef | None]],
    nodes: Sequence[NodeInfo],
    options: FunctionOptions,
    results: Results,
    objects: Sequence[Mapping[str, Any]] = (),
) -> RenderOutput:
    """Render every WorkloadRun; see the module docstring for the invariants.

    Args:
        runs: Raw WorkloadRun objects with the file they came from.
        nodes: The whole inventory.
        options: Function options.
        results: Collector for every problem and note.
        objects: Every other input object, consulted for references (PersistentVolumeClaims
            mounted by the runs, LogProfiles named by measurements).

    """
    context = _Context.of(objects)
    out = RenderOutput()
    results_before = len(results.items)
    _check_inputs(objects, nodes, results)
    forced = check_forced_names(options)
    for option, msg in forced:
        results.error(
            f"option {option} (functionConfig or --{'gpu-arch' if option == 'gpuArch' else option}): {msg}"
        )
    if forced or any(r.severity == "error" for r in results.items[results_before:]):
        return out
    password = _registry_password(options, results)
    parsed: list[tuple[models.WorkloadRun, dict[str, Any], FileRef | None]] = []
    for raw, file in runs:
        wr = parse_workloadrun(raw, results, file)
        if wr is not None:
            parsed.append((wr, raw, file))
    seen: set[tuple[str | None, str]] = set()
    notes: list[Result] = []
    for wr, raw, file in sorted(parsed, key=lambda t: (t[0].namespace or "", t[0].name)):
        key = (wr.namespace, wr.name)
        ref = ResourceRef.of(raw)
        if key in seen:
            results.error(
                "two WorkloadRuns have this name", resource=ref, field_path="metadata.name"
            )
            continue
        seen.add(key)
        run_nodes = nodes
        if not nodes and (options.platform or options.gpu_arch):
            run_nodes = synthetic_nodes(
                wr.spec.num_nodes,
                options.platform.strip().lower() if options.platform else None,
                _forced_arch(options.gpu_arch),
                wr.spec.target,
            )
            results.info(
                f"no Node in the input: offline preview on {len(run_nodes)} synthetic node(s) "
                f"({run_nodes[0].name} ...)",
                resource=ref,
            )
        before = len(results.items)
        _render_one(wr, raw, file, run_nodes, options, password, results, out, context)
        notes += [r for r in results.items[before:] if r.message.startswith(RENDERED_NOTE)]
    if results.has_errors:
        # Nothing is written: a "rendered N TrainJob(s)" note of a run that succeeded would
        # read, above "nothing rendered", as if something had been.
        results.items[:] = [r for r in results.items if not any(r is n for n in notes)]
        return RenderOutput(summaries=out.summaries)
    return out


@dataclass(frozen=True, slots=True)
class _Context:
    """Input objects other runs may refer to."""

    pvcs: Mapping[tuple[str, str], Mapping[str, Any]]
    log_profiles: frozenset[str]
    gpu_slices: Mapping[str, fleet.SliceGpus]  # GPUs per node from gpu.nvidia.com ResourceSlices

    @classmethod
    def of(cls, objects: Sequence[Mapping[str, Any]]) -> _Context:
        pvcs: dict[tuple[str, str], Mapping[str, Any]] = {}
        profiles: set[str] = set()
        for o in objects:
            meta = o.get("metadata") or {}
            if o.get("kind") == "PersistentVolumeClaim" and o.get("apiVersion") == "v1":
                pvcs[(str(meta.get("namespace") or ""), str(meta.get("name")))] = o
            if o.get("kind") == "LogProfile":
                profiles.add(str(meta.get("name")))
        return cls(pvcs, frozenset(profiles), fleet.resource_slice_gpus(objects))


BUILTIN_LOG_PROFILES = frozenset(
    {"nccl-bandwidth", "nccl-loopback", "megatron-training", "megatron-bridge"}
)
NCCL_TEST_TYPES = frozenset(
    [
        "all_reduce",
        "all_gather",
        "alltoall",
        "broadcast",
        "reduce",
        "reduce_scatter",
        "sendrecv",
        "scatter",
        "gather",
        "hypercube",
    ]
)
LEFT_OUT_LISTED = 10
"""Up to this many left-out nodes are listed one by one; more are summarised per reason."""


def _left_out(excluded: Sequence[Any]) -> str:
    """``a: NotReady; b: cordoned`` or, for many nodes, counts and examples per reason."""
    if len(excluded) <= LEFT_OUT_LISTED:
        return "; ".join(f"{x.node}: {x.reason}" for x in excluded)
    by_reason: dict[str, list[str]] = {}
    for x in excluded:
        by_reason.setdefault(x.reason, []).append(x.node)
    parts = []
    for reason, names in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(sorted(names)[:3])
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        parts.append(f"{reason}: {len(names)} ({shown}{more})")
    return "; ".join(parts)


ANN_APPLIED = "nvcre.nvidia.com/applied-overrides"
ANN_GPU_PRODUCT = "nvcre.nvidia.com/detected-gpu-product"
"""The nodes' own product names, on runs whose GPU model is outside the defaults table."""


def _fewer_nodes(eligible: Sequence[NodeInfo], gpus: int) -> str:
    """The remedy for too few nodes: a numNodes the nodes able to run the job can meet.

    A node with fewer allocatable GPUs than the job asks per node was just named in a warning
    as unable to run it, so it does not count.
    """
    short = [
        n.name for n in eligible if n.allocatable_gpus is not None and n.allocatable_gpus < gpus
    ]
    usable = len(eligible) - len(short)
    shown = ", ".join(short[:3]) + (f" and {len(short) - 3} more" if len(short) > 3 else "")
    cannot = f" ({shown} cannot run it: fewer than {gpus} allocatable nvidia.com/gpu)"
    cannot = cannot if short else ""
    if usable < 1:
        return f"no eligible node can run the job{cannot}"
    return f"set numNodes to {usable} or fewer{cannot}"


def _measurement_annotations(
    spec: models.WorkloadRunSpec, context: _Context, err: Any, warn: Any
) -> dict[str, str]:
    """Validate measurements and thresholds; carry them onto TrainJobs for ``report``."""
    import json

    out: dict[str, str] = {}
    measurements: list[tuple[str, Any, str]] = [
        (ANN_BANDWIDTH, spec.bandwidth_measurement, "spec.bandwidthMeasurement"),
        (ANN_GOODPUT, spec.goodput_measurement, "spec.goodputMeasurement"),
    ]
    for key, m, path in measurements:
        if m is None:
            continue
        if m.log_profile_ref not in BUILTIN_LOG_PROFILES | context.log_profiles:
            warn(
                f"logProfileRef {m.log_profile_ref!r} is neither built in "
                f"({', '.join(sorted(BUILTIN_LOG_PROFILES))}) nor a LogProfile in the input; "
                "the report needs it to parse the logs",
                f"{path}.logProfileRef",
            )
        body = m.model_dump(by_alias=True, exclude_none=True)
        out[key] = json.dumps(body, sort_keys=True, separators=(",", ":"))
    bm = spec.bandwidth_measurement
    if bm is not None and bm.test_type is not None and bm.test_type not in NCCL_TEST_TYPES:
        err(
            f"testType {bm.test_type!r} is not an nccl-tests collective; allowed: "
            + ", ".join(sorted(NCCL_TEST_TYPES)),
            "spec.bandwidthMeasurement.testType",
        )
    if spec.thresholds:
        from krm_fn.report import thresholds as th  # the report's language; only when used

        for k, expr in spec.thresholds.items():
            try:
                th.check_threshold_key(k)
            except th.ThresholdKeyError:
                err(
                    f"unknown threshold key {k!r}; known keys: "
                    + ", ".join(sorted(th.KNOWN_THRESHOLD_KEYS)),
                    f"spec.thresholds[{k!r}]",
                )
                continue
            try:
                th.parse_threshold(expr)
            except th.ThresholdSyntaxError as exc:
                err(f"threshold {expr!r} does not parse: {exc}", f"spec.thresholds[{k!r}]")
        if spec.bandwidth_measurement is None and spec.goodput_measurement is None:
            warn(
                "thresholds are set but neither bandwidthMeasurement nor goodputMeasurement is; "
                "the report fails every threshold it has no measurement for",
                "spec.thresholds",
            )
        out[ANN_THRESHOLDS] = json.dumps(
            dict(spec.thresholds), sort_keys=True, separators=(",", ":")
        )
    return out


OWN_KINDS = ("WorkloadRun", "LogProfile")


def _check_inputs(
    objects: Sequence[Mapping[str, Any]], nodes: Sequence[NodeInfo], results: Results
) -> None:
    """Refuse what would otherwise be silently ignored or corrupt the output."""
    from krm_fn.api.models import DNS1123_SUBDOMAIN_RE

    for o in objects:
        api = o.get("apiVersion")
        kind = o.get("kind")
        if isinstance(api, str) and api.startswith("nvcre.nvidia.com/") and kind not in OWN_KINDS:
            import difflib  # only for the hint of this error

            close = difflib.get_close_matches(str(kind), OWN_KINDS, n=1, cutoff=0.6)
            results.error(
                f"unknown kind {kind!r} in the nvcre.nvidia.com API group"
                + (f"; did you mean {close[0]!r}?" if close else "")
                + f" (this function reads {' and '.join(OWN_KINDS)})",
                resource=ResourceRef.of(dict(o)),
                field_path="kind",
            )
    for n in nodes:
        if n.name and (len(n.name) > 253 or not DNS1123_SUBDOMAIN_RE.match(n.name)):
            results.error(
                f"Node name {n.name!r} is not a DNS-1123 subdomain (lower-case letters, digits, "
                "'-' and '.'), so it cannot be a kubernetes.io/hostname value to pin pods to",
                resource=ResourceRef("v1", "Node", n.name),
                field_path="metadata.name",
            )


def kubelet_literal(text: str) -> str:
    """Escape ``$`` so the kubelet's ``$(VAR)`` expansion leaves the text exactly as written."""
    return text.replace("$", "$$")


def _forced_arch(name: str | None) -> str | None:
    from krm_fn.platforms import gpu as pgpu

    return pgpu.parse_gpu_product(name) if name else None


def _registry_password(options: FunctionOptions, results: Results) -> str | None:
    if not options.registry_password_env:
        return None
    value = os.environ.get(options.registry_password_env)
    if not value:
        results.error(
            f"environment variable {options.registry_password_env} (named by the "
            "registryPasswordEnv option) is not set or empty; export the registry password "
            "there"
        )
        return None
    results.secrets.append(value)
    return value


def _render_one(
    wr: models.WorkloadRun,
    raw: dict[str, Any],
    file: FileRef | None,
    nodes: Sequence[NodeInfo],
    options: FunctionOptions,
    password: str | None,
    results: Results,
    out: RenderOutput,
    context: _Context,
) -> None:
    ref = ResourceRef.of(raw)
    spec = wr.spec
    errors_before = sum(1 for r in results.items if r.severity == "error")

    def err(msg: str, path: str | None = None) -> None:
        results.error(msg, resource=ref, field_path=path, file=file)

    def warn(msg: str, path: str | None = None) -> None:
        results.warning(msg, resource=ref, field_path=path, file=file)

    def build_failed(msg: str, path: str) -> None:
        results.error(msg, resource=ref, field_path=path, file=file, tags={"reason": "BuildFailed"})

    problem = naming.run_name_problem(wr.name)
    if problem:
        err(problem, "metadata.name")
    for path, msg in [
        *rules.reserved_names(spec),
        *rules.reserved_env(spec),
        *rules.gang_scheduler(spec),
        *rules.workload_labels(spec),
        *rules.placement(spec),
    ]:
        build_failed(msg, path)
    trainjob_annotations = _measurement_annotations(spec, context, err, warn)

    orch = spec.orchestration
    unpinned = bool(orch and orch.placement == "Unpinned")
    if unpinned and spec.num_nodes > 1 and spec.gang_scheduler is None:
        warn(
            f"numNodes is {spec.num_nodes} under placement Unpinned without spec.gangScheduler: on a "
            "contended cluster some pods can bind while the rest stay Pending indefinitely; set "
            "spec.gangScheduler so the gang schedules whole or not at all",
            "spec.gangScheduler",
        )
    if unpinned and orch is not None and orch.topology is not None:
        warn(
            "orchestration.topology.topologyKey only drives partitioning, so under Unpinned it does "
            "nothing; to keep the job inside one domain, name the domain label in "
            "target.matchExpressions (e.g. key nvidia.com/gpu.clique, operator In)",
            "spec.orchestration.topology",
        )
    timeout_text = (
        orch.timeout_per_job if orch and orch.timeout_per_job else None
    ) or DEFAULT_TIMEOUT
    deadline = math.ceil(parse_go_duration(timeout_text))  # validated by the model

    # --- nodes -------------------------------------------------------------------------------
    tolerations = [t.to_toleration() for t in (spec.target.taint_selectors if spec.target else [])]
    sel = select_nodes(nodes, spec.target, tolerations, fleet.requested_resources(spec))
    # A taint on a resource the pods request is tolerated by Kubernetes' ExtendedResourceToleration
    # admission plugin (GKE); say so explicitly, for clusters without it.
    tolerations += [fleet.extended_resource_toleration(k) for k in sel.resource_taints]
    excluded = list(sel.excluded)
    eligible = fleet.with_slice_products(sel.eligible, context.gpu_slices)

    # --- platform and GPU -------------------------------------------------------------------
    plat: PlatformPlan | None = None
    no_gpus_left: tuple[int, int] | None = None  # (requested, best available)
    if eligible:
        plat = resolve_platform(spec, eligible, options, err, warn, context.gpu_slices)
        requested = fleet.requested_gpus(spec, plat.gpus_per_node)
        short = (
            []
            if plat.counts_disagree
            else fleet.short_of_gpus(eligible, requested, context.gpu_slices)
        )
        if short:
            excluded += short
            eligible = [n for n in eligible if n.name not in {x.node for x in short}]
            if not eligible:
                no_gpus_left = (requested, max(x.gpus for x in short))
    if excluded:
        warn(f"{len(excluded)} node(s) matching the target are left out: " + _left_out(excluded))
    if no_gpus_left:
        err(
            f"No node can supply the {no_gpus_left[0]} nvidia.com/gpu the workload requests "
            f"per node; best available is {no_gpus_left[1]}",
            "spec.gpusPerNode",
        )
    elif not eligible:
        where = "spec.target" if spec.target else None
        err(
            "no eligible nodes: no Ready, schedulable Node in the input matches the target"
            + ("" if spec.target else f" (default target: label {GPU_PRESENT_LABEL}=true)")
            + f"; {len(nodes)} Node(s) in the input"
            + fleet.unlabelled_gpu_hint(nodes, spec.target, context.gpu_slices),
            where,
        )
    platform = plat.platform if plat else "unknown"
    arch = plat.gpu_architecture if plat else "unknown"
    gpus = plat.gpus_per_node if plat else (spec.gpus_per_node or 8)
    overlay = plat.overlay if plat else None

    # --- partition ---------------------------------------------------------------------------
    scale = orch.test_scale if orch else None
    per_group = 1 if scale == "intra-node" else spec.num_nodes
    topo_key = (orch.topology.topology_key if orch and orch.topology else None) or (
        overlay.topology_key if overlay else None
    )
    strict_domain = bool(orch and orch.topology and orch.topology.strict_domain) or (
        scale == "intra-rack"
    )
    names = [n.name for n in eligible]
    part = Partition(())
    domains = 0
    if eligible:
        if unpinned:
            if len(names) < spec.num_nodes:
                err(
                    f"not enough eligible nodes: need {spec.num_nodes} (numNodes), found "
                    f"{len(names)}; Unpinned runs the requested job size exactly, so make "
                    f"{spec.num_nodes} qualifying nodes available rather than lowering numNodes",
                    "spec.numNodes",
                )
            else:
                part = Partition((Group("group-0", ()),), untested=())
        elif scale == "intra-rack" and not topo_key:
            err(
                "testScale intra-rack runs one job per topology domain, but no topology key is "
                f"known for platform {platform!r} and GPU {arch!r}; set "
                "spec.orchestration.topology.topologyKey",
                "spec.orchestration.testScale",
            )
        elif topo_key:
            pairs = [(n.name, n.labels.get(topo_key)) for n in eligible]
            missing = topology.missing_topology_label(pairs, topo_key)
            if missing:
                src = (
                    "spec.orchestration.topology.topologyKey"
                    if orch and orch.topology
                    else f"the {platform} platform default"
                )
                err(
                    f"node(s) {', '.join(repr(m) for m in missing)} missing topology label "
                    f"{topo_key!r} ({src}); label them, narrow spec.target, or set "
                    "spec.orchestration.topology.topologyKey to a label they carry",
                    "spec.orchestration.topology.topologyKey",
                )
            else:
                labelled = [(n, str(d)) for n, d in pairs]
                domains = len({d for _, d in labelled})
                try:
                    part = topology.partition_topology(
                        labelled, per_group, strict_domain, options.remainder
                    )
                except PartitionError as exc:
                    err(f"{exc}; {_fewer_nodes(eligible, gpus)}", "spec.numNodes")
        else:
            try:
                part = partition_simple(names, per_group, options.remainder)
            except PartitionError as exc:
                err(f"{exc}; {_fewer_nodes(eligible, gpus)}", "spec.numNodes")
        if part.untested:
            warn(
                f"remainder: {len(part.untested)} node(s) left untested because they do not "
                f"fill a group of {per_group} (option remainder=skip): " + ", ".join(part.untested)
            )

    # --- shared claims --------------------------------------------------------------------------
    concurrent = spec.num_nodes if unpinned else len(eligible)
    ns_key = wr.namespace or ""
    pvcs = {name: pvc for (ns, name), pvc in context.pvcs.items() if ns in (ns_key, "")}
    claim_errors, claim_warnings = rules.shared_claims(spec, concurrent, pvcs)
    for path, msg in claim_errors:
        build_failed(msg, path)
    for path, msg in claim_warnings:
        warn(msg, path)

    # --- env, resources, volumes --------------------------------------------------------------
    user_env = [Env(e.name, e.value or "", e.value_from) for e in spec.env]
    env = merge_env(base_nccl_env(plat.mnnvl if plat else bool(spec.enable_mnnvl)), user_env)
    user_by_name = {e.name: e for e in user_env}
    # Platform env: spec.env wins for the names the user sets (NVCRE's BuildOverrides).
    node_env = (
        merge_named(env, [user_by_name.get(e.name, Env(e.name, e.value)) for e in overlay.env])
        if overlay and overlay.env
        else None
    )
    trainer_env = [
        user_by_name.get(e.name, Env(e.name, e.value))
        for e in (overlay.trainer_env if overlay else ())
    ]
    # Trainer upserts trainer.env onto the trainer containers; giving a runtime variable of the
    # same name the same value up front means Trainer overwrites nothing the runtime set.
    trainer_by_name = {e.name: e for e in trainer_env}
    env = [trainer_by_name.get(e.name, e) for e in env]
    if node_env is not None:
        node_env = [trainer_by_name.get(e.name, e) for e in node_env]
    platform_mpi_args = user_wins_in_mpi_args(
        list(overlay.mpi_args) if overlay else [], user_by_name
    )
    resources = _worker_resources(
        spec.resources,
        gpus,
        overlay.resources if overlay else {},
        spec.nic_resource_name,
        plat.nics_per_node if plat else 0,
    )
    dra_only = fleet.dra_only_nodes(eligible, context.gpu_slices, resources)
    if dra_only:
        shown = ", ".join(dra_only[:3]) + (
            f" and {len(dra_only) - 3} more" if len(dra_only) > 3 else ""
        )
        warn(
            f"node(s) {shown} advertise their GPUs only through gpu.nvidia.com ResourceSlices (no "
            f"allocatable nvidia.com/gpu), but the worker pods request nvidia.com/gpu: "
            f"{resources['limits'][fleet.GPU_RESOURCE]}, which those nodes cannot grant until a "
            "device plugin advertises it; request the GPUs through DRA instead "
            "(spec.resources.claims, or an override that sets nvidia.com/gpu to 0)",
            "spec.resources",
        )

    config_map: str | None = None
    if spec.config is not None:
        if spec.config.inline:
            config_map = naming.config_map_name(wr.name)
        elif spec.config.config_map_ref is not None:
            config_map = spec.config.config_map_ref.name

    pull = [s.name for s in spec.image_pull_secrets]
    secret_name = naming.pull_secret_name(wr.name) if options.registry else None
    if secret_name and secret_name not in pull:
        pull.append(secret_name)

    # --- user overrides (when: matched against the detected platform and GPU) -----------------
    raw_overrides = list((raw.get("spec") or {}).get("overrides") or [])
    when_ctx = WhenContext(
        platform=platform,
        gpu_architecture=arch,
        topology_mode="topology" if topo_key and not unpinned else "simple",
        domain_count=domains,
    )
    override_args: list[str] = []
    pre_command: list[str] = list(overlay.pre_command) if overlay else []
    matched_user: list[str] = []
    for i, ov in enumerate(raw_overrides):
        when = ov.get("when") or {}
        try:
            hit = when_matches(when, when_ctx)
        except WhenError as exc:
            err(str(exc), f"spec.overrides[{i}].when")
            continue
        if not hit:
            warn(
                f"override {i} matched nothing (when: {describe_when(when)}; platform "
                f"{platform}, GPU {arch}), so it changes nothing",
                f"spec.overrides[{i}].when",
            )
            continue
        matched_user.append(f"spec.overrides[{i}]")
        override_args += list(ov.get("mpiArgs") or [])
        pre_command += list(ov.get("preCommand") or [])

    fw = spec.framework
    if fw.mpi is not None:
        # trainer.env reaches the launcher only; the ranks get it with -x like the rest
        command, args = mpi_argv(
            fw.mpi, gpus, merge_named(env, trainer_env), platform_mpi_args, override_args
        )
    else:
        command, args = framework_argv(fw)
    command, args = wrap_pre_command(pre_command, command, args)

    applied = [f"catalog:{n}" for n in (overlay.applied if overlay else ())] + matched_user
    labels = {LABEL_MANAGED_BY: MANAGER, LABEL_RUN: wr.name}
    annotations = {ANN_PLATFORM: platform, ANN_GPU_ARCH: arch, ANN_FRAMEWORK: spec.framework.name}
    products = plat.model_products if plat else ()
    if products and not fleet.in_table(arch):
        annotations[ANN_GPU_PRODUCT] = ",".join(products)
    # Always present, empty when nothing applied: "no override" is visible, not inferred.
    annotations[ANN_APPLIED] = ",".join(applied)

    if sum(1 for r in results.items if r.severity == "error") > errors_before:
        return

    # The kubelet expands $(VAR) and turns $$ into $ in command, args and env values: escape
    # every value derived from the WorkloadRun so the process sees it exactly as written.
    env = _literal_env(env)
    node_env = _literal_env(node_env) if node_env is not None else None
    trainer_env = _literal_env(trainer_env)
    command = [kubelet_literal(c) for c in command]
    args = [kubelet_literal(a) for a in args]
    repeat = (orch.repeat_count if orch and orch.repeat_count else None) or 1
    if len(part.groups) * repeat > MAX_TRAINJOBS:
        err(
            f"{len(part.groups)} group(s) x repeatCount {repeat} would render "
            f"{len(part.groups) * repeat} TrainJobs, more than the {MAX_TRAINJOBS} allowed per run",
            "spec.orchestration.repeatCount",
        )
        return
    base_sc: dict[str, Any] = (
        {"capabilities": {"add": ["IPC_LOCK", "SYS_CHROOT"]}} if fw.name == "mpi" else {}
    )
    plan = RunPlan(
        name=wr.name,
        namespace=wr.namespace,
        image=spec.image,
        framework=spec.framework.name,
        num_nodes=per_group,
        gpus_per_node=gpus,
        env=tuple(env),
        node_env=tuple(node_env) if node_env is not None else None,
        trainer_env=tuple(trainer_env),
        worker_resources=resources,
        user_volumes=tuple(v.to_k8s() for v in spec.volumes),
        user_mounts=tuple(
            m.model_dump(by_alias=True, exclude_none=True) for m in spec.volume_mounts
        ),
        init_containers=tuple(
            c.model_dump(by_alias=True, exclude_none=True) for c in spec.init_containers
        ),
        config_map=config_map,
        image_pull_secrets=tuple(pull),
        target_terms=tuple(_target_terms(spec.target)),
        tolerations=tuple(_union([*tolerations, *(overlay.tolerations if overlay else ())])),
        labels=labels,
        annotations=annotations,
        trainer_command=tuple(command),
        trainer_args=tuple(args),
        runtime_name=naming.runtime_name(wr.name),
        gang=(
            GangPlan(
                spec.gang_scheduler.scheduler_name,
                spec.gang_scheduler.queue_label_key or "kai.scheduler/queue",
                spec.gang_scheduler.queue or "default-queue",
            )
            if spec.gang_scheduler
            else None
        ),
        workload_labels=dict(spec.workload_metadata.labels) if spec.workload_metadata else {},
        trainjob_annotations=trainjob_annotations,
        platform_volumes=_not_shadowed(
            overlay.volumes if overlay else (), {v.name for v in spec.volumes}, "name"
        ),
        platform_mounts=_not_shadowed(
            overlay.volume_mounts if overlay else (),
            {m.mount_path for m in spec.volume_mounts},
            "mountPath",
        ),
        worker_security_context=_merge_security(
            base_sc, overlay.security_context if overlay else {}
        ),
        pod_annotations=dict(overlay.pod_annotations) if overlay else {},
        checkpoint_pvc=naming.checkpoint_pvc_name(wr.name) if spec.checkpoint else None,
        max_restarts=spec.checkpoint.max_restarts if spec.checkpoint else 0,
    )
    objs: list[dict[str, Any]] = []
    if secret_name and options.registry and options.registry_username and password:
        objs.append(
            secret.build_pull_secret(
                plan, secret_name, options.registry, options.registry_username, password
            )
        )
    if spec.config is not None and spec.config.inline and config_map:
        objs.append(configmap.build_config_map(plan, config_map, spec.config.inline))
    if spec.checkpoint is not None and plan.checkpoint_pvc:
        objs.append(
            checkpoint.build_checkpoint_pvc(
                plan,
                plan.checkpoint_pvc,
                spec.checkpoint.storage_size,
                spec.checkpoint.storage_class_name,
            )
        )
    if spec.framework.name == "mpi":
        objs.append(mpi_runtime.build_mpi_runtime(plan))
    else:
        objs.append(torch_runtime.build_torch_runtime(plan))

    jobs = _jobs(wr.name, part.groups, repeat, names if unpinned else None)
    waves = topology.run_waves(
        [Group(j.name, j.nodes) for j in jobs], (orch.max_concurrent if orch else None) or 0
    )
    wave_of = {name: i for i, wave in enumerate(waves) for name in wave}
    for j in jobs:
        w = wave_of[j.name]
        objs.append(
            trainjob.build_trainjob(
                plan,
                j.group,
                j.name,
                runs_after=_runs_after(waves[w - 1], w - 1) if w else None,
                active_deadline_seconds=deadline,
                wave=w,
            )
        )
    built_runtime = next((o for o in objs if o.get("kind") == "TrainingRuntime"), {})
    built_env = {str(e.get("name")): e for e in mpi_forward.launcher_env(built_runtime, {})}
    if raw_overrides:
        gang = (
            (plan.gang.scheduler_name, plan.gang.queue_label_key, plan.gang.queue)
            if plan.gang
            else None
        )
        template_ctx = jt.TemplateContext(
            health_monitor=not any(
                t.key == "node.kubernetes.io/unschedulable"
                for t in (spec.target.taint_selectors if spec.target else [])
            ),
            checkpoint=(
                {"pvcName": plan.checkpoint_pvc, "maxRestarts": plan.max_restarts}
                if plan.checkpoint_pvc
                else None
            ),
            gang=gang,
            runtimes=frozenset({plan.runtime_name}),
        )
        expect = Expect(
            framework=spec.framework.name,
            target=plan.target_terms,
            tolerations=tuple(tolerations),
            gang=gang,
        )
        outcome = apply_overrides(raw_overrides, objs, when_ctx, template_ctx, expect)
        for path, msg in outcome.warnings:
            warn(msg, path)
        for path, msg in outcome.errors:
            err(msg, path)
        if outcome.errors:
            return
        objs = outcome.objects
    if overlay is not None:
        objs = dra.apply_dra(objs, plan, overlay.compute_domain, overlay.claim_templates)
    platform_args = overlay.mpi_args if overlay else ()
    if not _finalize(objs, spec, platform_args, override_args, built_env, err, warn):
        return
    for o in objs:
        out.objects.append((o, raw))
    out.summaries.append(
        RunSummary(
            wr.name,
            wr.namespace,
            list(part.groups),
            list(part.untested),
            [x.node for x in excluded],
            platform,
            arch,
            waves=[list(w) for w in waves],
        )
    )
    sizes = sorted({len(g.nodes) or spec.num_nodes for g in part.groups})
    results.info(
        f"{RENDERED_NOTE} {len(jobs)} TrainJob(s) of {'/'.join(map(str, sizes))} node(s) "
        f"from {len(eligible)} eligible node(s) in {len(waves)} wave(s); platform {platform}, "
        f"GPU {arch}"
        + (f" ({', '.join(products)})" if products and not fleet.in_table(arch) else "")
        + f", {gpus} GPU(s) per node"
        + (f" ({plat.gpus_from})" if plat and plat.gpus_from else "")
        + (f"; overrides: {', '.join(applied)}" if applied else ""),
        resource=ref,
        file=file,
    )


def _finalize(
    objs: list[dict[str, Any]],
    spec: models.WorkloadRunSpec,
    platform_args: Sequence[str],
    override_args: Sequence[str],
    built_env: Mapping[str, Mapping[str, Any]],
    err: Any,
    warn: Any,
) -> bool:
    """Make the final objects (after overrides) acceptable to the cluster; False on an error.

    In order: every launcher variable reaches the MPI ranks (:mod:`krm_fn.mpi_forward`), the
    trainer command fits Trainer's 128 items (:mod:`krm_fn.trainer_limits`), the apply-order
    contract (:mod:`krm_fn.apply_order`, objects reordered in place), then the API server's
    size limits.
    """
    ok = True
    jobs = [o for o in objs if apply_order.is_trainjob(o)]
    mpi = spec.framework.mpi
    # One runtime per run, or one copy per TrainJob when each needs its own DRA channel.
    runtimes = {o["metadata"]["name"]: o for o in objs if o.get("kind") == "TrainingRuntime"}
    if mpi is not None and runtimes:
        explicit = mpi_forward.explicit_names(platform_args, override_args, mpi.mpi_args)
        missed: set[str] = set()
        caches: dict[str, dict[Any, Any]] = {}
        mpirun = kubelet_literal(mpi.mpirun_path)
        for j in jobs:
            ref = str(((j.get("spec") or {}).get("runtimeRef") or {}).get("name"))
            runtime = runtimes.get(ref) or next(iter(runtimes.values()))
            cache = caches.setdefault(runtime["metadata"]["name"], {})
            missed.update(
                mpi_forward.forward_launcher_env(runtime, j, explicit, mpirun, built_env, cache)
            )
        if missed:
            warn(
                "the launcher command is not mpirun (an override replaced it), so these launcher "
                "variables cannot be forwarded to the ranks with -x and the ranks, started by "
                "sshd with a clean environment, will not see them: " + ", ".join(sorted(missed)),
                "spec.overrides",
            )
    for j in jobs:
        msg = trainer_limits.fit_trainer_argv(j)
        if msg:
            err(f"TrainJob {j['metadata']['name']}: {msg}", "spec.env")
            ok = False
            break  # the same command line for every TrainJob of the run
    objs[:] = apply_order.order_run(objs)
    queued = any(KUEUE_QUEUE_LABEL in (j["metadata"].get("labels") or {}) for j in jobs)
    waves = {apply_order.wave_of(j) for j in jobs} if queued else set()
    if len(waves) > 1:
        warn(
            f"the TrainJobs carry Kueue's queue label {KUEUE_QUEUE_LABEL} and the run has "
            f"{len(waves)} waves: Kueue unsuspends every TrainJob it admits, so the suspended "
            "later waves start as soon as quota allows instead of after the previous wave, and "
            "TrainJobs that share nodes can hold GPUs at the same time; render a single wave "
            "(remainder: skip, repeatCount 1, maxConcurrent 0) or drop the queue label and "
            "release the waves yourself (README: Kueue and waves)",
            "spec.gangScheduler.queueLabelKey"
            if spec.gang_scheduler is not None
            and spec.gang_scheduler.queue_label_key == KUEUE_QUEUE_LABEL
            else "spec.workloadMetadata.labels",
        )
    for o in trainer_limits.worth_measuring(objs):
        for msg in trainer_limits.size_problems(o):
            err(
                f"{o.get('kind')} {o['metadata'].get('name')}: {msg}"
                + ("; use a smaller spec.numNodes" if apply_order.is_trainjob(o) else ""),
                "spec.numNodes" if apply_order.is_trainjob(o) else None,
            )
            ok = False
    return ok


RUNS_AFTER_MAX = 16 * 1024
"""Longest ``nvcre.nvidia.com/runs-after`` list (bytes); a longer one names the wave instead."""


def _runs_after(previous: Sequence[str], wave: int) -> str:
    """The TrainJobs a suspended TrainJob runs after, or their wave when the list is long.

    Every TrainJob of wave ``w`` carries the list, so 10,000 single-node TrainJobs of wave 0
    would give each later one ~300 KiB of annotation, over the API server's 256 KiB.
    """
    text = ",".join(previous)
    if len(text) <= RUNS_AFTER_MAX:
        return text
    return f"wave {wave} ({len(previous)} TrainJobs labelled {LABEL_WAVE}={wave})"


@dataclass(frozen=True, slots=True)
class _Job:
    name: str
    group: Group
    nodes: tuple[str, ...]


def _jobs(
    run: str, groups: Sequence[Group], repeat: int, unpinned_nodes: Sequence[str] | None
) -> list[_Job]:
    """One TrainJob per group and iteration (``-iter-<k>`` only when repeatCount > 1).

    Under Unpinned the scheduler may put every iteration on any target node, so for
    keeping iterations apart each one counts as using all of them.
    """
    jobs = []
    for k in range(1, repeat + 1):
        for g in groups:
            suffix = f"{g.name}-iter-{k}" if repeat > 1 else g.name
            nodes = tuple(unpinned_nodes) if unpinned_nodes is not None else g.nodes
            jobs.append(_Job(naming.trainjob_name(run, suffix), g, nodes))
    return jobs


def _union(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in items:
        if dict(i) not in out:
            out.append(dict(i))
    return out


def _not_shadowed(
    items: Sequence[Mapping[str, Any]], user: set[str], key: str
) -> tuple[Mapping[str, Any], ...]:
    """Platform volumes/mounts, minus those the user declares under the same name/path."""
    return tuple(i for i in items if i.get(key) not in user)


def _literal_env(env: Sequence[Env]) -> list[Env]:
    return [
        Env(e.name, kubelet_literal(e.value), e.value_from) if e.value_from is None else e
        for e in env
    ]


def _merge_security(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge container securityContexts; ``capabilities.add`` lists are unioned."""
    out: dict[str, Any] = {k: v for k, v in base.items()}
    for k, v in extra.items():
        if k == "capabilities" and isinstance(v, Mapping):
            caps = dict(out.get("capabilities") or {})
            for ck, cv in v.items():
                if ck in ("add", "drop") and isinstance(cv, list):
                    caps[ck] = list(dict.fromkeys([*(caps.get(ck) or []), *cv]))
                else:
                    caps[ck] = cv
            out["capabilities"] = caps
        elif isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge_security(out[k], v)
        else:
            out[k] = v
    return out


def _worker_resources(
    res: models.ResourceRequirements | None,
    gpus: int,
    platform: Mapping[str, Mapping[str, str | int | None]],
    nic_name: str | None,
    nics: int,
) -> dict[str, Any]:
    """Worker resources: NVCRE's GPU rule, then platform requests, then the NIC request.

    ``nvidia.com/gpu`` goes into limits and requests unless the user named it in either;
    platform resources (EFA adapters, RDMA devices, hugepages) are added where the user did
    not set the same name; ``nicResourceName`` requests ``mlnxPerNode`` (0 opts out).
    """
    gpu = "nvidia.com/gpu"
    limits: dict[str, Any] = dict(res.limits or {}) if res else {}
    requests: dict[str, Any] = dict(res.requests or {}) if res else {}
    if gpu not in limits and gpu not in requests:
        limits[gpu] = str(gpus)
        requests[gpu] = str(gpus)
    user_named = set(limits) | set(requests)
    for section, target in (("limits", limits), ("requests", requests)):
        for k, v in (platform.get(section) or {}).items():
            if v is None:  # the platform deletes the name (DRA claims replace nvidia.com/gpu)
                target.pop(k, None)
            elif k not in user_named:
                target[k] = v
    if nic_name and nics > 0 and nic_name not in user_named:
        limits[nic_name] = str(nics)
        requests[nic_name] = str(nics)
    out: dict[str, Any] = {}
    if limits:
        out["limits"] = limits
    if requests:
        out["requests"] = requests
    if res and res.claims:
        out["claims"] = list(res.claims)
    return out


def _target_terms(target: models.Target | None) -> list[dict[str, Any]]:
    """The target as required node-affinity expressions (the implied default included)."""
    if target is None or not (
        target.node_selector or target.match_expressions or target.node_names
    ):
        return [{"key": GPU_PRESENT_LABEL, "operator": "In", "values": ["true"]}]
    exprs = [
        {"key": k, "operator": "In", "values": [target.node_selector[k]]}
        for k in sorted(target.node_selector)
    ]
    exprs += [r.to_k8s() for r in target.match_expressions]
    if target.node_names:
        exprs.append(
            {"key": "kubernetes.io/hostname", "operator": "In", "values": sorted(target.node_names)}
        )
    return exprs
