"""Shared pieces of the hostile-input suite: inputs, the console script in a sandbox, checks."""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from krm_fn.io import yamlio
from krm_fn.io.output import is_generated
from tests.builders import IMAGE, MPI, node, nodes, rl, wr
from tests.e2e.helpers import BIN
from tests.golden.make_inputs import REGISTRY

__all__ = [
    "IMAGE",
    "MPI",
    "REGISTRY",
    "Proc",
    "assert_clean_refusal",
    "assert_stdout_is_echo_or_empty",
    "dump",
    "generated",
    "load",
    "load_all",
    "mpi_run",
    "node",
    "nodes",
    "output_items",
    "rl",
    "run_all",
    "run_fn",
    "wr",
]

FN = BIN / "workloadrun-fn"
SAFETY_AS_LIMIT = 4 * 1024**3
"""Address-space cap of every child: a test that finds a bomb must not take the machine down."""


@dataclass
class Proc:
    """What one run of the console script did."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_bytes: int
    timed_out: bool = False
    cpu_seconds: float = 0.0
    """User + system CPU time of the child: unlike ``seconds`` (wall time) it does not grow
    when other processes (parallel test workers, other jobs) share the machine."""


def run_fn(
    stdin: bytes,
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    cwd: Path | None = None,
) -> Proc:
    """Run ``workloadrun-fn ARGS`` with ``stdin``; measure its wall time and peak memory.

    The child's own rusage comes from ``os.wait4`` (not ``RUSAGE_CHILDREN``, which keeps the
    maximum over every child this test process ever had). On timeout the child's whole
    process group is killed and ``timed_out`` is set.
    """
    full_env = dict(os.environ)
    full_env.pop("WORKLOADRUN_FN_DEBUG", None)
    full_env.update(env or {})
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "in").write_bytes(stdin)
        with (
            open(t / "in", "rb") as fin,
            open(t / "out", "wb") as fout,
            open(t / "err", "wb") as ferr,
        ):
            start = time.monotonic()
            # ulimit in a shell that execs the script: safe from threads, unlike preexec_fn
            limit = f'ulimit -v {SAFETY_AS_LIMIT // 1024} && exec "$0" "$@"'
            child = subprocess.Popen(
                ["/bin/sh", "-c", limit, str(FN), *args],
                stdin=fin,
                stdout=fout,
                stderr=ferr,
                env=full_env,
                cwd=cwd,
                start_new_session=True,
            )
            timed_out = False
            while True:
                pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - start > timeout:
                    os.killpg(child.pid, signal.SIGKILL)
                    pid, status, usage = os.wait4(child.pid, 0)
                    timed_out = True
                    break
                time.sleep(0.01)
            seconds = time.monotonic() - start
            child.returncode = os.waitstatus_to_exitcode(status)
        return Proc(
            returncode=child.returncode,
            stdout=(t / "out").read_bytes().decode("utf-8", "replace"),
            stderr=(t / "err").read_bytes().decode("utf-8", "replace"),
            seconds=seconds,
            max_rss_bytes=usage.ru_maxrss * 1024,
            timed_out=timed_out,
            cpu_seconds=usage.ru_utime + usage.ru_stime,
        )


def run_all(inputs: Mapping[str, bytes], *args: str, **kw: Any) -> dict[str, Proc]:
    """Run the console script once per input, several at a time (each in its own process)."""
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
        futures = {key: pool.submit(run_fn, data, *args, **kw) for key, data in inputs.items()}
        return {key: f.result() for key, f in futures.items()}


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump(doc: Any) -> bytes:
    return yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, allow_unicode=True).encode()


def load(text: str | bytes) -> Any:
    """One YAML document, with libyaml (the tests parse a lot of output)."""
    return yaml.load(text, Loader=_LOADER)


def load_all(text: str | bytes) -> list[Any]:
    return list(yaml.load_all(text, Loader=_LOADER))


def mpi_run(name: str = "x", **spec: Any) -> dict[str, Any]:
    """A valid MPI WorkloadRun (annotated as coming from workloadrun.yaml#0)."""
    body: dict[str, Any] = {"image": IMAGE, "framework": {"mpi": copy.deepcopy(MPI)}, "numNodes": 2}
    body.update(spec)
    return wr(name, body)


def input_items(stdin: bytes) -> list[Any] | None:
    """The items of a ResourceList input; ``None`` when the function cannot read the input.

    Readability is judged by the function's own strict loader: when it refuses the YAML
    (duplicate keys, bad bytes), the items are unknowable and an empty ``items`` is right.
    """
    try:
        docs = [d for d in yamlio.load_all(stdin) if d is not None]
    except yamlio.YAMLInputError:
        return None
    if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") == "ResourceList":
        items = docs[0].get("items")
        return items if isinstance(items, list) else []
    return None


def assert_stdout_is_echo_or_empty(stdin: bytes, stdout: str) -> None:
    """After a refusal stdout is empty, or a ResourceList of the input items plus results."""
    if not stdout.strip():
        return
    out = load(stdout)
    assert isinstance(out, dict), stdout[:500]
    assert out.get("kind") == "ResourceList", stdout[:500]
    assert set(out) <= {"apiVersion", "kind", "items", "results"}, sorted(out)
    expected = input_items(stdin)
    assert out["items"] == (expected if expected is not None else []), (
        "a refused ResourceList must come back with exactly its input items"
    )
    assert out["results"], "a refusal must carry results"
    assert any(r.get("severity") == "error" for r in out["results"])


def assert_clean_refusal(proc: Proc, stdin: bytes, *fragments: str) -> None:
    """Exit 1, no traceback, every fragment on stderr, nothing but an echo on stdout."""
    assert not proc.timed_out, f"no answer within the timeout ({proc.seconds:.1f}s)"
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    for fragment in fragments:
        assert fragment in proc.stderr, f"{fragment!r} not in stderr:\n{proc.stderr}"
    assert proc.stderr.rstrip().endswith("nothing rendered"), proc.stderr
    assert_stdout_is_echo_or_empty(stdin, proc.stdout)


def output_items(stdout: str) -> list[dict[str, Any]]:
    docs = [d for d in load_all(stdout) if d]
    if len(docs) == 1 and docs[0].get("kind") == "ResourceList":
        return list(docs[0]["items"])
    return docs


def generated(stdout: str) -> list[dict[str, Any]]:
    return [i for i in output_items(stdout) if is_generated(i)]


def by_kind(objs: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o.get("kind") == kind]
