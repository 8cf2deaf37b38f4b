"""Benchmark workloadrun-fn on every input form, each next to its limit, and inside kpt/kustomize.

For 1,000 and 10,000 Nodes (bench/make_inventory.py, seed 0, ~11 KB per Node) this times,
in fresh processes and in alternation, every input form the function reads:

* ``rl-items``: a ResourceList, every Node its own item (as kpt sends it);
* ``rl-list``: a ResourceList whose Nodes are one ``v1 List`` item (``kubectl get nodes -o
  yaml`` in a package);
* ``stream``: a plain stream, one document per Node (the kustomize legacy exec plugin);
* ``rl-json``: a JSON ResourceList (items as ``kubectl get nodes -o json`` writes them);
* ``render-yaml`` / ``render-json``: ``workloadrun-fn render run.yaml nodes.yaml|json``
  (``kubectl get nodes -o yaml|json`` files);

next to its *limit*, measured in the same run on the same bytes: a process that only
parses and emits them with rapidyaml (YAML; ``pip install rapidyaml``) or ``json.loads`` +
``json.dumps`` (JSON). Peak memory is sampled over the whole process tree (the function
and its helper process, summed). At 1,000 Nodes (``--share-10k`` for 10,000) it also
measures the function's share of ``kpt fn render`` and of ``kubectl kustomize`` (legacy
plugin) on the same Nodes. The table, the machine and its load go to bench/results.md.

Usage::

    python bench/run.py                # 1,000 and 10,000 Nodes
    python bench/run.py --quick        # 1,000 Nodes only
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

TARGET_LIMIT_RATIO = 1.5  # every form at 10k within 1.5x its limit
TARGET_10K_RSS = 1 << 30  # peak memory at 10k, all processes summed
TARGET_GROWTH = 11.0  # 1k -> 10k
TARGET_COLD_S = 0.300  # cold start on the 16-node fixture

FORMS: dict[str, tuple[str, str]] = {
    # name: (what it is, limit: yaml = rapidyaml parse+emit, json = json loads+dumps)
    "rl-items": ("ResourceList, one item per Node (kpt)", "yaml"),
    "rl-list": ("ResourceList, the Nodes as one `v1 List` item", "yaml"),
    "stream": ("plain stream, one document per Node (kustomize legacy plugin)", "yaml"),
    "rl-json": ("JSON ResourceList (`kubectl get nodes -o json` items)", "json"),
    "render-yaml": ("`render run.yaml nodes.yaml` (`kubectl get nodes -o yaml`)", "yaml"),
    "render-json": ("`render run.yaml nodes.json` (`kubectl get nodes -o json`)", "json"),
}

LIMIT_SCRIPT = {
    "yaml": (
        "import sys, ryml\n"
        "data = sys.stdin.buffer.read()\n"
        "sys.stdout.write(ryml.emit_yaml(ryml.parse_in_arena(data)))\n"
    ),
    "json": (
        "import sys, json\n"
        "data = sys.stdin.buffer.read()\n"
        "sys.stdout.write(json.dumps(json.loads(data)))\n"
    ),
}


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


def _tree_rss(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants, summed (bytes; 0 once gone)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run_once(
    cmd: list[str], stdin: Path | None, runs: Runs, env: dict[str, str], cwd: Path | None = None
) -> None:
    """Run ``cmd`` once (stdout discarded); record its wall time and peak memory.

    Peak memory is the larger of the process's own ``ru_maxrss`` and the highest sum of
    resident memory over its process tree, sampled every 10 ms (the helper process the
    function forks counts too).
    """
    import threading

    fin = stdin.open("rb") if stdin else subprocess.DEVNULL
    peak = [0]
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd
        )
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.01):
                peak[0] = max(peak[0], _tree_rss(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdin:
            fin.close()  # type: ignore[union-attr]
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    runs.wall.append(wall)
    runs.rss.append(max(usage.ru_maxrss * 1024, peak[0]))


@dataclass
class Case:
    """One form at one size: the function's command and input, and its limit's input."""

    cmd: list[str]
    stdin: Path | None
    limit_input: Path
    limit: str
    size: int


def prepare(nodes: int, work: Path, fn_cmd: list[str]) -> dict[str, Case]:
    """Every form's input for ``nodes`` Nodes (generated in child processes).

    A child's peak RSS (``ru_maxrss``) starts from this process's own high-water mark at
    fork time, so this process must stay small.
    """
    gen = [sys.executable, str(HERE / "make_inventory.py"), "--nodes", str(nodes), "--seed", "0"]
    files = {
        "rl-items": ["--resourcelist"],
        "rl-list": ["--resourcelist", "--as-list"],
        "stream": ["--stream"],
        "rl-json": ["--resourcelist", "--json"],
        "nodes.yaml": [],
        "nodes.json": ["--json"],
    }
    paths = {}
    for name, extra in files.items():
        path = work / f"{nodes}-{name}"
        subprocess.run([*gen, *extra, "--out", str(path)], check=True)
        paths[name] = path
    run_yaml = work / "run.yaml"
    run_yaml.write_text(
        subprocess.run(
            [*gen[:2], "--nodes", "0", "--stream"], check=True, capture_output=True, text=True
        ).stdout
    )
    cases = {}
    for form in ("rl-items", "rl-list", "stream", "rl-json"):
        p = paths[form]
        cases[form] = Case(fn_cmd, p, p, FORMS[form][1], p.stat().st_size)
    for form, name in (("render-yaml", "nodes.yaml"), ("render-json", "nodes.json")):
        p = paths[name]
        cmd = [*fn_cmd, "render", str(run_yaml), str(p)]
        cases[form] = Case(cmd, None, p, FORMS[form][1], p.stat().st_size)
    return cases


def share_setup(nodes: int, work: Path, fn_exe: str) -> tuple[list[str], list[str], Path]:
    """kpt and kustomize commands rendering ``nodes`` Nodes with the function (timed by a wrapper).

    The wrapper appends the function's own wall time to the returned log file, so the
    share is the function's time over the orchestrator's whole run.
    """
    log = work / f"share-{nodes}.log"
    wrapper = work / "timed-fn"
    wrapper.write_text(
        "#!/usr/bin/env python3\n"
        "import subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        f"rc = subprocess.call([{fn_exe!r}, *sys.argv[1:]])\n"
        f"open({str(log)!r}, 'a').write(f'{{time.perf_counter() - t}}\\n')\n"
        "sys.exit(rc)\n"
    )
    wrapper.chmod(0o755)
    gen = [sys.executable, str(HERE / "make_inventory.py"), "--nodes", str(nodes), "--seed", "0"]
    run_doc = subprocess.run(
        [*gen[:2], "--nodes", "0", "--stream"], check=True, capture_output=True, text=True
    ).stdout
    config = (
        "apiVersion: fn.nvcre.nvidia.com/v1alpha1\nkind: WorkloadRunRender\n"
        "metadata:\n  name: render\n  annotations:\n"
        "    config.kubernetes.io/local-config: 'true'\n"
        "spec:\n  registry: nvcr.io\n  registryUsername: $oauthtoken\n"
        "  registryPasswordEnv: NGC_API_KEY\n"
        # the same objects as every other form: the plain Secret, opted in (kpt refuses to
        # write a password into the package otherwise; README "Registry credentials in GitOps")
        "  plainPullSecret: 'true'\n"
    )
    kpt_dir = work / f"kpt-{nodes}"
    kpt_dir.mkdir()
    # kpt wants a name on every resource (a v1 List has none): one document per Node
    subprocess.run([*gen, "--stream", "--out", str(kpt_dir / "fleet.yaml")], check=True)
    (kpt_dir / "fn-config.yaml").write_text(config)
    (kpt_dir / "Kptfile").write_text(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bench\n"
        "  annotations:\n    config.kubernetes.io/local-config: 'true'\n"
        f"pipeline:\n  mutators:\n  - exec: {wrapper}\n    configPath: fn-config.yaml\n"
    )
    kdir = work / f"kust-{nodes}"
    kdir.mkdir()
    subprocess.run([*gen, "--out", str(kdir / "nodes.yaml")], check=True)
    (kdir / "workloadrun.yaml").write_text(run_doc)
    (kdir / "render.yaml").write_text(config)
    (kdir / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n- workloadrun.yaml\n- nodes.yaml\ntransformers:\n- render.yaml\n"
    )
    plugin = work / "plugins" / "kustomize" / "plugin" / "fn.nvcre.nvidia.com" / "v1alpha1"
    plugin = plugin / "workloadrunrender" / "WorkloadRunRender"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text(f'#!/bin/sh\nexec {wrapper} "$@"\n')
    plugin.chmod(0o755)
    kpt = ["kpt", "fn", "render", "--allow-exec", str(kpt_dir), "-o", "stdout"]
    kust = ["kubectl", "kustomize", "--enable-alpha-plugins", str(kdir)]
    return kpt, kust, log


def _fn_times(log: Path) -> list[float]:
    return [float(x) for x in log.read_text().split()] if log.exists() else []


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
    ap.add_argument("--quick", action="store_true", help="1,000 Nodes only")
    ap.add_argument("--sizes", help="Node counts (comma-separated; default 1000,10000)")
    ap.add_argument("--runs", type=int, default=5, help="runs per form and size (default 5)")
    ap.add_argument("--share-runs", type=int, default=3, help="kpt/kustomize runs (default 3)")
    ap.add_argument("--share-10k", action="store_true", help="kpt/kustomize at 10,000 too")
    ap.add_argument("--cold-runs", type=int, default=15, help="cold-start runs (default 15)")
    ap.add_argument("--forms", default=",".join(FORMS), help="forms to time (comma-separated)")
    ap.add_argument(
        "--in-place",
        action="store_true",
        help="time the package installed beside this interpreter instead of a fresh install",
    )
    ap.add_argument("--out", default=str(HERE / "results.md"), help="results file")
    args = ap.parse_args(argv)
    forms = [f for f in args.forms.split(",") if f]
    for tool in ("kubectl", "kpt"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} must be on PATH")
    try:
        import ryml  # noqa: F401
    except ImportError:
        raise SystemExit("the YAML limit needs rapidyaml: pip install rapidyaml") from None
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
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else [1000, 10000]
    if args.quick:
        sizes = [1000]
    info = machine()
    print("machine:", info, flush=True)
    fn: dict[tuple[str, int], Runs] = {}
    lim: dict[tuple[str, int], Runs] = {}
    size_mb: dict[tuple[str, int], float] = {}
    shares: dict[tuple[str, int], tuple[Runs, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="wlr-bench-") as tmp:
        work = Path(tmp)
        fn_cmd = fn_command() if args.in_place else install_fn(work)
        info["function"] = (
            "this checkout, in place" if args.in_place else "`pip install .` into a fresh venv"
        )
        limit_cmd = {k: [sys.executable, "-c", v] for k, v in LIMIT_SCRIPT.items()}
        for n in sizes:
            (work / f"in-{n}").mkdir()
            cases = prepare(n, work / f"in-{n}", fn_cmd)
            for form in forms:
                case = cases[form]
                key = (form, n)
                fn[key], lim[key] = Runs(), Runs()
                size_mb[key] = case.size / 1e6
                run_once(case.cmd, case.stdin, Runs(), env)  # warm the page cache
                for i in range(args.runs):
                    # alternate, so load changes hit both sides alike
                    run_once(limit_cmd[case.limit], case.limit_input, lim[key], env)
                    run_once(case.cmd, case.stdin, fn[key], env)
                    print(
                        f"  {n:>6} {form:<12} run {i + 1}: fn {fn[key].wall[-1]:.2f}s "
                        f"limit {lim[key].wall[-1]:.2f}s rss {fn[key].rss[-1] / 2**20:.0f} MiB",
                        flush=True,
                    )
            if n <= 1000 or args.share_10k:
                kpt, kust, log = share_setup(n, work, fn_cmd[0])
                for name, cmd in (("kpt fn render", kpt), ("kubectl kustomize", kust)):
                    runs = Runs()
                    log.unlink(missing_ok=True)
                    for _ in range(args.share_runs):
                        run_once(cmd, None, runs, {**env, "XDG_CONFIG_HOME": str(work / "plugins")})
                    shares[(name, n)] = (runs, _fn_times(log))
                    print(f"  {n:>6} {name}: {runs.wall} fn {_fn_times(log)}", flush=True)
        cold = Runs()
        for _ in range(args.cold_runs):
            run_once(fn_cmd, FIXTURE, cold, env)
        python = sys.executable if args.in_place else str(Path(fn_cmd[0]).with_name("python"))
        imports = importtime_top(python, env)
    info["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text, ok = report(args, info, sizes, forms, fn, lim, size_mb, shares, cold, imports)
    Path(args.out).write_text(with_kept_part(text, Path(args.out)))
    print()
    print(text)
    print(f"written to {args.out}")
    return 0 if ok else 1


KEPT = "<!-- kept: everything below is kept when bench/run.py rewrites this file -->"


def with_kept_part(text: str, out: Path) -> str:
    """``text`` followed by the kept part of the results file already at ``out``.

    Below :data:`KEPT` live the measured decisions written by hand (a hand-written
    replacement of a library needs its measured reason recorded here) and the section
    bench/kpt_compact.py maintains; a new run replaces only what is above it.
    """
    old = out.read_text() if out.exists() else ""
    kept = old[old.index(KEPT) :] if KEPT in old else KEPT + "\n"
    return text.rstrip("\n") + "\n\n" + kept


def report(
    args: argparse.Namespace,
    info: dict[str, str],
    sizes: list[int],
    forms: list[str],
    fn: dict[tuple[str, int], Runs],
    lim: dict[tuple[str, int], Runs],
    size_mb: dict[tuple[str, int], float],
    shares: dict[tuple[str, int], tuple[Runs, list[float]]],
    cold: Runs,
    imports: list[tuple[int, int, str]],
) -> tuple[str, bool]:
    """bench/results.md and whether every target is met."""
    checks: list[tuple[str, str, bool]] = []
    big = max(sizes)
    for form in forms:
        if (form, big) not in fn:
            continue
        r = fn[(form, big)].median / lim[(form, big)].median
        checks.append(
            (
                f"{form} at {big:,}: within {TARGET_LIMIT_RATIO}x its limit",
                f"{r:.2f}x",
                r <= TARGET_LIMIT_RATIO,
            )
        )
        rss = fn[(form, big)].peak
        checks.append(
            (
                f"{form} at {big:,}: peak memory (all processes) <= 1 GiB",
                f"{rss / 2**20:.0f} MiB",
                rss <= TARGET_10K_RSS,
            )
        )
        if 1000 in sizes and big != 1000:
            g = fn[(form, big)].median / fn[(form, 1000)].median
            checks.append(
                (
                    f"{form}: growth 1k -> 10k <= {TARGET_GROWTH:.0f}x",
                    f"{g:.1f}x",
                    g <= TARGET_GROWTH,
                )
            )
    checks.append(
        (
            f"cold start (16-node fixture) <= {TARGET_COLD_S * 1000:.0f} ms",
            f"{cold.median * 1000:.0f} ms",
            cold.median <= TARGET_COLD_S,
        )
    )
    lines = [
        "# workloadrun-fn benchmark",
        "",
        "Generated by `python bench/run.py` (fresh processes, medians; every form alternated",
        "with its limit, so both see the same load). Inputs: `bench/make_inventory.py --seed 0`",
        "(AWS p5 nodes, ~11 KB of YAML each), one MPI WorkloadRun with `numNodes: 2` (so ~N/2",
        "TrainJobs are generated), every input item returned. Limit: a process that only",
        "parses and emits the same bytes, with rapidyaml (`ryml.parse_in_arena` +",
        "`ryml.emit_yaml`) for YAML, `json.loads` + `json.dumps` for JSON. Peak memory: the",
        "function and its helper process summed (sampled every 10 ms), or the parent's",
        "`ru_maxrss` if higher. No form was refused.",
        "",
        "## Machine",
        "",
        *[f"* {k}: {v}" for k, v in info.items()],
        "",
        "## Every form next to its limit",
        "",
        "| form | Nodes | input | fn (median) | limit (median) | fn / limit | fn peak memory | runs |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for form in forms:
        for n in sizes:
            if (form, n) not in fn:
                continue
            f, li = fn[(form, n)], lim[(form, n)]
            lines.append(
                f"| {form} | {n:,} | {size_mb[(form, n)]:.1f} MB | {f.median:.2f} s | "
                f"{li.median:.2f} s | {f.median / li.median:.2f}x | {f.peak / 2**20:.0f} MiB | "
                f"{len(f.wall)} |"
            )
    lines += ["", "Forms:", ""]
    lines += [f"* `{k}`: {v[0]}; limit: {v[1]}" for k, v in FORMS.items() if k in forms]
    if shares:
        lines += [
            "",
            "## The function's share of kpt and kustomize",
            "",
            "| orchestrator | Nodes | whole run (median) | the function inside it | share |",
            "|---|---:|---:|---:|---:|",
        ]
        for (name, n), (runs, times) in shares.items():
            t = statistics.median(times) if times else float("nan")
            lines.append(
                f"| {name} | {n:,} | {runs.median:.2f} s | {t:.2f} s | {t / runs.median:.0%} |"
            )
        lines += [
            "",
            "kpt: `kpt fn render --allow-exec -o stdout` on a package holding the WorkloadRun",
            "and the Nodes (one document each: kpt wants a name on every resource);",
            "kustomize: `kubectl kustomize` on `nodes.yaml` (`kubectl get nodes -o yaml`),",
            "`--enable-alpha-plugins`, the legacy plugin as a transformer. The function's",
            "time is measured by a wrapper around it.",
        ]
    lines += [
        "",
        f"Cold start on `fixtures/krm/resourcelist.yaml` (16 Nodes): median {cold.median * 1000:.0f} ms "
        f"over {len(cold.wall)} runs (min {min(cold.wall) * 1000:.0f} ms), peak RSS {cold.peak / 2**20:.0f} MiB.",
        "",
        "All runs (fn / limit, seconds): "
        + "; ".join(
            f"{form} {n:,}: "
            + ", ".join(
                f"{a:.2f}/{b:.2f}"
                for a, b in zip(fn[(form, n)].wall, lim[(form, n)].wall, strict=False)
            )
            for form in forms
            for n in sizes
            if (form, n) in fn
        ),
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
    return "\n".join(lines), all(ok for _, _, ok in checks)


if __name__ == "__main__":
    sys.exit(main())
