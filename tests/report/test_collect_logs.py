"""Which log belongs to which TrainJob."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_fn.report.collect_logs import collect_alone, collect_logs, measurement_sources
from krm_fn.report.loglines import LogSource

NAMES = ["run-group-0", "run-group-1", "run-group-1-overflow", "other-group-0"]


def write(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def names_of(index_sources: dict[str, list[LogSource]]) -> dict[str, list[str]]:
    return {name: [Path(s.name).name for s in sources] for name, sources in index_sources.items()}


def test_file_names_directories_and_pod_logs(tmp_path: Path) -> None:
    write(tmp_path / "run-group-0.log")
    write(tmp_path / "run-group-1.txt")
    write(tmp_path / "run-group-1-overflow" / "b.txt")
    write(tmp_path / "run-group-1-overflow" / "a" / "deep.log")
    write(tmp_path / "nested" / "other-group-0-launcher-0-0-abcde.log")
    write(tmp_path / "nested" / "other-group-0-node-0-1-fghij.log")
    write(tmp_path / "notes.md")
    write(tmp_path / ".hidden" / "run-group-0.log")
    index = collect_logs([str(tmp_path)], NAMES, None)
    assert names_of(index.by_trainjob) == {
        "run-group-0": ["run-group-0.log"],
        "run-group-1": ["run-group-1.txt"],
        "run-group-1-overflow": ["deep.log", "b.txt"],
        "other-group-0": [
            "other-group-0-launcher-0-0-abcde.log",
            "other-group-0-node-0-1-fghij.log",
        ],
    }
    assert index.unmatched == [str(tmp_path / "notes.md")]


def test_symlinked_directories_are_followed_and_each_read_once(tmp_path: Path) -> None:
    """A link to a directory of logs is read (in both modes); a link back up the tree is
    not: the same log read 40 times over (until the path was too long) counted 40 times."""
    logs = tmp_path / "logs"
    write(logs / "run-group-0.log")
    write(tmp_path / "elsewhere" / "run-group-1.log")
    (logs / "linked").symlink_to(tmp_path / "elsewhere")
    (logs / "linked" / "up").symlink_to(logs)  # a cycle
    index = collect_logs([str(logs)], NAMES, None)
    assert names_of(index.by_trainjob) == {
        "run-group-0": ["run-group-0.log"],
        "run-group-1": ["run-group-1.log"],
    }
    assert index.unmatched == []
    assert sorted(names_of(collect_alone([str(logs)], None).by_trainjob)) == [
        "run-group-0",
        "run-group-1",
    ]


def test_exact_names_only_group_does_not_take_its_overflow(tmp_path: Path) -> None:
    write(tmp_path / "run-group-1-overflow.log")
    index = collect_logs([str(tmp_path / "run-group-1-overflow.log")], NAMES, None)
    assert list(index.by_trainjob) == ["run-group-1-overflow"]


def test_trainjob_header_sections_in_one_file_and_stdin(tmp_path: Path) -> None:
    text = "preamble\n# trainjob: run-group-0\nline a\n#  trainjob:  run-group-1 \nline b\n# trainjob: nope\nz\n"
    path = write(tmp_path / "all.txt", text)
    index = collect_logs([str(path)], NAMES, None)
    first = index.by_trainjob["run-group-0"][0]
    assert [(ln.number, ln.text) for ln in first.lines] == [(3, "line a")]
    assert [(ln.number, ln.text) for ln in index.by_trainjob["run-group-1"][0].lines] == [
        (5, "line b")
    ]
    assert index.unmatched == [str(path), f"{path}:6 (# trainjob: nope)"]
    from_stdin = collect_logs(["-"], NAMES, text)
    assert sorted(from_stdin.by_trainjob) == ["run-group-0", "run-group-1"]
    assert from_stdin.unmatched[0] == "<stdin>"


def test_header_wins_over_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path / "run-group-0.log", "# trainjob: run-group-1\nbody\n")
    index = collect_logs([str(path)], NAMES, None)
    assert list(index.by_trainjob) == ["run-group-1"]


def test_undecodable_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "run-group-0.log"
    path.write_bytes(b"ok\n\xff\xfe garbage\n")
    [src] = collect_logs([str(path)], NAMES, None).by_trainjob["run-group-0"]
    assert src.lines[1].text.startswith("\ufffd")


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        collect_logs([str(tmp_path / "absent.log")], NAMES, None)


def test_measurement_sources_follow_the_replicated_job() -> None:
    launcher = LogSource("logs/run-group-0-launcher-0-0-x.log", ())
    node = LogSource("logs/run-group-0-node-0-0-y.log", ())
    assert measurement_sources([node, launcher], "launcher") == [launcher]
    assert measurement_sources([node, launcher], "trainer") == [node, launcher]


def test_launcher_log_saved_without_pod_suffix_carries_the_measurement() -> None:
    from krm_fn.report.collect_logs import measurement_sources
    from krm_fn.report.loglines import LogSource

    launcher = LogSource.from_text("logs/run-group-0-launcher.log", "x")
    node = LogSource.from_text("logs/run-group-0-node-0-0-abcde.log.gz", "y")
    assert measurement_sources([launcher, node], "launcher") == [launcher]
    assert measurement_sources([launcher, node], "node") == [node]
