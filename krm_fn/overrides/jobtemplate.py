"""NVCRE's job-template language for ``spec.overrides[].jobTemplate`` / ``jobTemplatePatch``.

In NVCRE an override patches the Workflow's *job template*, a ``JobTemplateSpec``
(``NVIDIA/cluster-readiness-engine`` ``api/v1alpha1/workflow_types.go``) whose ``spec`` is a
``JobSpec`` (``api/v1alpha1/job_types.go``)::

    metadata: {...}                      # the NVCRE Job object's metadata
    spec:
      workload: {trainJob: <TrainJobSpec>}
      workloadMetadata: {labels: {...}}  # labels of the workload object (our TrainJob)
      nodeHealthMonitor: {cel: {expression: ...}}
      checkpoint: {pvcName, maxRestarts}
      stallMultiplier / startupStallTimeoutSeconds / schedulingStallGraceSeconds
      goodputMeasurement / bandwidthMeasurement / thresholds / measurementTimeout

workloadrun-fn has no NVCRE Job: each TrainJob is shown to an override as that view
(:func:`to_view`), patched, and mapped back (:func:`from_view`).

Invariants:
    * ``to_view`` then ``from_view`` of an unpatched view gives back the TrainJob unchanged,
      byte for byte (so an override that changes nothing changes no output).
    * ``spec.workload.trainJob`` is the TrainJob's ``spec``; ``workloadMetadata.labels`` are
      its labels minus the controller-owned ones (``app.kubernetes.io/managed-by``,
      ``nvcre.nvidia.com/*``), which the view never shows and the mapping keeps.
    * ``thresholds``, ``goodputMeasurement`` and ``bandwidthMeasurement`` are the TrainJob
      annotations the report reads; they are validated again after a change.
    * Fields only NVCRE's controllers act on (:data:`CONTROLLER_ONLY`) and the Job
      ``metadata`` may change: each change is a warning that nothing acts on it here.
    * Every NVCRE validation of the result is an error, with NVCRE's messages where they
      exist: label count, keys and values, reserved keys, gang queue consistency, the
      runtimeRef not redirected away from the generated TrainingRuntime.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from krm_fn.keys import ANN_BANDWIDTH as ANN_BANDWIDTH
from krm_fn.keys import ANN_GOODPUT as ANN_GOODPUT
from krm_fn.keys import ANN_THRESHOLDS as ANN_THRESHOLDS
from krm_fn.keys import LABEL_MANAGED_BY
from krm_fn.keys import RESERVED_PREFIX as RESERVED_PREFIX

CONTROLLER_LABEL: Final = LABEL_MANAGED_BY

__all__ = [
    "ANN_BANDWIDTH",
    "ANN_GOODPUT",
    "ANN_THRESHOLDS",
    "CONTROLLER_ONLY",
    "JOB_SPEC_FIELDS",
    "MappedJob",
    "TemplateContext",
    "from_view",
    "to_view",
]


MAX_WORKLOAD_LABELS: Final = 32
HEALTH_MONITOR_EXPRESSION: Final = "node.spec.unschedulable == true"
"""NVCRE's job-level nodeHealthMonitor for a WorkloadRun (reference §2.11)."""

CONTROLLER_ONLY: Final[Mapping[str, str]] = {
    "nodeHealthMonitor": "node health monitoring",
    "checkpoint": "checkpoint restarts",
    "stallMultiplier": "stall detection",
    "startupStallTimeoutSeconds": "startup stall detection",
    "schedulingStallGraceSeconds": "the scheduling-stall grace window",
    "measurementTimeout": "threshold validation timing",
}
"""JobSpec fields only NVCRE's Job controller acts on -> what it does with them."""

_MEASURED: Final[Mapping[str, str]] = {
    "thresholds": ANN_THRESHOLDS,
    "goodputMeasurement": ANN_GOODPUT,
    "bandwidthMeasurement": ANN_BANDWIDTH,
}

JOB_SPEC_FIELDS: Final[tuple[str, ...]] = (
    "workload",
    "workloadMetadata",
    *CONTROLLER_ONLY,
    *_MEASURED,
)
"""Every field of NVCRE's JobSpec (``api/v1alpha1/job_types.go``)."""

