"""Hostile strings reach the process exactly as written: proven by running the rendered commands.

Every rendered launcher command, worker script and init script is EXECUTED in a local
:class:`~tests.robustness.sandbox.Sandbox` (stub ``mpirun``/``torchrun``/``sshd``/``ssh``/
``sleep``/``timeout`` first on PATH, recording their argv as JSON), after the kubelet's
``$(VAR)`` expansion, and what the stubs received is compared with the WorkloadRun.

Substitutions made in the pod scripts before running them (:meth:`Sandbox.redirect`, nothing
else is changed): ``/usr/sbin/sshd``, ``/var/run/sshd``, ``/root/.ssh``, ``/tmp/mpi-ssh-raw``,
``/etc/mpi/hostfile``, ``/tmp/sshd-wait.err``, ``/proc/net/tcp`` and ``/proc/net/tcp6`` become
the same paths under the sandbox's ``root/``. Commands given as argv lists are run as they are.

The hostile strings include ``$$`` and ``$(NAME)`` of variables the container defines, which the
kubelet would expand if the render did not escape them.
"""

from __future__ import annotations

import copy
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_fn.builders import mpi_runtime
from krm_fn.entry.run import run_krm
from tests.robustness.helpers import IMAGE, by_kind, dump, generated, nodes, rl, wr
from tests.robustness.sandbox import (
    Sandbox,
    container_argv,
    container_env,
    mode,
    write_ssh_secret,
)

HOSTILE = [
    "two words",
    "it's",
    'say "hi"',
    "$(date)",
    "$(touch /tmp/workloadrun-fn-pwned)",
    "`id`",
    "line1\nline2",
    "ends with newline\n",
    "\nstarts with newline",
    "a;b",
    "x; rm -rf ~",
    "&& echo pwned",
    "| cat /etc/passwd",
    "> /tmp/out",
    "*",
    "~",
    "",
    " ",
    "  leading and trailing  ",
    "tab\there",
    "cr\rhere",
    "back\\slash",
    "${HOME}",
    "$HOME",
    "$",
    "$(",
    "unicode ✓ ü",
    "--flag=$(echo x)",
    "'",
    '"',
    "#not a comment",
    "!bang",
    "-x",
    "--hostfile",
    # the kubelet expands $(VAR) of a defined variable and turns $$ into $
    "$$",
    "cost: $$5",
    "$(NCCL_DEBUG)",
    "$(HOSTILE_0) and $$(HOSTILE_0)",
]
MPI_ARGS = ["--mca", "btl_tcp_if_include", "eth0; echo pwned", "-x", "MY_VAR=a b $(c) `d`"]
ENV = [{"name": f"HOSTILE_{i}", "value": v} for i, v in enumerate(HOSTILE)]
PRE_COMMAND = [
    "PRE_MARK='set by preCommand; $(not run)'",
    "export PRE_MARK",
    'printf "%s\\n" "$PRE_MARK" "two words" > "$STUB_LOG/pre.txt"',
]


def _render(spec: dict[str, Any], name: str = "shell", count: int = 2) -> list[dict[str, Any]]:
    out = run_krm(dump(rl([wr(name, spec), *nodes(count, provider="")])))
    assert out.exit_code == 0, out.stderr
    return generated(out.stdout)


def _mpi_spec(**extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "image": IMAGE,
        "framework": {
            "mpi": {
                "mpirunPath": "mpirun",
                "binary": "/opt/app; echo not-a-command",
                "args": HOSTILE,
                "mpiArgs": MPI_ARGS,
            }
        },
        "numNodes": 2,
        "env": copy.deepcopy(ENV),
    }
    spec.update(extra)
    return spec


def _with_pre_command(spec: dict[str, Any]) -> dict[str, Any]:
    return {**spec, "overrides": [{"when": {}, "preCommand": PRE_COMMAND}]}


def _replicated(runtime: dict[str, Any], job: str) -> dict[str, Any]:
    (rj,) = [j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == job]
    return rj["template"]["spec"]["template"]["spec"]


