"""Write many objects with :mod:`krm_fn.io.fastdump` on two cores.

A 10,000-node run generates ~4,900 TrainJobs; writing them is ~0.3 s on one core. With
:data:`PARALLEL_MIN` objects or more, a forked child writes the second half while this
process writes the first, and sends its pieces back through a pipe.

Invariants:
    * :func:`dump_each` returns exactly ``[fastdump.dump(o) for o in objs]`` (or
      ``dump_item``), whatever happens to the child: no ``fork``, one CPU, a crash, a short
      read, and this process writes that half itself (an error is then raised here, as it
      would be without the child).
    * The child only reads the objects and writes to its pipe; it leaves with ``os._exit``
      and is always reaped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from krm_fn.io import fastdump

PARALLEL_MIN = 1000
"""Fewer objects are written by this process alone (a fork costs more than it saves)."""


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def dump_each(objs: Sequence[Any], item: bool = False) -> list[str]:
    """Each object as :func:`fastdump.dump_item` (``item``) or :func:`fastdump.dump` writes it."""
    one: Callable[[Any], str] = fastdump.dump_item if item else fastdump.dump
    if len(objs) < PARALLEL_MIN or not hasattr(os, "fork") or _cpus() < 2:
        return [one(o) for o in objs]
    half = len(objs) // 2
    try:
        rfd, wfd = os.pipe()
        pid = os.fork()
    except OSError:
        return [one(o) for o in objs]
    if pid == 0:  # pragma: no cover - runs in the child
        _child(objs[half:], one, rfd, wfd)
    os.close(wfd)
    mine = [one(o) for o in objs[:half]]
    theirs = _receive(rfd, pid, len(objs) - half)
    return mine + (theirs if theirs is not None else [one(o) for o in objs[half:]])


def _child(objs: Sequence[Any], one: Callable[[Any], str], rfd: int, wfd: int) -> NoReturn:
    """Write ``objs`` and send the pieces (pickled) through ``wfd``; never returns."""
    code = 1
    try:
        import pickle

        os.close(rfd)
        payload = pickle.dumps([one(o) for o in objs], protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(len(payload).to_bytes(8, "big") + payload)
        while view:
            view = view[os.write(wfd, view) :]
        code = 0
    finally:
        os._exit(code)


def _receive(rfd: int, pid: int, count: int) -> list[str] | None:
    """The child's pieces, or ``None`` when anything about it went wrong (reaped either way)."""
    import pickle

    got: Any = None
    try:
        with os.fdopen(rfd, "rb") as pipe:
            head = pipe.read(8)
            size = int.from_bytes(head, "big") if len(head) == 8 else -1
            body = pipe.read(size) if size >= 0 else b""
            if size >= 0 and len(body) == size:
                got = pickle.loads(body)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError):
        got = None
    _, status = os.waitpid(pid, 0)
    if status != 0 or not isinstance(got, list) or len(got) != count:
        return None
    if not all(isinstance(p, str) for p in got):
        return None
    return got
