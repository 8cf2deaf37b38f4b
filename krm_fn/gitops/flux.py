"""``workloadrun-fn flux-layout``: split a render into the Flux Kustomizations that apply it in order.

Flux's kustomize-controller dry-runs every object of one Kustomization (server side, webhooks
included) before it applies any, so a TrainJob whose TrainingRuntime is in the same batch never
passes Trainer's webhook. And Flux never releases a suspended TrainJob. So the render is split
along the apply-order contract (:mod:`krm_fn.builders.apply_order`):

* ``dependencies/``: every object that is not a TrainJob (sync-wave 0), with ``wait: true``;
* ``wave-<k>/``: the TrainJobs of render wave ``k``, ``dependsOn`` the dependencies and wave
  ``k-1``, ``wait: true`` and a CEL health check that counts a TrainJob as ready only once its
  ``Complete`` condition is true (and failed once ``Failed`` is), so wave ``k+1`` is applied only
  after wave ``k`` completed. The render must use ``waveRelease: engine`` (nothing suspended).

Invariants:
    * Every input object lands in exactly one directory; the output is deterministic.
    * ``flux/kustomizations.yaml`` holds the Flux ``Kustomization`` objects
      (``kustomize.toolkit.fluxcd.io/v1``), outside the directories they point at.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from krm_fn.api.durations import parse_go_duration
from krm_fn.api.models import DEFAULT_TIMEOUT_PER_JOB
from krm_fn.builders.apply_order import is_trainjob, wave_of
from krm_fn.builders.plan import TRAINER_API
from krm_fn.gitops.env_options import REMEDY

FLUX_API = "kustomize.toolkit.fluxcd.io/v1"
# fluxcd.io/flux/components/kustomize/kustomizations/#health-check-expressions and
# fluxcd.io/flux/cheatsheets/cel-healthchecks (has() guards a status not written yet).
_CONDITION = (
    "has(status.conditions) && status.conditions.exists(e, e.type == '{}' && e.status == 'True')"
)
CURRENT, FAILED = _CONDITION.format("Complete"), _CONDITION.format("Failed")
DEFAULT_TIMEOUT_S = int(parse_go_duration(DEFAULT_TIMEOUT_PER_JOB))  # an unset timeoutPerJob
MARGIN_S = 15 * 60


def _duration(seconds: int) -> str:
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


def layout(
    objs: Sequence[dict[str, Any]],
    prefix: str,
    path_prefix: str,
    source_kind: str,
    source_name: str,
    namespace: str = "flux-system",
    interval: str = "10m",
) -> dict[str, list[dict[str, Any]]]:
    """Directory name -> its objects: ``dependencies``, ``wave-<k>`` per wave, and ``flux``.

    ``flux`` holds the Kustomizations (named ``prefix-...``, in ``namespace``, reconciled every
    ``interval``) of those directories under ``path_prefix`` in the Flux source. ValueError:
    no TrainJob, or a TrainJob still suspended (render with waveRelease engine).
    """
    jobs = [o for o in objs if is_trainjob(o)]
    _check_publishable(jobs)

    def kustomization(name: str, directory: str, extra: dict[str, Any]) -> dict[str, Any]:
        """A Kustomization ``name`` applying ``directory``, waiting, with ``extra`` spec."""
        spec = {
            "interval": interval,
            "path": f"{path_prefix.rstrip('/')}/{directory}",
            "prune": True,
            "sourceRef": {"kind": source_kind, "name": source_name},
            "wait": True,
            **extra,
        }
        meta = {"name": name, "namespace": namespace}
        return {"apiVersion": FLUX_API, "kind": "Kustomization", "metadata": meta, "spec": spec}

    out: dict[str, list[dict[str, Any]]] = {"dependencies": [o for o in objs if not is_trainjob(o)]}
    previous = f"{prefix}-dependencies"
    flux = [kustomization(previous, "dependencies", {"timeout": "10m"})]
    for w in sorted({wave_of(j) for j in jobs}):
        members = [j for j in jobs if wave_of(j) == w]
        out[f"wave-{w}"] = members
        name = f"{prefix}-wave-{w}"
        flux.append(kustomization(name, f"wave-{w}", _wave_spec(prefix, previous, members)))
        previous = name
    out["flux"] = flux
    return out


def _check_publishable(jobs: list[dict[str, Any]]) -> None:
    """Raise ValueError for a render Flux cannot run: no TrainJob, or TrainJobs suspended."""
    if not jobs:
        raise ValueError("the render produced no TrainJob; refusing to publish it")
    suspended = sorted(
        str(j["metadata"]["name"]) for j in jobs if (j.get("spec") or {}).get("suspend")
    )
    if suspended:
        raise ValueError(
            f"TrainJob(s) {', '.join(suspended)} are suspended and Flux never releases them; "
            "render with waveRelease: engine (WORKLOADRUN_FN_WAVE_RELEASE=engine)"
        )


def plain_secret_warning(objs: Sequence[dict[str, Any]]) -> str | None:
    """Name the Secrets whose data (a password) goes into the Flux source; ``None``: none.

    Said, not refused: the GitOps render writes one only when asked (``plainPullSecret``).
    """
    secrets = [
        o for o in objs if o.get("kind") == "Secret" and (o.get("data") or o.get("stringData"))
    ]
    names = [str((o.get("metadata") or {}).get("name")) for o in secrets]
    return (
        f"flux-layout: warning: dependencies/ holds Secret {', '.join(names)} with its data: "
        f"Flux applies what its source holds, so it lands in git or the OCI artifact; {REMEDY}"
        if names
        else None
    )


def _wave_spec(prefix: str, previous: str, members: list[dict[str, Any]]) -> dict[str, Any]:
    """A wave's own ``spec`` fields, after ``previous`` (the last Kustomization).

    ``dependsOn`` the dependencies and ``previous``, a ``timeout`` of the longest
    ``activeDeadlineSeconds`` plus a margin, and the TrainJob health check.
    """
    deadline = max(
        int((j.get("spec") or {}).get("activeDeadlineSeconds") or DEFAULT_TIMEOUT_S)
        for j in members
    )
    depends = [{"name": f"{prefix}-dependencies"}]
    if previous != depends[0]["name"]:
        depends.append({"name": previous})
    return {
        "dependsOn": depends,
        "timeout": _duration(deadline + MARGIN_S),
        "healthCheckExprs": [
            {"apiVersion": TRAINER_API, "kind": "TrainJob", "current": CURRENT, "failed": FAILED}
        ],
    }


def write(out_dir: Path, dirs: dict[str, list[dict[str, Any]]]) -> None:
    """Write each directory (``resources.yaml`` + ``kustomization.yaml``) under ``out_dir``."""
    from krm_fn.io import yamlio

    for name, objs in dirs.items():
        d = out_dir / name
        d.mkdir(parents=True)
        if name == "flux":
            (d / "kustomizations.yaml").write_text(yamlio.dump_all(objs))
            continue
        (d / "resources.yaml").write_text(yamlio.dump_all(objs))
        (d / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            "resources: [resources.yaml]\n"
        )
