"""What must still hold after an override: pinning, tolerations, gang labels, Trainer's rules.

Kubeflow Trainer merges each TrainJob ``runtimePatches`` entry, in order, into its
TrainingRuntime with a strategic merge in which ``nodeSelectorTerms`` and ``tolerations`` are
replaced whole (trainer-api.md §5; ``trainer_sim.merge_runtime_patches``). An override that
sets node affinity or tolerations in a runtimePatch would therefore drop a group's hostname
pinning, the target, or the taint-selector tolerations.

Invariants:
    * :func:`keep_placement` makes node affinity and tolerations an override sets MERGE with
      ours: every required term an override writes gets our expressions added (ANDed), and
      every tolerations list it writes keeps ours (union, ours first). Nothing else changes.
    * :func:`placement_problems` reports, per TrainJob, what Trainer and the API server would
      refuse or what would run in the wrong place, on the pod specs Trainer would build:
      a group's pods not pinned to exactly its hostnames, the target missing, a
      taint-selector toleration missing, the gang scheduler name or queue label inconsistent
      between the TrainJob, the Job template and the pod template, Trainer's reserved env
      names in ``trainer.env``, and runtimePatches Trainer's webhook rejects.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from krm_fn.api.models import DNS1123_SUBDOMAIN, GangScheduler
from krm_fn.api.rules import plugin_env
from krm_fn.fleet.inventory import HOSTNAME_LABEL
from krm_fn.keys import ANN_GROUP_NODES as GROUP_NODES
from krm_fn.keys import LABEL_TRAINER_STEP
from krm_fn.overrides.smp import SMPError, strategic_merge

__all__ = ["Expect", "effective_pod_specs", "keep_placement", "placement_problems"]

# JobSet's manager field rule (Trainer jobset.go:176): a domain-prefixed path.
_MANAGER_RE: Final = re.compile(rf"^{DNS1123_SUBDOMAIN}/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")


@dataclass(frozen=True, slots=True)
class Expect:
    """What every TrainJob of the run must keep.

    On every pod: the target's node-affinity expressions and the taint-selector tolerations;
    ``gang`` is ``spec.gangScheduler`` when gang scheduling is on.
    """

    framework: str
    target: tuple[Mapping[str, Any], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()
    gang: GangScheduler | None = None


def _dig(obj: Any, *keys: str) -> Any:
    """``obj[k1][k2]...``; ``None`` where a level is missing or not a map."""
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def _pod_of(rj: Any) -> Any:
    return _dig(rj, "template", "spec", "template", "spec")


def _jobs(runtime_spec: Any) -> Any:
    """The replicated jobs of a TrainingRuntime's (or a runtime patch's) spec."""
    return _dig(runtime_spec, "template", "spec", "replicatedJobs") or []


def _env_names(tj: Mapping[str, Any]) -> set[str]:
    """The names in a TrainJob's ``spec.trainer.env``."""
    return {
        str(e.get("name"))
        for e in _dig(tj, "spec", "trainer", "env") or []
        if isinstance(e, Mapping)
    }


def _patch_pods(tj: Mapping[str, Any]) -> dict[tuple[int, str], Mapping[str, Any]]:
    return {
        (i, str(rj.get("name"))): pod
        for i, p in enumerate(_dig(tj, "spec", "runtimePatches") or [])
        for rj in _jobs(_dig(p, "trainingRuntimeSpec"))
        if isinstance(pod := _pod_of(rj), Mapping)
    }


def effective_pod_specs(
    tj: Mapping[str, Any], runtime: Mapping[str, Any] | None
) -> dict[str, dict[str, Any]]:
    """Replicated job name -> the pod spec Trainer builds for ``tj`` (runtime + its patches)."""
    merged: Any = {"spec": copy.deepcopy(_dig(runtime, "spec") or {})}
    for p in _dig(tj, "spec", "runtimePatches") or []:
        tspec = _dig(p, "trainingRuntimeSpec")
        if isinstance(tspec, Mapping):
            try:
                merged = strategic_merge(merged, {"spec": tspec}, kind="TrainingRuntime")
            except SMPError:
                continue
    pods = ((str(rj.get("name")), _pod_of(rj)) for rj in _jobs(merged["spec"]))
    return {name: pod for name, pod in pods if isinstance(pod, dict)}


_REQUIRED: Final = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")


def _terms(pod: Mapping[str, Any]) -> list[Any] | None:
    terms = _dig(pod, *_REQUIRED, "nodeSelectorTerms")
    return terms if isinstance(terms, list) else None


def _ours(pod: Mapping[str, Any]) -> list[Any]:
    exprs: list[Any] = []
    for term in _terms(pod) or []:
        for e in _dig(term, "matchExpressions") or []:
            if e not in exprs:
                exprs.append(e)
    return exprs


