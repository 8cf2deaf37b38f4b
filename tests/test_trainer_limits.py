"""Trainer's and the API server's limits met by construction, and env complete at MPI ranks.

* 128 items: 200 ``spec.env`` entries on the largest platform block (GCP A3 Mega, 81 launcher
  args before any user env) render a TrainJob the CRD admits, and the ranks still get every
  variable with ``-x``.
* Every variable on the launcher's ``node`` container reaches the ranks, including those an
  override adds through ``trainer.env``, with the guide's precedence.
* Annotations under 256 KiB and objects under 1.5 MiB for a 10,000-node single group; a clear
  error naming the limit and the number where it cannot be met.
"""

from __future__ import annotations

import copy
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.builders import group_nodes, mpi_forward, trainer_limits
from krm_fn.entry.run import run_krm
from krm_fn.io.output import is_generated
from tests.builders import IMAGE, node, rl, runtime_spec, wr
from tests.trainer_gate import findings, split, trainer_sim

HERE = Path(__file__).parent
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
A3_MEGA = HERE / "golden_catalog" / "gcp-h100-fastrak-env" / "mpi-2-nodes.yaml"


def _case(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(), Loader=_LOADER)


def _render(rl: dict[str, Any]) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]], str]:
    rl = copy.deepcopy(rl)
    rl["items"] = [i for i in rl["items"] if not is_generated(i)]
    out = run_krm(yaml.safe_dump(rl, sort_keys=False).encode())
    docs = yaml.load(out.stdout, Loader=_LOADER) if out.stdout else {"items": []}
    gen, inputs = split(docs.get("items") or [])
    return out.exit_code, gen, inputs, "\n".join(out.stderr)


def _wr(rl: dict[str, Any]) -> dict[str, Any]:
    return next(i for i in rl["items"] if i["kind"] == "WorkloadRun")


def _trainjobs(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == "TrainJob"]


def _rank_argv(tj: dict[str, Any]) -> list[str]:
    """The argv mpirun runs with, as the process sees it (kubelet $$ -> $, bash -c unwrapped)."""
    t = tj["spec"]["trainer"]
    argv = [a.replace("$$", "$") for a in [*(t.get("command") or []), *(t.get("args") or [])]]
    if argv[:2] == ["/bin/bash", "-c"]:
        argv = shlex.split(argv[2].splitlines()[-1])[1:]
    return argv


def _forwarded(argv: list[str]) -> dict[str, str]:
    out = {}
    for i, a in enumerate(argv[:-1]):
        if a == "-x":
            k, _, v = argv[i + 1].partition("=")
            out[k] = v
    return out


# --------------------------------------------------------------------------- 128 items


def test_200_env_entries_on_the_largest_platform_block_are_admitted_and_reach_the_ranks() -> None:
    rl = _case(A3_MEGA)
    base = _trainjobs(split(rl["items"])[0])[0]["spec"]["trainer"]
    assert len(base["args"]) == 81, "the A3 Mega block is the longest launcher command"
    env = [
        {"name": f"USER_VAR_{i:03d}", "value": f"value {i} with $HOME and 'quotes'"}
        for i in range(200)
    ]
    _wr(rl)["spec"]["env"] = env
    code, gen, inputs, err = _render(rl)
    assert code == 0, err
    (tj,) = _trainjobs(gen)
    t = tj["spec"]["trainer"]
    assert len(t["command"]) <= 128 and len(t["args"]) <= 128
    assert t["command"] == ["/bin/bash", "-c"] and len(t["args"]) == 1
    fwd = _forwarded(_rank_argv(tj))
    for e in env:
        assert fwd[e["name"]] == e["value"], e["name"]
    assert _rank_argv(tj)[-9:-8] == ["/usr/local/bin/all_reduce_perf_mpi"]
    assert findings(gen, inputs, label="a3-mega-200-env") == []


def test_a_command_line_that_fits_is_left_as_an_argv_list() -> None:
    code, gen, _, err = _render(_case(A3_MEGA))
    assert code == 0, err
    t = _trainjobs(gen)[0]["spec"]["trainer"]
    assert t["command"] == ["/usr/local/mpi/bin/mpirun"]
    assert len(t["args"]) == 81


