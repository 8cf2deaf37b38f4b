"""Go time layouts and the timestamp forms found in real logs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from krm_fn.report.timestamps import GoLayout, LayoutError, find_timestamp


@pytest.mark.parametrize(
    ("layout", "text", "expected"),
    [
        pytest.param(
            "2006-01-02T15:04:05.999999999Z",
            "2024-05-01T10:00:00.123456789Z [1,0]<stdout>: 8 2 float",
            datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC),
            id="nccl-profile-kubectl-timestamps",
        ),
        pytest.param(
            "2006-01-02T15:04:05.999999999Z",
            "2024-05-01T10:00:00Z rest",
            datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC),
            id="optional-fraction-absent",
        ),
        pytest.param(
            "2006-01-02 15:04:05.999999",
            " [2024-10-24 09:49:45] iteration 20/ 40000 |",
            datetime(2024, 10, 24, 9, 49, 45, tzinfo=UTC),
            id="megatron-profile",
        ),
        pytest.param(
            "2006-01-02T15:04:05Z07:00",
            "at 2024-01-02T03:04:05+05:30 ok",
            datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=5, minutes=30))),
            id="rfc3339-with-offset",
        ),
        pytest.param(
            "Jan _2 15:04:05 2006",
            "Mar  7 22:14:01 2024 kernel: x",
            datetime(2024, 3, 7, 22, 14, 1, tzinfo=UTC),
            id="month-name-and-padded-day",
        ),
        pytest.param(
            "01/02/06 03:04:05 PM",
            "07/16/24 10:14:01 PM",
            datetime(2024, 7, 16, 22, 14, 1, tzinfo=UTC),
            id="twelve-hour-clock",
        ),
    ],
)
def test_go_layout(layout: str, text: str, expected: datetime) -> None:
    assert GoLayout.compile(layout).search(text) == expected


def test_go_layout_rejects_invalid_dates_and_incomplete_layouts() -> None:
    layout = GoLayout.compile("2006-01-02 15:04:05")
    assert layout.search("2024-13-40 25:00:00") is None
    assert layout.search("no time here") is None
    with pytest.raises(LayoutError, match="must contain year"):
        GoLayout.compile("15:04:05")
    with pytest.raises(LayoutError, match="empty"):
        GoLayout.compile("  ")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        pytest.param(
            "vm-07-05: [2023-11-29 08:52:27,711] [INFO] [logging.py:96:log_dist] step=1",
            datetime(2023, 11, 29, 8, 52, 27, 711000, tzinfo=UTC),
            id="python-logging-comma-millis",
        ),
        pytest.param(
            "[after megatron is initialized] datetime: 2024-07-16 22:14:01",
            datetime(2024, 7, 16, 22, 14, 1, tzinfo=UTC),
            id="megatron-datetime-marker",
        ),
        pytest.param(
            "[2026-01-01 12:08:32] llama-3-8b-node-0-0:194:710 [0] NCCL WARN",
            datetime(2026, 1, 1, 12, 8, 32, tzinfo=UTC),
            id="bracketed-warn-prefix",
        ),
        pytest.param(
            "2024-05-01T10:00:00.5+0200 x",
            datetime(2024, 5, 1, 10, 0, 0, 500000, tzinfo=timezone(timedelta(hours=2))),
            id="compact-offset",
        ),
        pytest.param(
            "[W101 12:08:33.945328381 ProcessGroupNCCL.cpp:1538]", None, id="time-without-date"
        ),
        pytest.param("rank 2024-10-24", None, id="date-without-time"),
    ],
)
def test_find_timestamp(line: str, expected: datetime | None) -> None:
    assert find_timestamp(line) == expected
