"""Applying a WorkloadRun's ``spec.overrides`` to the objects workloadrun-fn generated.

The one job of this module is :func:`apply_overrides`.

Invariants:
    * Overrides are evaluated in order and every matching one applies, so a later override
      wins over an earlier one. Within one override the order is NVCRE's: ``jobTemplate``
      (SMP), then ``jobTemplatePatch`` (RFC 6902), both on NVCRE's job-template view of every
      TrainJob (:mod:`~krm_fn.overrides.jobtemplate`; ``trainer.env`` and ``trainer.args``
      atomic), mapped back onto the TrainJob; then ``dependencies`` (SMP into the generated
      object with the same apiVersion/kind/name).
    * A TrainJob or TrainingRuntime an override produced is checked strictly against the
      pinned CRDs (:mod:`~krm_fn.api.crdshape`): an unknown field or a wrong type is an error
      naming ``spec.overrides[i]`` and the field path.
    * Node affinity and tolerations an override sets in a runtimePatch merge with ours
      (:func:`~krm_fn.overrides.placement.keep_placement`) instead of replacing them.
    * A changed field only NVCRE's controller acts on is a warning naming it.
    * A variable every TrainJob of a runtime sets in ``trainer.env`` through an override is
      no longer declared by that runtime's trainer container, which Trainer would silently
      overwrite (:func:`~krm_fn.overrides.placement.yield_env_to_trainer`).
    * An override either applies whole or not at all: when any of its parts fails, its errors
      are reported, none of its changes are kept and it is not listed in ``applied``; the
      following overrides are still evaluated, so every error is reported at once.
    * A dependency never creates an object: naming an object that was not generated is an
      error listing the generated objects of that kind (NVCRE would append it; a typo must not
      create a stray object). Its ``metadata.namespace`` is ignored; the target's is kept.
    * No override may change a generated object's apiVersion, kind or metadata.name.
    * ``mpiArgs`` and ``preCommand`` are only collected; the caller places them.
    * Each ``when`` is evaluated once: the render's overrides stage evaluates them and passes
      the answers as ``matched``; only a caller without them has ``ctx`` evaluated here.
    * ``orchestration`` cannot be applied here (placement is decided before objects exist), so
      a non-empty one is an error pointing at ``spec.orchestration``.
    * Inputs are never mutated; ``objects`` in the outcome is a new list of new dicts.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import ValidationError

from krm_fn.api import models
from krm_fn.api.crdshape import KINDS as CHECKED_KINDS
from krm_fn.api.crdshape import unknown_fields
from krm_fn.api.fields import fields_of
from krm_fn.api.validate import error_message, field_path
from krm_fn.overrides import jobtemplate as jt
from krm_fn.overrides.placement import (
    Expect,
    keep_placement,
    placement_problems,
    yield_env_to_trainer,
)
from krm_fn.overrides.smp import JOB_TEMPLATE, SMPError, dotted, strategic_merge
from krm_fn.overrides.when import WhenContext, WhenError, describe, matches

__all__ = ["AppliedOverride", "OverrideOutcome", "apply_overrides"]

TRAINJOB_KIND: Final = "TrainJob"

ORCHESTRATION_UNSUPPORTED: Final = (
    "orchestration overrides are not supported by workloadrun-fn; set spec.orchestration instead"
)


@dataclass(frozen=True, slots=True)
class AppliedOverride:
    """One matching override, as NVCRE records it in ``status.orchestration.appliedOverrides``.

    ``patches`` says what it changed (``2 dependencies``, ``jobTemplate, mpiArgs``, ``none``);
    ``no_op`` that it matched but carried nothing to apply.
    """

    index: int
    when: str
    patches: str
    no_op: bool


@dataclass(frozen=True, slots=True)
class OverrideOutcome:
    """The result of :func:`apply_overrides`.

    The patched objects (a new list, in input order), the overrides that applied, their
    ``mpiArgs`` and ``preCommand`` in order, and ``(field path, message)`` errors and warnings.
    """

    objects: list[dict[str, Any]]
    applied: list[AppliedOverride]
    mpi_args: list[str]
    pre_command: list[str]
    errors: list[tuple[str, str]]
    warnings: list[tuple[str, str]] = field(default_factory=list)


def apply_overrides(
    overrides: Sequence[models.Override | Mapping[str, Any]],
    objects: Sequence[dict[str, Any]],
    ctx: WhenContext | None,
    template: jt.TemplateContext | None = None,
    expect: Expect | None = None,
    *,
    matched: Sequence[bool] | None = None,
) -> OverrideOutcome:
    """Apply every matching override, in order, to the generated objects.

    ``overrides`` may be mappings, validated here as the model does. ``matched`` holds the
    caller's answer per ``when``; without it each ``when`` is matched against ``ctx``.
    ``template`` defaults to the generated TrainingRuntimes and no gang scheduler; without
    ``expect`` (what every TrainJob must keep) placement is not checked.
    """
    current = [copy.deepcopy(dict(o)) for o in objects]
    if template is None:
        runtimes = (str(_identity(o)[2]) for o in current if o.get("kind") == "TrainingRuntime")
        template = jt.TemplateContext(runtimes=frozenset(runtimes))
    done: list[_Step] = []
    errors: list[tuple[str, str]] = []
    for index, raw in enumerate(overrides):
        # Every change builds new objects (SMP and jsonpatch never patch in place), so a
        # shallow copy of the list is enough to discard a failing override.
        step = _Step(index, list(current), template, expect, list(current))
        if step.evaluate(raw, ctx, matched) and not step.errors:
            current = step.objects
            done.append(step)
        errors += step.errors
    if any(part.startswith("jobTemplate") for step in done for part in step.parts):
        current = yield_env_to_trainer(current)
    return OverrideOutcome(
        objects=current,
        applied=[step.applied() for step in done],
        mpi_args=[a for step in done for a in step.mpi_args],
        pre_command=[line for step in done for line in step.pre_command],
        errors=errors,
        warnings=[w for step in done for w in step.warnings],
    )


def _typed(raw: models.Override | Mapping[str, Any], step: _Step) -> models.Override | None:
    """The override as the model validates it; ``None`` (and errors) when it is not one."""
    if isinstance(raw, models.Override):
        return raw
    try:
        return models.Override.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            at = field_path(err["loc"])
            step.error(f".{at}" if at else "", error_message(err, _unknown_override_field))
        return None


def _unknown_override_field(loc: tuple[int | str, ...]) -> str:
    known = ", ".join(f.key for f in fields_of(models.Override))
    return f"unknown override field {loc[-1]!r}; known fields: {known}"


def _identity(obj: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return obj.get("apiVersion"), obj.get("kind"), name


def _valid_ops(ops: list[dict[str, Any]]) -> bool:
    return all(isinstance(op.get("op"), str) and isinstance(op.get("path"), str) for op in ops)


def why_failed(view: Any, op: Mapping[str, Any], exc: Exception) -> str:
    """Why an RFC 6902 operation failed on ``view``, in a few bounded lines, with the fix.

    Names the first missing step of the path (or ``from``) and what exists at its nearest
    parent (a few keys, or a list's length); never the whole document.
    """
    known = op["op"] in ("add", "remove", "replace", "move", "copy", "test")
    for pointer in (op.get("from"), op["path"]) if known else ():
        if isinstance(pointer, str) and pointer and not pointer.startswith("/"):
            return f"{pointer!r} is not a JSON Pointer: it starts with '/' (/{pointer})"
        if not isinstance(pointer, str) or not pointer.startswith("/"):
            continue
        node, at = view, ""
        steps = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
        for i, step in enumerate(steps):
            adds = i == len(steps) - 1 and pointer is op["path"] and op["op"] == "add"
            if isinstance(node, Mapping) and (step in node or adds):
                node, at = node.get(step), f"{at}/{step}"
            elif isinstance(node, list) and step.isdigit() and int(step) < len(node) + adds:
                node, at = node[min(int(step), len(node) - 1)] if node else None, f"{at}/{step}"
            elif not (adds and isinstance(node, list) and step == "-"):
                grow = steps[i + 1 :] if op["op"] == "add" and pointer is op["path"] else []
                return _missing_step(node, at, step, pointer, grow, op.get("value"))
    if op["op"] == "test":
        return f"the value at {op['path']} is not the tested value"
    text = str(exc)
    return text if len(text) <= 160 else text[:157] + "..."


def _missing_step(node: Any, at: str, step: str, pointer: str, grow: list[str], value: Any) -> str:
    where = at or "the job template's root"
    if isinstance(node, Mapping):
        keys = [str(k) for k in node]
        has = ", ".join(keys[:6]) + (f" and {len(keys) - 6} more" if len(keys) > 6 else "")
        found = f"{where} has no {step!r}; it has {has or 'nothing'}"
    elif isinstance(node, list):
        found = f"{where} has {len(node)} item(s), no {step!r} (append with {at}/-)"
    else:
        found = f"{where} is a {type(node).__name__}, not a map or a list"
    fix = "paths are NVCRE's job template's, e.g. /spec/workload/trainJob/trainer/env, "
    fix += "/spec/workloadMetadata/labels"
    if at == "/spec" and jt.trainjob_field(step):
        fix = f"did you mean /spec/workload/trainJob{pointer[5:]}? ({fix})"
    elif grow and isinstance(node, Mapping):  # an add creates only the last step of its path
        for key in reversed(grow):
            value = [value] if key.isdigit() or key == "-" else {key: value}
        fix = "an add creates only the last step of its path; add the missing one with the rest "
        fix += f"in its value: {{op: add, path: {at}/{step}, value: {json.dumps(value)}}}"
    return f"{found}; {fix}"


def _without_namespace(patch: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(patch)
    meta = out.get("metadata")
    if isinstance(meta, Mapping) and "namespace" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "namespace"}
    return out


def _runtime_of(objects: Sequence[dict[str, Any]], tj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The generated TrainingRuntime ``tj`` refers to."""
    ref = ((tj.get("spec") or {}).get("runtimeRef") or {}).get("name")
    runtimes = (o for o in objects if o.get("kind") == "TrainingRuntime")
    return next((o for o in runtimes if _identity(o)[2] == ref), None)


@dataclass
class _Step:
    """The work of one override, on a private copy of the objects (``start``: before it)."""

    index: int
    objects: list[dict[str, Any]]
    template: jt.TemplateContext
    expect: Expect | None
    start: list[dict[str, Any]]
    parts: list[str] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    mpi_args: list[str] = field(default_factory=list)
    pre_command: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    override: models.Override | None = None

    @property
    def where(self) -> str:
        return f"spec.overrides[{self.index}]"

    def error(self, suffix: str, message: str) -> None:
        self.errors.append((self.where + suffix, message))

    def evaluate(
        self,
        raw: models.Override | Mapping[str, Any],
        ctx: WhenContext | None,
        matched: Sequence[bool] | None,
    ) -> bool:
        """Validate the override and, when it matches, run it; whether it matched."""
        self.override = _typed(raw, self)
        if self.override is None or not self.matches(self.override.when, ctx, matched):
            return False
        self.run(self.override)
        return True

    def matches(
        self, when: models.When, ctx: WhenContext | None, matched: Sequence[bool] | None
    ) -> bool:
        """The caller's answer, else ``when`` against ``ctx``."""
        if matched is not None:
            return bool(matched[self.index])
        if ctx is None:
            raise ValueError("apply_overrides needs ctx or matched")
        try:
            return matches(when.as_mapping(), ctx)
        except WhenError as exc:
            self.error(".when", str(exc))
            return False

    def applied(self) -> AppliedOverride:
        """The override as ``status.orchestration.appliedOverrides`` records it."""
        assert self.override is not None
        when = describe(self.override.when.as_mapping())
        return AppliedOverride(self.index, when, ", ".join(self.parts) or "none", not self.parts)

    def run(self, ov: models.Override) -> None:
        if ov.job_template is not None or ov.job_template_patch is not None:
            self.job_templates(ov.job_template, ov.job_template_patch)
        if ov.dependencies is not None:
            self.dependencies(ov.dependencies)
        if ov.orchestration:
            self.error(".orchestration", ORCHESTRATION_UNSUPPORTED)
        if ov.mpi_args:
            self.mpi_args += ov.mpi_args
            self.parts.append("mpiArgs")
        if ov.pre_command:
            self.pre_command += ov.pre_command
            self.parts.append("preCommand")
        if not self.errors and self.expect is not None and self.parts:
            self.check_placement(self.expect)

    def check_placement(self, expect: Expect) -> None:
        """Refuse the override when a TrainJob it touched lost what it must keep."""
        for i in self.trainjobs():
            tj, name = self.objects[i], _identity(self.objects[i])[2]
            if not (problems := placement_problems(tj, _runtime_of(self.objects, tj), expect)):
                continue
            before = next((o for o in self.start if _identity(o) == _identity(tj)), None)
            old = (
                placement_problems(before, _runtime_of(self.start, before), expect)
                if before
                else []
            )
            for msg in problems:
                if msg not in old:
                    self.error("", f"refused: after this override TrainJob {name!r}: {msg}")

    def trainjobs(self) -> list[int]:
        return [i for i, o in enumerate(self.objects) if o.get("kind") == TRAINJOB_KIND]

    def replace(self, i: int, new: Any, suffix: str, what: str) -> bool:
        old = self.objects[i]
        if not isinstance(new, dict) or _identity(new) != _identity(old):
            self.error(
                suffix,
                f"{what} must not change the apiVersion, kind or metadata.name of "
                f"{old.get('kind')} {_identity(old)[2]!r}",
            )
            return False
        self.objects[i] = new
        return True

    def job_templates(
        self, template: Mapping[str, Any] | None, ops: list[dict[str, Any]] | None
    ) -> None:
        """Apply jobTemplate (SMP), then jobTemplatePatch (RFC 6902), to each TrainJob's view."""
        if ops is not None and not _valid_ops(ops):
            self.error(
                ".jobTemplatePatch",
                "jobTemplatePatch must be a list of RFC 6902 operations with string 'op' and 'path'",
            )
            return
        suffix = ".jobTemplatePatch" if template is None else ".jobTemplate"
        controller_only: dict[str, None] = {}
        targets = self.trainjobs()
        for i in targets:
            old = self.objects[i]
            view: Any = jt.to_view(old, self.template)
            if template is not None:
                view = self.merge(".jobTemplate", view, template, JOB_TEMPLATE)
                if view is None:
                    return
            if ops is not None:
                view = self.patch_view(view, ops, str(_identity(old)[2]))
                if view is None:
                    return
            mapped = jt.from_view(view, old, self.template)
            for path, msg in mapped.errors:
                self.error(f"{suffix}.{path}" if path else suffix, msg)
            if mapped.trainjob is None:
                return
            controller_only.update(dict.fromkeys(mapped.controller_only))
            new = keep_placement(old, mapped.trainjob, _runtime_of(self.objects, old))
            if not self.strict(new, suffix, "spec", "spec.workload.trainJob"):
                return
            if not self.replace(i, new, suffix, "the job template"):
                return
        for path in controller_only:
            what = jt.CONTROLLER_ONLY.get(path.removeprefix("spec."), "NVCRE's Job object")
            message = f"{path} ({what}) is acted on only by NVCRE's Job controller; "
            message += "workloadrun-fn generates no NVCRE Job, so nothing acts on it here"
            self.warnings.append((f"{self.where}{suffix}.{path}", message))
        parts = {"jobTemplate": template, "jobTemplatePatch": ops}
        self.parts += [p for p, v in parts.items() if v is not None] if targets else []

    def merge(self, at: str, base: Any, patch: Mapping[str, Any], kind: str) -> Any:
        """Strategic merge of ``patch`` into ``base``; ``None`` (and an error at ``at``) if not."""
        try:
            return strategic_merge(base, patch, kind=kind)
        except SMPError as exc:
            sub = dotted(exc.path)
            self.error(f"{at}.{sub}" if sub else at, exc.reason)
            return None

    def patch_view(self, view: Any, ops: list[Any], name: str) -> Any:
        import jsonpatch  # only runs that use jobTemplatePatch pay for it

        for j, op in enumerate(ops):
            try:
                view = jsonpatch.JsonPatch([dict(op)]).apply(view, in_place=False)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                self.error(
                    f".jobTemplatePatch[{j}]",
                    f"operation {j} of {self.where}.jobTemplatePatch ({op['op']} {op['path']}) "
                    f"failed on the job template of TrainJob {name!r}: {why_failed(view, op, exc)}",
                )
                return None
        return view

    def strict(self, obj: Mapping[str, Any], suffix: str, prefix: str, shown: str) -> bool:
        """Check ``obj`` against its pinned CRD; problems become errors at ``suffix``."""
        kind = str(obj.get("kind"))
        if kind not in CHECKED_KINDS:
            return True
        problems = unknown_fields(kind, obj)
        for path, msg in problems:
            field_path = shown + path.removeprefix(prefix) if path.startswith(prefix) else path
            self.error(
                suffix,
                f"the result is not a valid {kind} ({_identity(obj)[2]}): {field_path}: {msg}",
            )
        return not problems

    def dependencies(self, deps: list[dict[str, Any]]) -> None:
        applied = 0
        for j, dep in enumerate(deps):
            at = f".dependencies[{j}]"
            api_version, kind, name = identity = _identity(dep)
            labels = ("apiVersion", "kind", "metadata.name")
            missing = [
                k for k, v in zip(labels, identity, strict=True) if not isinstance(v, str) or not v
            ]
            if missing:
                self.error(
                    at,
                    "a dependency needs apiVersion, kind and metadata.name to find the "
                    f"generated object it patches; missing: {', '.join(missing)}",
                )
                continue
            found = (i for i, o in enumerate(self.objects) if _identity(o) == identity)
            i = next(found, None)
            if i is None:
                self.error(at, self.not_generated(api_version, kind, name))
                continue
            new = self.merge(at, self.objects[i], _without_namespace(dep), kind)
            if (
                new is not None
                and self.strict(new, at, "", "")
                and self.replace(i, new, at, "a dependency")
            ):
                applied += 1
        if applied:
            self.parts.append(f"{applied} dependencies")

    def not_generated(self, api_version: str, kind: str, name: str) -> str:
        same_kind = [o for o in self.objects if o.get("kind") == kind]
        msg = f'dependency {kind} "{name}" is not generated by this WorkloadRun'
        if not same_kind:
            kinds = sorted({str(o.get("kind")) for o in self.objects})
            return f"{msg}; no {kind} objects are generated (generated kinds: {', '.join(kinds)})"
        names = ", ".join(str(_identity(o)[2]) for o in same_kind)
        msg = f"{msg}; generated {kind} objects: {names}"
        if other := [o for o in same_kind if _identity(o)[2] == name]:
            msg += (
                f" ({kind} {name!r} exists with apiVersion {other[0].get('apiVersion')}, "
                f"not {api_version})"
            )
        return msg
