"""The forked helper process that shares a large input's work with the parent.

Invariants:
    * The results never depend on the helper: whatever goes wrong with it (no ``fork``, a
      crash, a short read, a unit it did not cover), the parent does that work itself.
    * The helper never writes to the parent's objects: it sends, per unit of work, what
      classification found (:data:`krm_fn.io.fastio.model._STATE_FIELDS`) and whether the
      unit passed the strict grammar, through a pipe, once.
    * Shared memory holds two counters, each written by one side only and moving one way;
      a stale read only makes both sides do a unit twice.
    * The helper is always reaped before :meth:`_Helper.results` returns.
    * ``pickle``, ``bisect`` and ``mmap`` load only when a helper is started (a small
      input, and every cold start, never needs them).
"""

from __future__ import annotations

import itertools
import os
from typing import TYPE_CHECKING, Any

from krm_fn.io.fastio.grammar import _clean_chars

if TYPE_CHECKING:
    from krm_fn.io.fastio.units import Units

FORK_MIN_BYTES = 4 << 20
"""Inputs at least this large are read with a forked helper (see :class:`_Helper`)."""


PICKLE_COST = 0.09
"""Pickling a read unit (helper) or unpickling it (parent), relative to reading it."""


class _Helper:
    """A forked child that shares the reading (classification and grammar) with us.

    The child reads the units (items, the Nodes of a ``v1 List``) from the last one down,
    publishing the lowest it read in shared memory, while this process imports the render;
    then this process tells it where to stop (:meth:`split`), reads the units below, and
    takes what the child sends (pickled once). The split adapts to how long we were busy.
    """

    _DONE, _STOP = range(2)

    def __init__(self, pid: int, fd: int, shared: Any, units: Units) -> None:
        """Remember the child and what it was given."""
        self.pid = pid
        self._file: Any = os.fdopen(fd, "rb")
        self._shared = shared
        self._cum = list(itertools.accumulate(units.sizes, initial=0))
        self._split = len(units.sizes)
        self._reaped = False

    @classmethod
    def start(cls, units: Units, raw: bytes, size: int) -> _Helper | None:
        """Fork the helper for a large input; ``None`` when the work stays in this process."""
        if size < FORK_MIN_BYTES or not hasattr(os, "fork") or _cpus() < 2:
            return None
        import mmap
        import pickle

        n = len(units.sizes)
        try:
            counters = memoryview(mmap.mmap(-1, 16)).cast("q")
            counters[cls._DONE], counters[cls._STOP] = n, 0
            rfd, wfd = os.pipe()
            pid = os.fork()
        except OSError:
            return None
        if pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                os.close(rfd)
                results = []
                for k in range(n - 1, -1, -1):
                    if k < counters[cls._STOP]:
                        break
                    results.append((k, *units.read(k)))
                    counters[cls._DONE] = k
                clean = _clean_chars(raw)  # last: reading first gets the split going
                _send(wfd, pickle.dumps((clean, results), protocol=pickle.HIGHEST_PROTOCOL))
                code = 0
            finally:
                os._exit(code)
        os.close(wfd)
        return cls(pid, rfd, counters, units)

    def split(self) -> int:
        """Tell the child where to stop: this process takes about half of what is left.

        The child also pays for pickling what it read (:data:`PICKLE_COST` per byte it
        handled, as a fraction of the cost of reading); the split evens both sides out.
        """
        import bisect

        shared, cum, extra = self._shared, self._cum, PICKLE_COST
        left = min(max(shared[self._DONE], 0), len(cum) - 1)
        rest, handled = cum[left], cum[-1] - cum[left]
        share = min(1.0, ((1 + extra) * rest + extra * handled) / ((2 + extra) * rest or 1))
        self._split = shared[self._STOP] = bisect.bisect_left(cum, rest * share, 0, left)
        return self._split

    def results(self) -> tuple[bool, dict[int, tuple[Any, bool]]] | None:
        """Whether the characters are clean, and per unit from :meth:`split` on, what it read.

        ``None`` when the child failed (units it did not send must be read here, and the
        characters checked here).
        """
        import pickle

        if self._reaped:
            return None
        self._reaped = True
        try:
            head = self._file.read(8)
            size = int.from_bytes(head, "big") if len(head) == 8 else -1
            body = self._file.read(size) if size >= 0 else b""
            got = pickle.loads(body) if size >= 0 and len(body) == size else None
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            got = None
        self._file.close()
        _, status = os.waitpid(self.pid, 0)
        if status != 0 or not isinstance(got, tuple) or len(got) != 2:
            return None
        clean, read = got
        return bool(clean), {k: (state, ok) for k, state, ok in read if k >= self._split}

    def cancel(self) -> None:
        """Stop the child (its results are not needed) and reap it."""
        self._shared[self._STOP] = len(self._cum)
        self.results()


def _send(fd: int, payload: bytes) -> None:
    view = memoryview(len(payload).to_bytes(8, "big") + payload)
    while view:
        view = view[os.write(fd, view) :]


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