def test_a_command_line_over_linux_single_argument_limit_is_an_error_naming_both_numbers() -> None:
    rl = _case(A3_MEGA)
    _wr(rl)["spec"]["env"] = [{"name": f"BIG_{i:03d}", "value": "x" * 2000} for i in range(80)]
    code, gen, _, err = _render(rl)
    assert code == 1 and gen == []
    assert "over the TrainJob limit of 128 each" in err
    assert f"over Linux's {trainer_limits.MAX_ARG_STRLEN}-byte limit for one argument" in err
    assert "spec.env" in err


def test_fit_wraps_only_over_128_and_keeps_the_argv_exact() -> None:
    argv = ["mpirun", *[x for i in range(70) for x in ("-x", f"V{i}=a b'c")], "bin"]
    tj = {"spec": {"trainer": {"command": argv[:1], "args": argv[1:]}}}
    assert trainer_limits.fit_trainer_argv(tj) is None
    t = tj["spec"]["trainer"]
    assert t["command"] == ["/bin/bash", "-c"]
    assert shlex.split(t["args"][0]) == ["exec", *argv]
    small = {"spec": {"trainer": {"command": ["mpirun"], "args": ["-x", "A=1", "bin"]}}}
    before = copy.deepcopy(small)
    assert trainer_limits.fit_trainer_argv(small) is None
    assert small == before


# --------------------------------------------------------------------------- env at the ranks

BASIC = HERE / "golden" / "basic-mpi-16-nodes-four-groups-with-pull-secret"


def _basic_rl(**spec: Any) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all((BASIC / "input.yaml").read_text()) if d]
    rl = docs[0]
    _wr(rl)["spec"].update(spec)
    return rl


