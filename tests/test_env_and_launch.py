"""NCCL env merging, MPI -x forwarding precedence, names, and the preCommand wrap."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_fn.api.models import MPIFramework
from krm_fn.api.naming import RFC1035_RE, TRAINJOB_NAME_MAX, trainjob_name
from krm_fn.builders.launch import mpi_argv, wrap_pre_command
from krm_fn.builders.nccl_env import (
    Env,
    base_nccl_env,
    forward_args,
    forwarded_names,
    merge_env,
    merge_named,
    user_wins_in_mpi_args,
)


def test_user_env_replaces_defaults_and_is_appended_in_order() -> None:
    merged = merge_env(base_nccl_env(False), [Env("ZZZ", "1"), Env("NCCL_DEBUG", "TRACE")])
    names = [e.name for e in merged]
    assert names[-2:] == ["ZZZ", "NCCL_DEBUG"]
    assert names.count("NCCL_DEBUG") == 1
    assert dict((e.name, e.value) for e in merged)["NCCL_MNNVL_ENABLE"] == "0"


def test_mnnvl_flag_drives_nccl_mnnvl_enable() -> None:
    assert ("NCCL_MNNVL_ENABLE", "1") in [(e.name, e.value) for e in base_nccl_env(True)]


def test_value_from_is_forwarded_bare_and_explicit_x_wins() -> None:
    env = [
        Env("A", "1"),
        Env("B", value_from={"fieldRef": {"fieldPath": "metadata.name"}}),
        Env("C", "3"),
    ]
    assert forward_args(env, ["-x", "C=9"]) == ["-x", "A=1", "-x", "B"]
    assert forwarded_names(["-x", "P=1", "-xQ=2", "--mca", "x", "y"]) == {"P", "Q"}


def test_precedence_mpi_args_over_spec_env_over_platform_over_default() -> None:
    mpi = MPIFramework.model_validate(
        {"binary": "/b", "mpirunPath": "/mpirun", "mpiArgs": ["-x", "NCCL_DEBUG=WARN"]}
    )
    user = [Env("FI_PROVIDER", "verbs"), Env("NCCL_DEBUG", "TRACE")]
    env = merge_env(base_nccl_env(False), [Env("NCCL_SOCKET_IFNAME", "ens")], user)
    platform_args = user_wins_in_mpi_args(
        ["--bind-to", "none", "-x", "FI_PROVIDER=efa", "-x", "FI_EFA_FORK_SAFE=1"],
        {e.name: e for e in user},
    )
    assert platform_args[3] == "FI_PROVIDER=verbs"  # user value substituted, in place
    _, args = mpi_argv(mpi, 8, env, platform_args, [])
    pairs = [args[i + 1] for i, a in enumerate(args) if a == "-x"]
    assert pairs.count("NCCL_DEBUG=WARN") == 1 and "NCCL_DEBUG=TRACE" not in pairs
    assert "FI_PROVIDER=verbs" in pairs and pairs.count("FI_PROVIDER=verbs") == 1
    assert "NCCL_SOCKET_IFNAME=ens" in pairs
    assert args[-1] == "/b"
    assert args.index("--bind-to") < args.index("NCCL_DEBUG=WARN")


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
            max_size=12,
        ),
        max_size=5,
    )
)
def test_pre_command_wrap_reaches_the_process_verbatim(args: list[str]) -> None:
    echo = [sys.executable, "-c", "import sys, json; print(json.dumps(sys.argv[1:]))"]
    cmd, wrapped = wrap_pre_command(["true"], echo, args)
    assert cmd == ["/bin/bash", "-c"]
    out = subprocess.run([*cmd, *wrapped], capture_output=True, check=True, text=True).stdout
    assert json.loads(out) == args
    assert shlex.join([*echo, *args]) in wrapped[0]


@pytest.mark.slow
@settings(max_examples=200)
@given(st.from_regex(r"[a-z][a-z0-9-]{0,60}[a-z0-9]", fullmatch=True), st.integers(0, 9999))
def test_trainjob_names_always_fit_the_budget(run: str, group: int) -> None:
    name = trainjob_name(run, f"group-{group}-overflow")
    assert len(name) <= TRAINJOB_NAME_MAX
    assert RFC1035_RE.match(name)


def test_long_names_are_shortened_deterministically_and_distinctly() -> None:
    a = trainjob_name("x" * 50, "group-1")
    b = trainjob_name("x" * 50, "group-2")
    assert a != b and a == trainjob_name("x" * 50, "group-1")


def test_mpirun_is_not_wrapped_in_a_timeout_the_trainjob_deadline_bounds_it() -> None:
    # NVCRE wraps mpirun in a hard-coded `timeout 3600` (buildJobTemplate, MPI branch); we do
    # not: activeDeadlineSeconds (timeoutPerJob, 24h default) bounds the whole TrainJob.
    mpi = MPIFramework.model_validate({"binary": "/b", "mpirunPath": "/usr/local/mpi/bin/mpirun"})
    command, args = mpi_argv(mpi, 4, [], [], [])
    assert command == ["/usr/local/mpi/bin/mpirun"]
    assert "timeout" not in args


def test_platform_env_merges_by_name_in_place_then_appends() -> None:
    base = [Env("A", "1"), Env("B", "1"), Env("C", "1")]
    merged = merge_named(base, [Env("B", "2"), Env("D", "2")])
    assert merged == [Env("A", "1"), Env("B", "2"), Env("C", "1"), Env("D", "2")]


def test_value_from_user_env_is_forwarded_bare_in_platform_args() -> None:
    user = {"X": Env("X", value_from={"fieldRef": {"fieldPath": "metadata.name"}})}
    assert user_wins_in_mpi_args(["-x", "X=1", "-x", "Y=2"], user) == ["-x", "X", "-x", "Y=2"]
