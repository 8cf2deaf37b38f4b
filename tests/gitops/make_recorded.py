"""Write tests/gitops/recorded/*.json: `kubectl get trainjobs -o json` as the cluster answers it
while the four waves of the golden case `repeat-count-and-max-concurrent-make-suspended-waves`
run. The objects are the golden's TrainJobs (as applied) plus what the API server and Trainer
v2.3 add: metadata (uid, resourceVersion, creationTimestamp, generation) and status with the
condition types of trainer.kubeflow.org_trainjobs.yaml (Suspended, Complete, Failed) and
jobsStatus (shared/reference/trainer-api.md §2). Run once: python tests/gitops/make_recorded.py
"""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
GOLDEN = HERE.parent / "golden" / "repeat-count-and-max-concurrent-make-suspended-waves"
T0 = "2026-12-03T09:00:00Z"


def cond(kind: str, status: str, reason: str, message: str, at: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": at,
        "observedGeneration": 1,
    }


def job_state(job: dict[str, Any], state: str, suspended: bool) -> dict[str, Any]:
    j = copy.deepcopy(job)
    meta = j["metadata"]
    for k in [k for k in meta.get("annotations", {}) if "config.kubernetes.io/" in k]:
        del meta["annotations"][k]
    meta.update(
        {
            "namespace": "default",
            "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, meta["name"])),
            "resourceVersion": "1",
            "generation": 1,
            "creationTimestamp": T0,
        }
    )
    j["spec"]["suspend"] = suspended
    j["spec"].setdefault("managedBy", "trainer.kubeflow.org/trainjob-controller")
    conds: list[dict[str, Any]] = []
    jobs = {"name": "node", "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 0}
    if suspended:
        conds.append(cond("Suspended", "True", "Suspended", "TrainJob is suspended", T0))
        jobs["suspended"] = 1
    elif state == "running":
        conds.append(cond("Suspended", "False", "Resumed", "TrainJob is resumed", T0))
        jobs.update(active=1, ready=1)
    elif state == "complete":
        conds.append(cond("Suspended", "False", "Resumed", "TrainJob is resumed", T0))
        conds.append(
            cond("Complete", "True", "JobSetCompleted", "jobset completed successfully", T0)
        )
        jobs["succeeded"] = 1
    elif state == "failed":
        conds.append(cond("Suspended", "False", "Resumed", "TrainJob is resumed", T0))
        conds.append(cond("Failed", "True", "JobSetFailed", "jobset failed: node-0 failed", T0))
        jobs["failed"] = 1
    j["status"] = {"conditions": conds, "jobsStatus": [jobs]}
    return j


def snapshot(jobs: list[dict[str, Any]], states: list[str]) -> dict[str, Any]:
    items = [
        job_state(j, s.rstrip("*"), s.endswith("*")) for j, s in zip(jobs, states, strict=True)
    ]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


# One sequence per scenario: each step is the state of the 4 TrainJobs (waves 0..3);
# "*" = still suspended.
SCENARIOS = {
    "all-waves-complete": [
        ["running", "x*", "x*", "x*"],
        ["complete", "x*", "x*", "x*"],
        ["complete", "running", "x*", "x*"],
        ["complete", "complete", "x*", "x*"],
        ["complete", "complete", "running", "x*"],
        ["complete", "complete", "complete", "x*"],
        ["complete", "complete", "complete", "running"],
        ["complete", "complete", "complete", "complete"],
    ],
    "wave-1-fails": [
        ["complete", "x*", "x*", "x*"],
        ["complete", "running", "x*", "x*"],
        ["complete", "failed", "x*", "x*"],
    ],
}


def main() -> None:
    docs = yaml.safe_load((GOLDEN / "expected.yaml").read_text())
    jobs = [i for i in docs["items"] if i.get("kind") == "TrainJob"]
    for name, steps in SCENARIOS.items():
        out = HERE / "recorded" / name
        out.mkdir(parents=True, exist_ok=True)
        for i, states in enumerate(steps):
            text = json.dumps(snapshot(jobs, states), indent=1, sort_keys=True) + "\n"
            (out / f"{i:02d}.json").write_text(text)


if __name__ == "__main__":
    main()