def keep_placement(
    old: Mapping[str, Any], new: dict[str, Any], runtime: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``new`` with node affinity and tolerations an override wrote merged with ours."""
    before = _patch_pods(old)
    after = _patch_pods(new)
    if not any(
        before.get(key, {}).get(f) != pod.get(f)
        for key, pod in after.items()
        for f in ("affinity", "tolerations")
    ):
        return new
    effective = effective_pod_specs(old, runtime)
    out = copy.deepcopy(new)
    pods = _patch_pods(out)
    for key, pod in pods.items():
        if not isinstance(pod, dict):
            continue
        old_pod = before.get(key, {})
        ours = effective.get(key[1], {})
        terms = _terms(pod)
        if terms is not None and pod.get("affinity") != old_pod.get("affinity"):
            exprs = _ours(ours)
            merged_terms = []
            for term in terms or [{}]:
                term = dict(term or {})
                mine = list(term.get("matchExpressions") or [])
                term["matchExpressions"] = mine + [e for e in exprs if e not in mine]
                merged_terms.append(term)
            _dig(pod, *_REQUIRED)["nodeSelectorTerms"] = merged_terms
        tols = pod.get("tolerations")
        if isinstance(tols, list) and tols != old_pod.get("tolerations"):
            keep = list(ours.get("tolerations") or [])
            pod["tolerations"] = keep + [t for t in tols if t not in keep]
    return out


def _pins(term: Mapping[str, Any], group: list[str]) -> bool:
    """The term requires exactly the group's hostnames, and every group node satisfies it."""
    exprs = [
        e
        for e in term.get("matchExpressions") or []
        if isinstance(e, Mapping) and e.get("key") == HOSTNAME_LABEL
    ]
    exact = any(e.get("operator") == "In" and sorted(e.get("values") or []) == sorted(group)
                for e in exprs)  # fmt: skip
    return exact and all(_host_ok(e, n) for e in exprs for n in group)


def _host_ok(expr: Mapping[str, Any], host: str) -> bool:
    op, values = expr.get("operator"), expr.get("values") or []
    if op == "In":
        return host in values
    if op == "NotIn":
        return host not in values
    return op == "Exists"


def placement_problems(
    tj: Mapping[str, Any], runtime: Mapping[str, Any] | None, expect: Expect
) -> list[str]:
    """Why ``tj`` (with ``runtime``, overrides applied) would be refused or run elsewhere.

    Per replicated job its pods' placement, then the gang queue labels, then what Trainer's
    webhook refuses; ``[]`` if fine.
    """
    out: list[str] = []
    meta = tj.get("metadata") or {}
    pods = effective_pod_specs(tj, runtime)
    group = [n for n in str((meta.get("annotations") or {}).get(GROUP_NODES, "")).split(",") if n]
    jobs = ["node", "launcher"] if expect.framework == "mpi" else ["node"]
    for job in jobs:
        pod = pods.get(job)
        if pod is None:
            out.append(f"the runtime has no replicated job {job!r} any more")
        else:
            out += _pod_problems(f"the {job} pods", pod, group, expect)
    if expect.gang is not None:
        out += _queue_label_problems(tj, runtime, jobs, expect.gang)
    out += _trainer_webhook(tj.get("spec") or {}, effective_pod_specs({}, runtime), expect)
    return out


def _pod_problems(
    where: str, pod: Mapping[str, Any], group: list[str], expect: Expect
) -> list[str]:
    """What moved ``where`` off their place: nodeName, node affinity, tolerations, scheduler."""
    out: list[str] = []
    if pod.get("nodeName"):
        out.append(f"{where} are bound by nodeName {pod['nodeName']!r}, which bypasses the target")
    terms = _terms(pod) or []
    if (group or expect.target) and not terms:
        out.append(
            f"{where} lost their required node affinity, so they may land on any node: "
            + (f"the group's hostnames {', '.join(group)}" if group else "the target")
            + " must stay required"
        )
    for t, term in enumerate(terms):
        exprs = (term or {}).get("matchExpressions") or []
        if group and not _pins(term or {}, group):
            out.append(
                f"{where} are no longer pinned to exactly their group's nodes "
                f"({', '.join(group)}) in nodeSelectorTerms[{t}]; an override may narrow "
                "placement but not move or widen it"
            )
        if missing := [e for e in expect.target if e not in exprs]:
            out.append(
                f"{where} lost the target in nodeSelectorTerms[{t}]: "
                + ", ".join(f"{e.get('key')} {e.get('operator')}" for e in missing)
            )
    tols = pod.get("tolerations") or []
    if lost := [t for t in expect.tolerations if t not in tols]:
        out.append(
            f"{where} lost the taint-selector toleration(s) "
            + ", ".join(str(t.get("key")) for t in lost)
            + ", so they cannot run on the tainted nodes the target selects"
        )
    if expect.gang is not None and pod.get("schedulerName") != expect.gang.scheduler_name:
        out.append(
            f"{where} use schedulerName {pod.get('schedulerName')!r}, not the gang "
            f"scheduler {expect.gang.scheduler_name!r}"
        )
    return out


def _queue_label_problems(
    tj: Mapping[str, Any], runtime: Mapping[str, Any] | None, jobs: list[str], gang: GangScheduler
) -> list[str]:
    """Where the gang queue label is wrong: the TrainJob, then each job's Job and pod template."""
    key, queue = gang.label_key, gang.queue_name
    found = [("the TrainJob's", _dig(tj, "metadata", "labels"))]
    for rj in _jobs(_dig(runtime, "spec")):
        if (name := rj.get("name")) in jobs:
            found.append((f"the {name} Job template's", _dig(rj, "template", "metadata", "labels")))
            pod_labels = _dig(rj, "template", "spec", "template", "metadata", "labels")
            found.append((f"the {name} pod template's", pod_labels))
    return [
        f"{what} queue label {key}={(labels or {}).get(key)!r} is not {queue!r}"
        for what, labels in found
        if (labels or {}).get(key) != queue
    ]


def _trainer_webhook(
    spec: Mapping[str, Any], pods: Mapping[str, Mapping[str, Any]], expect: Expect
) -> list[str]:
    """Trainer v2.3's TrainJob webhook rules (``pods``: the runtime's own pod specs)."""
    out: list[str] = []
    if expect.framework != "exec":
        bad = sorted(n for n in _env_names({"spec": spec}) if plugin_env(expect.framework, n))
        if bad:
            out.append(
                "spec.trainer.env must not have reserved envs, invalid envs configured: "
                f"{bad} (Kubeflow Trainer's {expect.framework} plugin sets them)"
            )
    containers = {
        name: {c.get("name") for c in (p.get("initContainers") or []) + (p.get("containers") or [])}
        for name, p in pods.items()
    }
    for i, p in enumerate(spec.get("runtimePatches") or []):
        manager = p.get("manager") if isinstance(p, Mapping) else None
        if not isinstance(manager, str) or not _MANAGER_RE.match(manager):
            out.append(
                f"runtimePatches[{i}].manager {manager!r} must be a domain-prefixed path "
                "such as example.com/team"
            )
        for rj in _jobs(_dig(p, "trainingRuntimeSpec")):
            name = rj.get("name")
            if name not in containers:
                out.append(
                    f"runtimePatches[{i}]: must not have replicated job that doesn't exist in "
                    f"the runtime job template ({name})"
                )
                continue
            pod = _pod_of(rj) or {}
            for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
                if c.get("name") not in containers[name]:
                    out.append(
                        f"runtimePatches[{i}]: must not have container that doesn't exist in "
                        f"the runtime job {name} ({c.get('name')})"
                    )
                elif c.get("env") and c.get("name") == "node":
                    out.append(
                        f"runtimePatches[{i}]: must not have envs for the dataset-initializer, "
                        "model-initializer, node containers (set spec.workload.trainJob."
                        "trainer.env instead)"
                    )
    return out


def yield_env_to_trainer(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Leave to ``trainer.env`` the variables an override set there (new list, new objects).

    Trainer upserts a TrainJob's ``trainer.env`` into the ``node`` container of the replicated
    job labelled ``trainjob-ancestor-step: trainer``, silently replacing a value the
    TrainingRuntime declares there. When EVERY TrainJob using a runtime sets a name in
    ``trainer.env``, the runtime's declaration of that name in that container is dropped, so
    the runtime says nothing that does not run; the pods get exactly the same env.
    """
    users: dict[str, list[set[str]]] = {}
    for o in objects:
        if o.get("kind") == "TrainJob":
            users.setdefault(str(_dig(o, "spec", "runtimeRef", "name")), []).append(_env_names(o))
    out = list(objects)
    for i, o in enumerate(objects):
        jobs = (
            users.get(str(_dig(o, "metadata", "name")))
            if o.get("kind") == "TrainingRuntime"
            else None
        )
        if not jobs or not (names := set.intersection(*jobs)):
            continue
        new = copy.deepcopy(o)
        changed = False
        for rj in _jobs(new.get("spec")):
            if _dig(rj, "template", "metadata", "labels", LABEL_TRAINER_STEP) != "trainer":
                continue
            for c in _dig(_pod_of(rj), "containers") or []:
                if c.get("name") != "node" or not c.get("env"):
                    continue
                kept = [e for e in c["env"] if e.get("name") not in names]
                if len(kept) != len(c["env"]):
                    changed = True
                    if kept:
                        c["env"] = kept
                    else:
                        del c["env"]
        if changed:
            out[i] = new
    return out
