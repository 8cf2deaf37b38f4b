"""Benchmark workloadrun-fn against kubectl kustomize and check the performance targets.

For 100, 1,000 and 10,000 Nodes (bench/make_inventory.py, seed 0, one platform) this runs,
in alternation, in fresh processes:

* the function on a ResourceList (one MPI WorkloadRun with ``numNodes: 2``, every Node its
  own item, as kpt sends it; every item comes back), and
* ``kubectl kustomize`` on the same Nodes (``resources: [nodes.yaml]`` plus a ``labels:``
  transformer),

and reports medians, peak RSS (``wait4`` rusage of each run), the ratios, the cold start on
the small fixture, the ``-X importtime`` top entries, and PASS/FAIL per target. The table
and the machine it ran on go to bench/results.md.

Usage::

    python bench/run.py                # full run (kustomize at 10k takes minutes)
    python bench/run.py --quick        # 100 and 1,000 Nodes only
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

FIXTURE = REPO / "fixtures" / "krm" / "resourcelist.yaml"
PASSWORD_ENV = {"NGC_API_KEY": "bench-registry-password"}

TARGET_10K_S = 3.0
TARGET_10K_RSS = 1 << 30
TARGET_1K_S = 0.4
TARGET_RATIO_10K = 1 / 50
TARGET_RATIO_1K = 1 / 10
TARGET_COLD_S = 0.150
TARGET_GROWTH = 12.0


@dataclass
class Runs:
    """Wall times and peak RSS of repeated runs of one command."""

    wall: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)  # bytes

    @property
    def median(self) -> float:
        return statistics.median(self.wall) if self.wall else float("nan")

    @property
    def peak(self) -> int:
        return max(self.rss) if self.rss else 0


def fn_command() -> list[str]:
    """The function as installed beside the running interpreter (``--in-place``)."""
    exe = Path(sys.executable).with_name("workloadrun-fn")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "krm_fn"]


def install_fn(work: Path) -> list[str]:
    """Install the repository into a fresh venv, as the README's first command does.

    What users run is a regular (non-editable) install, byte-compiled by pip; an editable
    development install adds a finder to every start-up and, with PYTHONDONTWRITEBYTECODE
    set (as on these machines), recompiles the package from source on every run.
    """
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(REPO)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return [str(venv / "bin" / "workloadrun-fn")]


def run_once(cmd: list[str], stdin: Path | None, runs: Runs, env: dict[str, str]) -> None:
    """Run ``cmd`` once (stdout discarded) and record its wall time and peak RSS."""
    fin = stdin.open("rb") if stdin else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdin:
            fin.close()  # type: ignore[union-attr]
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    runs.wall.append(wall)
    runs.rss.append(usage.ru_maxrss * 1024)


def prepare(nodes: int, work: Path) -> tuple[Path, Path, Path]:
    """The ResourceList (per-item and as a v1 List) and the kustomization for ``nodes``.

    Generated in child processes: a child's peak RSS (``ru_maxrss``) starts from this
    process's own high-water mark at fork time, so this process must stay small.
    """
    rl = work / f"rl-{nodes}.yaml"
    rl_list = work / f"rl-list-{nodes}.yaml"
    kdir = work / f"kust-{nodes}"
    kdir.mkdir(exist_ok=True)
    gen = [sys.executable, str(HERE / "make_inventory.py"), "--nodes", str(nodes), "--seed", "0"]
    subprocess.run([*gen, "--resourcelist", "--out", str(rl)], check=True)
    subprocess.run([*gen, "--resourcelist", "--as-list", "--out", str(rl_list)], check=True)
    subprocess.run([*gen, "--out", str(kdir / "nodes.yaml")], check=True)
    (kdir / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n- nodes.yaml\nlabels:\n- pairs:\n    fleet: gpu\n    owner: bench\n"
    )
    return rl, rl_list, kdir


def importtime_top(python: str, env: dict[str, str], count: int = 15) -> list[tuple[int, int, str]]:
    """The ``-X importtime`` entries of one cold run on the fixture, by cumulative time."""
    with FIXTURE.open("rb") as fin:
        proc = subprocess.run(
            [python, "-X", "importtime", "-m", "krm_fn"],
            stdin=fin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            check=True,
        )
    rows = []
    for line in proc.stderr.decode().splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        _, self_us, cum_us, name = _split(line)
        rows.append((int(cum_us), int(self_us), name))
    rows.sort(reverse=True)
    return rows[:count]


def _split(line: str) -> tuple[str, str, str, str]:
    body = line[len("import time:") :]
    self_us, cum_us, name = (p.strip() for p in body.split("|", 2))
    return "", self_us, cum_us, name


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    kubectl = subprocess.run(["kubectl", "version", "--client"], capture_output=True, text=True)
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "os": platform.platform(),
        "kubectl": " / ".join(kubectl.stdout.strip().splitlines()),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100 and 1,000 Nodes only")
    ap.add_argument("--fn-runs", type=int, default=7, help="function runs per size (default 7)")
    ap.add_argument("--kustomize-runs", type=int, default=5, help="kustomize runs at 100/1k")
    ap.add_argument("--kustomize-10k-runs", type=int, default=2, help="kustomize runs at 10k")
    ap.add_argument("--cold-runs", type=int, default=15, help="cold-start runs (default 15)")
    ap.add_argument(
        "--in-place",
        action="store_true",
        help="time the package installed beside this interpreter instead of a fresh install",
    )
    ap.add_argument("--out", default=str(HERE / "results.md"), help="results file")
    args = ap.parse_args(argv)
    if not shutil.which("kubectl"):
        raise SystemExit("kubectl (with its embedded kustomize) must be on PATH")
    env = {**os.environ, **PASSWORD_ENV}
    if args.in_place:
        # Byte-compile the package as `pip install` does: with PYTHONDONTWRITEBYTECODE set
        # (as in this environment) every run would otherwise recompile it from source.
        compile_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(REPO / "krm_fn")],
            env=compile_env,
            check=True,
        )
    sizes = [100, 1000] if args.quick else [100, 1000, 10000]
    info = machine()
    print("machine:", info, flush=True)
    fn: dict[int, Runs] = {}
    fn_list: dict[int, Runs] = {}
    kust: dict[int, Runs] = {}
    sizes_mb: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="wlr-bench-") as tmp:
        work = Path(tmp)
        fn_cmd = fn_command() if args.in_place else install_fn(work)
        info["function"] = (
            "this checkout, in place" if args.in_place else "`pip install .` into a fresh venv"
        )
        for n in sizes:
            rl, rl_list, kdir = prepare(n, work)
            sizes_mb[n] = rl.stat().st_size / 1e6
            fn[n], fn_list[n], kust[n] = Runs(), Runs(), Runs()
            k_runs = args.kustomize_10k_runs if n >= 10000 else args.kustomize_runs
            run_once(fn_cmd, rl, Runs(), env)  # warm the page cache, not counted
            for i in range(max(args.fn_runs, k_runs)):
                if i < args.fn_runs:
                    run_once(fn_cmd, rl, fn[n], env)
                    run_once(fn_cmd, rl_list, fn_list[n], env)
                if i < k_runs:
                    run_once(["kubectl", "kustomize", str(kdir)], None, kust[n], env)
                print(
                    f"  {n:>6} nodes run {i + 1}: fn {fn[n].wall[-1]:.3f}s "
                    f"(List item {fn_list[n].wall[-1]:.3f}s)"
                    + (f", kustomize {kust[n].wall[-1]:.2f}s" if i < k_runs else ""),
                    flush=True,
                )
        cold = Runs()
        for _ in range(args.cold_runs):
            run_once(fn_cmd, FIXTURE, cold, env)
        python = sys.executable if args.in_place else str(Path(fn_cmd[0]).with_name("python"))
        imports = importtime_top(python, env)
    info["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())

    checks: list[tuple[str, str, bool]] = []
    if 10000 in fn:
        t10, r10 = fn[10000].median, fn[10000].peak
        checks.append(
            ("10,000 Nodes: wall <= 3 s", f"{t10:.2f} s", t10 <= TARGET_10K_S),
        )
        checks.append(
            ("10,000 Nodes: peak RSS <= 1 GiB", f"{r10 / 2**20:.0f} MiB", r10 <= TARGET_10K_RSS)
        )
        ratio10 = t10 / kust[10000].median
        checks.append(
            (
                "10,000 Nodes: fn / kustomize <= 1/50",
                f"1/{1 / ratio10:.0f}",
                ratio10 <= TARGET_RATIO_10K,
            )
        )
        growth = t10 / fn[1000].median
        checks.append(("1k -> 10k growth <= 12x", f"{growth:.1f}x", growth <= TARGET_GROWTH))
    t1 = fn[1000].median
    checks.append(("1,000 Nodes: wall <= 0.4 s", f"{t1:.3f} s", t1 <= TARGET_1K_S))
    ratio1 = t1 / kust[1000].median
    checks.append(
        ("1,000 Nodes: fn / kustomize <= 1/10", f"1/{1 / ratio1:.0f}", ratio1 <= TARGET_RATIO_1K)
    )
    checks.append(
        (
            "cold start (16-node fixture) <= 150 ms",
            f"{cold.median * 1000:.0f} ms",
            cold.median <= TARGET_COLD_S,
        )
    )

    lines = [
        "# workloadrun-fn benchmark",
        "",
        "Generated by `python bench/run.py` (fresh processes, medians; peak RSS from `wait4`).",
        "Inputs: `bench/make_inventory.py --seed 0` (AWS p5 nodes, ~11 KB each), one MPI",
        "WorkloadRun with `numNodes: 2` (so ~N/2 TrainJobs are generated), every item returned.",
        "kustomize: `kubectl kustomize` on the same Nodes with a `labels:` transformer.",
        "",
        "## Machine",
        "",
        *[f"* {k}: {v}" for k, v in info.items()],
        "",
        "## Results",
        "",
        "| Nodes | input | fn (items) | fn (one v1 List) | fn peak RSS | kustomize | kustomize RSS | fn / kustomize |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        r = fn[n].median / kust[n].median
        lines.append(
            f"| {n:,} | {sizes_mb[n]:.1f} MB | {fn[n].median:.3f} s ({len(fn[n].wall)} runs) "
            f"| {fn_list[n].median:.3f} s | {fn[n].peak / 2**20:.0f} MiB "
            f"| {kust[n].median:.2f} s ({len(kust[n].wall)} runs) | {kust[n].peak / 2**20:.0f} MiB "
            f"| 1/{1 / r:.0f} |"
        )
    lines += [
        "",
        f"Cold start on `fixtures/krm/resourcelist.yaml` (16 Nodes): median {cold.median * 1000:.0f} ms "
        f"over {len(cold.wall)} runs (min {min(cold.wall) * 1000:.0f} ms), peak RSS {cold.peak / 2**20:.0f} MiB.",
        "",
        "All function runs per size: "
        + "; ".join(f"{n:,}: " + ", ".join(f"{w:.2f}" for w in fn[n].wall) for n in sizes),
        "",
        "## Targets",
        "",
        "| target | measured | |",
        "|---|---:|---|",
        *[f"| {name} | {value} | {verdict(ok)} |" for name, value, ok in checks],
        "",
        "## `python -X importtime` on the fixture (top entries by cumulative time)",
        "",
        "| cumulative | self | module |",
        "|---:|---:|---|",
        *[
            f"| {cum / 1000:.1f} ms | {own / 1000:.1f} ms | `{name.strip()}` |"
            for cum, own, name in imports
        ],
        "",
    ]
    text = "\n".join(lines)
    Path(args.out).write_text(text)
    print()
    print(text)
    print(f"written to {args.out}")
    return 0 if all(ok for _, _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