# field -> (type, minimum) for the scalar JobSpec fields, as NVCRE's CRD declares them.
_SCALARS: Final[Mapping[str, tuple[type, int | None]]] = {
    "stallMultiplier": (int, 1),
    "startupStallTimeoutSeconds": (int, 1),
    "schedulingStallGraceSeconds": (int, 1),
    "measurementTimeout": (str, None),
}
# field -> allowed sub-fields, for the JobSpec objects other than workload.
_OBJECTS: Final[Mapping[str, tuple[str, ...]]] = {
    "workloadMetadata": ("labels",),
    "nodeHealthMonitor": ("cel",),
    "checkpoint": ("pvcName", "maxRestarts"),
    "goodputMeasurement": ("logProfileRef", "sampleInterval"),
    "bandwidthMeasurement": ("logProfileRef", "sampleInterval", "testType"),
}


@dataclass(frozen=True, slots=True)
class TemplateContext:
    """What the view shows besides the TrainJob, and what the result is checked against.

    Attributes:
        health_monitor: NVCRE sets ``nodeHealthMonitor`` (not when a taintSelector keeps
            cordoned nodes).
        checkpoint: ``{pvcName, maxRestarts}`` when ``spec.checkpoint`` is set.
        gang: ``(schedulerName, queueLabelKey, queue)`` of ``spec.gangScheduler``.
        runtimes: Names of the TrainingRuntimes this run generates.

    """

    health_monitor: bool = True
    checkpoint: Mapping[str, Any] | None = None
    gang: tuple[str, str, str] | None = None
    runtimes: frozenset[str] = frozenset()


@dataclass
class MappedJob:
    """The result of :func:`from_view`.

    Attributes:
        trainjob: The new TrainJob, or ``None`` when an error was found.
        errors: ``(path inside the job template, message)`` pairs.
        controller_only: Controller-only fields (dotted paths) the override changed.

    """

    trainjob: dict[str, Any] | None
    errors: list[tuple[str, str]] = field(default_factory=list)
    controller_only: list[str] = field(default_factory=list)


def reserved_label(key: str) -> bool:
    """Whether ``key`` is controller-owned in NVCRE (and here)."""
    return key == CONTROLLER_LABEL or key.startswith(RESERVED_PREFIX)


def to_view(trainjob: Mapping[str, Any], ctx: TemplateContext) -> dict[str, Any]:
    """The NVCRE job template an override of ``trainjob`` sees."""
    meta = trainjob.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if not reserved_label(k)}
    ann = meta.get("annotations") or {}
    spec: dict[str, Any] = {"workload": {"trainJob": copy.deepcopy(trainjob.get("spec") or {})}}
    if labels:
        spec["workloadMetadata"] = {"labels": labels}
    if ctx.health_monitor:
        spec["nodeHealthMonitor"] = {"cel": {"expression": HEALTH_MONITOR_EXPRESSION}}
    if ctx.checkpoint is not None:
        spec["checkpoint"] = dict(ctx.checkpoint)
    for key, annotation in _MEASURED.items():
        if annotation in ann:
            spec[key] = json.loads(ann[annotation])
    return {"metadata": {}, "spec": spec}


def from_view(view: Any, original: Mapping[str, Any], ctx: TemplateContext) -> MappedJob:
    """Map a patched view back onto ``original`` (the TrainJob it was made from)."""
    errors: list[tuple[str, str]] = []
    out = MappedJob(None, errors)
    if not isinstance(view, Mapping):
        errors.append(("", "the job template must stay a map"))
        return out
    for key in view:
        if key not in ("metadata", "spec"):
            errors.append(
                (str(key), f"unknown field {key!r} of the job template; known: metadata, spec")
            )
    spec = view.get("spec")
    if not isinstance(spec, Mapping):
        errors.append(("spec", "the job template's spec cannot be removed"))
        return out
    baseline = to_view(original, ctx)
    if view.get("metadata") != baseline["metadata"]:
        out.controller_only.append("metadata")
    _check_spec_fields(spec, errors)
    trainjob_spec = _workload(spec, errors)
    labels = _labels(spec, errors, ctx)
    if errors or trainjob_spec is None or labels is None:
        return out
    for key in CONTROLLER_ONLY:
        if spec.get(key) != baseline["spec"].get(key):
            out.controller_only.append(f"spec.{key}")
    annotations = _annotations(spec, original, errors)
    _check_runtime_ref(trainjob_spec, original, ctx, errors)
    if errors:
        return out
    new = copy.deepcopy(dict(original))
    meta = new.setdefault("metadata", {})
    old_labels: Mapping[str, str] = meta.get("labels") or {}
    merged = {
        k: (v if reserved_label(k) else labels[k])
        for k, v in old_labels.items()
        if reserved_label(k) or k in labels
    }
    merged.update({k: v for k, v in labels.items() if k not in merged})
    meta["labels"] = merged
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    new["spec"] = trainjob_spec
    out.trainjob = new
    return out


