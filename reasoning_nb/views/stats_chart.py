"""The chart of :class:`~reasoning_nb.views.stats.TraceStats`: reasoning tokens by preset, one
bar of block characters per model and preset (the mean of its complete runs).

Text, not a drawing, so it reads the same everywhere a notebook is shown: JupyterLab's sanitizer
drops an untrusted notebook's inline SVG and leaves its labels as run-on text, and it skips an
``image/svg+xml`` output altogether; GitHub, exports and a terminal show text as text. Labels come
from a notebook, so every one is escaped and shortened.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from ..core.presets import PRESETS
from ..core.text import clip
from .stats_table import plain_lines, plotted, td

TITLE = "reasoning tokens by preset"
BAR_CHARS = 24
"""The longest bar, in characters (eighths of a character are drawn with partial blocks)."""
EIGHTHS = "▏▎▍▌▋▊▉█"
MAX_MODELS = 8
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C6BC8", "#999999")
"""Okabe-Ito colours (and two more), told apart by colour-blind readers, on Light and Dark."""


@dataclass(frozen=True)
class Bar:
    model: str
    preset: str
    tokens: int  # the mean over ``runs``
    runs: int
    estimated: bool  # any of the runs counted from the text's length

    def value(self) -> str:
        return ("≈" if self.estimated else "") + f"{self.tokens:,}"

    def runs_text(self) -> str:
        return f"mean of {self.runs} runs" if self.runs > 1 else ""


def useful(rows: list[dict[str, Any]]) -> bool:
    """A chart helps when it compares: two presets, or two runs that reasoned (complete runs)."""
    drawn = [r for r in rows if plotted(r)]
    presets = {r["preset"] for r in drawn}
    return len(presets) >= 2 or sum(1 for r in drawn if r["reasoning_tokens"] > 0) >= 2


def bars(rows: list[dict[str, Any]]) -> tuple[list[Bar], int]:
    """The bars, model by model in the order first seen, presets weakest first, and how many
    models were left out (past ``MAX_MODELS``); no bars when nothing compares."""
    if not useful(rows):
        return [], 0
    drawn = [r for r in rows if plotted(r)]
    models = list(dict.fromkeys(r["model"] for r in drawn))
    out = []
    for model in models[:MAX_MODELS]:
        for preset in PRESETS:
            runs = [r for r in drawn if r["model"] == model and r["preset"] == preset]
            if runs:
                mean = round(sum(r["reasoning_tokens"] for r in runs) / len(runs))
                estimated = any(r["reasoning_estimated"] for r in runs)
                out.append(Bar(model, preset, mean, len(runs), estimated))
    return out, max(0, len(models) - MAX_MODELS)


def bar_text(tokens: int, top: int) -> str:
    """Blocks as long as ``tokens`` is of ``top``; a sliver for a count too small to see."""
    eighths = round(BAR_CHARS * 8 * tokens / top) if top > 0 else 0
    if tokens > 0:
        eighths = max(eighths, 1)
    full, part = divmod(eighths, 8)
    return "█" * full + (EIGHTHS[part - 1] if part else "")


def _rows(found: list[Bar]) -> list[tuple[str, Bar]]:
    """(model label, shown on a model's first bar only; the bar)."""
    return [
        (clip(b.model, 28) if k == 0 or found[k - 1].model != b.model else "", b)
        for k, b in enumerate(found)
    ]


def _footer(hidden: int) -> list[str]:
    return [f"+{hidden} more model{'s' if hidden > 1 else ''} not shown"] if hidden else []


def chart_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The chart as lines of text (empty when nothing compares)."""
    found, hidden = bars(rows)
    if not found:
        return []
    top = max(b.tokens for b in found)
    table = [
        [label, b.preset, bar_text(b.tokens, top), b.value(), b.runs_text()]
        for label, b in _rows(found)
    ]
    right = (False, False, False, True, False)
    return [TITLE, *plain_lines(table, right=right), *_footer(hidden)]


def chart_html(rows: list[dict[str, Any]]) -> str:
    """The chart as an HTML table; the bars take a colour per model (empty when nothing
    compares)."""
    found, hidden = bars(rows)
    if not found:
        return ""
    e = html.escape
    top = max(b.tokens for b in found)
    colour = {m: PALETTE[k] for k, m in enumerate(dict.fromkeys(b.model for b in found))}
    out = [
        '<div class="reasoning-nb-stats-chart" style="margin-top:0.6em">',
        f'<div style="font-weight:bold">{TITLE}</div>',
        '<table style="font-size:0.9em;margin:0"><tbody>',
    ]
    for label, b in _rows(found):
        tip = e(f"{b.model} · {b.preset} · {b.value()} reasoning tokens")
        runs = td(b.runs_text(), style="opacity:0.7")
        bar = td(bar_text(b.tokens, top), style=f"color:{colour[b.model]}", cls="reasoning-nb-bar")
        cells = td(label) + td(b.preset) + bar + td(b.value(), number=True) + runs
        out.append(f'<tr title="{tip}">{cells}</tr>')
    out.append("</tbody></table>")
    out.extend(f'<div style="font-size:0.85em;opacity:0.7">{e(t)}</div>' for t in _footer(hidden))
    out.append("</div>")
    return "".join(out)


__all__ = ["Bar", "bar_text", "bars", "chart_html", "chart_lines", "useful"]
