"""Stage 0, inputs: refuse bad inputs, parse every WorkloadRun, validate every ``when`` once.

Invariants:
    * Every problem of the inputs is reported before any run renders: unknown kinds of the
      nvcre.nvidia.com group, Node names that cannot be pinned to, forced option values.
    * Every WorkloadRun is parsed, in input order; a ``when.expression`` that does not parse or
      type-check is reported right with the run's model errors (from the validated ``when``
      model, even when another part of the run is invalid), never only after they are fixed.
    * Parsed runs come back in (namespace, name) order, so the input's order changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn.api import models
from krm_fn.api.config import FunctionOptions
from krm_fn.api.validate import parse_workloadrun
from krm_fn.fleet.inventory import NodeInfo
from krm_fn.io.nodes import as_list, as_mapping
from krm_fn.io.results import FileRef, ResourceRef, Results
from krm_fn.keys import WORKLOADRUN_API_GROUP as API_GROUP
from krm_fn.keys import WORKLOADRUN_KIND
from krm_fn.platforms import node_gpus as fleet
from krm_fn.platforms.run_platform import check_forced_names

OWN_KINDS = (WORKLOADRUN_KIND, "LogProfile")


@dataclass(frozen=True)
class InputContext:
    """Input objects the runs may refer to."""

    pvcs: Mapping[tuple[str, str], Mapping[str, Any]]  # PersistentVolumeClaims by (ns, name)
    log_profiles: frozenset[str]  # names of the LogProfiles in the input
    gpu_slices: Mapping[str, fleet.SliceGpus]  # by node, from gpu.nvidia.com ResourceSlices

    @classmethod
    def of(cls, objects: Sequence[Mapping[str, Any]]) -> InputContext:
        """Collect the referenced objects from every non-run input object."""
        pvcs: dict[tuple[str, str], Mapping[str, Any]] = {}
        profiles: set[str] = set()
        for o in objects:
            meta = o.get("metadata") or {}
            if o.get("kind") == "PersistentVolumeClaim" and o.get("apiVersion") == "v1":
                pvcs[(str(meta.get("namespace") or ""), str(meta.get("name")))] = o
            if o.get("kind") == "LogProfile":
                profiles.add(str(meta.get("name")))
        return cls(pvcs, frozenset(profiles), fleet.resource_slice_gpus(objects))


@dataclass(frozen=True)
class ParsedRun:
    """One WorkloadRun that passed its model, and its input object (the outputs' origin)."""

    model: models.WorkloadRun
    raw: dict[str, Any]
    file: FileRef | None
    bad_whens: frozenset[int] = frozenset()  # overrides whose ``when`` failed (reported)

    @property
    def ref(self) -> ResourceRef:
        """The run's reference for results."""
        return ResourceRef.of(self.raw)


def inputs_ok(
    objects: Sequence[Mapping[str, Any]],
    nodes: Sequence[NodeInfo],
    options: FunctionOptions,
    results: Results,
) -> bool:
    """Report bad inputs and forced option values; ``False`` when nothing may render."""
    before = len(results.items)
    _check_objects(objects, results)
    _check_node_names(nodes, results)
    forced = check_forced_names(options)
    for option, msg in forced:
        flag = "gpu-arch" if option == "gpuArch" else option
        where = "functionConfig" if option == "platformCatalog" else f"functionConfig or --{flag}"
        results.error(f"option {option} ({where}): {msg}")
    return not forced and not any(r.severity == "error" for r in results.items[before:])


def _check_objects(objects: Sequence[Mapping[str, Any]], results: Results) -> None:
    """Refuse an nvcre.nvidia.com kind this function does not read (it would be ignored)."""
    for o in objects:
        api = o.get("apiVersion")
        kind = o.get("kind")
        if isinstance(api, str) and api.startswith(API_GROUP + "/") and kind not in OWN_KINDS:
            import difflib  # only for the hint of this error

            close = difflib.get_close_matches(str(kind), OWN_KINDS, n=1, cutoff=0.6)
            results.error(
                f"unknown kind {kind!r} in the {API_GROUP} API group"
                + (f"; did you mean {close[0]!r}?" if close else "")
                + f" (this function reads {' and '.join(OWN_KINDS)})",
                resource=ResourceRef.of(dict(o)),
                field_path="kind",
            )


def _check_node_names(nodes: Sequence[NodeInfo], results: Results) -> None:
    """Refuse a Node name that cannot be a kubernetes.io/hostname value."""
    for n in nodes:
        if n.name and (len(n.name) > 253 or not models.DNS1123_SUBDOMAIN_RE.match(n.name)):
            results.error(
                f"Node name {n.name!r} is not a DNS-1123 subdomain (lower-case letters, digits, "
                "'-' and '.'), so it cannot be a kubernetes.io/hostname value to pin pods to",
                resource=ResourceRef("v1", "Node", n.name),
                field_path="metadata.name",
            )


def registry_password(options: FunctionOptions, results: Results) -> str | None:
    """The pull Secret's password from the named environment variable (registered as secret)."""
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


def parse_runs(
    runs: Sequence[tuple[dict[str, Any], FileRef | None]], results: Results
) -> list[ParsedRun]:
    """Parse every run (model errors and bad ``when`` clauses reported), sorted by name."""
    parsed: list[ParsedRun] = []
    for raw, file in runs:
        wr = parse_workloadrun(raw, results, file)
        bad = _check_whens(raw, file, results)
        if wr is not None:
            parsed.append(ParsedRun(wr, raw, file, bad))
    return sorted(parsed, key=lambda p: (p.model.namespace or "", p.model.name))


def _check_whens(raw: dict[str, Any], file: FileRef | None, results: Results) -> frozenset[int]:
    """Report every ``when.expression`` that does not parse; the indices of those."""
    bad: set[int] = set()
    for i, when in enumerate(_validated_whens(raw)):
        if when is None or when.expression is None:
            continue
        from krm_fn.overrides.when import WhenError, parse_expression  # only runs with overrides

        try:
            parse_expression(when.expression)
        except WhenError as exc:
            path = f"spec.overrides[{i}].when"
            results.error(str(exc), resource=ResourceRef.of(raw), field_path=path, file=file)
            bad.add(i)
    return frozenset(bad)


def _validated_whens(raw: dict[str, Any]) -> list[models.When | None]:
    """Each override's ``when`` validated alone, so a run whose model failed still has them."""
    out: list[models.When | None] = []
    for ov in as_list(as_mapping(raw.get("spec")).get("overrides")):
        when = as_mapping(ov).get("when")
        try:
            out.append(models.When.model_validate(when) if isinstance(when, Mapping) else None)
        except ValueError:  # the model's error for it is already reported
            out.append(None)
    return out