def _node_container(pod: dict[str, Any]) -> dict[str, Any]:
    (c,) = [c for c in pod["containers"] if c["name"] == "node"]
    return c


def _trainer_container(objs: list[dict[str, Any]], job: str) -> tuple[dict[str, Any], dict]:
    """The container the TrainJob's trainer command lands in, and that container's env."""
    trainjob = by_kind(objs, "TrainJob")[0]
    (runtime,) = by_kind(objs, "TrainingRuntime")
    env = container_env(_node_container(_replicated(runtime, job)).get("env", []))
    trainer = trainjob["spec"]["trainer"]
    return {"command": trainer["command"], "args": trainer.get("args", [])}, env


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path / "sandbox")


def _run_trainer(sandbox: Sandbox, objs: list[dict[str, Any]], job: str) -> list[str]:
    container, env = _trainer_container(objs, job)
    argv = container_argv(container, env)
    proc = sandbox.run(argv, env=env, record=[e["name"] for e in ENV] + ["PRE_MARK"])
    assert proc.returncode == 0, proc.stderr
    return argv


def _assert_contiguous(needle: list[str], haystack: list[str]) -> None:
    n = len(needle)
    assert any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1)), (
        needle,
        haystack,
    )


def test_mpi_launcher_argv_reaches_mpirun_exactly(sandbox: Sandbox) -> None:
    objs = _render(_mpi_spec())
    argv = _run_trainer(sandbox, objs, "launcher")
    (call,) = sandbox.recorded("mpirun")
    # over Trainer's 128 args the command is `bash -c "exec <argv quoted>"` (README: 128 items)
    assert call["argv"] == _exec_argv(argv)[1:]
    assert call["argv"][-len(HOSTILE) - 1 :] == ["/opt/app; echo not-a-command", *HOSTILE]
    _assert_contiguous(MPI_ARGS, call["argv"])
    for e in ENV:
        _assert_contiguous(["-x", f"{e['name']}={e['value']}"], call["argv"])
        assert call["env"][e["name"]] == e["value"]
    assert not Path("/tmp/workloadrun-fn-pwned").exists()


def test_mpi_pre_command_bash_form_reaches_mpirun_exactly(sandbox: Sandbox, tmp_path: Path) -> None:
    plain = Sandbox(tmp_path / "plain")
    _run_trainer(plain, _render(_mpi_spec()), "launcher")
    objs = _render(_with_pre_command(_mpi_spec()))
    trainer = by_kind(objs, "TrainJob")[0]["spec"]["trainer"]
    assert trainer["command"] == ["/bin/bash", "-c"]
    assert len(trainer["args"]) == 1
    _run_trainer(sandbox, objs, "launcher")
    (call,) = sandbox.recorded("mpirun")
    assert call["argv"] == plain.recorded("mpirun")[0]["argv"]
    assert call["argv"][-len(HOSTILE) :] == HOSTILE
    # the preCommand lines ran as written, in the shell that then exec'd mpirun
    assert (sandbox.log / "pre.txt").read_text() == "set by preCommand; $(not run)\ntwo words\n"
    assert call["env"]["PRE_MARK"] == "set by preCommand; $(not run)"
    assert call["env"]["HOSTILE_6"] == "line1\nline2"


def _torch_spec(**extra: Any) -> dict[str, Any]:
    return {
        "image": IMAGE,
        "framework": {"torch": {"script": "/workspace/train it.py", "args": HOSTILE}},
        "numNodes": 2,
        "env": copy.deepcopy(ENV),
        **extra,
    }


@pytest.mark.parametrize("pre", [False, True], ids=["torch-argv", "torch-pre-command-bash-form"])
def test_torchrun_receives_script_and_args_exactly(sandbox: Sandbox, pre: bool) -> None:
    spec = _with_pre_command(_torch_spec()) if pre else _torch_spec()
    objs = _render(spec)
    _run_trainer(sandbox, objs, "node")
    (call,) = sandbox.recorded("torchrun")
    assert call["argv"] == ["/workspace/train it.py", *HOSTILE]
    for e in ENV:
        assert call["env"][e["name"]] == e["value"]
    if pre:
        assert call["env"]["PRE_MARK"] == "set by preCommand; $(not run)"


