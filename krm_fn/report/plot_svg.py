"""Draw bus bandwidth over message size as an SVG line plot (``--plot FILE.svg``), by hand.

One series per group (per table, and per data type or reduction of a ``-d all``/``-o all``
sweep, so restarting sizes never zigzag), labelled with its status; x is log2 of the size,
y GB/s from 0. A group measured without rows is in the legend with a dashed grey swatch. A
``busBandwidthGBps`` threshold is a dashed red line where its verdict flips.

Invariants:
    * A well-formed, standalone SVG 1.1 document; every text is XML-escaped.
    * Rows of 0 bytes cannot sit on a log axis and are left out (they are in the tables).
    * The y axis starts at 0, so a low bandwidth never looks high.
    * Without any bandwidth data the plot says so instead of drawing empty axes.
    * Every legend entry fits (widths are estimated generously, :data:`CHAR_W` a character);
      with more than two WorkloadRuns the title counts them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from krm_fn.report.format_values import human_bytes
from krm_fn.report.model import Report
from krm_fn.thresholds import parse_threshold

WIDTH = 900
HEIGHT = 520
LEFT, RIGHT, TOP, BOTTOM = 80, 210, 56, 72
PLOT_W = WIDTH - LEFT - RIGHT
PLOT_H = HEIGHT - TOP - BOTTOM
LEGEND_LEFT = LEFT + PLOT_W + 16
CHAR_W = 7.5
"""Upper estimate of the width of one character of 12 px sans-serif text, in pixels."""
LEGEND_ROW = 20
NO_DATA_COLOR = "#9e9e9e"
LIMIT_COLOR = "#c62828"
MAX_TITLE_RUNS = 2
PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
)  # fmt: skip


@dataclass(frozen=True)
class Series:
    """One line of the plot: its legend text and ``(size in bytes, busbw in GB/s)`` points."""

    label: str
    points: tuple[tuple[int, float], ...]


def _tick_step(top: float, ticks: int = 5) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` intervals."""
    raw = top / ticks if top > 0 else 1.0
    scale = 10.0 ** math.floor(math.log10(raw))
    for step in (1.0, 2.0, 2.5, 5.0):
        if step * scale >= raw:
            return step * scale
    return 10.0 * scale


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f" {k.replace('_', '-')}={quoteattr(v)}" for k, v in attrs.items())
    return f'<text x="{_fmt(x)}" y="{_fmt(y)}"{extra}>{escape(body)}</text>'


@dataclass(frozen=True)
class _Axes:
    """The scales: x from 2**x_min to 2**x_max bytes; y from 0 to y_max GB/s in y_ticks steps."""

    x_min: int
    x_max: int
    y_step: float
    y_ticks: int
    y_max: float

    def px(self, size: int) -> float:
        return LEFT + (math.log2(size) - self.x_min) / (self.x_max - self.x_min) * PLOT_W

    def py(self, bw: float) -> float:
        return TOP + PLOT_H - bw / self.y_max * PLOT_H


def render_svg(series: Sequence[Series], title: str, limits: Sequence[str] = ()) -> str:
    """Draw the series (pointless ones in the legend only) and ``limits`` as dashed lines."""
    width, height = _canvas_size(series, title)
    drawn = [s for s in series if any(size > 0 for size, _ in s.points)]
    colors = {id(line): PALETTE[index % len(PALETTE)] for index, line in enumerate(drawn)}
    if drawn:
        top = max(bw for s in drawn for _, bw in s.points)
        lines = [(e, v) for e in limits for v in threshold_lines(e, max(top, 1.0) * 1e4)]
        axes = _axes(drawn, max([top, *(v for _, v in lines)]))
        body = [
            *_grid(axes),
            *_axis_titles(),
            *(part for e, v in lines for part in _limit(axes, e, v)),
            *(part for line in drawn for part in _series_parts(line, colors[id(line)], axes)),
        ]
    else:
        body = [_text(width / 2, height / 2, "No bandwidth data in the logs", text_anchor="middle")]
    legend = _legend(series, [colors.get(id(s)) for s in series])
    return "\n".join([*_head(width, height, title), *body, *legend, "</svg>"]) + "\n"


