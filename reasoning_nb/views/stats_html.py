"""The HTML view of :class:`~reasoning_nb.views.stats.TraceStats`: the warnings every run shares,
the table, the chart of reasoning tokens by preset (:mod:`.stats_chart`), the legend and the
notes. Every label comes from a notebook, so all text is escaped; prompts and models are
shortened, whole in their tooltips. Only inline styles the notebook sanitizer keeps are used, so
an untrusted notebook looks the same as a trusted one.
"""

from __future__ import annotations

import html
from typing import Any

from ..core.text import clip
from .stats_chart import chart_html
from .stats_table import (
    SHOWN_CHARS,
    cell_text,
    is_number,
    laid_out,
    legend,
    plotted,
    seconds,
    td,
    warning_lines,
)

SMALL = "font-size:0.85em"
_UNCHARTED_ROW = '<tr style="opacity:0.6" title="not in the chart: only complete runs are">'


def html_view(rows: list[dict[str, Any]], notes: list[str]) -> str:
    e = html.escape
    out = ['<div class="reasoning-nb-stats">']
    if rows:
        _, shown, columns = laid_out(rows)
        out.extend(f'<div style="{SMALL}">{e(line)}</div>' for line in warning_lines(rows))
        out.append('<table style="font-size:0.9em;margin:0.3em 0"><thead><tr>')
        for key, title, tip in columns:
            align = "right" if is_number(key) else "left"
            look = f"padding:1px 6px;text-align:{align};vertical-align:bottom"
            out.append(f'<th style="{look}" title="{e(tip)}">{e(title)}</th>')
        out.append("</tr></thead><tbody>")
        for r in shown:
            out.append("<tr>" if plotted(r) else _UNCHARTED_ROW)
            out.extend(_cell(r, key) for key, _, _ in columns)
            out.append("</tr>")
        out.append("</tbody></table>")
        out.append(chart_html(rows))
        out.extend(f'<div style="{SMALL};opacity:0.7">{e(line)}</div>' for line in legend(rows))
    else:
        out.append("<p>No traces.</p>")
    out.extend(f'<div style="{SMALL}">⚠ {e(n)}</div>' for n in notes)
    out.append("</div>")
    return "".join(out)


def _cell(r: dict[str, Any], key: str) -> str:
    """One row's cell, the whole text in its tooltip where it is cut. Where the area is narrow,
    a model id may break at its hyphens and a row's own warnings may wrap; nothing else does."""
    if key in ("prompt", "model"):
        whole = cell_text(r, key, full=True)
        short = clip(whole, SHOWN_CHARS[key])
        return td(short, wraps=key == "model", tip=whole if short != whole else "")
    if key == "warnings":
        whole = cell_text(r, key, full=True)
        return td(cell_text(r, key), wraps=True, style="min-width:8em", tip=whole)
    tip = ""
    if key == "reasoning_ms" and r["buffered"] and r["reasoning_ms"] is not None:
        tip = f"measured {seconds(r['reasoning_ms'])}"
    return td(cell_text(r, key), number=is_number(key), tip=tip)