def _override_env(env: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    # NVCRE's job-template language: the TrainJob is spec.workload.trainJob
    template = {"spec": {"workload": {"trainJob": {"trainer": {"env": env}}}}}
    return {"when": {}, "jobTemplate": template, **extra}


@pytest.fixture
def password(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in (yaml.safe_load((BASIC / "env.yaml").read_text()) or {}).items():
        monkeypatch.setenv(k, str(v))


@pytest.mark.usefixtures("password")
@pytest.mark.parametrize(
    ("spec", "expect"),
    [
        (
            {"overrides": [_override_env([{"name": "EXTRA", "value": "1"}])]},
            {"EXTRA": "1", "NCCL_DEBUG": "INFO"},
        ),
        (
            {"overrides": [_override_env([{"name": "NCCL_DEBUG_SUBSYS", "value": "ALL"}])]},
            {"NCCL_DEBUG_SUBSYS": "ALL"},
        ),
        (
            {
                "framework": {
                    "mpi": {
                        "mpirunPath": "/usr/local/mpi/bin/mpirun",
                        "binary": "/usr/local/bin/all_reduce_perf_mpi",
                        "mpiArgs": ["-x", "NCCL_DEBUG_SUBSYS=COLL"],
                    }
                },
                "overrides": [_override_env([{"name": "NCCL_DEBUG_SUBSYS", "value": "ALL"}])],
            },
            {"NCCL_DEBUG_SUBSYS": "COLL"},
        ),
        (
            {
                "overrides": [
                    _override_env(
                        [
                            {
                                "name": "POD_IP",
                                "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
                            }
                        ]
                    )
                ]
            },
            {"POD_IP": None},
        ),
    ],
    ids=[
        "override-trainer-env-is-forwarded",
        "override-beats-the-default-at-the-ranks-as-on-the-launcher",
        "an-mpiargs-x-still-beats-the-override",
        "value-from-is-forwarded-by-name",
    ],
)
def test_every_launcher_variable_reaches_the_ranks(
    spec: dict[str, Any], expect: dict[str, Any]
) -> None:
    code, gen, inputs, err = _render(_basic_rl(**spec))
    assert code == 0, err
    for tj in _trainjobs(gen):
        argv = _rank_argv(tj)
        pairs = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-x"]
        for name, value in expect.items():
            want = name if value is None else f"{name}={value}"
            assert want in pairs, (name, pairs)
    found = findings(gen, inputs, label="override-env")
    assert [f for f in found if "reaches the ranks via mpirun -x" in f[0]] == []
    # an override's trainer.env naming a runtime variable leaves it to trainer.env, so the
    # gate's "Trainer overwrites nothing the TrainingRuntime set" holds too
    assert found == []


def test_a_launcher_command_that_is_not_mpirun_is_a_warning_naming_the_variables() -> None:
    pod = {"containers": [{"name": "node", "env": [{"name": "A", "value": "1"}]}]}
    runtime = {"spec": runtime_spec("launcher", pod)}
    tj = {"spec": {"trainer": {"command": ["/opt/run.sh"], "args": []}}}
    assert mpi_forward.forward_launcher_env(runtime, tj, set(), "/usr/bin/mpirun", None, {}) == [
        "A"
    ]
    tj2 = {"spec": {"trainer": {"command": ["/usr/bin/mpirun"], "args": ["bin"]}}}
    assert mpi_forward.forward_launcher_env(runtime, tj2, set(), "/usr/bin/mpirun", None, {}) == []
    assert tj2["spec"]["trainer"] == {"command": ["/usr/bin/mpirun"], "args": ["-x", "A=1", "bin"]}


# --------------------------------------------------------------------------- sizes


def _fleet_rl(
    n: int, framework: dict[str, Any], name: str = "gke-a3mega-prod-pool-{i:05d}"
) -> dict[str, Any]:
    """``n`` Nodes as large fleets list them (no spec, no conditions) and a run over all."""
    run = wr("fleet", {"image": IMAGE, "framework": framework, "numNodes": n}, ns="gpu", path=None)
    fleet = [node(name.format(i=i), provider=None, ready=None) for i in range(n)]
    return rl([run, *fleet])


MPI = {
    "mpi": {
        "mpirunPath": "/usr/local/mpi/bin/mpirun",
        "binary": "/usr/local/bin/all_reduce_perf_mpi",
    }
}


def test_a_10000_node_single_group_is_admitted_with_its_node_list_compressed() -> None:
    code, gen, inputs, err = _render(_fleet_rl(10_000, MPI))
    assert code == 0, err
    (tj,) = _trainjobs(gen)
    ann = tj["metadata"]["annotations"]
    assert group_nodes.ANN_GROUP_NODES not in ann
    assert group_nodes.group_nodes(ann) == [
        n["metadata"]["name"] for n in inputs if n["kind"] == "Node"
    ]
    assert trainer_limits.annotation_bytes(tj) < trainer_limits.MAX_ANNOTATIONS_BYTES
    for o in gen:
        assert trainer_limits.size_problems(o) == []
    assert findings(gen, inputs, label="10000-nodes") == []
    # check_render pins against the plain annotation only; with the gzip form it checks the
    # pods against the target instead, so check the exact pinning here with its own helpers.
    sim = trainer_sim()
    cluster = sim.Cluster()
    cluster.apply_all(gen)
    (rep,) = cluster.reports
    group = set(group_nodes.group_nodes(ann) or [])
    nodes = [n for n in inputs if n["kind"] == "Node"]
    for job in rep.jobs:
        assert set(sim.feasible_nodes(job["spec"]["template"]["spec"], nodes)) == group, job["name"]


def test_small_groups_keep_the_plain_node_list() -> None:
    ann: dict[str, str] = {}
    group_nodes.annotate(ann, ["a", "b"])
    assert ann == {group_nodes.ANN_GROUP_NODES: "a,b"}
    big: dict[str, str] = {}
    names = [f"node-{i:06d}" for i in range(20_000)]
    group_nodes.annotate(big, names)
    assert list(big) == [group_nodes.ANN_GROUP_NODES_GZIP]
    assert group_nodes.group_nodes(big) == names
    again: dict[str, str] = {}
    group_nodes.annotate(again, names)
    assert again == big, "deterministic bytes (gzip mtime 0)"


def test_a_group_too_big_for_one_object_is_an_error_naming_the_limit_and_the_size() -> None:
    long = "gpu-node-in-a-datacenter-with-very-long-hostnames-{i:05d}.rack-0042.row-17.hall-3.example.internal"
    code, gen, _, err = _render(_fleet_rl(10_000, MPI, long))
    assert code == 1 and gen == []
    assert "TrainJob fleet-group-0" in err
    assert f"over the API server's storage limit of {trainer_limits.MAX_OBJECT_BYTES} bytes" in err
    assert "spec.numNodes" in err


def _sized_tj(name: str, nodes: list[str]) -> dict[str, Any]:
    ann: dict[str, str] = {}
    group_nodes.annotate(ann, nodes)
    term = {"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}
    return {
        "kind": "TrainJob",
        "metadata": {"name": name, "annotations": ann},
        "spec": {"trainer": {"numNodes": len(nodes)}, "runtimePatches": [{"a": term, "b": term}]},
    }


def test_only_trainjobs_that_could_be_over_the_limit_are_serialised() -> None:
    small = [_sized_tj(f"g{i}", [f"n{i}-a", f"n{i}-b"]) for i in range(3)]
    big = _sized_tj("big", [f"node-with-a-long-name-{i:06d}" for i in range(30_000)])
    dep = {"kind": "ConfigMap", "metadata": {"name": "c"}}
    measured = trainer_limits.worth_measuring([dep, *small, big])
    assert [o["metadata"]["name"] for o in measured] == ["c", "g0", "big"]
    assert trainer_limits.size_problems(big), "the bound let through an object over the limit"
    plain = _sized_tj("plain", [f"n{i:04d}" for i in range(3000)])
    assert trainer_limits.worth_measuring([small[0], plain]) == [small[0]]
    assert trainer_limits.size_problems(plain) == [], "skipped because provably under the limit"


def test_a_long_runs_after_list_names_the_wave_to_stay_under_the_annotation_limit() -> None:
    rl = _fleet_rl(1000, MPI)
    _wr(rl)["spec"].update(numNodes=1, orchestration={"testScale": "intra-node", "repeatCount": 2})
    code, gen, _, err = _render(rl)
    assert code == 0, err
    later = [j for j in _trainjobs(gen) if j["metadata"]["labels"]["nvcre.nvidia.com/wave"] == "1"]
    assert len(later) == 1000
    for j in later:
        assert j["metadata"]["annotations"]["nvcre.nvidia.com/runs-after"] == (
            "wave 0 (1000 TrainJobs labelled nvcre.nvidia.com/wave=0)"
        )


@pytest.mark.usefixtures("password")
def test_override_env_is_forwarded_inside_a_pre_command_with_multi_line_arguments() -> None:
    mpi = {
        "mpirunPath": "/usr/local/mpi/bin/mpirun",
        "binary": "/usr/local/bin/all_reduce_perf_mpi",
        "args": ["line1\nexec /usr/local/mpi/bin/mpirun fake", "'quoted'\n"],
    }
    spec = {
        "framework": {"mpi": mpi},
        "overrides": [
            _override_env([{"name": "EXTRA", "value": "a b"}], preCommand=["ulimit -l unlimited"])
        ],
    }
    code, gen, inputs, err = _render(_basic_rl(**spec))
    assert code == 0, err
    assert "cannot be forwarded" not in err
    for tj in _trainjobs(gen):
        script = tj["spec"]["trainer"]["args"][0]
        assert script.startswith("ulimit -l unlimited\nexec ")
        words = shlex.split(script.split("\n", 1)[1])
        assert words[-2:] == mpi["args"]
        assert words[words.index("-x") + 1] == "EXTRA=a b"
    # The gate reads a multi-line launcher script as bash does (an argument holding a newline
    # stays one word), so the whole render goes through it.
    assert findings(gen, inputs, label="multi-line-mpi-args") == []
