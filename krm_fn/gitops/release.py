"""``workloadrun-fn release``: release the suspended waves of a run with plain kubectl.

The render suspends every TrainJob of a wave after the first (``waveRelease: suspend``, the
default), because no two TrainJobs of a run may hold GPUs on the same node at once. This
command does what a person would: wait until every TrainJob of wave n is ``Complete``, then
unsuspend wave n+1; until every wave completed.

The seam: every cluster access goes through :class:`Kubectl`, whose ``runner`` runs one
kubectl command line and returns its standard output. Production runs the real kubectl
(``subprocess``); the tests hand it recorded ``kubectl get trainjob -o json`` outputs and
collect the ``kubectl patch`` calls it makes.

Invariants:
    * A TrainJob is *complete* when its ``Complete`` condition is ``True``, *failed* when its
      ``Failed`` condition is ``True`` (Trainer v2.3 condition types).
    * Wave n+1 is released only when every TrainJob of waves 0..n is complete; a failed
      TrainJob stops the release (exit 1) and later waves stay suspended, so a broken node is
      never used again without a person looking at it.
    * Only ``spec.suspend`` of the run's own TrainJobs is patched (merge patch).
    * kubectl missing or failing (no cluster, no Trainer) is exit 2 in one line, never 1.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from krm_fn.builders.apply_order import wave_of
from krm_fn.keys import LABEL_RUN

EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_NO_CLUSTER = 2
EXIT_TIMEOUT = 3

Runner = Callable[[Sequence[str]], str]


def run_kubectl(argv: Sequence[str]) -> str:
    """Run one kubectl command line: its stdout, or :class:`RuntimeError` in one line."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RuntimeError(
            f"cannot run {argv[0]}: {exc.strerror}; install kubectl or name it with "
            "--kubectl (or WORKLOADRUN_FN_KUBECTL)"
        ) from None
    if proc.returncode != 0:
        # kubectl repeats a connection error per API discovery attempt, then says it once
        last = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        why = "does kubectl's current context name the cluster? kubectl config current-context"
        if "does not have a resource type" in last:
            why = "the cluster has no TrainJob CRD: install Kubeflow Trainer v2 in it first"
        raise RuntimeError(f"{' '.join(argv[:3])} failed: {last} ({why})")
    return proc.stdout


@dataclass(frozen=True)
class Kubectl:
    """The only way this module reaches the cluster."""

    command: Sequence[str]
    namespace: str | None
    runner: Runner = run_kubectl

    def _ns(self) -> list[str]:
        return ["-n", self.namespace] if self.namespace else []

    def trainjobs(self, run: str) -> list[dict[str, Any]]:
        """The run's TrainJobs (``kubectl get trainjob -l nvcre.nvidia.com/workload-run=RUN``)."""
        out = self.runner(
            [*self.command, "get", "trainjobs.trainer.kubeflow.org", *self._ns(),
             "-l", f"{LABEL_RUN}={run}", "-o", "json"]
        )  # fmt: skip
        doc = json.loads(out)
        items = doc.get("items") if isinstance(doc, Mapping) else None
        return [i for i in items or [] if isinstance(i, dict)]

    def unsuspend(self, name: str) -> None:
        """``kubectl patch trainjob NAME --type=merge -p {"spec":{"suspend":false}}``."""
        self.runner(
            [*self.command, "patch", "trainjobs.trainer.kubeflow.org", name, *self._ns(),
             "--type=merge", "-p", '{"spec":{"suspend":false}}']
        )  # fmt: skip


def _condition(job: Mapping[str, Any], kind: str) -> bool:
    for c in (job.get("status") or {}).get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") == kind:
            return str(c.get("status")) == "True"
    return False


def _name(job: Mapping[str, Any]) -> str:
    return str((job.get("metadata") or {}).get("name", ""))


@dataclass(frozen=True, slots=True)
class Step:
    """What one look at the run's TrainJobs decided."""

    exit_code: int | None  # None: not finished, look again later
    release: tuple[str, ...]  # TrainJobs to unsuspend now
    message: str


def decide(jobs: Sequence[Mapping[str, Any]], where: str = "the cluster") -> Step:
    """What to do given the run's TrainJobs as they are now (pure; the tests drive it)."""
    if not jobs:
        fix = "apply the rendered objects first, or name their namespace with -n"
        return Step(EXIT_FAILED, (), f"no TrainJob of this run in {where}: {fix}")
    failed = sorted(_name(j) for j in jobs if _condition(j, "Failed"))
    if failed:
        return Step(
            EXIT_FAILED, (), f"TrainJob(s) {', '.join(failed)} failed; later waves stay suspended"
        )
    waves = sorted({wave_of(j) for j in jobs})
    for w in waves:
        wave = [j for j in jobs if wave_of(j) == w]
        pending = [j for j in wave if not _condition(j, "Complete")]
        if not pending:
            continue
        suspended = sorted(_name(j) for j in pending if (j.get("spec") or {}).get("suspend"))
        running = len(pending) - len(suspended)
        if suspended:
            return Step(
                None,
                tuple(suspended),
                f"wave {w}: releasing {', '.join(suspended)}"
                + (f" ({running} already running)" if running else ""),
            )
        return Step(None, (), f"wave {w}: waiting for {len(pending)} TrainJob(s) to complete")
    return Step(EXIT_DONE, (), f"all {len(waves)} wave(s) completed")


def release_loop(
    kube: Kubectl,
    run: str,
    poll: float,
    timeout: float,
    once: bool,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Look, release what is due, wait; until done, failed or ``timeout`` seconds passed."""
    start = clock()
    last = ""
    while True:
        try:
            where = f"namespace {kube.namespace}" if kube.namespace else "the current namespace"
            step = decide(kube.trainjobs(run), where)
            for name in step.release:
                kube.unsuspend(name)
        except (RuntimeError, ValueError) as exc:  # kubectl failed, or printed no JSON
            say(f"release: cannot reach the TrainJobs of {run}: {exc}")
            return EXIT_NO_CLUSTER
        if step.message != last:
            say(f"release {run}: {step.message}")
            last = step.message
        if step.exit_code is not None:
            return step.exit_code
        if once:
            return EXIT_DONE
        if step.release:
            continue  # look again at once: the released wave may be the last
        if clock() - start >= timeout:
            say(f"release {run}: timed out after {timeout:.0f}s")
            return EXIT_TIMEOUT
        sleep(poll)
