"""A finished sweep as the cell's static output: a line of its final figures, the analysis
(``sweep.views``: the summary per model x preset, the plot, the recommendation, the No effect
flags), and every run in a fold; HTML, markdown and text, with a small record in the output's
metadata (``SWEEP_KEY``: the sweep id, the margin and the last progress, never the rows).

It survives a reopen and an export because it is plain output, no widget. Every label comes
from the prompt set or a model, so all of it is escaped; only inline styles the notebook
sanitizer keeps are used, so an untrusted notebook looks the same as a trusted one.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

from ..core.text import clip
from ..sweep import views
from ..sweep.analysis import MARGIN
from ..sweep.bar import count, line, usd
from ..views.markdown_safety import md_escape
from ..views.theme import lab

SWEEP_KEY = "reasoning_nb_sweep"
SHOWN_ROWS = 50  # the rest are in ``_sweep.frame()``
PROMPT_CHARS = 60
_COLUMNS = (  # (row field, title, right-aligned)
    ("prompt", "prompt", False),
    ("model", "model", False),
    ("preset", "preset", False),
    ("status", "status", False),
    ("grade", "grade", True),
    ("reasoning_tokens", "reasoning tokens", True),
    ("cost_usd", "cost", True),
    ("total_ms", "time", True),
)
_SMALL = f"font-size:0.85em;color:{lab('ui-font-color2')}"


def _text(row: Any, key: str) -> str:
    value = getattr(row, key)
    if value is None:
        return "–"
    if key == "prompt":
        return clip(" ".join(value.split()), PROMPT_CHARS)
    if key == "reasoning_tokens":
        return count(value)
    if key == "cost_usd":
        return usd(value)
    if key == "total_ms":
        return f"{value / 1000:.1f} s"
    if key == "grade":
        return f"{value:g}"
    return str(value)


def rows_html(rows: list[Any]) -> str:
    e = html.escape
    out = ['<table style="font-size:0.9em;margin:0.3em 0"><thead><tr>']
    for _, title, right in _COLUMNS:
        out.append(f'<th style="padding:1px 6px;text-align:{"right" if right else "left"}">')
        out.append(f"{e(title)}</th>")
    out.append("</tr></thead><tbody>")
    for row in rows[:SHOWN_ROWS]:
        out.append("<tr>")
        for key, _, right in _COLUMNS:
            align = "right" if right else "left"
            tip = f' title="{e(row.prompt)}"' if key == "prompt" else ""
            out.append(f'<td style="padding:1px 6px;text-align:{align}"{tip}>')
            out.append(f"{e(_text(row, key))}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def rows_text(rows: list[Any]) -> str:
    head = " | ".join(title for _, title, _ in _COLUMNS)
    body = [" | ".join(_text(row, key) for key, _, _ in _COLUMNS) for row in rows[:SHOWN_ROWS]]
    return "\n".join([head, *body])


def _more(rows: list[Any]) -> str:
    hidden = len(rows) - SHOWN_ROWS
    return f"{hidden} more rows: _sweep.frame() has them all." if hidden > 0 else ""


def result_bundle(sweep: Any, margin: float = MARGIN) -> tuple[dict[str, str], dict[str, Any]]:
    """The display bundle of a finished sweep, and its metadata."""
    rows, progress = list(sweep.rows), sweep.progress
    head = f"Sweep {sweep.sweep_id}: {line(progress)}"
    report = views.bundle(rows, margin)
    more = _more(rows)
    e = html.escape
    every = f"{len(rows)} runs, each with its prompt, model, preset, status and grade"
    parts = [
        f'<div class="reasoning-nb-sweep-result"><div style="{_SMALL}">{e(head)}</div>',
        report["text/html"],
        f'<details><summary style="{_SMALL};cursor:pointer">{e(every)}</summary>',
        rows_html(rows),
        f'<div style="{_SMALL}">{e(more)}</div>' if more else "",
        "</details></div>",
    ]
    data = {
        "text/html": "".join(parts),
        "text/markdown": f"*{md_escape(head)}*\n\n{report['text/markdown']}",
        "text/plain": "\n".join(
            filter(None, [head, report["text/plain"], "", rows_text(rows), more])
        ),
    }
    record = {"sweep_id": sweep.sweep_id, "margin": margin, "progress": _plain(progress)}
    return data, {SWEEP_KEY: record}


def _plain(progress: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(progress):
        return dataclasses.asdict(progress)
    return dict(vars(progress))


__all__ = ["SWEEP_KEY", "result_bundle"]
