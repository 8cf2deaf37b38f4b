"""Cross-field rules of the WorkloadRun guide that the models alone cannot express.

Each check returns ``(field path, message)`` pairs; the caller reports them as errors with
reason ``BuildFailed`` (or warnings where said). Invariants:
    * Checks never stop at the first problem: every violation is returned.
    * Reserved names and paths are exactly the guide's: ``dshm`` and ``config-volume`` always,
      ``/dev/shm`` and (with ``spec.config``) ``/config`` exactly; MPI adds ``mpi-ssh-auth`` and
      ``/tmp/mpi-ssh-raw`` and ``/root/.ssh`` with everything below them; torch/exec add
      ``kubeflow-trainer-token`` and ``/var/run/secrets/kubeflow/trainer`` and below.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

from krm_fn.api import models
from krm_fn.keys import LABEL_MANAGED_BY as CONTROLLER_LABEL
from krm_fn.keys import RESERVED_PREFIX

Problem = tuple[str, str]

DSHM = "dshm"
CONFIG_VOLUME = "config-volume"
CONFIG_PATH = "/config"
SSH_VOLUME = "mpi-ssh-auth"
SSH_RAW = "/tmp/mpi-ssh-raw"
SSH_DIR = "/root/.ssh"
"""The built-in volumes and paths of the generated runtimes (the builders use these names)."""
RESERVED_VOLUMES_ALWAYS = {
    DSHM: "the built-in memory-backed /dev/shm volume",
    CONFIG_VOLUME: f"the built-in spec.config volume mounted at {CONFIG_PATH}",
}
RESERVED_VOLUMES = {
    "mpi": {SSH_VOLUME: "the SSH key Secret Kubeflow Trainer injects for MPI"},
    "torch": {"kubeflow-trainer-token": "the token Trainer's status plugin injects"},
    "exec": {"kubeflow-trainer-token": "the token Trainer's status plugin injects"},
}
RESERVED_TREES = {
    "mpi": {
        SSH_RAW: "the SSH key Secret Kubeflow Trainer mounts",
        SSH_DIR: "the worker's sshd setup",
    },
    "torch": {"/var/run/secrets/kubeflow/trainer": "the token Trainer's status plugin mounts"},
    "exec": {"/var/run/secrets/kubeflow/trainer": "the token Trainer's status plugin mounts"},
}
MPI_PLUGIN_ENV = frozenset({
    "OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args", "OMPI_MCA_orte_keep_fqdn_hostnames",
    "OMPI_MCA_orte_set_default_slots",
})  # fmt: skip
"""Env Trainer's MPI plugin sets on the launcher (kubeflow/trainer v2.3.0
``pkg/runtime/framework/plugins/mpi/mpi.go:208-227``), meant for mpirun itself."""
MAX_WORKLOAD_LABELS = 32


def _norm(path: str) -> str:
    return posixpath.normpath(path) if path.startswith("/") else path


def _mounts(spec: models.WorkloadRunSpec) -> Iterator[tuple[str, models.VolumeMount]]:
    for i, m in enumerate(spec.volume_mounts):
        yield f"spec.volumeMounts[{i}]", m
    for ci, c in enumerate(spec.init_containers):
        for i, m in enumerate((c.model_extra or {}).get("volumeMounts") or ()):
            fields = {"name": m.get("name"), "mount_path": m.get("mountPath")}
            mount = models.VolumeMount.model_construct(**fields, read_only=m.get("readOnly"))
            yield f"spec.initContainers[{ci}].volumeMounts[{i}]", mount


def reserved_names(spec: models.WorkloadRunSpec) -> list[Problem]:
    """Volumes, mounts and init containers that would collide with built-in ones.

    In order: volume names, mount paths and names (workload container first, then init
    containers), init container names, duplicate mount paths.
    """
    reserved = {**RESERVED_VOLUMES_ALWAYS, **RESERVED_VOLUMES[spec.framework.name]}
    out: list[Problem] = []
    declared: dict[str, int] = {}
    for i, v in enumerate(spec.volumes):
        at = f"spec.volumes[{i}].name"
        if v.name in reserved:
            out.append((at, f"volume name {v.name!r} is reserved for {reserved[v.name]}"))
        if v.name in declared:
            out.append(
                (at, f"duplicate volume name {v.name!r} (also spec.volumes[{declared[v.name]}])")
            )
        declared.setdefault(v.name, i)
    if spec.checkpoint is not None:
        reserved["checkpoint"] = "the spec.checkpoint claim"
    out += _mount_problems(spec, reserved, declared)
    out += [
        (f"spec.initContainers[{i}].name", "'node' is the workload container's name in every pod")
        for i, c in enumerate(spec.init_containers)
        if c.name == "node"
    ]
    seen: dict[str, str] = {}
    for i, m in enumerate(spec.volume_mounts):
        p, at = _norm(m.mount_path), f"spec.volumeMounts[{i}]"
        if p in seen:
            out.append((f"{at}.mountPath", f"duplicate mount path {p!r} (also {seen[p]})"))
        seen.setdefault(p, at)
    return out


def _mount_problems(
    spec: models.WorkloadRunSpec, reserved: Mapping[str, str], declared: Mapping[str, int]
) -> list[Problem]:
    """Every mount's path against the reserved ones (exact and trees), and its volume name."""
    exact = {"/dev/shm": "the built-in memory-backed /dev/shm"}
    exact |= {"/checkpoint": "spec.checkpoint"} if spec.checkpoint is not None else {}
    exact |= {CONFIG_PATH: "spec.config"} if spec.config is not None else {}
    out: list[Problem] = []
    for where, m in _mounts(spec):
        path, at, name_at = _norm(m.mount_path), f"{where}.mountPath", f"{where}.name"
        if path in exact:
            out.append((at, f"mount path {m.mount_path!r} is reserved for {exact[path]}"))
        for root, owner in RESERVED_TREES[spec.framework.name].items():
            if path == root or path.startswith(root + "/"):
                owner = f"{root} and every path below it belong to {owner}"
                out.append((at, f"mount path {m.mount_path!r} is reserved: {owner}"))
        if m.name == CONFIG_VOLUME and spec.config is None:
            why = "a mount may name 'config-volume' only when spec.config creates it"
            out.append((name_at, why))
        elif m.name in reserved and m.name != CONFIG_VOLUME:
            out.append((name_at, f"mount names the reserved volume {m.name!r}"))
        elif m.name not in declared and m.name not in reserved:
            out.append((name_at, f"no volume named {m.name!r} in spec.volumes"))
    return out


