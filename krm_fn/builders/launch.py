"""The workload command line: mpirun's argv for MPI, torchrun or the user's command otherwise.

Invariants:
    * The command is an argv list: values with spaces, quotes, ``$(…)``, backticks, newlines
      or ``;`` reach the process exactly as written.
    * mpirun argv order: defaults (hostfile, ``-N``, ssh options), ``-x`` forwarding of the
      merged env (names forwarded elsewhere skipped), platform mpiArgs (their ``-x`` pairs
      included), override mpiArgs, the user's mpiArgs, ``binary``, ``args``. OpenMPI
      lets a later duplicate win, so the user's values win.
    * A ``preCommand`` turns the command into ``/bin/bash -c "<lines>; exec <argv>"`` with
      every argv element shell-quoted, so the quoting guarantee above still holds.
    * mpirun is NOT wrapped in NVCRE's hard-coded ``timeout 3600``: the whole TrainJob is
      bounded by ``activeDeadlineSeconds`` (``orchestration.timeoutPerJob``, 24h by default),
      so an MPI run is not killed after one hour against the configured timeout; set
      ``timeoutPerJob: 1h`` for NVCRE's one-hour cap.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from krm_fn.api import models
from krm_fn.builders.nccl_env import Env, forward_args

MPI_HEAD = ("--hostfile", "/etc/mpi/hostfile")
BASH_C = ("/bin/bash", "-c")
"""The command of a launcher whose argv is one shell script (preCommand, over-long argv)."""
MPI_SSH = (
    "--allow-run-as-root",
    "--mca",
    "plm_rsh_args",
    "-o StrictHostKeyChecking=no -o ConnectionAttempts=10",
)


def mpi_argv(
    mpi: models.MPIFramework,
    gpus_per_node: int,
    env: Sequence[Env],
    platform_args: Sequence[str],
    override_args: Sequence[str],
) -> tuple[list[str], list[str]]:
    """(command, args) of the MPI launcher.

    ``platform_args`` are the catalog's mpiArgs, its ``-x`` pairs included, already in NVCRE's
    order (see :func:`krm_fn.platforms.overlay.resolve`).
    """
    explicit = [*platform_args, *override_args, *mpi.mpi_args]
    head = [*MPI_HEAD, "-N", str(gpus_per_node), *MPI_SSH, *forward_args(env, explicit)]
    return [mpi.mpirun_path], [*head, *explicit, mpi.binary, *mpi.args]


def framework_argv(fw: models.Framework) -> tuple[list[str], list[str]]:
    """(command, args) for torch and exec."""
    if fw.torch is not None:
        t = fw.torch
        head = [t.script] if t.script else ["-m", t.module or ""]
        return ["torchrun"], [*head, *t.args]
    assert fw.exec_ is not None
    return list(fw.exec_.command), list(fw.exec_.args)


def wrap_pre_command(
    pre: Sequence[str], command: Sequence[str], args: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Prefix shell lines, then ``exec`` the original argv (each element quoted)."""
    if not pre:
        return list(command), list(args)
    script = "\n".join([*pre, "exec " + shlex.join([*command, *args])])
    return list(BASH_C), [script]
