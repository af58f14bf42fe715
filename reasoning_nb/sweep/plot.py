"""The sweep's plot: mean grade against cost (or output tokens) per run, a point per model x
preset, the Pareto front joined by a dashed line and filled, the recommended presets ringed.

matplotlib draws it where it is installed (a PNG), else our own SVG. Either way it is shown as an
``<img>`` with a ``data:`` URL inside HTML, for the one form that every notebook front end shows,
trusted or not: JupyterLab's sanitizer keeps an ``<img>`` and checks the scheme of ``href`` and
``cite`` only, while it strips an untrusted notebook's inline ``<svg>`` and skips an
``image/svg+xml`` output altogether. An image keeps its own colours (Lab's CSS variables do not
reach it), so it brings an opaque white ground and reads the same in Light and Dark. Labels come
from a notebook: shortened, escaped, never read as markup or mathtext.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ..core.text import clip
from ..views.stats_chart import PALETTE
from ..views.stats_table import plain_lines
from .analysis import (
    MARGIN,
    MEASURE_LABEL,
    Measure,
    Point,
    compared_prompts,
    front,
    measure_of,
    points,
    recommend,
)
from .rows import Row

Engine = Literal["auto", "matplotlib", "svg"]
WIDTH, HEIGHT = 640, 380
"""The image's size in CSS pixels (the PNG has twice as many, for sharp text)."""
LEFT, RIGHT, TOP, BOTTOM = 64, 186, 48, 50
"""Room around the axes: tick labels left and below, the legend right, the title above."""
INK, FAINT, GRID, GROUND = "#24292f", "#57606a", "#d0d7de", "#ffffff"
MAX_MODELS = len(PALETTE)
LABEL_CHARS = 22


@dataclass(frozen=True)
class Plot:
    """What the plot shows, whichever engine draws it."""

    points: list[Point]
    front: list[Point]
    chosen: list[Point]
    """The recommended points (one per model, and one overall)."""
    measure: Measure
    models: list[str]
    """In the order of their colours; models past ``MAX_MODELS`` are left out and counted."""
    hidden: int
    prompts: int
    """The prompts the grades are means over: those graded under every model x preset."""
    of: int
    """The prompts of the sweep."""

    @property
    def note(self) -> str:
        """Which prompts the grades are over, when a failed run left some out."""
        if self.prompts == self.of:
            return ""
        return f"grades over the {self.prompts} of {self.of} prompts graded under every preset"

    @property
    def title(self) -> str:
        return f"mean grade against {MEASURE_LABEL[self.measure]}"

    def colour(self, model: str) -> str:
        return PALETTE[self.models.index(model)]


def layout(rows: Iterable[Row], measure: str = "auto", margin: float = MARGIN) -> Plot:
    """What to plot: grades over the prompts graded under every model x preset, as the
    recommendation across models compares them (so its ring sits where it says)."""
    rows = list(rows)
    kind = measure_of(rows, measure)
    common = compared_prompts(rows)
    found = points(rows, kind, common)
    models = list(dict.fromkeys(p.model for p in found))
    shown = [p for p in found if p.model in models[:MAX_MODELS]]
    chosen = list(dict.fromkeys(r.choice for r in recommend(rows, margin, kind)))
    hidden = max(0, len(models) - MAX_MODELS)
    of = len({r.prompt_id for r in rows})
    return Plot(shown, front(shown), chosen, kind, models[:MAX_MODELS], hidden, len(common), of)


# -- axes -----------------------------------------------------------------------------------


def ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round values from ``low`` to ``high``, at most ``most`` + 1, a step of 1, 2 or 5 x 10^k."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(s * power for s in (1, 2, 5, 10) if s * power >= raw)
    first = math.ceil(low / step - 1e-9)
    count = math.floor(high / step + 1e-9) - first
    return [round((first + k) * step, 12) for k in range(count + 1)]


def tick_label(value: float, measure: Measure) -> str:
    if measure == "tokens":
        return f"{value / 1000:g}k" if value >= 10_000 else f"{value:,.0f}"
    return f"{value:.6g}"