def _check_spec_fields(spec: Mapping[str, Any], errors: list[tuple[str, str]]) -> None:
    for key, value in spec.items():
        at = f"spec.{key}"
        if key not in JOB_SPEC_FIELDS:
            hint = ""
            if key in (
                "trainer",
                "runtimeRef",
                "runtimePatches",
                "suspend",
                "podTemplateOverrides",
            ):
                hint = f" (did you mean spec.workload.trainJob.{key}?)"
            errors.append(
                (
                    at,
                    f"unknown field {key!r} of NVCRE's job template spec{hint}; known fields: "
                    + ", ".join(JOB_SPEC_FIELDS),
                )
            )
        elif value is None or key in ("workload", "thresholds"):
            continue
        elif key in _SCALARS:
            typ, minimum = _SCALARS[key]
            if not isinstance(value, typ) or isinstance(value, bool):
                errors.append((at, f"must be {'an integer' if typ is int else 'a string'}"))
            elif minimum is not None and isinstance(value, int) and value < minimum:
                errors.append((at, f"must be at least {minimum}, got {value}"))
        elif not isinstance(value, Mapping):
            errors.append((at, "must be a map"))
        else:
            for sub in value:
                if sub not in _OBJECTS[key]:
                    errors.append(
                        (
                            f"{at}.{sub}",
                            f"unknown field {sub!r}; known fields: {', '.join(_OBJECTS[key])}",
                        )
                    )


def _trainjob_removed(path: str) -> tuple[str, str]:
    """The error for a patch that removes the TrainJob (or the whole workload) at ``path``."""
    return (path, "spec.workload.trainJob cannot be removed: it is the TrainJob this group runs")


def _workload(spec: Mapping[str, Any], errors: list[tuple[str, str]]) -> dict[str, Any] | None:
    workload = spec.get("workload")
    if not isinstance(workload, Mapping):
        errors.append(_trainjob_removed("spec.workload"))
        return None
    for key in workload:
        if key != "trainJob":
            errors.append(
                (
                    f"spec.workload.{key}",
                    f"unknown workload kind {key!r}; NVCRE's WorkloadSpec has only trainJob",
                )
            )
    trainjob = workload.get("trainJob")
    if not isinstance(trainjob, Mapping):
        errors.append(_trainjob_removed("spec.workload.trainJob"))
        return None
    return copy.deepcopy(dict(trainjob))


def workload_label_problems(
    path: str, labels: Mapping[str, Any], gang: tuple[str, str, str] | None
) -> list[tuple[str, str]]:
    """NVCRE's checks of ``workloadMetadata.labels`` (count, reserved keys, syntax, queue).

    The messages are NVCRE's Go-side ones (reference §1.8), e.g.
    ``label key is reserved for the controller: ...``.
    """
    from krm_fn.api import models  # the label grammar lives with the API models

    out: list[tuple[str, str]] = []
    if len(labels) > MAX_WORKLOAD_LABELS:
        out.append((path, f"{len(labels)} labels exceeds the maximum of {MAX_WORKLOAD_LABELS}"))
    for key, value in labels.items():
        at = f"{path}[{key!r}]"
        if not isinstance(key, str):
            out.append((at, "invalid label key: must be a string"))
            continue
        if reserved_label(key):
            out.append(
                (
                    at,
                    f"label key is reserved for the controller: {CONTROLLER_LABEL!r} and any key "
                    f"under {RESERVED_PREFIX!r} identify workload ownership",
                )
            )
            continue
        kp = models.label_key_problem(key)
        if kp:
            out.append((at, f"invalid label key: {kp}"))
        if not isinstance(value, str):
            out.append((at, f"invalid label value {value!r}: must be a string"))
            continue
        vp = models.label_value_problem(value)
        if vp:
            out.append((at, f"invalid label value {value!r}: {vp}"))
        elif gang is not None and key == gang[1] and value != gang[2]:
            out.append(
                (
                    at,
                    f"conflicting label value {value!r}, expected {gang[2]!r} "
                    "(spec.gangScheduler.queue)",
                )
            )
    if gang is not None and gang[1] not in labels:
        out.append(
            (
                f"{path}[{gang[1]!r}]",
                f"the gang queue label {gang[1]!r} is missing; spec.gangScheduler puts every "
                f"workload in queue {gang[2]!r}, and an override may not take it out",
            )
        )
    return out


