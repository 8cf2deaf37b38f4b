"""Determinism: the same input gives the same bytes whatever the hash seed, Node order or company."""

from __future__ import annotations

import random
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from krm_fn.entry.run import run_krm
from tests.e2e.helpers import copy_example, fn_env, need, snapshot
from tests.robustness.helpers import (
    REGISTRY,
    dump,
    generated,
    load,
    mpi_run,
    node,
    nodes,
    rl,
    run_all,
    run_fn,
    wr,
)

PASSWORD = "determinism-password"


def _mixed_items() -> list[dict[str, Any]]:
    """Several runs touching every order-sensitive stage: maps, sets, overflow, waves, gang."""
    clique = [
        node(
            f"gb-{i:02d}",
            product="NVIDIA-GB200",
            provider="",
            gpus=4,
            labels={"nvidia.com/gpu.clique": f"clique-{i % 3}", "pool": "gb"},
        )
        for i in range(11)
    ]
    return [
        mpi_run(
            "overflow-run",
            numNodes=4,
            target={"nodeSelector": {"pool": "h"}},
            env=[{"name": "B", "value": "2"}, {"name": "A", "value": "1"}],
            workloadMetadata={"labels": {"z": "1", "a": "2", "m.example.com/k": "3"}},
            orchestration={"repeatCount": 2, "maxConcurrent": 3},
            config={"inline": {"z.sh": "echo z", "a.sh": "echo a"}},
        ),
        wr(
            "torch-run",
            {
                "image": "img",
                "framework": {"torch": {"script": "/t.py"}},
                "numNodes": 3,
                "target": {"nodeSelector": {"nvidia.com/gpu.present": "true", "pool": "h"}},
            },
            ns="team-b",
        ),
        mpi_run(
            "kai-run",
            numNodes=2,
            gangScheduler={"schedulerName": "kai-scheduler", "queue": "q"},
            target={"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gb"]}]},
            orchestration={"topology": {"topologyKey": "nvidia.com/gpu.clique"}},
        ),
        *nodes(10, labels={"pool": "h"}),
        node("gpu-node-11", cordoned=True, labels={"pool": "h"}),
        node("gpu-node-12", ready=False, labels={"pool": "h"}),
        *clique,
    ]


MIXED = dump(rl(_mixed_items(), REGISTRY))


def test_mixed_input_renders() -> None:
    proc = run_fn(MIXED, env={"NGC_API_KEY": PASSWORD})
    assert proc.returncode == 0, proc.stderr
    kinds = [o["kind"] for o in generated(proc.stdout)]
    assert kinds.count("TrainJob") > 10 and "Secret" in kinds and "ConfigMap" in kinds


@pytest.fixture(scope="module")
def seeded_runs() -> dict[str, Any]:
    seeds = ["0", "1", "42", "4294967295", "random"]
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            seed: pool.submit(run_fn, MIXED, env={"PYTHONHASHSEED": seed, "NGC_API_KEY": PASSWORD})
            for seed in seeds
        }
        return {seed: f.result() for seed, f in futures.items()}


def test_output_is_byte_identical_across_hash_seeds(seeded_runs: dict[str, Any]) -> None:
    first = seeded_runs["0"]
    assert first.returncode == 0, first.stderr
    for seed, proc in seeded_runs.items():
        assert proc.returncode == 0, (seed, proc.stderr)
        assert proc.stdout == first.stdout, f"PYTHONHASHSEED={seed} changed stdout"
        assert proc.stderr == first.stderr, f"PYTHONHASHSEED={seed} changed stderr"


def _key(out: Any) -> tuple[list[dict[str, Any]], list[Any], list[str]]:
    answer = load(out.stdout)
    return generated(out.stdout), answer.get("results", []), out.stderr


@pytest.mark.parametrize("seed", range(6), ids=lambda s: f"shuffle-{s}")
def test_node_order_changes_nothing_generated(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGC_API_KEY", PASSWORD)
    items = _mixed_items()
    baseline = _key(run_krm(dump(rl(items, REGISTRY))))
    runs = [i for i in items if i["kind"] == "WorkloadRun"]
    node_items = [i for i in items if i["kind"] == "Node"]
    rng = random.Random(seed)
    rng.shuffle(node_items)
    shuffled = _key(run_krm(dump(rl([*runs, *node_items], REGISTRY))))
    assert shuffled == baseline
    everything = [*runs, *node_items]
    rng.shuffle(everything)
    assert _key(run_krm(dump(rl(everything, REGISTRY))))[0] == baseline[0]


def test_node_order_inside_a_node_list_changes_nothing() -> None:
    inventory = nodes(9)
    as_list = lambda ns: {"apiVersion": "v1", "kind": "List", "items": ns}  # noqa: E731
    a = run_krm(dump(rl([mpi_run(numNodes=4), as_list(inventory)])))
    b = run_krm(dump(rl([mpi_run(numNodes=4), as_list(list(reversed(inventory)))])))
    assert a.exit_code == b.exit_code == 0
    assert generated(a.stdout) == generated(b.stdout)


def test_parallel_runs_on_the_same_input_do_not_disturb_each_other(tmp_path: Path) -> None:
    sequential = run_fn(MIXED, env={"NGC_API_KEY": PASSWORD})
    parallel = run_all({str(i): MIXED for i in range(6)}, env={"NGC_API_KEY": PASSWORD})
    for key, proc in parallel.items():
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == sequential.stdout, f"run {key} differs"
        assert proc.stderr == sequential.stderr


@pytest.mark.e2e
def test_concurrent_kpt_renders_of_two_copies_give_identical_packages(tmp_path: Path) -> None:
    kpt = need("kpt")
    reference = copy_example("kpt-basic", tmp_path / "ref")
    pkgs = [copy_example("kpt-basic", tmp_path / f"p{i}") for i in range(2)]
    env = fn_env()

    def render(pkg: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [kpt, "fn", "render", "--allow-exec", str(pkg)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    ref = render(reference)
    assert ref.returncode == 0, ref.stderr
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = list(pool.map(render, pkgs))
    for pkg, proc in zip(pkgs, procs, strict=True):
        assert proc.returncode == 0, proc.stderr
        assert snapshot(pkg) == snapshot(reference)