def x_range(plot: Plot) -> tuple[float, float]:
    """From 0 (so the distances read as ratios) to a little past the costliest point."""
    top = max((p.x for p in plot.points), default=0.0)
    return 0.0, top * 1.08 if top > 0 else 1.0


def y_range(plot: Plot) -> tuple[float, float]:
    """0 to 1 for grades that fit there (the default check's), else the grades' own span."""
    grades = [p.grade for p in plot.points]
    low, high = min(grades, default=0.0), max(grades, default=1.0)
    if low >= 0 and high <= 1:
        low, high = 0.0, 1.0
    pad = (high - low) * 0.06 or 0.5  # room for a ring and a label at the top and bottom
    return low - pad, high + pad


# -- text -----------------------------------------------------------------------------------


def lines(plot: Plot) -> list[str]:
    """The plot as text: one line per point, cheapest first, with its marks."""
    if not plot.points:
        return []
    head = ["model", "preset", "tokens" if plot.measure == "tokens" else "cost", "grade", ""]
    table = [head]
    for p in sorted(plot.points, key=lambda p: (p.x, -p.grade)):
        marks = [
            m for m, on in (("front", p in plot.front), ("recommended", p in plot.chosen)) if on
        ]
        x = f"{p.x:,.0f}" if plot.measure == "tokens" else f"${p.x:.4f}"
        table.append(
            [clip(p.model, 40), clip(p.preset, 12), x, f"{p.grade:.3g}", " · ".join(marks)]
        )
    more = [f"+{plot.hidden} more models not plotted"] if plot.hidden else []
    note = [plot.note] if plot.note else []
    return [plot.title, *note, *plain_lines(table, right=(False, False, True, True, False)), *more]


# -- our own SVG ----------------------------------------------------------------------------


def svg(plot: Plot) -> str:
    """The plot as a standalone SVG document (every label escaped)."""
    e = html.escape
    x0, x1 = x_range(plot)
    y0, y1 = y_range(plot)
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        return LEFT + (x - x0) / (x1 - x0) * inner_w

    def sy(y: float) -> float:
        return TOP + inner_h - (y - y0) / (y1 - y0) * inner_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" '
        f'font-size="12" role="img"><title>{e(plot.title)}</title>',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="{GROUND}" rx="4"/>',
        f'<text x="{LEFT}" y="22" fill="{INK}" font-size="14" font-weight="bold">'
        f"{e(plot.title)}</text>",
        _text(LEFT, 38, plot.note, "start", FAINT) if plot.note else "",
    ]
    for t in ticks(x0, x1):
        out.append(_line(sx(t), TOP, sx(t), TOP + inner_h, GRID))
        out.append(_text(sx(t), TOP + inner_h + 16, tick_label(t, plot.measure), "middle", FAINT))
    for t in ticks(y0, y1, 5):
        out.append(_line(LEFT, sy(t), LEFT + inner_w, sy(t), GRID))
        out.append(_text(LEFT - 6, sy(t) + 4, f"{t:g}", "end", FAINT))
    out.append(
        f'<rect x="{LEFT}" y="{TOP}" width="{inner_w}" height="{inner_h}" fill="none" '
        f'stroke="{FAINT}"/>'
    )
    out.append(_text(LEFT + inner_w / 2, HEIGHT - 10, MEASURE_LABEL[plot.measure], "middle", INK))
    out.append(
        f'<text transform="translate(16 {TOP + inner_h / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" fill="{INK}">mean grade</text>'
    )
    if len(plot.front) > 1:
        path = " ".join(f"{sx(p.x):.1f},{sy(p.grade):.1f}" for p in plot.front)
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{INK}" stroke-width="1.5" '
            'stroke-dasharray="5 4"/>'
        )
    for p in plot.points:
        cx, cy, colour = sx(p.x), sy(p.grade), plot.colour(p.model)
        fill = colour if p in plot.front else GROUND
        said = f"grade {p.grade:.3g}, {_amount(p, plot.measure)}"
        tip = e(f"{clip(p.model, 80)} · {clip(p.preset, 20)}: {said}")
        out.append(
            f'<g><title>{tip}</title><circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{fill}" '
            f'stroke="{colour}" stroke-width="2"/></g>'
        )
        if p in plot.chosen:
            out.append(
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="10" fill="none" stroke="{INK}" '
                'stroke-width="1.5"/>'
            )
        right = cx < LEFT + inner_w - 70
        anchor, dx = ("start", 12) if right else ("end", -12)
        out.append(_text(cx + dx, cy - 6, clip(p.preset, 12), anchor, INK))
    out.extend(_legend(plot))
    out.append("</svg>")
    return "".join(out)


