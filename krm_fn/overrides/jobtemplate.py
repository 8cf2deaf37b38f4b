"""NVCRE's job-template language for ``spec.overrides[].jobTemplate`` / ``jobTemplatePatch``.

In NVCRE an override patches the Workflow's *job template*, typed here as
:class:`krm_fn.api.models.JobTemplate` (NVCRE's ``JobTemplateSpec``, whose ``spec`` is a
``JobSpec``: ``workload.trainJob``, ``workloadMetadata``, ``nodeHealthMonitor``,
``checkpoint``, stall settings, measurements, ``thresholds``, ``measurementTimeout``).
workloadrun-fn has no NVCRE Job: each TrainJob is shown to an override as that view
(:func:`to_view`), patched, validated as the typed model and mapped back (:func:`from_view`).

Invariants:
    * ``to_view`` then ``from_view`` of an unpatched view gives back the TrainJob unchanged,
      byte for byte (so an override that changes nothing changes no output).
    * ``spec.workload.trainJob`` is the TrainJob's ``spec``; ``workloadMetadata.labels`` are
      its labels minus the controller-owned ones (``app.kubernetes.io/managed-by``,
      ``nvcre.nvidia.com/*``), which the view never shows and the mapping keeps.
    * The patched view is checked once, as the typed model: its shape by the model, its labels
      by :func:`krm_fn.api.rules.workload_labels` (the rules ``spec.workloadMetadata`` obeys;
      a removed gang queue label is restored as NVCRE restores it), ``thresholds`` and the
      measurements again when changed, and the runtimeRef not redirected away from the
      generated TrainingRuntime.
    * Fields only NVCRE's controllers act on (:data:`CONTROLLER_ONLY`) and the Job
      ``metadata`` may change: each change is a warning that nothing acts on it here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from krm_fn.api import models, rules
from krm_fn.api.fields import fields_of, model_at
from krm_fn.api.validate import error_message, field_path
from krm_fn.keys import ANN_BANDWIDTH, ANN_GOODPUT, ANN_THRESHOLDS

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = ["CONTROLLER_ONLY", "MappedJob", "TemplateContext", "from_view", "to_view"]

HEALTH_MONITOR_EXPRESSION: Final = "node.spec.unschedulable == true"
"""NVCRE's job-level nodeHealthMonitor for a WorkloadRun (reference §2.11)."""

CONTROLLER_ONLY: Final[Mapping[str, str]] = {
    f.key: f.description.split(";")[0].removeprefix("NVCRE's ")
    for f in fields_of(models.JobSpec)
    if f.description and "a change is a warning" in f.description
}
"""JobSpec fields only NVCRE's Job controller acts on -> what, from ``NVCRE's <what>; ...``."""

MEASURED: Final[Mapping[str, str]] = {
    "thresholds": ANN_THRESHOLDS,
    "goodputMeasurement": ANN_GOODPUT,
    "bandwidthMeasurement": ANN_BANDWIDTH,
}
"""JobSpec fields carried as the TrainJob annotations ``report`` reads."""


@dataclass(frozen=True, slots=True)
class TemplateContext:
    """What the view shows besides the TrainJob, and what the result is checked against.

    NVCRE sets ``nodeHealthMonitor`` unless a taintSelector keeps cordoned nodes; ``checkpoint``
    is ``{pvcName, maxRestarts}`` when ``spec.checkpoint`` is set; ``gang`` is
    ``spec.gangScheduler``; ``runtimes`` names the TrainingRuntimes this run generates.
    """

    health_monitor: bool = True
    checkpoint: Mapping[str, Any] | None = None
    gang: models.GangScheduler | None = None
    runtimes: frozenset[str] = frozenset()


@dataclass
class MappedJob:
    """The result of :func:`from_view`.

    The new TrainJob (``None`` on an error), ``(path inside the job template, message)``
    errors, and the controller-only fields (dotted paths) the override changed.
    """

    trainjob: dict[str, Any] | None
    errors: list[tuple[str, str]] = field(default_factory=list)
    controller_only: list[str] = field(default_factory=list)


def to_view(trainjob: Mapping[str, Any], ctx: TemplateContext) -> dict[str, Any]:
    """The NVCRE job template an override of ``trainjob`` sees."""
    meta = trainjob.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if not rules.reserved_label(k)}
    ann = meta.get("annotations") or {}
    spec: dict[str, Any] = {"workload": {"trainJob": copy.deepcopy(trainjob.get("spec") or {})}}
    if labels:
        spec["workloadMetadata"] = {"labels": labels}
    if ctx.health_monitor:
        spec["nodeHealthMonitor"] = {"cel": {"expression": HEALTH_MONITOR_EXPRESSION}}
    if ctx.checkpoint is not None:
        spec["checkpoint"] = dict(ctx.checkpoint)
    for key, annotation in MEASURED.items():
        if annotation in ann:
            spec[key] = json.loads(ann[annotation])
    return {"metadata": {}, "spec": spec}


