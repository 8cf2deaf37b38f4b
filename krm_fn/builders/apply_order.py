"""The order in which a run's objects reach the API server, for every consumer.

Trainer's TrainJob webhook rejects a TrainJob whose TrainingRuntime does not exist yet
(kubeflow/trainer v2.3.0 ``pkg/runtime/core/trainingruntime.go`` ValidateObjects), and a pod
whose Secret, ConfigMap or claim is missing does not start. So every generated object that is
not a TrainJob is a *dependency* and must be applied first.

Contract (other branches and the GitOps consumers build on it):
    * Output order: dependencies first (in the order they were built), then the TrainJobs by
      wave (``nvcre.nvidia.com/wave``), stable within a wave.
    * ``argocd.argoproj.io/sync-wave``: ``"0"`` on every dependency, ``"<w+1>"`` on a TrainJob of
      wave ``w``.
    * ``config.kubernetes.io/depends-on`` on every TrainJob (kpt live apply, Config Sync): every
      dependency of its run, comma-separated, in kpt's object-reference form
      ``<group>/namespaces/<namespace>/<kind>/<name>`` (core group empty); a cluster-scoped
      dependency is ``<group>/<kind>/<name>``. When the run has no namespace the annotation is
      left out: kpt defaults the objects' namespace at apply time but not the references, and a
      reference to an object outside the package fails the whole apply ("external dependency").
      A PersistentVolumeClaim is not named: kpt waits for every named object to be reconciled,
      and a claim of a ``WaitForFirstConsumer`` storage class is only bound once the TrainJob's
      pods exist (kstatus reports it InProgress until then), so naming it would wait forever.
      Admission does not need it; the pods wait for it.

Re-rendering after the fleet changes (a node cordoned, added or removed) can change a
group's nodes, so its TrainJob's ``spec.runtimePatches`` (changeable only while suspended) and
perhaps ``spec.trainer`` (immutable). Every TrainJob therefore asks the GitOps engines to
delete and recreate it when an update is refused, instead of failing every sync:
``kustomize.toolkit.fluxcd.io/force: enabled`` (Flux recreates on an immutable-field error)
and ``argocd.argoproj.io/sync-options: Force=true,Replace=true`` (Argo CD replaces the object,
deleting and recreating it, when it is out of sync), merged with any sync options already
there. A TrainJob whose group and spec did not change renders byte-identical, so neither
engine touches it.

Works on the final objects (after overrides), so whatever produced them is covered.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from krm_fn.keys import LABEL_WAVE

ANN_SYNC_WAVE = "argocd.argoproj.io/sync-wave"
ANN_DEPENDS_ON = "config.kubernetes.io/depends-on"
ANN_FLUX_FORCE = "kustomize.toolkit.fluxcd.io/force"
ANN_ARGO_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
ARGO_RECREATE = ("Force=true", "Replace=true")
TRAINJOB = ("trainer.kubeflow.org", "TrainJob")

NOT_AWAITED = frozenset({("", "PersistentVolumeClaim")})
"""Dependencies applied first but not named in depends-on (see the module doc)."""

CLUSTER_SCOPED_KINDS = frozenset({
    ("", "Namespace"), ("", "PersistentVolume"), ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
    ("resource.k8s.io", "DeviceClass"), ("storage.k8s.io", "StorageClass"),
    ("scheduling.k8s.io", "PriorityClass"), ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"), ("external-secrets.io", "ClusterSecretStore"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
})  # fmt: skip
"""Kinds referenced without a namespace (kpt's three-field form)."""


def group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(API group, kind); the core group is ``""``."""
    api = str(obj.get("apiVersion") or "")
    group = api.split("/", 1)[0] if "/" in api else ""
    return group, str(obj.get("kind") or "")


def is_trainjob(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is a Trainer TrainJob (anything else is a dependency)."""
    return group_kind(obj) == TRAINJOB


def wave_of(obj: Mapping[str, Any]) -> int:
    """The render wave of a TrainJob (its ``nvcre.nvidia.com/wave`` label; 0 when absent)."""
    value = ((obj.get("metadata") or {}).get("labels") or {}).get(LABEL_WAVE)
    try:
        return int(str(value))
    except ValueError:
        return 0


def object_reference(obj: Mapping[str, Any]) -> str | None:
    """The kpt depends-on reference to ``obj``; ``None`` for a namespaced object without one."""
    group, kind = group_kind(obj)
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if (group, kind) in CLUSTER_SCOPED_KINDS:
        return f"{group}/{kind}/{name}"
    if not (ns := meta.get("namespace")):
        return None
    return f"{group}/namespaces/{ns}/{kind}/{name}"


def order_run(objs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One run's objects in apply order, annotated for Argo CD and kpt (see the module doc).

    The objects are changed in place (annotations) and returned in the new order.
    """
    deps = [o for o in objs if not is_trainjob(o)]
    waved = sorted(((wave_of(o), o) for o in objs if is_trainjob(o)), key=lambda wj: wj[0])
    refs = [object_reference(d) for d in deps if group_kind(d) not in NOT_AWAITED]
    depends_on = ",".join(r for r in refs if r) if all(refs) else ""
    for d in deps:
        _annotations(d)[ANN_SYNC_WAVE] = "0"
    for w, j in waved:  # sorted() is stable: input order within a wave
        ann = _annotations(j)
        ann[ANN_SYNC_WAVE] = str(w + 1)
        if depends_on:
            ann[ANN_DEPENDS_ON] = depends_on
        else:
            ann.pop(ANN_DEPENDS_ON, None)
        ann[ANN_FLUX_FORCE] = "enabled"
        ann[ANN_ARGO_SYNC_OPTIONS] = _sync_options(ann.get(ANN_ARGO_SYNC_OPTIONS))
    return [*deps, *(j for _, j in waved)]


@functools.cache  # the TrainJobs of a run mostly carry the same options
def _sync_options(current: Any) -> str:
    """Argo CD sync options with Force=true and Replace=true (others kept, in order)."""
    opts = [o.strip() for o in str(current or "").split(",") if o.strip()]
    keys = {o.split("=", 1)[0] for o in ARGO_RECREATE}
    opts = [o for o in opts if o.split("=", 1)[0] not in keys]
    return ",".join([*opts, *ARGO_RECREATE])


def _annotations(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta.get("annotations"), dict):
        meta["annotations"] = {}
    out: dict[str, Any] = meta["annotations"]
    return out
