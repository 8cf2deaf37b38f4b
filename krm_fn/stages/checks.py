"""Stage 1, run checks: what the model alone cannot refuse, and what runs carry for the report.

Invariants:
    * Reads only the validated model and the input context; never the nodes.
    * Every problem is reported (names, reserved names and env, gang scheduler, labels,
      placement, measurements, thresholds); none stops the other checks.
    * Measurements and thresholds come back as the TrainJob annotations ``report`` reads, in
      compact, key-sorted JSON (deterministic).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from krm_fn.api import models, naming, rules
from krm_fn.api.durations import parse_go_duration
from krm_fn.keys import ANN_BANDWIDTH, ANN_GOODPUT, ANN_THRESHOLDS, builtin_log_profiles
from krm_fn.stages.diagnostics import RunDiagnostics
from krm_fn.stages.parse import InputContext

DEFAULT_TIMEOUT = models.DEFAULT_TIMEOUT_PER_JOB
"""An unset timeoutPerJob (NVCRE's default, written once with the field's description)."""
NCCL_TEST_TYPES = frozenset((
    "all_reduce", "all_gather", "alltoall", "broadcast", "reduce", "reduce_scatter", "sendrecv",
    "scatter", "gather", "hypercube",
))  # fmt: skip


@dataclass(frozen=True)
class RunChecks:
    """What the checks resolved."""

    deadline: int  # every TrainJob's activeDeadlineSeconds (timeoutPerJob, default 24h)
    trainjob_annotations: dict[str, str]  # measurements and thresholds for the report


def check_run(wr: models.WorkloadRun, context: InputContext, diag: RunDiagnostics) -> RunChecks:
    """Check the run's names, rules and measurements; resolve its deadline."""
    spec = wr.spec
    problem = naming.run_name_problem(wr.name)
    if problem:
        diag.error(problem, "metadata.name")
    for path, msg in [
        *rules.reserved_names(spec),
        *rules.reserved_env(spec),
        *rules.gang_scheduler(spec),
        *rules.workload_labels(
            spec.workload_metadata.labels if spec.workload_metadata else {},
            spec.gang_scheduler,
            "spec.workloadMetadata.labels",
        )[1],
        *rules.placement(spec),
    ]:
        diag.build_failed(msg, path)
    annotations = _measurements(spec, context, diag)
    _thresholds(spec, diag, annotations)
    orch = spec.orchestration
    timeout = (orch.timeout_per_job if orch and orch.timeout_per_job else None) or DEFAULT_TIMEOUT
    return RunChecks(math.ceil(parse_go_duration(timeout)), annotations)  # validated by the model


def _measurements(
    spec: models.WorkloadRunSpec, context: InputContext, diag: RunDiagnostics
) -> dict[str, str]:
    """Validate the measurements; carry them onto TrainJobs for ``report``."""
    out: dict[str, str] = {}
    measurements: list[tuple[str, Any, str]] = [
        (ANN_BANDWIDTH, spec.bandwidth_measurement, "spec.bandwidthMeasurement"),
        (ANN_GOODPUT, spec.goodput_measurement, "spec.goodputMeasurement"),
    ]
    for key, m, path in measurements:
        if m is None:
            continue
        if m.log_profile_ref not in (builtin := builtin_log_profiles()) | context.log_profiles:
            diag.warning(
                f"logProfileRef {m.log_profile_ref!r} is neither built in "
                f"({', '.join(sorted(builtin))}) nor a LogProfile in the input; "
                "the report needs it to parse the logs",
                f"{path}.logProfileRef",
            )
        body = m.model_dump(by_alias=True, exclude_none=True)
        out[key] = json.dumps(body, sort_keys=True, separators=(",", ":"))
    bm = spec.bandwidth_measurement
    if bm is not None and bm.test_type is not None and bm.test_type not in NCCL_TEST_TYPES:
        diag.error(
            f"testType {bm.test_type!r} is not an nccl-tests collective; allowed: "
            + ", ".join(sorted(NCCL_TEST_TYPES)),
            "spec.bandwidthMeasurement.testType",
        )
    return out


def _thresholds(spec: models.WorkloadRunSpec, diag: RunDiagnostics, out: dict[str, str]) -> None:
    """Check threshold keys and expressions; add them to ``out`` for ``report``."""
    if not spec.thresholds:
        return
    for path, msg in rules.thresholds(spec.thresholds):
        diag.error(msg, path)
    if spec.bandwidth_measurement is None and spec.goodput_measurement is None:
        diag.warning(
            "thresholds are set but neither bandwidthMeasurement nor goodputMeasurement is; "
            "the report fails every threshold it has no measurement for",
            "spec.thresholds",
        )
    out[ANN_THRESHOLDS] = json.dumps(dict(spec.thresholds), sort_keys=True, separators=(",", ":"))


def unpinned_warnings(spec: models.WorkloadRunSpec, diag: RunDiagnostics) -> None:
    """Warn about settings that do nothing, or harm, under placement Unpinned (once sized)."""
    orch = spec.orchestration
    if not (orch and orch.placement == "Unpinned"):
        return
    if spec.num_nodes > 1 and spec.gang_scheduler is None:
        diag.warning(
            f"numNodes is {spec.num_nodes} under placement Unpinned without spec.gangScheduler: "
            "on a contended cluster some pods can bind while the rest stay Pending indefinitely; "
            "set spec.gangScheduler so the gang schedules whole or not at all",
            "spec.gangScheduler",
        )
    if orch.topology is not None:
        diag.warning(
            "orchestration.topology.topologyKey only drives partitioning, so under Unpinned it "
            "does nothing; to keep the job inside one domain, name the domain label in "
            "target.matchExpressions (e.g. key nvidia.com/gpu.clique, operator In)",
            "spec.orchestration.topology",
        )
