"""DRA objects of a run: ComputeDomains, ResourceClaimTemplates, and the pod claims using them.

What the platform catalog asks for (``computeDomain``, ``claimTemplates``, see
``krm_fn/data/platforms.yaml``) becomes objects here, in NVCRE's shapes
(``_lib/deps/gb200-compute-domain-and-dra-torch.yaml``, ``gb300-roce-torch.yaml``,
``nscale-gpu-rdma.yaml``):

Invariants:
    * Every object built here is a dependency: it is placed before the first TrainingRuntime, so
      the output lists it before every TrainJob.
    * A ResourceClaimTemplate ``<run>-<suffix>`` (``resource.k8s.io/v1``) is shared by all
      TrainJobs of the run: each pod gets its own ResourceClaim from it.
    * A ComputeDomain (``resource.nvidia.com/v1beta1``) spans the nodes of ONE TrainJob: a node
      belongs to at most one ComputeDomain and IMEX isolation is per domain
      (docs/platforms.md, "One ComputeDomain per TrainJob"). A run with one TrainJob gets
      NVCRE's names, ``<run>-compute-domain`` with channel template ``<run>-channel``, and keeps
      its shared runtime. A run with several TrainJobs gets ``<trainjob>-compute-domain`` and
      ``<trainjob>-channel`` per TrainJob, and, because a TrainJob's ``runtimePatches`` cannot
      carry ``resourceClaims``, its own copy of the runtime ``<trainjob>-runtime`` whose pod
      claims that TrainJob's channel (NVCRE copies every dependency per job likewise).
    * ``spec.numNodes`` is the TrainJob's node count (NVCRE's value); ``allocationMode: Single``.
    * Claims go on the worker (``node``) pod: ``resourceClaims`` in order compute-domain, then the
      templates in catalog order, and the same names in the ``node`` container's
      ``resources.claims``. The MPI launcher claims nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from krm_fn.api import naming
from krm_fn.builders.plan import RunPlan
from krm_fn.platforms.catalog import ClaimTemplate

CD_API = "resource.nvidia.com/v1beta1"
RCT_API = "resource.k8s.io/v1"
CD_CLAIM = "compute-domain"


def _claim_template(plan: RunPlan, claim: ClaimTemplate) -> dict[str, Any]:
    return {
        "apiVersion": RCT_API,
        "kind": "ResourceClaimTemplate",
        "metadata": plan.meta(naming.object_name(plan.run.name, claim.suffix)),
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": claim.request,
                            "exactly": {
                                "deviceClassName": claim.device_class,
                                "count": claim.count,
                            },
                        }
                    ]
                }
            }
        },
    }


def _compute_domain(plan: RunPlan, prefix: str, num_nodes: int) -> dict[str, Any]:
    return {
        "apiVersion": CD_API,
        "kind": "ComputeDomain",
        "metadata": plan.meta(naming.object_name(prefix, "compute-domain")),
        "spec": {
            "numNodes": num_nodes,
            "channel": {
                "resourceClaimTemplate": {"name": naming.object_name(prefix, "channel")},
                "allocationMode": "Single",
            },
        },
    }


def _claim_pod(runtime: dict[str, Any], claims: Sequence[tuple[str, str]]) -> None:
    """Add ``(claim, template)`` pairs to the worker pod and its ``node`` container."""
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        if job["name"] != "node":
            continue
        pod = job["template"]["spec"]["template"]["spec"]
        pod_claims = [c for c in pod.get("resourceClaims") or [] if c["name"] not in dict(claims)]
        pod_claims += [{"name": n, "resourceClaimTemplateName": t} for n, t in claims]
        pod["resourceClaims"] = pod_claims
        for container in pod["containers"]:
            if container["name"] != "node":
                continue
            res = container.setdefault("resources", {})
            names = [c["name"] for c in res.get("claims") or []]
            res["claims"] = [
                *(res.get("claims") or []),
                *({"name": n} for n, _ in claims if n not in names),
            ]


def apply_dra(
    objs: list[dict[str, Any]],
    plan: RunPlan,
    compute_domain: bool,
    claim_templates: Sequence[ClaimTemplate],
) -> list[dict[str, Any]]:
    """Return ``objs`` with the run's DRA objects added and its pods claiming them."""
    if not compute_domain and not claim_templates:
        return objs
    if not (runtimes := [o for o in objs if o["kind"] == "TrainingRuntime"]):
        return objs
    (runtime,) = runtimes
    shared = [(c.claim, naming.object_name(plan.run.name, c.suffix)) for c in claim_templates]
    deps: list[dict[str, Any]] = [_claim_template(plan, c) for c in claim_templates]
    jobs = [o for o in objs if o["kind"] == "TrainJob"]
    runtimes_out: list[dict[str, Any]] = []
    if compute_domain and len(jobs) > 1:
        for job in jobs:
            prefix = job["metadata"]["name"]
            deps.append(_compute_domain(plan, prefix, job["spec"]["trainer"]["numNodes"]))
            copy_ = copy.deepcopy(runtime)
            copy_["metadata"]["name"] = naming.object_name(prefix, "runtime")
            _claim_pod(copy_, [(CD_CLAIM, naming.object_name(prefix, "channel")), *shared])
            job["spec"]["runtimeRef"]["name"] = copy_["metadata"]["name"]
            runtimes_out.append(copy_)
    else:
        if compute_domain:
            nodes = jobs[0]["spec"]["trainer"]["numNodes"] if jobs else plan.num_nodes
            deps.append(_compute_domain(plan, plan.run.name, nodes))
            _claim_pod(runtime, [(CD_CLAIM, naming.object_name(plan.run.name, "channel")), *shared])
        else:
            _claim_pod(runtime, shared)
        runtimes_out.append(runtime)
    at = objs.index(runtime)
    return [*objs[:at], *deps, *runtimes_out, *objs[at + 1 :]]