def plugin_env(framework: str, name: str) -> bool:
    """Whether Trainer's plugin for ``framework`` sets env ``name`` (torch.go:56-87: ``PET_*``)."""
    return name in MPI_PLUGIN_ENV if framework == "mpi" else name.startswith("PET_")


def reserved_env(spec: models.WorkloadRunSpec) -> list[Problem]:
    """Env names Trainer's plugins set and would silently replace."""
    mpi = spec.framework.name == "mpi"
    return [
        (
            f"spec.env[{i}].name",
            f"{e.name} is set by Kubeflow Trainer's MPI plugin and cannot be overridden"
            if mpi
            else f"{e.name}: PET_* variables are set by Kubeflow Trainer's torch plugin",
        )
        for i, e in enumerate(spec.env)
        if plugin_env(spec.framework.name, e.name)
    ]


def reserved_label(key: str) -> bool:
    """Whether ``key`` is controller-owned in NVCRE (and here)."""
    return key == CONTROLLER_LABEL or key.startswith(RESERVED_PREFIX)


def gang_scheduler(spec: models.WorkloadRunSpec) -> list[Problem]:
    """The guide's gangScheduler validation."""
    g = spec.gang_scheduler
    if g is None:
        return []
    out: list[Problem] = []
    at = "spec.gangScheduler.queueLabelKey"
    if g.queue and (vp := models.label_value_problem(g.queue)):
        why = f"queue {g.queue!r} is not a valid label value: {vp}"
        out.append(("spec.gangScheduler.queue", why))
    if g.queue_label_key and (kp := models.label_key_problem(g.queue_label_key)):
        out.append((at, f"{g.queue_label_key!r} is not a valid label key: {kp}"))
    elif reserved_label(g.label_key):
        why = f"queueLabelKey must not use the controller-owned key {CONTROLLER_LABEL} or any key"
        out.append((at, f"{why} under the {RESERVED_PREFIX} prefix"))
    return out