def test_exec_framework_command_and_args_are_verbatim(sandbox: Sandbox) -> None:
    spec = {
        "image": IMAGE,
        "framework": {"exec": {"command": ["user-tool", "a b", "$(date)"], "args": HOSTILE}},
        "numNodes": 1,
    }
    objs = _render(spec, count=1)
    _run_trainer(sandbox, objs, "node")
    (call,) = sandbox.recorded("user-tool")
    assert call["argv"] == ["a b", "$(date)", *HOSTILE]


def test_env_values_reach_every_mpi_container_exactly() -> None:
    objs = _render(_mpi_spec())
    (runtime,) = by_kind(objs, "TrainingRuntime")
    for job in ("node", "launcher"):
        env = container_env(_node_container(_replicated(runtime, job))["env"])
        for e in ENV:
            assert env[e["name"]] == e["value"], (job, e["name"])


def test_hostile_strings_survive_a_yaml_round_trip_and_kubelet_expansion() -> None:
    objs = _render(_mpi_spec())
    container, env = _trainer_container(objs, "launcher")
    # what kpt writes and the API server stores is parsed again before the kubelet sees it
    again = yaml.safe_load(yaml.safe_dump(container))
    assert _exec_argv(container_argv(again, env))[-len(HOSTILE) :] == HOSTILE


def _exec_argv(argv: list[str]) -> list[str]:
    """The argv bash execs for `bash -c "exec <argv quoted>"` (over 128 items), else argv."""
    if argv[:2] == ["/bin/bash", "-c"] and len(argv) == 3:
        words = shlex.split(argv[2])
        assert words[0] == "exec"
        return words[1:]
    return argv


# --- worker sshd script -------------------------------------------------------------------------


def _worker_script(objs: list[dict[str, Any]]) -> list[str]:
    (runtime,) = by_kind(objs, "TrainingRuntime")
    c = _node_container(_replicated(runtime, "node"))
    assert c["command"] == ["sh", "-c"]
    return [*c["command"], *c["args"]]


def test_worker_script_takes_nothing_from_the_workloadrun() -> None:
    assert _worker_script(_render(_mpi_spec())) == ["sh", "-c", mpi_runtime.WORKER_SCRIPT]


def test_worker_script_installs_keys_with_sshd_modes_and_runs_sshd(sandbox: Sandbox) -> None:
    write_ssh_secret(sandbox)
    sandbox.path_of("/usr/sbin/sshd").write_text('#!/bin/sh\necho "$*" >> "$STUB_LOG/sshd.calls"\n')
    sandbox.path_of("/usr/sbin/sshd").chmod(0o755)
    sh, flag, script = _worker_script(_render(_mpi_spec()))
    proc = sandbox.run([sh, flag, sandbox.redirect(script)])
    assert proc.returncode == 0, proc.stderr
    assert sandbox.calls("sshd") == ["-De"]
    assert sandbox.calls("apt-get") == []
    ssh = sandbox.path_of("/root/.ssh")
    assert mode(ssh) == 0o700
    assert mode(ssh / "id_rsa") == 0o600
    assert mode(ssh / "id_rsa.pub") == 0o644
    assert mode(ssh / "authorized_keys") == 0o644
    assert (ssh / "id_rsa").read_text() == "fake id_rsa\n"
    assert mode(sandbox.path_of("/var/run/sshd")) == 0o755


def test_worker_script_installs_openssh_when_sshd_is_missing(sandbox: Sandbox) -> None:
    write_ssh_secret(sandbox)
    sh, flag, script = _worker_script(_render(_mpi_spec()))
    proc = sandbox.run([sh, flag, sandbox.redirect(script)])
    assert proc.returncode == 0, proc.stderr
    assert sandbox.calls("apt-get") == [
        "update",
        "install -y --no-install-recommends openssh-server",
    ]
    assert sandbox.calls("sshd") == ["-De"]


