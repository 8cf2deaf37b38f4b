"""The value of every variable that reaches the ranks is NVCRE's merge of its override table.

NVCRE's WorkloadRun override table (O1 @ f81ff7af, shared/reference/nvcre-workloadrun.md
section 2.9) applies every matching entry in table order, later entries winning, on top of
its base NCCL environment (section 2.6). For every platform x GPU x framework this renders
an offline preview and compares each variable the ranks get (torch: the worker container's
env with ``trainer.env`` upserted; MPI: the ``-x`` pairs of the mpirun command line, as the
ranks start under sshd) with that merge, the entries taken in O1's order by their cited
``(Ln)`` index rather than in the table file's order.

Issue 26: on GCP GB200 the base ``NCCL_NET_GDR_LEVEL=PHB`` reached the MPI ranks although
O1 L13 sets 5 on the worker container.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
import yaml

from krm_fn.builders.nccl_env import base_nccl_env
from krm_fn.entry.run import run_krm
from krm_fn.io.output import is_generated
from krm_fn.platforms.catalog import CatalogEntry, bundled
from tests.builders import IMAGE, rl, wr

from .test_platform_catalog import _logical_index, _nvcre_applies

TABLE = bundled()
MPIRUN, NCCL_TEST = "/usr/local/mpi/bin/mpirun", "/usr/local/bin/all_reduce_perf_mpi"
PAIRS = [(p, a) for p in TABLE.platform_names for a in TABLE.gpu_names]


def _template(value: str, gpus: int, nics: int, mnnvl: bool) -> str:
    return (
        value.replace("{gpusPerNode}", str(gpus))
        .replace("{nicsPerNode}", str(nics))
        .replace("{enableMNNVL}", "1" if mnnvl else "0")
    )


def nvcre_merge(platform: str, arch: str, framework: str) -> dict[str, str]:
    """Base env, then every variable of every matching O1 entry in O1 order (later wins)."""
    gpus, nics, mnnvl = TABLE.gpu_defaults(arch, platform)
    out = {e.name: e.value for e in base_nccl_env(mnnvl)}
    by_index = {_logical_index(e.source): e for e in TABLE.entries}
    for index in _nvcre_applies(platform, arch, framework):
        entry: CatalogEntry = by_index[index]
        for items in (entry.env, entry.trainer_env, entry.forward_env):
            for var in items or ():
                if var.when_gpus_per_node is None or gpus in var.when_gpus_per_node:
                    out[var.name] = _template(var.value, gpus, nics, mnnvl)
    return out


def _render(platform: str, arch: str, framework: str) -> list[Mapping[str, Any]]:
    fw: dict[str, Any] = (
        {"mpi": {"mpirunPath": MPIRUN, "binary": NCCL_TEST, "args": ["-b", "8"]}}
        if framework == "mpi"
        else {"torch": {"script": "/workspace/train.py"}}
    )
    run = wr("merge", {"image": IMAGE, "framework": fw, "numNodes": 2}, path=None)
    fc = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "fn-config"},
        "data": {"platform": platform, "gpuArch": arch},
    }
    out = run_krm(yaml.safe_dump(rl([run], fc)).encode())
    assert out.exit_code == 0, out.stderr
    return [i for i in yaml.safe_load(out.stdout)["items"] if is_generated(i)]


def _x_pairs(argv: Iterable[str]) -> dict[str, str]:
    args = list(argv)
    pairs = [args[i + 1] for i in range(len(args) - 1) if args[i] == "-x"]
    return dict(p.split("=", 1) for p in pairs if "=" in p)  # mpirun: the last one wins


def rank_env(objs: list[Mapping[str, Any]], framework: str) -> dict[str, str]:
    """What the ranks get: the -x pairs (MPI), or the worker env with trainer.env (torch)."""
    (job,) = [o for o in objs if o["kind"] == "TrainJob"]
    trainer = job["spec"]["trainer"]
    if framework == "mpi":
        args = [a.replace("$$", "$") for a in [*trainer.get("command", []), *trainer["args"]]]
        if args[:2] == ["/bin/bash", "-c"]:  # a preCommand wraps the argv
            args = shlex.split(args[2].rsplit("\nexec ", 1)[1])
        return _x_pairs(args)
    runtime = next(o for o in objs if o["kind"] == "TrainingRuntime")
    (node,) = [j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]]
    (c,) = [c for c in node["template"]["spec"]["template"]["spec"]["containers"]]
    env = {e["name"]: e["value"].replace("$$", "$") for e in c.get("env", [])}
    env.update({e["name"]: e["value"] for e in trainer.get("env", [])})  # Kubeflow upserts
    return env


@pytest.mark.parametrize("framework", ["mpi", "torch"])
@pytest.mark.parametrize(("platform", "arch"), PAIRS, ids=[f"{p}-{a}" for p, a in PAIRS])
def test_the_ranks_get_the_value_of_the_last_matching_nvcre_entry(
    platform: str, arch: str, framework: str
) -> None:
    expected = nvcre_merge(platform, arch, framework)
    got = rank_env(_render(platform, arch, framework), framework)
    wrong = {n: (got.get(n), v) for n, v in expected.items() if got.get(n) != v}
    assert not wrong, f"(rendered, NVCRE's merge) per variable: {wrong}"


def test_gcp_gb200_mpi_ranks_get_nccl_net_gdr_level_5_from_o1_l13_not_the_base_phb() -> None:
    objs = _render("gcp", "gb200", "mpi")
    assert rank_env(objs, "mpi")["NCCL_NET_GDR_LEVEL"] == "5"
    (job,) = [o for o in objs if o["kind"] == "TrainJob"]
    assert "NCCL_NET_GDR_LEVEL=PHB" not in job["spec"]["trainer"]["args"]


def test_a_later_site_entry_wins_whatever_setting_carries_the_name(tmp_path: Any) -> None:
    """An earlier forwardEnv and a later container env of one name: the later value everywhere."""
    site = tmp_path / "site.yaml"
    site.write_text(
        "version: 1\n"
        "entries:\n"
        "  - {name: first, source: test, when: {platform: onprem}, forwardEnv: [{name: X, value: a}]}\n"
        "  - {name: second, source: test, when: {platform: onprem}, env: [{name: X, value: b}]}\n"
    )
    fw = {"mpi": {"mpirunPath": MPIRUN, "binary": NCCL_TEST}}
    run = wr("later", {"image": IMAGE, "framework": fw, "numNodes": 2}, path=None)
    fc = {
        "apiVersion": "fn.nvcre.nvidia.com/v1alpha1",
        "kind": "WorkloadRunRender",
        "metadata": {"name": "fn"},
        "spec": {"platform": "onprem", "gpuArch": "h100", "platformCatalog": [str(site)]},
    }
    out = run_krm(yaml.safe_dump(rl([run], fc)).encode())
    assert out.exit_code == 0, out.stderr
    objs = [i for i in yaml.safe_load(out.stdout)["items"] if is_generated(i)]
    assert rank_env(objs, "mpi")["X"] == "b"
    (job,) = [o for o in objs if o["kind"] == "TrainJob"]
    assert "X=a" not in job["spec"]["trainer"]["args"]