def _amount(p: Point, measure: Measure) -> str:
    return f"{p.x:,.0f} output tokens" if measure == "tokens" else f"${p.x:.4f} a run"


def _line(xa: float, ya: float, xb: float, yb: float, colour: str) -> str:
    return (
        f'<line x1="{xa:.1f}" y1="{ya:.1f}" x2="{xb:.1f}" y2="{yb:.1f}" stroke="{colour}" '
        'stroke-width="1"/>'
    )


def _text(x: float, y: float, text: str, anchor: str, colour: str) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{colour}">'
        f"{html.escape(text)}</text>"
    )


def _legend(plot: Plot) -> list[str]:
    x, y = WIDTH - RIGHT + 16, TOP + 8
    out = []
    for model in plot.models:
        out.append(f'<circle cx="{x + 5}" cy="{y - 4}" r="5" fill="{plot.colour(model)}"/>')
        out.append(_text(x + 16, y, clip(model, LABEL_CHARS), "start", INK))
        y += 18
    if plot.hidden:
        out.append(_text(x, y, f"+{plot.hidden} more not plotted", "start", FAINT))
        y += 18
    y += 8
    out.append(f'<circle cx="{x + 5}" cy="{y - 4}" r="5" fill="{FAINT}"/>')
    out.append(_text(x + 16, y, "on the Pareto front", "start", INK))
    y += 18
    out.append(
        f'<circle cx="{x + 5}" cy="{y - 4}" r="5" fill="{GROUND}" stroke="{FAINT}" '
        'stroke-width="2"/>'
    )
    out.append(_text(x + 16, y, "beaten by one", "start", INK))
    y += 18
    out.append(
        f'<circle cx="{x + 5}" cy="{y - 4}" r="8" fill="none" stroke="{INK}" stroke-width="1.5"/>'
    )
    out.append(_text(x + 16, y, "recommended", "start", INK))
    return out


# -- matplotlib -----------------------------------------------------------------------------


def figure(plot: Plot) -> Any:
    """The plot as a matplotlib ``Figure`` (ImportError without matplotlib). No pyplot: nothing
    global changes and the kernel shows nothing by itself."""
    from matplotlib.figure import Figure  # optional: the SVG is drawn without it

    fig = Figure(figsize=(WIDTH / 100, HEIGHT / 100), dpi=100, facecolor=GROUND)
    ax = fig.subplots()
    ax.set_facecolor(GROUND)
    x0, x1 = x_range(plot)
    ax.set_xlim(x0, x1)
    ax.set_ylim(*y_range(plot))
    ax.grid(True, color=GRID, linewidth=0.8)
    ax.set_axisbelow(True)
    if len(plot.front) > 1:
        xs, ys = [p.x for p in plot.front], [p.grade for p in plot.front]
        ax.plot(xs, ys, linestyle="--", color=INK, linewidth=1.2)
    for model in plot.models:
        mine = [p for p in plot.points if p.model == model]
        colour = plot.colour(model)
        faces = [colour if p in plot.front else GROUND for p in mine]
        ax.scatter(
            [p.x for p in mine],
            [p.grade for p in mine],
            s=50,
            c=faces,
            edgecolors=colour,
            linewidths=2,
            zorder=3,
        )
        for p in mine:
            ax.annotate(
                clip(p.preset, 12),
                (p.x, p.grade),
                xytext=(8, 6),
                textcoords="offset points",
                color=INK,
                fontsize=9,
                parse_math=False,
            )
    if plot.chosen:
        ax.scatter(
            [p.x for p in plot.chosen],
            [p.grade for p in plot.chosen],
            s=260,
            facecolors="none",
            edgecolors=INK,
            linewidths=1.5,
            zorder=4,
        )
    ax.set_xlabel(MEASURE_LABEL[plot.measure], color=INK)
    ax.set_ylabel("mean grade", color=INK)
    ax.set_title(plot.title, color=INK, loc="left", fontsize=11, pad=14 if plot.note else 6)
    if plot.note:
        ax.text(0, 1.01, plot.note, transform=ax.transAxes, color=FAINT, fontsize=8)
    ax.tick_params(colors=FAINT)
    ax.legend(
        handles=_mpl_legend(plot),
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        frameon=False,
    )
    fig.subplots_adjust(left=0.1, right=0.7, top=0.9, bottom=0.14)
    return fig