def _canvas_size(series: Sequence[Series], title: str) -> tuple[int, int]:
    """Size the picture: the default, widened for legend and title, heightened per legend row."""
    legend = 16 + 30 + CHAR_W * max((len(s.label) for s in series), default=0) + 16  # swatch, gap
    width = round(max(WIDTH, LEFT + PLOT_W + legend))
    height = round(max(HEIGHT, TOP + 12 + LEGEND_ROW * len(series) + BOTTOM))
    width = max(width, round(CHAR_W * 1.4 * len(title) + 40))
    return width, height


def _head(width: int, height: int, title: str) -> list[str]:
    """The XML declaration, the ``<svg>`` element, the title and the white background."""
    return [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" '
        'font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        _text(width / 2, 28, title, text_anchor="middle", font_size="16", font_weight="bold"),
    ]


def _limit(axes: _Axes, expression: str, value: float) -> list[str]:
    """A threshold: a dashed line across the plot at ``value``, labelled with its expression."""
    y, label = axes.py(value), f"busBandwidthGBps: {expression}"
    return [
        f'<line x1="{LEFT}" y1="{_fmt(y)}" x2="{LEFT + PLOT_W}" y2="{_fmt(y)}" '
        f'stroke="{LIMIT_COLOR}" stroke-width="1.5" stroke-dasharray="6 4"/>',
        _text(LEFT + PLOT_W - 4, y - 4, label, text_anchor="end", fill=LIMIT_COLOR),
    ]


def _axes(drawn: Sequence[Series], highest: float) -> _Axes:
    """Scale x to whole powers of two around the sizes, y in round steps from 0 past ``highest``."""
    sizes = [size for s in drawn for size, _ in s.points if size > 0]
    x_min = math.floor(math.log2(min(sizes)))
    x_max = math.ceil(math.log2(max(sizes)))
    if x_max == x_min:
        x_min, x_max = x_min - 1, x_max + 1
    top = highest * 1.05
    y_step = _tick_step(top)
    y_ticks = max(1, math.ceil(top / y_step))
    return _Axes(x_min, x_max, y_step, y_ticks, y_step * y_ticks)


def _grid(axes: _Axes) -> list[str]:
    """Grid lines, the plot frame, then the tick labels (at most 12 on the x axis)."""
    parts = ['<g stroke="#e0e0e0" stroke-width="1">']
    label_every = max(1, math.ceil((axes.x_max - axes.x_min + 1) / 12))
    x_labels: list[str] = []
    for k in range(axes.x_min, axes.x_max + 1):
        x = axes.px(2**k)
        parts.append(f'<line x1="{_fmt(x)}" y1="{TOP}" x2="{_fmt(x)}" y2="{TOP + PLOT_H}"/>')
        if (k - axes.x_min) % label_every == 0:
            x_labels.append(
                _text(x, TOP + PLOT_H + 18, human_bytes(2**k), text_anchor="middle", font_size="11")
            )
    y_labels: list[str] = []
    for i in range(axes.y_ticks + 1):
        value = axes.y_step * i
        y = axes.py(value)
        parts.append(f'<line x1="{LEFT}" y1="{_fmt(y)}" x2="{LEFT + PLOT_W}" y2="{_fmt(y)}"/>')
        y_labels.append(_text(LEFT - 8, y + 4, f"{value:g}", text_anchor="end", font_size="11"))
    parts.append("</g>")
    parts.append(
        f'<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" '
        'stroke="#333333" stroke-width="1"/>'
    )
    return [*parts, *x_labels, *y_labels]


def _axis_titles() -> list[str]:
    """The x axis title under the plot and the y axis title turned along its left side."""
    x_title, y_title = "Message size (bytes, log2 scale)", "Bus bandwidth, out-of-place (GB/s)"
    mid_y = TOP + PLOT_H / 2
    turn = f"rotate(-90 20 {_fmt(mid_y)})"
    return [
        _text(LEFT + PLOT_W / 2, HEIGHT - 24, x_title, text_anchor="middle"),
        _text(20, mid_y, y_title, text_anchor="middle", transform=turn),
    ]