def _labels(
    spec: Mapping[str, Any], errors: list[tuple[str, str]], ctx: TemplateContext
) -> dict[str, str] | None:
    wm = spec.get("workloadMetadata")
    raw: Any = (wm or {}).get("labels") if isinstance(wm, Mapping) else None
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        errors.append(("spec.workloadMetadata.labels", "must be a map of label key to value"))
        return None
    problems = workload_label_problems("spec.workloadMetadata.labels", raw, ctx.gang)
    errors.extend(problems)
    return None if problems else {str(k): str(v) for k, v in raw.items()}


def _annotations(
    spec: Mapping[str, Any], original: Mapping[str, Any], errors: list[tuple[str, str]]
) -> dict[str, str]:
    ann = dict((original.get("metadata") or {}).get("annotations") or {})
    for key, annotation in _MEASURED.items():
        value = spec.get(key)
        old = json.loads(ann[annotation]) if annotation in ann else None
        if value == old:
            continue
        if value is None or value == {}:
            ann.pop(annotation, None)
            continue
        if key == "thresholds":
            _check_thresholds(value, errors)
        elif not isinstance(value.get("logProfileRef"), str) or not value["logProfileRef"]:
            errors.append((f"spec.{key}.logProfileRef", "is required (a LogProfile name)"))
        ann[annotation] = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return ann


def _check_thresholds(value: Any, errors: list[tuple[str, str]]) -> None:
    from krm_fn import thresholds as th  # the threshold language; only when used

    if not isinstance(value, Mapping):
        errors.append(("spec.thresholds", "must be a map of threshold key to expression"))
        return
    unknown = sorted(str(k) for k in value if k not in th.KNOWN_THRESHOLD_KEYS)
    if unknown:
        # NVCRE pkg/threshold/evaluator.go ValidateKeysError
        errors.append(
            (
                "spec.thresholds",
                f"unknown threshold key(s) [{', '.join(unknown)}]; valid keys: "
                f"[{', '.join(th.KNOWN_THRESHOLD_KEYS)}]",
            )
        )
    for key, expr in value.items():
        if key in th.KNOWN_THRESHOLD_KEYS:
            try:
                th.parse_threshold(expr)
            except th.ThresholdSyntaxError as exc:
                errors.append(
                    (f"spec.thresholds[{key!r}]", f"threshold {expr!r} does not parse: {exc}")
                )


def _check_runtime_ref(
    trainjob_spec: Mapping[str, Any],
    original: Mapping[str, Any],
    ctx: TemplateContext,
    errors: list[tuple[str, str]],
) -> None:
    ref = trainjob_spec.get("runtimeRef")
    old = (original.get("spec") or {}).get("runtimeRef") or {}
    at = "spec.workload.trainJob.runtimeRef"
    if not isinstance(ref, Mapping):
        errors.append((at, "cannot be removed: it names the TrainingRuntime this run generates"))
        return
    if ref == old:
        return
    kind, group, name = ref.get("kind"), ref.get("apiGroup"), ref.get("name")
    if kind != "TrainingRuntime" or group != "trainer.kubeflow.org":
        errors.append(
            (
                at,
                f"runtimeRef must stay kind TrainingRuntime, apiGroup trainer.kubeflow.org "
                f"(got kind {kind!r}, apiGroup {group!r})",
            )
        )
    elif name not in ctx.runtimes:
        errors.append(
            (
                f"{at}.name",
                f"runtimeRef {name!r} is not among the Workflow's "
                f"TrainingRuntime.trainer.kubeflow.org dependencies "
                f"({', '.join(sorted(ctx.runtimes)) or 'none'})",
            )
        )