def workload_labels(
    labels: Mapping[str, str], gang: models.GangScheduler | None, path: str
) -> tuple[dict[str, str], list[Problem]]:
    """NVCRE's rules of the workload object's labels, wherever they are written.

    The same rules hold for ``spec.workloadMetadata.labels`` and for the job template's
    ``spec.workloadMetadata.labels`` after an override (NVCRE's ``ValidateResolvedJobTemplate``):
    at most 32 labels, no controller-owned key, valid keys and values, and the gang queue label
    NVCRE owns: restored when absent, accepted when equal, a conflict otherwise (NVCRE's
    ``InsertConsistentLabel``). The messages are NVCRE's Go-side ones. Returns the labels
    with the queue label restored, and every problem (``path[key]`` paths).
    """
    resolved = dict(labels)
    if gang is not None:
        resolved.setdefault(gang.label_key, gang.queue_name)
    out: list[Problem] = []
    if len(resolved) > MAX_WORKLOAD_LABELS:
        out.append((path, f"{len(resolved)} labels exceeds the maximum of {MAX_WORKLOAD_LABELS}"))
    for key, value in labels.items():
        at = f"{path}[{key!r}]"
        if reserved_label(key):
            owners = f"{CONTROLLER_LABEL!r} and any key under {RESERVED_PREFIX!r}"
            why = f"label key is reserved for the controller: {owners} identify workload ownership"
            out.append((at, why))
            continue
        if kp := models.label_key_problem(key):
            out.append((at, f"invalid label key: {kp}"))
        if vp := models.label_value_problem(value):
            out.append((at, f"invalid label value {value!r}: {vp}"))
        elif gang is not None and key == gang.label_key and value != gang.queue_name:
            expected = f"expected {gang.queue_name!r} (spec.gangScheduler.queue)"
            out.append((at, f"conflicting label value {value!r}, {expected}"))
    return resolved, out


def thresholds(value: Mapping[str, str]) -> list[Problem]:
    """Every unknown key and every expression that does not parse, of ``spec.thresholds``."""
    from krm_fn import thresholds as th  # the threshold language; only when used

    out: list[Problem] = []
    for key, expr in value.items():
        try:
            th.check_threshold_key(key)
            th.parse_threshold(expr)
        except th.ThresholdKeyError as exc:
            out.append((f"spec.thresholds[{key!r}]", str(exc)))
        except th.ThresholdSyntaxError as exc:
            out.append((f"spec.thresholds[{key!r}]", f"threshold {expr!r} does not parse: {exc}"))
    return out


_UNPINNED_REFUSED = {
    "intra-node": "intra-node runs one job per target node, Unpinned runs exactly one job; drop "
    "one of the two",
    "intra-rack": "intra-rack runs one job per topology domain, Unpinned runs exactly one job; to "
    "confine a single unpinned job to one domain, name the domain label in "
    "target.matchExpressions instead",
}
"""NVCRE's Unpinned × testScale refusals (verbatim, after the incompatibility)."""


def placement(spec: models.WorkloadRunSpec) -> list[Problem]:
    """NVCRE's Unpinned × testScale refusals."""
    o = spec.orchestration
    why = _UNPINNED_REFUSED.get(o.test_scale or "") if o and o.placement == "Unpinned" else None
    if why is None:
        return []
    assert o is not None
    incompatible = f'Unpinned is incompatible with orchestration.testScale "{o.test_scale}"'
    return [("spec.orchestration.placement", f"orchestration.placement: {incompatible}: {why}")]


def shared_claims(
    spec: models.WorkloadRunSpec, concurrent_pods: int, pvcs: Mapping[str, Mapping[str, Any]]
) -> tuple[list[Problem], list[Problem]]:
    """PVCs mounted by several worker pods at once must be RWX (or ROX mounted read-only).

    Returns (errors, warnings): errors for the input's PVCs that break the rule, warnings for
    claims whose PVC is not in the input, so they could not be checked.
    """
    errors: list[Problem] = []
    warnings: list[Problem] = []
    if concurrent_pods <= 1:
        return errors, warnings
    for i, v in enumerate(spec.volumes):
        key, body = v.source
        if key != "persistentVolumeClaim":
            continue
        claim = str(body.get("claimName", ""))
        mounts = [m for _, m in _mounts(spec) if m.name == v.name]
        read_only = bool(body.get("readOnly")) or (
            bool(mounts) and all(m.read_only for m in mounts)
        )
        pvc = pvcs.get(claim)
        where = f"spec.volumes[{i}].persistentVolumeClaim.claimName"
        shared = f"mounted by {concurrent_pods} worker pods at once"
        if pvc is None:
            why = f"PersistentVolumeClaim {claim!r} is {shared} but is not in the input, so its "
            why += "access modes could not be checked: it must be ReadWriteMany, or ReadOnlyMany "
            warnings.append((where, why + "mounted read-only"))
            continue
        modes = set((pvc.get("spec") or {}).get("accessModes") or ())
        if "ReadWriteMany" in modes or ("ReadOnlyMany" in modes and read_only):
            continue
        need = "ReadWriteMany" if not read_only else "ReadWriteMany or ReadOnlyMany"
        why = f"PersistentVolumeClaim {claim!r} has accessModes {sorted(modes) or '[]'} but is "
        why += f"{shared}; it must be {need}"
        if not read_only:
            why += " (or ReadOnlyMany with every mount readOnly: true)"
        errors.append((where, why))
    return errors, warnings
