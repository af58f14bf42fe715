"""The HTML view of :class:`~reasoning_nb.views.stats.TraceStats`: the escaped table, and the
plot of reasoning tokens by preset, one series per model, as inline SVG drawn by hand. Every label
comes from a notebook, so all text is escaped and shortened. ``auto`` is not a level, so its
point stands off the line. Text and grid take ``currentColor`` and the series colours
(Okabe-Ito) show on either background, so the plot reads in Lab Light and Dark.
"""

from __future__ import annotations

import html
import math
from typing import Any

from ..core.presets import PRESETS
from ..core.text import one_line
from .stats_table import COLUMNS, cell_text, legend, plotted, seconds
from .theme import lab

WIDTH, HEIGHT = 480, 240
LEFT, RIGHT, TOP, BOTTOM = 46, 320, 26, 206  # the plot area; the legend sits right of it
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C6BC8", "#999999")
FONT = 'font-family="sans-serif" font-size="11" fill="currentColor"'
GRID = 'stroke="currentColor" stroke-opacity="0.2"'
HOLLOW = f'style="fill:{lab("layout-color0")}"'  # the page's background
_TD = dict.fromkeys(("source", "prompt", "model"), "white-space:nowrap") | {"warnings": ""}
_UNPLOTTED_ROW = '<tr style="opacity:0.6" title="not plotted: only complete runs are">'
_SMALL = "font-size:0.85em"


def html_view(rows: list[dict[str, Any]], notes: list[str]) -> str:
    e = html.escape
    out = ['<div class="reasoning-nb-stats">']
    if rows:
        out.append('<table style="font-size:0.9em"><thead><tr>')
        out.extend(f'<th title="{e(tip)}">{e(title)}</th>' for _, title, tip in COLUMNS)
        out.append("</tr></thead><tbody>")
        for r in rows:
            out.append("<tr>" if plotted(r) else _UNPLOTTED_ROW)
            for key, _, _ in COLUMNS:
                tip = ""
                if key == "reasoning_ms" and r["buffered"] and r["reasoning_ms"] is not None:
                    tip = f' title="measured {e(seconds(r["reasoning_ms"]))}"'
                style = _TD.get(key, "white-space:nowrap;text-align:right")
                text = e(cell_text(r, key, full=True))
                out.append(f'<td style="padding:1px 6px;{style}"{tip}>{text}</td>')
            out.append("</tr>")
        out.append("</tbody></table>")
        plot = svg(rows)
        if plot:
            out.append(f"<div>{plot}</div>")
        out.extend(f'<div style="{_SMALL};opacity:0.7">{e(line)}</div>' for line in legend(rows))
    else:
        out.append("<p>No traces.</p>")
    out.extend(f'<div style="{_SMALL}">⚠ {e(n)}</div>' for n in notes)
    out.append("</div>")
    return "".join(out)


def useful(rows: list[dict[str, Any]]) -> bool:
    """A plot helps when it compares: two presets, or two runs that reasoned (complete runs)."""
    drawn = [r for r in rows if plotted(r)]
    presets = {r["preset"] for r in drawn}
    return len(presets) >= 2 or sum(1 for r in drawn if r["reasoning_tokens"] > 0) >= 2


def _nice(top: float) -> float:
    """The smallest 1/2/2.5/5 x 10^n at or above ``top``."""
    if top <= 0:
        return 1.0
    scale = 10 ** math.floor(math.log10(top))
    return next(m * scale for m in (1, 2, 2.5, 5, 10) if m * scale >= top)


def _count(value: float) -> str:
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def _label(text: str, limit: int = 22) -> str:
    text = one_line(text) or "(no model)"
    return html.escape(text if len(text) <= limit else text[: limit - 1] + "…")


def svg(rows: list[dict[str, Any]]) -> str | None:
    """None when there is nothing to compare."""
    if not useful(rows):
        return None
    drawn = [r for r in rows if plotted(r)]
    presets = [p for p in PRESETS if any(r["preset"] == p for r in drawn)]
    models = list(dict.fromkeys(r["model"] for r in drawn))
    shown, hidden = models[: len(PALETTE)], len(models) - len(PALETTE)
    top = _nice(max(r["reasoning_tokens"] for r in drawn))
    step = (RIGHT - LEFT) / len(presets)

    def x(preset: str) -> float:
        return LEFT + step * (presets.index(preset) + 0.5)

    def y(tokens: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * min(tokens, top) / top

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="reasoning tokens by preset">',
        f'<text x="{LEFT}" y="14" {FONT} font-weight="bold">reasoning tokens by preset</text>',
    ]
    for i in range(5):  # y grid and labels
        value = top * i / 4
        out.append(
            f'<line x1="{LEFT}" x2="{RIGHT}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
            f'{GRID}/><text x="{LEFT - 4}" y="{y(value) + 4:.1f}" {FONT} '
            f'text-anchor="end">{_count(value)}</text>'
        )
    for preset in presets:  # x labels (presets are our own words)
        out.append(
            f'<text x="{x(preset):.1f}" y="{BOTTOM + 16}" {FONT} '
            f'text-anchor="middle">{html.escape(preset)}</text>'
        )
    for n, model in enumerate(shown):
        color = PALETTE[n]
        mine = [r for r in drawn if r["model"] == model]
        means = [
            (x(p), y(sum(vals) / len(vals)))
            for p in presets
            if p != "auto"  # not a level: its point stands apart from the line
            and (vals := [r["reasoning_tokens"] for r in mine if r["preset"] == p])
        ]
        if len(means) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in means)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for r in mine:
            fill = HOLLOW if r["reasoning_estimated"] else f'fill="{color}"'
            tip = f"{one_line(model)} · {r['preset']} · {r['reasoning_tokens']:,} tokens"
            out.append(
                f'<circle cx="{x(r["preset"]):.1f}" cy="{y(r["reasoning_tokens"]):.1f}" r="3.5" '
                f'{fill} stroke="{color}" stroke-width="1.5">'
                f"<title>{html.escape(tip)}</title></circle>"
            )
        ly = TOP + 6 + 16 * n
        out.append(
            f'<line x1="{RIGHT + 14}" x2="{RIGHT + 30}" y1="{ly}" y2="{ly}" stroke="{color}" '
            f'stroke-width="2"/><text x="{RIGHT + 35}" y="{ly + 4}" {FONT}>{_label(model)}</text>'
        )
    foot = []
    if hidden > 0:
        foot.append(f"+{hidden} more model{'s' if hidden > 1 else ''} not shown")
    if any(r["reasoning_estimated"] for r in drawn):
        foot.append("hollow: estimated")
    if len(drawn) < len(rows):
        left = len(rows) - len(drawn)
        foot.append(f"{left} run{'s' if left > 1 else ''} listed, not drawn")
    for k, text in enumerate(foot):
        out.append(f'<text x="{RIGHT + 14}" y="{BOTTOM - 16 * k}" {FONT}>{text}</text>')
    out.append("</svg>")
    return "".join(out)
