"""A guard against accidentally quadratic code, measured as a ratio, never against a clock.

The function runs in a fresh process on 10, 400 and 1,600 Nodes; the guard compares the
*marginal* CPU time per Node of the large run with that of the small one::

    ratio = (cpu(1600) - cpu(10)) / (cpu(400) - cpu(10))

Linear code gives about 4.1 (the Node counts' ratio); an O(n²) lookup gives about 16. The
limit, 8, sits between them with room on both sides. CPU time (the child's user + system
time from ``os.wait4``) and a ratio of two runs on the same machine make the guard independent
of how loaded the machine is (parallel test workers, other jobs); each size is the best of
three runs. Absolute speed is measured by ``bench/run.py``, not here. Generating the
inventories is not timed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZES = (10, 400, 1600)
LINEAR_RATIO = (SIZES[2] - SIZES[0]) / (SIZES[1] - SIZES[0])
LIMIT_RATIO = 8.0


def _generate(path: Path, nodes: int) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_inventory", REPO / "bench" / "make_inventory.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with path.open("w", encoding="utf-8") as fh:
        mod.write(fh, nodes, 0, "aws", False, True, False)


def _cpu_once(path: Path) -> float:
    exe = Path(sys.executable).with_name("workloadrun-fn")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "krm_fn"]
    with path.open("rb") as stdin:
        child = subprocess.Popen(
            cmd,
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
        )
        assert child.stderr is not None
        err = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 0, err.decode()
    return usage.ru_utime + usage.ru_stime


def test_the_cost_per_node_does_not_grow_with_the_inventory(tmp_path: Path) -> None:
    paths = []
    for n in SIZES:
        path = tmp_path / f"rl-{n}.yaml"
        _generate(path, n)
        paths.append(path)
    best = [min(_cpu_once(p) for _ in range(3)) for p in paths]
    small, large = best[1] - best[0], best[2] - best[0]
    ratio = large / max(small, 1e-3)
    assert ratio <= LIMIT_RATIO, (
        f"{SIZES[2]} Nodes cost {ratio:.1f}x the marginal CPU of {SIZES[1]} "
        f"(linear: {LINEAR_RATIO:.1f}, CPU seconds {best}): look for per-node work that grows "
        "with the inventory (run bench/run.py)"
    )