def test_worker_script_stops_when_the_ssh_secret_is_missing(sandbox: Sandbox) -> None:
    sandbox.path_of("/usr/sbin/sshd").write_text("#!/bin/sh\nexit 0\n")
    sandbox.path_of("/usr/sbin/sshd").chmod(0o755)
    sh, flag, script = _worker_script(_render(_mpi_spec()))
    proc = sandbox.run([sh, flag, sandbox.redirect(script)])
    assert proc.returncode != 0
    assert sandbox.calls("sshd") == []


# --- readiness probe ------------------------------------------------------------------------------


def _probe(objs: list[dict[str, Any]]) -> list[str]:
    (runtime,) = by_kind(objs, "TrainingRuntime")
    probe = _node_container(_replicated(runtime, "node"))["readinessProbe"]
    return list(probe["exec"]["command"])


def test_readiness_probe_asks_the_local_sshd_through_timeout(sandbox: Sandbox) -> None:
    sh, flag, script = _probe(_render(_mpi_spec()))
    sandbox.plan_answer("127.0.0.1", 1)
    proc = sandbox.run([sh, flag, sandbox.redirect(script)])
    assert proc.returncode == 0, proc.stderr
    assert sandbox.calls("timeout") == ["8"]
    assert sandbox.calls("ssh") == [
        "-n -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
        "-o ConnectTimeout=5 127.0.0.1 true"
    ]


def test_readiness_probe_fails_while_sshd_does_not_answer(sandbox: Sandbox) -> None:
    sh, flag, script = _probe(_render(_mpi_spec()))
    proc = sandbox.run([sh, flag, sandbox.redirect(script)])
    assert proc.returncode != 0


@pytest.mark.parametrize(
    ("listening", "ready"),
    [(True, True), (False, False)],
    ids=["no-ssh-client-port-22-listening-is-ready", "no-ssh-client-nothing-listening"],
)
def test_readiness_probe_without_ssh_client_reads_proc_net_tcp(
    sandbox: Sandbox, listening: bool, ready: bool
) -> None:
    sandbox.without("ssh", "timeout")
    net = sandbox.path_of("/proc/net/tcp")
    net.parent.mkdir(parents=True)
    header = "  sl  local_address rem_address   st tx_queue rx_queue\n"
    line = "   0: 00000000:0016 00000000:0000 0A 00000000:00000000\n"
    other = "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000\n"
    net.write_text(header + (line if listening else other))
    sandbox.path_of("/proc/net/tcp6").write_text(header)
    sh, flag, script = _probe(_render(_mpi_spec()))
    proc = sandbox.run([sh, flag, sandbox.redirect(script)])
    assert (proc.returncode == 0) is ready, proc.stderr


# --- KAI: the launcher's init container waits for every worker's sshd ------------------------------

TRAINJOB = "kai-group-0"
WORKERS = [f"{TRAINJOB}-node-0-0.{TRAINJOB}", f"{TRAINJOB}-node-0-1.{TRAINJOB}"]
LAUNCHER_HOST = f"{TRAINJOB}-launcher-0-0"


