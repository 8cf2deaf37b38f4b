"""`workloadrun-fn release` against recorded TrainJob states (the kubectl seam, no cluster)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from krm_fn.gitops import release

HERE = Path(__file__).parent
RECORDED = HERE / "recorded"
WAVES = ["repeat-group-0-iter-1", "repeat-group-1-iter-1", "repeat-group-0-iter-2",
         "repeat-group-1-iter-2"]  # fmt: skip


class Replay:
    """A runner for :class:`release.Kubectl`: recorded `get` answers, patches collected."""

    def __init__(self, scenario: str) -> None:
        self.files = sorted((RECORDED / scenario).glob("*.json"))
        self.gets = 0
        self.patches: list[tuple[int, list[str]]] = []

    def __call__(self, argv: Sequence[str]) -> str:
        if argv[1] == "get":
            f = self.files[min(self.gets, len(self.files) - 1)]
            self.gets += 1
            return f.read_text()
        assert argv[1] == "patch"
        self.patches.append((self.gets, list(argv)))
        return ""

    def snapshot(self, i: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = json.loads(self.files[i].read_text())["items"]
        return items


def _complete(job: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Complete" and c["status"] == "True" for c in job["status"]["conditions"]
    )


def test_each_wave_is_released_only_after_every_earlier_wave_completed() -> None:
    replay = Replay("all-waves-complete")
    kube = release.Kubectl(["kubectl"], "default", runner=replay)
    said: list[str] = []
    code = release.release_loop(kube, "repeat", 0, 3600, False, said.append, sleep=lambda s: None)
    assert code == release.EXIT_DONE
    assert [p[1][3] for p in replay.patches] == WAVES[1:]
    for seen, argv in replay.patches:
        jobs = replay.snapshot(seen - 1)  # what release looked at before patching
        wave = int(
            next(j for j in jobs if j["metadata"]["name"] == argv[3])["metadata"]["labels"][
                "nvcre.nvidia.com/wave"
            ]
        )
        earlier = [j for j in jobs if int(j["metadata"]["labels"]["nvcre.nvidia.com/wave"]) < wave]
        assert earlier and all(_complete(j) for j in earlier)
        assert argv[4:] == ["-n", "default", "--type=merge", "-p", '{"spec":{"suspend":false}}']
    assert said[-1] == "release repeat: all 4 wave(s) completed"


def test_a_failed_trainjob_stops_the_release_and_later_waves_stay_suspended() -> None:
    replay = Replay("wave-1-fails")
    kube = release.Kubectl(["kubectl"], None, runner=replay)
    said: list[str] = []
    code = release.release_loop(kube, "repeat", 0, 3600, False, said.append, sleep=lambda s: None)
    assert code == release.EXIT_FAILED
    assert [p[1][3] for p in replay.patches] == [WAVES[1]]
    assert "repeat-group-1-iter-1 failed; later waves stay suspended" in said[-1]


def test_times_out_while_a_wave_still_runs() -> None:
    replay = Replay("all-waves-complete")
    replay.files = replay.files[:1]  # wave 0 runs forever
    kube = release.Kubectl(["kubectl"], None, runner=replay)
    clock = iter(range(0, 10_000, 60))
    code = release.release_loop(
        kube, "repeat", 60, 600, False, lambda m: None, sleep=lambda s: None,
        clock=lambda: float(next(clock)),
    )  # fmt: skip
    assert code == release.EXIT_TIMEOUT
    assert replay.patches == []


@pytest.mark.parametrize(
    ("step", "expected"),
    [(0, ()), (1, (WAVES[1],)), (3, (WAVES[2],)), (7, ())],
    ids=["wave-0-running-nothing-due", "wave-0-done-releases-wave-1",
         "wave-1-done-releases-wave-2", "all-done"],
)  # fmt: skip
def test_decide_on_each_recorded_state(step: int, expected: tuple[str, ...]) -> None:
    jobs = Replay("all-waves-complete").snapshot(step)
    assert release.decide(jobs).release == expected


def test_the_cli_drives_kubectl_through_the_documented_seam(tmp_path: Path) -> None:
    log = tmp_path / "patches.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "krm_fn", "release", "repeat", "-n", "default", "--poll", "0",
         "--kubectl", f"{sys.executable} {HERE / 'replay_kubectl.py'}"],
        capture_output=True, text=True, check=False,
        env={"REPLAY_DIR": str(RECORDED / "all-waves-complete"), "REPLAY_LOG": str(log),
             "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    patched = [json.loads(line)["argv"][2] for line in log.read_text().splitlines()]
    assert patched == WAVES[1:]
    assert "all 4 wave(s) completed" in proc.stderr
