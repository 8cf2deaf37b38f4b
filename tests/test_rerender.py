"""Re-rendering after the fleet changes converges under kubectl, kpt, Argo CD and Flux.

One node of the 16-node basic example is cordoned and the run rendered again. The groups that
do not contain (or follow) that node render byte-identical, so nothing touches their running
jobs; the changed group's TrainJob carries the engines' recreate annotations, so re-applying
it over the old one does not fail on Trainer's immutable fields (``update_problems``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.builders.apply_order import ANN_ARGO_SYNC_OPTIONS, ANN_FLUX_FORCE, order_run
from krm_fn.entry.run import run_krm
from tests.trainer_gate import findings, split, trainer_sim

CASE = Path(__file__).parent / "golden" / "basic-mpi-16-nodes-four-groups-with-pull-secret"


@pytest.fixture(autouse=True)
def _password(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in (yaml.safe_load((CASE / "env.yaml").read_text()) or {}).items():
        monkeypatch.setenv(k, str(v))


def _render(rl: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    out = run_krm(yaml.safe_dump(rl, sort_keys=False).encode())
    assert out.exit_code == 0, out.stderr
    return split(yaml.safe_load(out.stdout)["items"])


def _cordon(rl: dict[str, Any], node: str) -> dict[str, Any]:
    rl = copy.deepcopy(rl)
    for it in rl["items"]:
        if it.get("kind") == "Node" and it["metadata"]["name"] == node:
            it.setdefault("spec", {})["unschedulable"] = True
    return rl


def _jobs(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == "TrainJob"}


G = "my-workload-group-"


@pytest.mark.parametrize(
    ("node", "unchanged", "changed"),
    [
        ("gpu-node-14", {G + "0", G + "1", G + "2"}, set()),
        ("gpu-node-10", {G + "0", G + "1"}, {G + "2"}),
        ("gpu-node-02", set(), {G + "0", G + "1", G + "2"}),
    ],
    ids=[
        "cordon-in-the-last-group-replaces-it-by-an-overflow-group",
        "cordon-in-a-middle-group-changes-it-and-the-ones-after",
        "cordon-in-the-first-group-shifts-every-group",
    ],
)
def test_rerender_after_a_cordon_converges(
    node: str, unchanged: set[str], changed: set[str]
) -> None:
    rl = yaml.safe_load((CASE / "input.yaml").read_text())
    old, _ = _render(rl)
    new_rl = _cordon(rl, node)
    new, inputs = _render(new_rl)
    old_jobs, new_jobs = _jobs(old), _jobs(new)
    same = {n for n in new_jobs if old_jobs.get(n) == new_jobs[n]}
    assert same == unchanged
    assert {n for n in new_jobs if n in old_jobs and n not in same} == changed
    # a group that disappears (group-3) is pruned; a new one (group-3-overflow) is created
    assert G + "3" not in new_jobs and G + "3-overflow" in new_jobs
    for n in changed:
        nodes = new_jobs[n]["metadata"]["annotations"]["nvcre.nvidia.com/group-nodes"]
        assert node not in nodes.split(",")
    sim = trainer_sim()
    assert sim.update_problems(old, new) == []
    assert findings(new, inputs, label=f"after cordoning {node}") == []

    # without the recreate annotations, re-applying the changed TrainJobs would fail forever
    bare = copy.deepcopy(new)
    for o in bare:
        o["metadata"]["annotations"].pop(ANN_FLUX_FORCE, None)
        o["metadata"]["annotations"].pop(ANN_ARGO_SYNC_OPTIONS, None)
    problems = sim.update_problems(old, bare)
    assert {p.where for p in problems} == {f"TrainJob/{n}" for n in changed}
    assert all(p.severity == "reject" for p in problems)


def test_recreate_annotations_on_every_trainjob_only() -> None:
    objs = order_run(
        [
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}},
            {
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainJob",
                "metadata": {
                    "name": "j",
                    "annotations": {ANN_ARGO_SYNC_OPTIONS: "Validate=false,Replace=false"},
                },
            },
        ]
    )
    sim = trainer_sim()
    assert not sim.recreated_on_conflict(objs[0])
    assert sim.recreated_on_conflict(objs[1])
    assert objs[1]["metadata"]["annotations"][ANN_ARGO_SYNC_OPTIONS] == (
        "Validate=false,Force=true,Replace=true"
    )
    assert objs[1]["metadata"]["annotations"][ANN_FLUX_FORCE] == "enabled"