def _kai_init(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (runtime,) = by_kind(objs, "TrainingRuntime")
    (init,) = _replicated(runtime, "launcher")["initContainers"]
    assert init["name"] == "fix-ssh-permissions"
    return init


@pytest.fixture
def kai_sandbox(sandbox: Sandbox) -> tuple[Sandbox, list[str]]:
    objs = _render(_mpi_spec(gangScheduler={"schedulerName": "kai-scheduler"}), name="kai")
    init = _kai_init(objs)
    assert init["args"] == [mpi_runtime.LAUNCHER_INIT + "\n" + mpi_runtime.KAI_WAIT_SCRIPT]
    argv = container_argv(init, container_env(init.get("env", [])))
    write_ssh_secret(sandbox)
    sandbox.path_of("/root/.ssh").mkdir(parents=True)
    hostfile = sandbox.path_of("/etc/mpi/hostfile")
    hostfile.parent.mkdir(parents=True)
    hostfile.write_text("".join(f"{h} slots=8\n" for h in [*WORKERS, LAUNCHER_HOST]))
    return sandbox, [argv[0], argv[1], sandbox.redirect(argv[2])]


def _run_kai(sandbox: Sandbox, argv: list[str]) -> Any:
    return sandbox.run(argv, env={"HOSTNAME": LAUNCHER_HOST}, timeout=120)


def _ssh_hosts(sandbox: Sandbox) -> list[str]:
    return [line.split()[-2] for line in sandbox.calls("ssh")]


def test_kai_wait_succeeds_at_once_when_every_worker_answers(
    kai_sandbox: tuple[Sandbox, list[str]],
) -> None:
    sandbox, argv = kai_sandbox
    for h in WORKERS:
        sandbox.plan_answer(h, 1)
    proc = _run_kai(sandbox, argv)
    assert proc.returncode == 0, proc.stderr
    assert "workers answered sshd after 0s" in proc.stdout
    assert sorted(_ssh_hosts(sandbox)) == sorted(WORKERS)  # never the launcher itself
    assert sandbox.calls("sleep") == []
    assert mode(sandbox.path_of("/root/.ssh") / "id_rsa") == 0o600


def test_kai_wait_retries_a_worker_until_it_answers(
    kai_sandbox: tuple[Sandbox, list[str]],
) -> None:
    sandbox, argv = kai_sandbox
    sandbox.plan_answer(WORKERS[0], 1)
    sandbox.plan_answer(WORKERS[1], 4)
    proc = _run_kai(sandbox, argv)
    assert proc.returncode == 0, proc.stderr
    assert "workers answered sshd after 15s" in proc.stdout
    assert _ssh_hosts(sandbox).count(WORKERS[0]) == 1  # answered hosts are not asked again
    assert _ssh_hosts(sandbox).count(WORKERS[1]) == 4
    assert sandbox.calls("sleep") == ["5", "5", "5"]
    assert f"waiting: {WORKERS[1]} has not answered sshd yet (attempt 1/240, 0s)" in proc.stdout
    assert "ssh: connect to host" in proc.stdout  # the ssh error is shown with the wait


def test_kai_wait_gives_up_after_twenty_minutes_naming_the_worker_pods(
    kai_sandbox: tuple[Sandbox, list[str]],
) -> None:
    sandbox, argv = kai_sandbox
    proc = _run_kai(sandbox, argv)
    assert proc.returncode != 0
    assert "not every worker answered sshd within 20 minutes" in proc.stderr
    pods = " ".join(h.split(".")[0] for h in WORKERS)
    assert f"worker pods to look at (their events carry the cause): {pods}" in proc.stderr
    assert LAUNCHER_HOST not in _ssh_hosts(sandbox)
    sleeps = sandbox.calls("sleep")
    assert len(sleeps) == mpi_runtime.SSHD_WAIT_ATTEMPTS
    assert sum(int(s) for s in sleeps) == 20 * 60  # the fake clock ran the full budget
    for h in WORKERS:
        assert _ssh_hosts(sandbox).count(h) == mpi_runtime.SSHD_WAIT_ATTEMPTS


def test_kai_wait_refuses_without_a_hostfile(kai_sandbox: tuple[Sandbox, list[str]]) -> None:
    sandbox, argv = kai_sandbox
    sandbox.path_of("/etc/mpi/hostfile").unlink()
    proc = _run_kai(sandbox, argv)
    assert proc.returncode == 1
    assert "no hosts in" in proc.stderr and "refusing to start mpirun" in proc.stderr
    assert sandbox.calls("ssh") == []


def test_kai_wait_never_evaluates_hostfile_contents(
    kai_sandbox: tuple[Sandbox, list[str]],
) -> None:
    sandbox, argv = kai_sandbox
    marker = sandbox.root / "pwned"
    sandbox.path_of("/etc/mpi/hostfile").write_text(
        f"$(touch {marker}) slots=1\n`touch {marker}`\n"
    )
    for first_field in ("$(touch", "`touch"):  # awk keeps the first field of each line
        sandbox.plan_answer(first_field, 1)
    proc = _run_kai(sandbox, argv)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