def from_view(view: Any, original: Mapping[str, Any], ctx: TemplateContext) -> MappedJob:
    """Map a patched view back onto ``original`` (the TrainJob it was made from)."""
    out = MappedJob(None)
    try:
        typed = models.JobTemplate.model_validate(view).spec
    except ValidationError as exc:
        out.errors += [_shape_problem(e) for e in exc.errors(include_url=False)]
        return out
    meta = typed.workload_metadata
    labels, out.errors = rules.workload_labels(
        meta.labels if meta else {}, ctx.gang, "spec.workloadMetadata.labels"
    )
    spec, baseline = view["spec"], to_view(original, ctx)
    old_ann = (original.get("metadata") or {}).get("annotations") or {}
    if typed.thresholds is not None and spec["thresholds"] != baseline["spec"].get("thresholds"):
        out.errors += rules.thresholds(typed.thresholds)
    out.errors += _runtime_ref_problems(typed.workload.train_job, original, ctx)
    if out.errors:
        return out
    out.controller_only = ["metadata"] if view.get("metadata") != baseline["metadata"] else []
    out.controller_only += [
        f"spec.{k}" for k in CONTROLLER_ONLY if spec.get(k) != baseline["spec"].get(k)
    ]
    new = copy.deepcopy(dict(original))
    new_meta = new.setdefault("metadata", {})
    # the controller-owned labels (never in the view) stay; the others are the view's, in place
    old_labels: Mapping[str, str] = new_meta.get("labels") or {}
    kept = {k: v for k, v in old_labels.items() if rules.reserved_label(k) or k in labels}
    new_meta["labels"] = kept | labels
    annotations = dict(old_ann)
    for key, annotation in MEASURED.items():
        if spec.get(key) == baseline["spec"].get(key):
            continue
        if spec.get(key) is None:
            annotations.pop(annotation, None)
        else:
            annotations[annotation] = json.dumps(spec[key], sort_keys=True, separators=(",", ":"))
    if annotations:
        new_meta["annotations"] = annotations
    else:
        new_meta.pop("annotations", None)
    new["spec"] = copy.deepcopy(typed.workload.train_job)
    out.trainjob = new
    return out


_MAPS: Final = ("labels", "thresholds")
"""Maps of the job template whose keys a path shows as ``labels['a']``."""


def _shape_problem(err: ErrorDetails) -> tuple[str, str]:
    """A validation error of the patched view, worded for the job template's reader."""
    if not (loc := tuple(err["loc"])):
        return "", "the job template must stay a map"
    if loc in (("spec",), ("spec", "workload"), ("spec", "workload", "trainJob")) and (
        err["type"] == "missing" or err.get("input") is None
    ):
        return field_path(loc, _MAPS), (
            "the job template's spec cannot be removed"
            if len(loc) == 1
            else "spec.workload.trainJob cannot be removed: it is the TrainJob this group runs"
        )
    return field_path(loc, _MAPS), error_message(err, _unknown)


def _unknown(loc: tuple[int | str, ...]) -> str:
    key, model = str(loc[-1]), model_at(models.JobTemplate, loc)
    if model is models.JobWorkload:
        return f"unknown workload kind {key!r}; NVCRE's WorkloadSpec has only trainJob"
    known = ", ".join(f.key for f in fields_of(model)) if model else "none"
    if model is models.JobTemplate:
        return f"unknown field {key!r} of NVCRE's job template; known: {known}"
    if model is not models.JobSpec:
        return f"unknown field {key!r}; known fields: {known}"
    hint = f" (did you mean spec.workload.trainJob.{key}?)" if trainjob_field(key) else ""
    return f"unknown field {key!r} of NVCRE's job template spec{hint}; known fields: {known}"


def trainjob_field(key: str) -> bool:
    """Whether ``key`` is a field of a TrainJob's ``spec`` (the pinned CRD's)."""
    from krm_fn.api.crdshape import load_table

    table = load_table()
    root = table["nodes"][table["roots"]["TrainJob"]]
    return key in table["nodes"][root["p"]["spec"]]["p"]


def _runtime_ref_problems(
    trainjob_spec: Mapping[str, Any], original: Mapping[str, Any], ctx: TemplateContext
) -> list[tuple[str, str]]:
    """The runtimeRef may only move to another TrainingRuntime this run generates."""
    ref, at = trainjob_spec.get("runtimeRef"), "spec.workload.trainJob.runtimeRef"
    if not isinstance(ref, Mapping):
        return [(at, "cannot be removed: it names the TrainingRuntime this run generates")]
    if ref == ((original.get("spec") or {}).get("runtimeRef") or {}):
        return []
    kind, group, name = ref.get("kind"), ref.get("apiGroup"), ref.get("name")
    if kind != "TrainingRuntime" or group != "trainer.kubeflow.org":
        why = "runtimeRef must stay kind TrainingRuntime, apiGroup trainer.kubeflow.org"
        return [(at, f"{why} (got kind {kind!r}, apiGroup {group!r})")]
    if name not in ctx.runtimes:
        why = (
            f"runtimeRef {name!r} is not among the Workflow's TrainingRuntime.trainer.kubeflow.org"
        )
        return [(f"{at}.name", f"{why} dependencies ({', '.join(sorted(ctx.runtimes)) or 'none'})")]
    return []
