"""Issue 28: the report on every real log of data/real, checked against data/real/README.md.

Each row of the README's table names a file and what the report must say about it when the
log is read alone (no rendered objects, no thresholds): the verdict with exactly its failure
kinds, and the numbers the log states, written there by reading the log. The cell grammar is
explained above the table; an item this test does not understand fails it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from krm_fn.report.collect_logs import collect_alone
from krm_fn.report.evaluate import evaluate
from krm_fn.report.load_rendered import groups_from_logs
from krm_fn.report.logprofiles import BUILTIN_PROFILES
from krm_fn.report.model import GroupReport

from .conftest import REAL

ROW_RE = re.compile(r"^\| `(?P<file>[^`]+\.txt)` \|.*\| (?P<expected>[^|]+) \|$")


def _table() -> dict[str, str]:
    rows = [ROW_RE.match(line) for line in (REAL / "README.md").read_text().splitlines()]
    return {m.group("file"): m.group("expected").strip() for m in rows if m is not None}


TABLE = _table()


def judge_alone(path: Path) -> GroupReport:
    index = collect_alone([str(path)], None)
    report = evaluate(groups_from_logs(index.by_trainjob, BUILTIN_PROFILES), index)
    (group,) = report.groups
    return group


def _close(actual: float | None, written: str) -> bool:
    """Equal at the precision written (``24.19`` matches 24.186..24.194)."""
    decimals = len(written.split(".")[1]) if "." in written else 0
    return actual is not None and round(actual, decimals) == float(written)


def _status(group: GroupReport, item: str) -> None:
    status, _, kinds = item.partition(": ")
    assert group.status == status
    assert sorted({f.kind for f in group.failures}) == sorted(kinds.split(", ") if kinds else [])


def _bandwidth(group: GroupReport, item: str) -> bool:
    bw = group.bandwidth
    if m := re.fullmatch(r"collective (\S+)", item):
        return bw is not None and bw.collective == m.group(1)
    if m := re.fullmatch(r"ranks (\d+) on (\d+) hosts", item):
        return bw is not None and (bw.rank_count, len(bw.hosts)) == tuple(map(int, m.groups()))
    if m := re.fullmatch(r"busbw peak (\S+), sustained (\S+)", item):
        peak, sustained = m.groups()
        return (
            bw is not None
            and _close(bw.peak_bus_bandwidth_g_bps, peak)
            and _close(bw.sustained_bus_bandwidth_g_bps, sustained)
        )
    if m := re.fullmatch(r"avg (\S+)", item):
        return bw is not None and _close(bw.avg_bus_bandwidth_g_bps, m.group(1))
    if m := re.fullmatch(r"erratic (\d+) rows from (\d+)", item):
        sizes = [s for t in (bw.tables if bw else []) for s in t.erratic_sizes]
        return (len(sizes), sizes[0] if sizes else None) == tuple(map(int, m.groups()))
    raise AssertionError(f"unknown item {item!r}")


def _training(group: GroupReport, item: str) -> bool:
    t = group.training
    assert t is not None, "no training read"
    if m := re.fullmatch(r"(\w+) steps (\d+)-(\d+) of (\d+|\?)", item):
        fmt, first, last, total = m.groups()
        expected_total = None if total == "?" else int(total)
        return (t.format, t.first_iteration, t.last_iteration, t.train_iterations) == (
            fmt, int(first), int(last), expected_total,
        )  # fmt: skip
    numbers = {
        r"step (\S+) s": t.avg_step_time_seconds,
        r"TFLOP/s (\S+)": t.avg_tflops_per_gpu,
        r"tokens/s/GPU (\S+)": t.tokens_per_second_per_gpu,
        r"loss (\S+)": t.last_loss,
        r"goodput (\S+)": t.goodput,
    }
    for pattern, actual in numbers.items():
        if m := re.fullmatch(pattern, item):
            return _close(actual, m.group(1))
    if item in ("no goodput", "warm-up only"):
        return t.goodput is None if item == "no goodput" else t.warmup_only
    raise AssertionError(f"unknown item {item!r}")


def test_every_file_has_a_row_and_every_row_a_file() -> None:
    files = {p.name for p in REAL.glob("*.txt")}
    assert set(TABLE) == files
    assert len(files) >= 55  # 11 from issue 15, 44 from issue 28


@pytest.mark.parametrize("name", sorted(TABLE), ids=lambda n: n.removesuffix(".txt"))
def test_the_report_on_each_real_log_says_what_the_log_says(name: str, tmp_path: Path) -> None:
    # the log alone: line 1 (our SOURCE line) blanked, so that nothing we wrote is read,
    # and line N stays line N
    text = (REAL / name).read_text("utf-8")
    (tmp_path / name).write_text("\n" + text.split("\n", 1)[1], "utf-8")
    group = judge_alone(tmp_path / name)
    status, *items = TABLE[name].split(" · ")
    _status(group, status)
    for item in items:
        reader = _bandwidth if item.split()[0] in _BANDWIDTH_WORDS else _training
        assert reader(group, item), (item, group.model_dump(exclude={"notes"}))


_BANDWIDTH_WORDS = {"collective", "ranks", "busbw", "avg", "erratic"}


def test_no_log_that_cannot_be_judged_passes() -> None:
    # A pass needs measured data and no failure: every Passed row states numbers.
    for name, expected in TABLE.items():
        if expected.startswith("Passed"):
            assert " · " in expected, name
