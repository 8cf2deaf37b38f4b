"""Every variable the MPI launcher sees reaches the ranks: ``-x`` on the final objects.

Trainer sets ``TrainJob.spec.trainer.env`` on the launcher's ``node`` container only (the
trainer ancestor); the ranks are started by sshd on the workers with a clean environment, so a
variable reaches them only through ``mpirun -x``. The render forwards the merged env
(defaults, catalog, ``spec.env``) when it builds the argv; overrides can add or change launcher
env afterwards (``jobTemplate`` ``trainer.env``, a ``dependencies`` patch of the runtime), so
this pass runs on the final TrainingRuntime and TrainJobs, whatever produced them.

Invariants:
    * Launcher env = the runtime's launcher ``node`` container env, upserted by name with the
      TrainJob's ``spec.trainer.env`` (what Trainer does, ``pkg/apply/apply.go`` UpsertEnvVar).
    * Every launcher variable except the ones Trainer's MPI plugin sets is forwarded: a
      missing name is added as ``-x NAME=value`` (``-x NAME`` for a ``valueFrom`` variable)
      before the render's own ``-x`` forwarding (or right after mpirun).
    * Precedence at the ranks is the guide's: a name ``-x``'d by any ``mpiArgs`` (the user's,
      an override's or the platform's) keeps that value; a variable an override added or
      changed on the launcher reaches the ranks with the launcher's value, so an override's
      ``trainer.env`` beats ``spec.env``, catalog and defaults exactly as it does on the
      launcher container; everything else keeps the value the render forwarded.
    * Values are copied as written in the objects (already ``$$``-escaped where the render
      escaped them), so the kubelet expands the container env and the argv the same way.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from krm_fn.api.rules import MPI_PLUGIN_ENV
from krm_fn.builders.launch import BASH_C
from krm_fn.builders.nccl_env import forwarded_names

MPIRUN_NAMES = frozenset({"mpirun", "mpiexec", "orterun", "prterun"})


def launcher_env(runtime: Mapping[str, Any], trainjob: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The launcher ``node`` container's env after Trainer upserts ``spec.trainer.env``."""
    env: list[dict[str, Any]] = []
    jobset = ((runtime.get("spec") or {}).get("template") or {}).get("spec", {})
    for rj in jobset.get("replicatedJobs") or []:
        if rj.get("name") != "launcher":
            continue
        pod = (((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        for c in (pod or {}).get("containers") or []:
            if c.get("name") == "node":
                env = [dict(e) for e in c.get("env") or []]
    for e in ((trainjob.get("spec") or {}).get("trainer") or {}).get("env") or []:
        env = [x for x in env if x.get("name") != e.get("name")]
        env.append(dict(e))
    return env


def _argv(trainer: Mapping[str, Any], mpirun_path: str) -> tuple[list[str], int | None]:
    r"""The argv mpirun runs with, and where its ``exec`` line starts when wrapped in bash -c.

    The wrapped form is ``<preCommand lines>\nexec <argv, shell-quoted>``; a quoted argument
    may itself hold newlines, so the exec line is the first line starting with ``exec`` whose
    remainder parses as one command starting with mpirun. Returns index ``None`` when the
    command is a plain argv list.
    """
    command = list(trainer.get("command") or [])
    args = list(trainer.get("args") or [])
    if tuple(command) == BASH_C and len(args) == 1:
        lines = args[0].split("\n")
        for i, line in enumerate(lines):
            if not line.startswith("exec "):
                continue
            try:
                words = shlex.split("\n".join(lines[i:]))
            except ValueError:
                continue
            if len(words) > 1 and _mpirun_index(words[1:2], mpirun_path) == 0:
                return words[1:], i
    return command + args, None


def _store(trainer: dict[str, Any], argv: list[str], exec_line: int | None, split: int) -> None:
    if exec_line is not None:
        lines = trainer["args"][0].split("\n")[:exec_line]
        trainer["args"] = ["\n".join([*lines, "exec " + shlex.join(argv)])]
    else:
        trainer["command"] = argv[:split]
        trainer["args"] = argv[split:]


def _mpirun_index(argv: Sequence[str], mpirun_path: str) -> int | None:
    for i, a in enumerate(argv):
        if a == mpirun_path or posixpath.basename(a) in MPIRUN_NAMES:
            return i
    return None


def forward_launcher_env(
    runtime: Mapping[str, Any],
    trainjob: dict[str, Any],
    explicit: Collection[str],
    mpirun_path: str,
    built: Mapping[str, Mapping[str, Any]] | None,
    cache: dict[Any, Any],
) -> list[str]:
    """Add or correct ``-x`` so the ranks get every launcher variable of ``trainjob`` (in place).

    ``explicit``: names some ``mpiArgs`` forward (they keep their value); ``built``: the
    launcher env the render built the argv from, before any override (a name whose entry is
    unchanged keeps the render's value, e.g. a catalog ``forwardEnv`` meant for the ranks);
    ``cache``: shared by the TrainJobs of one run, which mostly share their command line.
    Returns the launcher variables that cannot be forwarded because an override replaced mpirun.
    """
    trainer = trainjob.setdefault("spec", {}).setdefault("trainer", {})
    argv = (tuple(trainer.get("command") or ()), tuple(trainer.get("args") or ()))
    key = (*argv, repr(trainer.get("env")))
    hit = cache.get(key)  # the TrainJobs of a run share their command line: work it out once
    if hit is not None:
        command, args, missed = hit
        if command is not None:
            trainer["command"], trainer["args"] = list(command), list(args)
        return list(missed)
    missed = _forward(runtime, trainjob, trainer, explicit, mpirun_path, built)
    changed = (tuple(trainer.get("command") or ()), tuple(trainer.get("args") or ()))
    command, args = (None, None) if changed == argv else changed  # None: the argv is unchanged
    cache[key] = (command, args, tuple(missed))
    return missed


def _forward(
    runtime: Mapping[str, Any],
    trainjob: Mapping[str, Any],
    trainer: dict[str, Any],
    explicit: Collection[str],
    mpirun_path: str,
    built: Mapping[str, Mapping[str, Any]] | None,
) -> list[str]:
    env = [e for e in launcher_env(runtime, trainjob) if e.get("name") not in MPI_PLUGIN_ENV]
    if not env:
        return []
    argv, exec_line = _argv(trainer, mpirun_path)
    split = len(trainer.get("command") or [])
    at = _mpirun_index(argv, mpirun_path)
    if at is None:
        return [str(e.get("name")) for e in env]
    pairs = _x_pairs(argv)
    added: list[str] = []
    changed = False
    for e in env:
        name = str(e.get("name"))
        want = name if "valueFrom" in e else f"{name}={e.get('value', '')}"
        if name in explicit:
            continue
        if name not in pairs:
            added += ["-x", want]
            continue
        if built is not None and built.get(name) == e:
            continue
        for i in pairs[name]:
            if argv[i] != want:
                argv[i] = want
                changed = True
    if not added and not changed:
        return []
    # next to the render's own forwarding (the first -x after mpirun), or right after mpirun
    pos = next((i for i in range(at + 1, len(argv)) if argv[i] in ("-x", "--x")), at + 1)
    argv[pos:pos] = added
    if exec_line is None and split > pos:
        split += len(added)
    _store(trainer, argv, exec_line, split)
    return []


def _x_pairs(argv: Sequence[str]) -> dict[str, list[int]]:
    """Name -> indexes of the values of every ``-x NAME[=value]`` in ``argv``."""
    out: dict[str, list[int]] = {}
    for i, a in enumerate(argv[:-1]):
        if a in ("-x", "--x"):
            out.setdefault(argv[i + 1].split("=", 1)[0], []).append(i + 1)
    return out


def explicit_names(*arg_lists: Sequence[str]) -> set[str]:
    """Names ``-x``'d in mpiArgs lists (the user's, overrides', the platform's)."""
    return set().union(*(forwarded_names(args) for args in arg_lists))
