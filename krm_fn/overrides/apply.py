"""Applying a WorkloadRun's ``spec.overrides`` to the objects workloadrun-fn generated.

The one job of this module is :func:`apply_overrides`.

Invariants:
    * Overrides are evaluated in order and every matching one applies, so a later override
      wins over an earlier one. Within one override the order is NVCRE's: ``jobTemplate``
      (SMP into every TrainJob), then ``jobTemplatePatch`` (RFC 6902, every TrainJob), then
      ``dependencies`` (SMP into the generated object with the same apiVersion/kind/name).
    * An override either applies whole or not at all: when any of its parts fails, its errors
      are reported, none of its changes are kept and it is not listed in ``applied``; the
      following overrides are still evaluated, so every error is reported at once.
    * A dependency never creates an object: naming an object that was not generated is an
      error listing the generated objects of that kind (NVCRE would append it; a typo must not
      create a stray object). Its ``metadata.namespace`` is ignored; the target's is kept.
    * No override may change a generated object's apiVersion, kind or metadata.name.
    * ``mpiArgs`` and ``preCommand`` are only collected; the caller places them.
    * ``orchestration`` cannot be applied here (placement is decided before objects exist), so
      a non-empty one is an error pointing at ``spec.orchestration``.
    * Inputs are never mutated; ``objects`` in the outcome is a new list of new dicts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from krm_fn.overrides.smp import SMPError, dotted, strategic_merge
from krm_fn.overrides.when import WhenContext, WhenError, describe, matches
from krm_fn.records import field, record

__all__ = ["AppliedOverride", "OverrideOutcome", "apply_overrides"]

TRAINJOB_KIND: Final = "TrainJob"

OVERRIDE_FIELDS: Final[tuple[str, ...]] = (
    "when",
    "jobTemplate",
    "jobTemplatePatch",
    "dependencies",
    "orchestration",
    "mpiArgs",
    "preCommand",
)
"""The fields of ``spec.overrides[]``."""

ORCHESTRATION_UNSUPPORTED: Final = (
    "orchestration overrides are not supported by workloadrun-fn; set spec.orchestration instead"
)


@record(frozen=True)
class AppliedOverride:
    """One matching override, as NVCRE records it in ``status.orchestration.appliedOverrides``.

    Attributes:
        index: Position in ``spec.overrides``.
        when: :func:`~krm_fn.overrides.when.describe` of its ``when``.
        patches: What it changed, e.g. ``2 dependencies``, ``jobTemplate, mpiArgs`` or
            ``none``.
        no_op: ``True`` when it matched but carried nothing to apply.

    """

    index: int
    when: str
    patches: str
    no_op: bool


@record(frozen=True)
class OverrideOutcome:
    """The result of :func:`apply_overrides`.

    Attributes:
        objects: The patched objects (a new list), in input order.
        applied: Every matching override that applied, in order.
        mpi_args: Matching overrides' ``mpiArgs``, concatenated in override order; the caller
            puts them before the user's ``framework.mpi.mpiArgs``.
        pre_command: Matching overrides' ``preCommand`` lines, concatenated in order.
        errors: ``(field path, message)`` pairs, e.g.
            ``("spec.overrides[0].dependencies[1]", "dependency ... is not generated ...")``.

    """

    objects: list[dict[str, Any]]
    applied: list[AppliedOverride]
    mpi_args: list[str]
    pre_command: list[str]
    errors: list[tuple[str, str]]


def apply_overrides(
    overrides: Sequence[Mapping[str, Any]],
    objects: Sequence[dict[str, Any]],
    ctx: WhenContext,
) -> OverrideOutcome:
    """Apply every matching override, in order, to the generated objects.

    Args:
        overrides: ``spec.overrides`` as plain mappings (camelCase keys); ``None`` values
            count as unset.
        objects: The generated objects (TrainingRuntime, TrainJobs, ConfigMap, Secret, ...).
        ctx: What the ``when`` clauses are matched against.

    Returns:
        The patched objects, the applied overrides, the collected ``mpiArgs``/``preCommand``
        and every error found.

    """
    current = [copy.deepcopy(dict(o)) for o in objects]
    applied: list[AppliedOverride] = []
    mpi_args: list[str] = []
    pre_command: list[str] = []
    errors: list[tuple[str, str]] = []
    for index, override in enumerate(overrides):
        where = f"spec.overrides[{index}]"
        if not isinstance(override, Mapping):
            errors.append((where, f"an override must be a map, got {type(override).__name__}"))
            continue
        # Every change builds new objects (SMP and jsonpatch never patch in place), so a
        # shallow copy of the list is enough to discard a failing override.
        step = _Step(where, list(current))
        step.check_fields(override)
        when = override.get("when")
        if when is None:
            when = {}
        try:
            matched = matches(when, ctx)
        except WhenError as exc:
            step.error(".when", str(exc))
            matched = False
        if matched and not step.errors:
            step.run(override)
        if step.errors:
            errors.extend(step.errors)
            continue
        if not matched:
            continue
        current = step.objects
        mpi_args.extend(step.mpi_args)
        pre_command.extend(step.pre_command)
        applied.append(
            AppliedOverride(
                index=index,
                when=describe(when),
                patches=", ".join(step.parts) or "none",
                no_op=not step.parts,
            )
        )
    return OverrideOutcome(
        objects=current,
        applied=applied,
        mpi_args=mpi_args,
        pre_command=pre_command,
        errors=errors,
    )


def _identity(obj: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return obj.get("apiVersion"), obj.get("kind"), name


def _without_namespace(patch: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(patch)
    meta = out.get("metadata")
    if isinstance(meta, Mapping) and "namespace" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "namespace"}
    return out


@record
class _Step:
    """The work of one matching override, on a private copy of the objects."""

    where: str
    objects: list[dict[str, Any]]
    parts: list[str] = field(default_factory=list)
    mpi_args: list[str] = field(default_factory=list)
    pre_command: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)

    def error(self, suffix: str, message: str) -> None:
        self.errors.append((self.where + suffix, message))

    def check_fields(self, override: Mapping[str, Any]) -> None:
        for key in override:
            if key not in OVERRIDE_FIELDS:
                self.error(
                    f".{key}",
                    f"unknown override field {key!r}; known fields: {', '.join(OVERRIDE_FIELDS)}",
                )

    def run(self, override: Mapping[str, Any]) -> None:
        if override.get("jobTemplate") is not None:
            self.job_template(override["jobTemplate"])
        if override.get("jobTemplatePatch") is not None:
            self.job_template_patch(override["jobTemplatePatch"])
        if override.get("dependencies") is not None:
            self.dependencies(override["dependencies"])
        if override.get("orchestration"):
            self.error(".orchestration", ORCHESTRATION_UNSUPPORTED)
        for key, sink in (("mpiArgs", self.mpi_args), ("preCommand", self.pre_command)):
            value = override.get(key)
            if value is None:
                continue
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                self.error(f".{key}", f"{key} must be a list of strings")
            elif value:
                sink.extend(value)
                self.parts.append(key)

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

    def job_template(self, template: Any) -> None:
        suffix = ".jobTemplate"
        if not isinstance(template, Mapping):
            self.error(suffix, "jobTemplate must be a partial TrainJob (a map)")
            return
        stray = [k for k in template if k not in ("metadata", "spec")]
        if stray:
            hint = f" (did you mean spec.{stray[0]}?)" if stray[0] == "trainer" else ""
            self.error(
                f"{suffix}.{stray[0]}",
                f"jobTemplate is a partial TrainJob: only metadata and spec may be set{hint}",
            )
            return
        meta = template.get("metadata")
        if isinstance(meta, Mapping) and meta.get("name") is not None:
            self.error(f"{suffix}.metadata.name", "jobTemplate must not rename the TrainJobs")
            return
        patch = _without_namespace(template)
        targets = self.trainjobs()
        for i in targets:
            try:
                new = strategic_merge(self.objects[i], patch, kind=TRAINJOB_KIND)
            except SMPError as exc:
                sub = dotted(exc.path)
                self.error(f"{suffix}.{sub}" if sub else suffix, exc.reason)
                return
            if not self.replace(i, new, suffix, "jobTemplate"):
                return
        if targets:
            self.parts.append("jobTemplate")

    def job_template_patch(self, ops: Any) -> None:
        suffix = ".jobTemplatePatch"
        if not isinstance(ops, list):
            self.error(suffix, "jobTemplatePatch must be a list of RFC 6902 operations")
            return
        for j, op in enumerate(ops):
            if not (
                isinstance(op, Mapping)
                and isinstance(op.get("op"), str)
                and isinstance(op.get("path"), str)
            ):
                self.error(f"{suffix}[{j}]", "an RFC 6902 operation needs string 'op' and 'path'")
                return
        import jsonpatch  # only runs that use jobTemplatePatch pay for it

        targets = self.trainjobs()
        for i in targets:
            doc: Any = self.objects[i]
            name = _identity(doc)[2]
            for j, op in enumerate(ops):
                try:
                    doc = jsonpatch.JsonPatch([dict(op)]).apply(doc, in_place=False)
                except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                    self.error(
                        f"{suffix}[{j}]",
                        f"operation {j} of {self.where}.jobTemplatePatch "
                        f"({op['op']} {op['path']}) failed on TrainJob {name!r}: {exc}",
                    )
                    return
            if not self.replace(i, doc, suffix, "jobTemplatePatch"):
                return
        if targets:
            self.parts.append("jobTemplatePatch")

    def dependencies(self, deps: Any) -> None:
        suffix = ".dependencies"
        if not isinstance(deps, list):
            self.error(suffix, "dependencies must be a list of partial objects")
            return
        applied = 0
        for j, dep in enumerate(deps):
            at = f"{suffix}[{j}]"
            if not isinstance(dep, Mapping):
                self.error(at, "a dependency must be a partial object (a map)")
                continue
            api_version, kind, name = _identity(dep)
            missing = [
                label
                for label, value in (
                    ("apiVersion", api_version),
                    ("kind", kind),
                    ("metadata.name", name),
                )
                if not isinstance(value, str) or not value
            ]
            if missing:
                self.error(
                    at,
                    "a dependency needs apiVersion, kind and metadata.name to find the "
                    f"generated object it patches; missing: {', '.join(missing)}",
                )
                continue
            i = self.find(api_version, kind, name)
            if i is None:
                self.error(at, self.not_generated(api_version, kind, name))
                continue
            try:
                new = strategic_merge(self.objects[i], _without_namespace(dep), kind=kind)
            except SMPError as exc:
                sub = dotted(exc.path)
                self.error(f"{at}.{sub}" if sub else at, exc.reason)
                continue
            if self.replace(i, new, at, "a dependency"):
                applied += 1
        if applied:
            self.parts.append(f"{applied} dependencies")

    def find(self, api_version: str, kind: str, name: str) -> int | None:
        return next(
            (i for i, o in enumerate(self.objects) if _identity(o) == (api_version, kind, name)),
            None,
        )

    def not_generated(self, api_version: str, kind: str, name: str) -> str:
        same_kind = [o for o in self.objects if o.get("kind") == kind]
        msg = f'dependency {kind} "{name}" is not generated by this WorkloadRun'
        if not same_kind:
            kinds = sorted({str(o.get("kind")) for o in self.objects})
            return f"{msg}; no {kind} objects are generated (generated kinds: {', '.join(kinds)})"
        names = ", ".join(str(_identity(o)[2]) for o in same_kind)
        msg = f"{msg}; generated {kind} objects: {names}"
        other = [o for o in same_kind if _identity(o)[2] == name]
        if other:
            msg += (
                f" ({kind} {name!r} exists with apiVersion {other[0].get('apiVersion')}, "
                f"not {api_version})"
            )
        return msg