def _mpl_legend(plot: Plot) -> list[Any]:
    """The SVG's legend: a filled dot per model, then what the marks mean."""
    from matplotlib.lines import Line2D

    def mark(label: str, face: str, edge: str, size: float = 7, line: str = "") -> Any:
        return Line2D(
            [],
            [],
            marker="o" if not line else "",
            linestyle=line or "none",
            color=edge,
            markerfacecolor=face,
            markeredgecolor=edge,
            markeredgewidth=1.5,
            markersize=size,
            label=label,
        )

    models = [mark(_mpl_label(m), plot.colour(m), plot.colour(m)) for m in plot.models]
    return [
        *models,
        mark("on the Pareto front", FAINT, FAINT),
        mark("beaten by one", GROUND, FAINT),
        mark("recommended", "none", INK, size=13),
        mark("Pareto front", "none", INK, line="--"),
    ]


def _mpl_label(text: str) -> str:
    """A legend label matplotlib shows as written ("$x$" would be mathtext)."""
    return clip(text, LABEL_CHARS).replace("$", r"\$")


def png(plot: Plot) -> bytes:
    buf = io.BytesIO()
    figure(plot).savefig(buf, format="png", dpi=200, facecolor=GROUND)
    return buf.getvalue()


# -- as shown -------------------------------------------------------------------------------


def engine_of(engine: Engine = "auto") -> Literal["matplotlib", "svg"]:
    if engine not in ("auto", "matplotlib", "svg"):
        raise ValueError(f"engine must be 'auto', 'matplotlib' or 'svg', not {engine!r}.")
    if engine != "auto":
        return engine
    try:
        import matplotlib  # noqa: F401  # optional: only its presence is asked
    except ImportError:
        return "svg"
    return "matplotlib"


def image_html(plot: Plot, engine: Engine = "auto") -> str:
    """The plot as an ``<img>`` of a ``data:`` URL (why: the module's docstring); empty when
    there is nothing to plot."""
    if not plot.points:
        return ""
    if engine_of(engine) == "matplotlib":
        kind, data = "image/png", png(plot)
    else:
        kind, data = "image/svg+xml", svg(plot).encode()
    alt = html.escape(f"{plot.title}: {len(plot.points)} model x preset points")
    url = f"data:{kind};base64,{base64.b64encode(data).decode()}"
    return (
        f'<img class="reasoning-nb-sweep-plot" src="{url}" alt="{alt}" width="{WIDTH}" '
        f'style="max-width:100%;height:auto;border-radius:4px">'
    )


def bundle(
    rows: Iterable[Row], measure: str = "auto", margin: float = MARGIN, engine: Engine = "auto"
) -> dict[str, str]:
    """A MIME bundle of the plot alone: the image in HTML, and its text."""
    plot = layout(rows, measure, margin)
    text = "\n".join(lines(plot)) or "nothing to plot: no model x preset has a grade"
    return {"text/html": image_html(plot, engine) or html.escape(text), "text/plain": text}


__all__ = ["Plot", "bundle", "engine_of", "figure", "image_html", "layout", "lines", "png", "svg"]
