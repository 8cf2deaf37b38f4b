"""Format values for people: byte sizes, bandwidths, durations, ratios.

Invariants:
    * A missing value (``None``) is always shown as ``-``, never as ``0``.
    * Byte sizes use binary units (KiB, MiB, GiB) and are exact when the size is a whole
      number of the unit, so ``8589934592`` is ``8 GiB`` and ``1000000000`` stays exact.
"""

from __future__ import annotations

from krm_fn.report.model import GroupReport, Row, ThresholdResult

MISSING = "-"


def human_bytes(size: int) -> str:
    """``8 B``, ``1 KiB``, ``512 MiB``, ``16 GiB``; sizes that are not whole units stay bytes."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"


def number(value: float | None, digits: int = 2, unit: str = "") -> str:
    """A fixed-point number with an optional unit, or ``-``."""
    if value is None:
        return MISSING
    text = f"{value:.{digits}f}"
    return f"{text} {unit}" if unit else text


def seconds(value: float | None) -> str:
    """``87.3ms``, ``4.78s``, ``7m 52s``, or ``-``."""
    if value is None:
        return MISSING
    if value < 1:
        return f"{value * 1000:.1f}ms"
    if value < 120:
        return f"{value:.2f}s"
    minutes, rest = divmod(round(value), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m {rest}s" if hours else f"{minutes}m {rest}s"


def ratio(value: float | None) -> str:
    """``0.99 (99%)``, or ``-``."""
    if value is None:
        return MISSING
    return f"{value:.3f} ({value * 100:.1f}%)"


def metric(value: float | None, unit: str = "") -> str:
    """A measured metric: 4 decimals for ratios and seconds below 10, else 2; or ``-``."""
    if value is None:
        return MISSING
    return number(value, 4 if unit in ("", "s") and abs(value) < 10 else 2, unit)


def count(value: int | None) -> str:
    """A ``#wrong`` count: exact up to 999999, else in nccl-tests' ``%g`` form."""
    if value is None:
        return "N/A"
    return str(value) if value < 1_000_000 else f"{value:.6g}"


def table_row(row: Row) -> list[str]:
    """A results row as the reports show it: size, out-of-place algbw and busbw, #wrong or error."""
    half = row.out_of_place
    check = count(half.wrong) if half.error is None else f"{half.error:g}"
    return [
        human_bytes(row.size_bytes),
        f"{half.alg_bw_g_bps:.2f}",
        f"{half.bus_bw_g_bps:.2f}",
        check,
    ]


def threshold_value(result: ThresholdResult) -> str:
    """The value a threshold read, or ``-`` and why it is missing."""
    return metric(result.value, result.unit) if result.value is not None else f"- ({result.note})"


SUMMARY_COLUMNS = (
    "Group", "Nodes", "Status", "Avg busbw (GB/s)", "Busbw (GB/s)", "Step time",
    "TFLOP/s/GPU", "Tokens/s", "Goodput",
)  # fmt: skip
"""The one-line-per-group summary that the text and Markdown reports open with."""


def summary_row(group: GroupReport) -> list[str]:
    """A group's cells of :data:`SUMMARY_COLUMNS`; busbw is the sustained value thresholds read."""
    nodes = str(len(group.nodes)) if group.nodes else f"{group.num_nodes or '?'}"
    bandwidth, training = group.bandwidth, group.training
    warmup = " (warm-up)" if training and training.warmup_only else ""
    return [
        group.name,
        nodes,
        group.status,
        number(bandwidth.avg_bus_bandwidth_g_bps if bandwidth else None),
        number(bandwidth.sustained_bus_bandwidth_g_bps if bandwidth else None),
        seconds(training.avg_step_time_seconds if training else None) + warmup,
        number(training.avg_tflops_per_gpu if training else None, 1),
        number(training.tokens_per_second if training else None, 1),
        ratio(training.goodput if training else None),
    ]
