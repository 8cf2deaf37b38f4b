"""The forked helper process that shares a large input's work with the parent.

Invariants:
    * The results never depend on the helper: whatever goes wrong with it (no ``fork``, a
      crash, a short read, an item it did not cover), the parent does that work itself.
    * The helper never writes to the parent's objects: it sends classification states
      (:data:`krm_fn.io.fastio.model._STATE_FIELDS`) and grammar verdicts through a pipe.
    * Shared memory holds four counters, each written by one side only and moving one way;
      a stale read only makes both sides do an item twice.
    * A helper that is no longer needed is stopped and reaped (:meth:`_Helper.cancel`).
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


PICKLE_COST = 0.13
"""Pickling a classified item (helper) or unpickling it (parent), relative to classifying it."""


def _verdict(raw: bytes, units: Units) -> list[int] | None:
    """The units failing the strict grammar.

    ``None`` when the characters rule out the fast path altogether (tab, CR, control
    characters, ...): the whole input then goes to the full path.
    """
    return units.check_all() if _clean_chars(raw) else None


class _Helper:
    """A forked child that shares the classification, then the grammar check, with us.

    A large input is worth two cores. Both jobs are split the same way: the child works
    through the units of work (items, or the Nodes of a ``v1 List``) from the last one down, publishing how far it got in shared
    memory, while this process does other work (the imports, the render); when this
    process turns to the job it reads the child's progress, tells the child where to stop
    (about half of what is left, by size: :meth:`split`) and does the items below that
    point itself. The child then sends what it found (classification states, pickled: the
    strings they share are sent once; the items failing the grammar). So the split adapts
    to however long the other work takes. Whenever anything about the child goes wrong (no
    ``fork``, a crash, a short read, an item it did not cover), this process does that
    work itself: the results never depend on the child.

    Shared memory (four 64-bit counters): the lowest item classified, where to stop
    classifying, the lowest item checked, where to stop checking. Each is written by one
    side only and moves one way; a stale read only makes both sides do an item twice.
    """

    _DONE, _STOP, _CHECKED, _STOP_CHECK = range(4)

    def __init__(
        self,
        pid: int,
        fd: int,
        shared: Any,
        units: Units,
        raw: bytes,
    ) -> None:
        """Remember the child and what it was given."""
        self.pid = pid
        self._file: Any = os.fdopen(fd, "rb")
        self._shared = shared
        self._units, self._raw = units, raw
        self._cum = list(itertools.accumulate(units.sizes, initial=0))
        self._ok = True
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
            counters = memoryview(mmap.mmap(-1, 32)).cast("q")
            counters[cls._DONE] = counters[cls._CHECKED] = n
            counters[cls._STOP] = counters[cls._STOP_CHECK] = 0
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
                    results.append((k, units.classify(k)))
                    counters[cls._DONE] = k
                _send(wfd, pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))
                clean = _clean_chars(raw)
                bad, low = [], n
                for k in range(n - 1, -1, -1) if clean else ():
                    if k < counters[cls._STOP_CHECK]:
                        break
                    if not units.check(k):
                        bad.append(k)
                    low = counters[cls._CHECKED] = k
                _send(wfd, pickle.dumps((clean, low, bad)))
                code = 0
            finally:
                os._exit(code)
        os.close(wfd)
        return cls(pid, rfd, counters, units, raw)

    def _meet(self, done: int, stop: int, extra: float) -> int:
        """Where the child must stop: this process takes about half of what is left.

        ``extra``: the child's additional cost per byte it handled (pickling its results),
        as a fraction of the cost of the job; the split evens both sides out.
        """
        import bisect

        shared, cum = self._shared, self._cum
        left = shared[done]
        left = min(max(left, 0), len(cum) - 1)
        rest, handled = cum[left], cum[-1] - cum[left]
        share = min(1.0, ((1 + extra) * rest + extra * handled) / ((2 + extra) * rest or 1))
        at = bisect.bisect_left(cum, rest * share, 0, left)
        shared[stop] = at
        return at

    def split(self) -> int:
        """Tell the child where to stop classifying; this process classifies items below it."""
        self._split = self._meet(self._DONE, self._STOP, PICKLE_COST)
        return self._split

    def _frame(self) -> Any:
        import pickle

        if not self._ok:
            return None
        try:
            head = self._file.read(8)
            size = int.from_bytes(head, "big") if len(head) == 8 else -1
            body = self._file.read(size) if size >= 0 else b""
            if size < 0 or len(body) != size:
                raise EOFError
            return pickle.loads(body)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            self._ok = False
            return None

    def classified(self) -> dict[int, Any]:
        """The child's classification states by index into the units.

        Only items from :meth:`split` on are asked for; missing ones (the child failed)
        must be classified here.
        """
        got = self._frame()
        if not isinstance(got, list):
            self._ok = False
            return {}
        return {k: state for k, state in got if k >= self._split}

    def verdict(self) -> list[int] | None:
        """Indices (into the units) failing the grammar; ``None``: see :func:`_verdict`."""
        units = self._units
        if not self._ok:
            self.cancel()
            return _verdict(self._raw, units)
        at = self._meet(self._CHECKED, self._STOP_CHECK, 0.0)
        mine = [k for k in range(at) if not units.check(k)]
        got = self._frame()
        if not self._reap() or not self._ok or not isinstance(got, tuple) or len(got) != 3:
            return _verdict(self._raw, units)
        clean, low, bad = got
        if not clean:
            return None
        rest = range(at, max(at, min(int(low), len(units.sizes))))
        mine += [k for k in rest if not units.check(k)]
        return sorted({*mine, *(int(k) for k in bad if k >= at)})

    def cancel(self) -> None:
        """Stop the child (its results are not needed) and wait for it."""
        self._shared[self._STOP] = self._shared[self._STOP_CHECK] = len(self._units.sizes)
        self._ok = False
        self._reap()

    def _reap(self) -> bool:
        """Wait for the child; whether it exited cleanly."""
        if self._reaped:
            return False
        self._reaped = True
        self._file.close()
        _, status = os.waitpid(self.pid, 0)
        return status == 0


def _send(fd: int, payload: bytes) -> None:
    view = memoryview(len(payload).to_bytes(8, "big") + payload)
    while view:
        view = view[os.write(fd, view) :]


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