def _series_parts(line: Series, color: str, axes: _Axes) -> list[str]:
    """One series: its polyline over the sorted sizes and a point with a tooltip per size."""
    points = sorted((size, bw) for size, bw in line.points if size > 0)
    path = " ".join(f"{_fmt(axes.px(size))},{_fmt(axes.py(bw))}" for size, bw in points)
    parts = [
        f'<g fill="{color}" stroke="{color}">',
        f'<polyline fill="none" stroke-width="2" points="{path}"/>',
    ]
    for size, bw in points:
        tip = f"{line.label}: {human_bytes(size)}, {bw:.2f} GB/s"
        parts.append(
            f'<circle cx="{_fmt(axes.px(size))}" cy="{_fmt(axes.py(bw))}" r="3">'
            f"<title>{escape(tip)}</title></circle>"
        )
    parts.append("</g>")
    return parts


def _legend(series: Sequence[Series], colors: Sequence[str | None]) -> list[str]:
    """One row per series; a series without points gets a dashed grey swatch."""
    parts: list[str] = []
    left = LEGEND_LEFT
    for index, (line, color) in enumerate(zip(series, colors, strict=True)):
        y = TOP + 12 + index * LEGEND_ROW
        dash = "" if color else ' stroke-dasharray="4 3"'
        parts.append(
            f'<line x1="{_fmt(left)}" y1="{y}" x2="{_fmt(left + 24)}" y2="{y}" '
            f'stroke="{color or NO_DATA_COLOR}" stroke-width="3"{dash}/>'
        )
        parts.append(_text(left + 30, y + 4, line.label))
    return parts


def threshold_lines(expression: str, top: float) -> list[float]:
    """Find where a threshold's verdict flips between 0 and ``top`` GB/s.

    It is evaluated on a linear and a logarithmic grid, then bisected where it flips.
    Only :meth:`~krm_fn.thresholds.Threshold.evaluate` is used, so any expression the
    threshold language accepts draws its boundaries: one for ``value >= 300``, two for
    ``value >= 400 && value < 2000``.
    """
    threshold = parse_threshold(expression)
    steps = 400
    linear = [top * i / steps for i in range(steps + 1)]
    logarithmic = [top * 10 ** (-9 * i / steps) for i in range(steps + 1)]
    grid = sorted({*linear, *logarithmic})
    found = []
    for low, high in itertools.pairwise(grid):
        if threshold.evaluate(low) == threshold.evaluate(high):
            continue
        inside = threshold.evaluate(low)
        for _ in range(50):
            mid = (low + high) / 2
            low, high = (mid, high) if threshold.evaluate(mid) == inside else (low, mid)
        found.append(float(f"{high:.6g}"))
    return found


def _series(report: Report) -> tuple[list[Series], list[str], list[str]]:
    """The series of every group measured for bandwidth, its busbw thresholds, the runs drawn."""
    runs = [r for r in report.workload_runs if any(g.bandwidth is not None for g in r.groups)]
    series: list[Series] = []
    limits: list[str] = []
    for run in runs:
        for group in (g for g in run.groups if g.bandwidth is not None):
            name = f"{run.name}/{group.name}" if len(runs) > 1 else group.name
            limits += [t.expression for t in group.thresholds if t.key == "busBandwidthGBps"]
            tables = group.bandwidth.measured if group.bandwidth else []
            if not tables:
                series.append(Series(f"{name} ({group.status}, no rows)", ()))
            for index, table in enumerate(tables, start=1):
                label = f"{name} #{index}" if len(tables) > 1 else name
                for sweep in (sweeps := table.sweeps):
                    first = sweep[0]
                    redop = "" if first.redop in ("", "sum", "none") else f" {first.redop}"
                    shown = f"{label} {first.type}{redop}" if len(sweeps) > 1 else label
                    points = tuple((r.size_bytes, r.out_of_place.bus_bw_g_bps) for r in sweep)
                    series.append(Series(f"{shown} ({group.status})", points))
    return series, list(dict.fromkeys(limits)), [run.name for run in runs]


def plot_report(report: Report) -> str:
    """Draw the busbw of every group of the report, and its busBandwidthGBps thresholds."""
    series, limits, runs = _series(report)
    shown = (
        f"{len(runs)} WorkloadRuns" if len(runs) > MAX_TITLE_RUNS else ", ".join(runs) or "no runs"
    )
    return render_svg(series, f"NCCL bus bandwidth by message size: {shown}", limits)
