"""Draw bus bandwidth over message size as an SVG line plot (``--plot FILE.svg``).

One series per group (per table, when a log holds several), labelled with the group's
status; x on a log2 scale of message size in bytes, y linear in GB/s from 0; axis labels,
grid, legend and a tooltip per point. Written by hand: no plotting library.

Invariants:
    * The output is a well-formed, standalone SVG 1.1 document; every text is XML-escaped.
    * Rows of 0 bytes cannot sit on a log axis and are left out (they are in the tables).
    * The y axis always starts at 0, so a low bandwidth never looks high.
    * Without any bandwidth data the plot says so instead of drawing empty axes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from krm_fn.report.format_values import human_bytes
from krm_fn.report.model import Report

__all__ = ["Series", "plot_report", "render_svg"]

WIDTH = 900
HEIGHT = 520
LEFT, RIGHT, TOP, BOTTOM = 80, 210, 56, 72
PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)


@dataclass(frozen=True)
class Series:
    """One line of the plot.

    Attributes:
        label: the legend text.
        points: ``(size in bytes, busbw in GB/s)`` pairs.

    """

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


def render_svg(series: Sequence[Series], title: str) -> str:
    """Draw the series.

    Args:
        series: the lines to draw.
        title: the plot title.

    Returns:
        The SVG document.

    """
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" '
        'font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        _text(WIDTH / 2, 28, title, text_anchor="middle", font_size="16", font_weight="bold"),
    ]
    drawn = [s for s in series if any(size > 0 for size, _ in s.points)]
    if not drawn:
        body = [
            _text(WIDTH / 2, HEIGHT / 2, "No bandwidth data in the logs", text_anchor="middle"),
        ]
        return "\n".join([*head, *body, "</svg>"]) + "\n"
    sizes = [size for s in drawn for size, _ in s.points if size > 0]
    x_min = math.floor(math.log2(min(sizes)))
    x_max = math.ceil(math.log2(max(sizes)))
    if x_max == x_min:
        x_min, x_max = x_min - 1, x_max + 1
    top = max(bw for s in drawn for _, bw in s.points) * 1.05
    y_step = _tick_step(top)
    y_ticks = max(1, math.ceil(top / y_step))
    y_max = y_step * y_ticks

    def px(size: int) -> float:
        return LEFT + (math.log2(size) - x_min) / (x_max - x_min) * plot_w

    def py(bw: float) -> float:
        return TOP + plot_h - bw / y_max * plot_h

    parts = list(head)
    parts.append('<g stroke="#e0e0e0" stroke-width="1">')
    label_every = max(1, math.ceil((x_max - x_min + 1) / 12))
    x_labels: list[str] = []
    for k in range(x_min, x_max + 1):
        x = px(2**k)
        parts.append(f'<line x1="{_fmt(x)}" y1="{TOP}" x2="{_fmt(x)}" y2="{TOP + plot_h}"/>')
        if (k - x_min) % label_every == 0:
            x_labels.append(
                _text(x, TOP + plot_h + 18, human_bytes(2**k), text_anchor="middle", font_size="11")
            )
    y_labels: list[str] = []
    for i in range(y_ticks + 1):
        value = y_step * i
        y = py(value)
        parts.append(f'<line x1="{LEFT}" y1="{_fmt(y)}" x2="{LEFT + plot_w}" y2="{_fmt(y)}"/>')
        y_labels.append(_text(LEFT - 8, y + 4, f"{value:g}", text_anchor="end", font_size="11"))
    parts.append("</g>")
    parts.append(
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#333333" stroke-width="1"/>'
    )
    parts.extend(x_labels)
    parts.extend(y_labels)
    parts.append(
        _text(
            LEFT + plot_w / 2, HEIGHT - 24, "Message size (bytes, log2 scale)", text_anchor="middle"
        )
    )
    mid_y = TOP + plot_h / 2
    parts.append(
        _text(
            20,
            mid_y,
            "Bus bandwidth, out-of-place (GB/s)",
            text_anchor="middle",
            transform=f"rotate(-90 20 {_fmt(mid_y)})",
        )
    )
    for index, line in enumerate(drawn):
        color = PALETTE[index % len(PALETTE)]
        points = sorted((size, bw) for size, bw in line.points if size > 0)
        path = " ".join(f"{_fmt(px(size))},{_fmt(py(bw))}" for size, bw in points)
        parts.append(f'<g fill="{color}" stroke="{color}">')
        parts.append(f'<polyline fill="none" stroke-width="2" points="{path}"/>')
        for size, bw in points:
            tip = f"{line.label}: {human_bytes(size)}, {bw:.2f} GB/s"
            parts.append(
                f'<circle cx="{_fmt(px(size))}" cy="{_fmt(py(bw))}" r="3">'
                f"<title>{escape(tip)}</title></circle>"
            )
        parts.append("</g>")
        legend_y = TOP + 12 + index * 20
        legend_x = LEFT + plot_w + 16
        parts.append(
            f'<line x1="{legend_x}" y1="{legend_y}" x2="{legend_x + 24}" y2="{legend_y}" '
            f'stroke="{color}" stroke-width="3"/>'
        )
        parts.append(_text(legend_x + 30, legend_y + 4, line.label))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def plot_report(report: Report) -> str:
    """Draw the busbw of every group of the report.

    Args:
        report: the evaluated report.

    Returns:
        The SVG document.

    """
    series: list[Series] = []
    runs = [r for r in report.runs if any(g.nccl is not None for g in r.groups)]
    several_runs = len(runs) > 1
    for run in runs:
        for group in run.groups:
            if group.nccl is None:
                continue
            tables = [t for t in group.nccl.tables if t.rows]
            for index, table in enumerate(tables, start=1):
                label = f"{run.name}/{group.spec.group}" if several_runs else group.spec.group
                if len(tables) > 1:
                    label = f"{label} #{index}"
                label = f"{label} ({group.status})"
                points = tuple((r.size, r.out_of_place.busbw) for r in table.rows)
                series.append(Series(label, points))
    names = ", ".join(r.name for r in runs) or "no runs"
    return render_svg(series, f"NCCL bus bandwidth by message size: {names}")
