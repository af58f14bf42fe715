"""The columns of the stats table, and how each cell reads: one source for the text, markdown
and HTML views of :class:`~reasoning_nb.views.stats.TraceStats`.

The table fits a notebook's output area (about 968 px in Lab): a warning every run shares is said
once above it, not on every row, and a column no row fills (prompt, cost, warnings) is left out,
as is the status when every run is complete (the legend says so).
"""

from __future__ import annotations

import html
from typing import Any

from ..core import cost
from ..core.presets import PRESETS
from ..core.text import clip, one_line
from .markdown_safety import md_escape

PROMPT_CHARS = 40
"""What a row keeps of the prompt (the HTML cell shows less, the rest in its tooltip)."""
SHOWN_CHARS = {"prompt": 18, "model": 40}
"""A prompt or model in the HTML table, cut with an ellipsis (its whole text is the tooltip): the
prompt stays one line, a long model id may wrap at its hyphens, so the table fits the area."""

COLUMNS = (
    ("source", "run", "where the trace came from"),
    ("prompt", "prompt", f"the question's first {PROMPT_CHARS} characters"),
    ("model", "model", ""),
    ("preset", "preset", ""),
    ("status", "status", ""),
    ("reasoning_tokens", "reasoning tok", "≈: estimated from the text's length"),
    ("answer_tokens", "answer tok", "≈: estimated from the text's length"),
    ("first_token_ms", "first token", "request to the first token of either kind"),
    ("reasoning_ms", "thinking", "first reasoning token to first answer token"),
    ("total_ms", "total", "request to the end"),
    ("tokens_per_s", "tok/s", "output tokens / (total - first token)"),
    ("cost_usd", "cost", "an estimate from published prices; blank: a local model or unknown"),
    ("warnings", "warnings", ""),
)
LEGEND = (
    "≈ estimated from the text's length · first token: of either kind · "
    "buffered: the reasoning arrived in one piece, so its time is not thinking time"
)
UNPLOTTED = (
    "the chart shows complete runs only: cancelled, failed, truncated and replayed runs "
    "are listed, not charted"
)


def plotted(r: dict[str, Any]) -> bool:
    """A complete run, not a replay, at a known preset (why: ``views.stats``'s docstring)."""
    return r["status"] == "complete" and not r.get("replay") and r["preset"] in PRESETS


def shared_warnings(rows: list[dict[str, Any]]) -> list[str]:
    """The warnings every row has (a demo model's, a provider's): said once, above the table."""
    if not rows:
        return []
    common = set(rows[0]["warnings"]).intersection(*(r["warnings"] for r in rows[1:]))
    return [w for w in dict.fromkeys(rows[0]["warnings"]) if w in common]


def warning_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The shared warnings as the lines above the table."""
    every = "every run: " if len(rows) > 1 else ""
    return [f"⚠ {every}{w}" for w in shared_warnings(rows)]


def laid_out(rows: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]], tuple]:
    """(the shared warnings; the rows, each with only its own warnings; the columns shown)."""
    shared = shared_warnings(rows)
    own = [{**r, "warnings": [w for w in r["warnings"] if w not in shared]} for r in rows]
    filled = {
        "prompt": any(r["prompt"] for r in own),
        "cost_usd": any(r["cost_usd"] is not None for r in own),
        "warnings": any(r["warnings"] for r in own),
        "status": not all_complete(rows),
    }
    return shared, own, tuple(c for c in COLUMNS if filled.get(c[0], True))


def is_number(key: str) -> bool:
    """Counts, times, rates and costs: right-aligned, so their digits line up."""
    return key.endswith(("_tokens", "_ms", "_per_s", "_usd"))


def td(
    text: str,
    *,
    number: bool = False,
    wraps: bool = False,
    style: str = "",
    cls: str = "",
    tip: str = "",
) -> str:
    """One HTML cell of ``text`` (escaped here): text left, numbers right, as Lab's own tables
    (its stylesheet right-aligns every cell otherwise), also as an attribute for viewers that drop
    inline styles (GitHub); one line unless it ``wraps``."""
    e = html.escape
    align = "right" if number else "left"
    attrs = (f' class="{cls}"' if cls else "") + (f' title="{e(tip)}"' if tip else "")
    space = "normal" if wraps else "nowrap"
    look = f"padding:1px 6px;text-align:{align};white-space:{space};{style}"
    return f'<td style="{look}" align="{align}"{attrs}>{e(text)}</td>'  # (align: where styles go)


def seconds(ms: float | None) -> str:
    return "—" if ms is None else f"{ms / 1000:.2f} s"


def cell_text(r: dict[str, Any], key: str, *, full: bool = False) -> str:
    """The shown text of one cell (one line, not escaped)."""
    value = r[key]
    if key in ("reasoning_tokens", "answer_tokens"):
        return ("≈" if r[key.replace("tokens", "estimated")] else "") + f"{value:,}"
    if key == "reasoning_ms":
        return "buffered" if r["buffered"] else seconds(value)
    if key in ("first_token_ms", "total_ms"):
        return seconds(value)
    if key == "tokens_per_s":
        if value is None:
            return "—"
        return ("≈" if r["tokens_per_s_estimated"] else "") + f"{value:,.1f}"
    if key == "cost_usd":
        return cost.label({"usd": value}) if value is not None else ""
    if key == "status":
        marks = [m for m in ("continued", "replay") if r.get(m)]
        return ", ".join([value, *marks])
    if key == "warnings":
        if full:
            return " · ".join(one_line(w) for w in value)
        more = f" (+{len(value) - 1})" if len(value) > 1 else ""
        return clip(value[0], 48) + more if value else ""
    return clip(str(value), 200 if full else 40)


def all_complete(rows: list[dict[str, Any]]) -> bool:
    """Every run complete, none continued or replayed: the status column would say nothing."""
    return all(cell_text(r, "status") == "complete" for r in rows)


def legend(rows: list[dict[str, Any]]) -> list[str]:
    """The legend lines: what the marks mean, and which rows the chart leaves out."""
    first = LEGEND + (" · every run complete" if rows and all_complete(rows) else "")
    lines = [first] + ([UNPLOTTED] if not all(map(plotted, rows)) else [])
    return lines + ([total] if (total := cost_total(rows)) else [])


def cost_total(rows: list[dict[str, Any]]) -> str:
    """``cost ≈ $0.0400 over 3 runs (estimate; replays not counted)``: a replay repeats a
    recorded run, so its cost was billed once already; empty when no run has a cost."""
    billed = [r["cost_usd"] for r in rows if r["cost_usd"] is not None and not r["replay"]]
    if not billed:
        return ""
    runs = f"{len(billed)} run{'s' if len(billed) != 1 else ''}"
    return f"cost {cost.label({'usd': sum(billed)})} over {runs} (estimate; replays not counted)"


def plain_lines(
    table: list[list[str]], *, rule: bool = False, right: tuple[bool, ...] = ()
) -> list[str]:
    """A table of text cells in columns as wide as their widest cell; ``right``: which columns
    are numbers (right-aligned); ``rule``: dashes under the head row."""
    widths = [max(map(len, column)) for column in zip(*table, strict=True)]
    pads = [str.rjust if k < len(right) and right[k] else str.ljust for k in range(len(widths))]
    lines = [
        "  ".join(pad(c, w) for pad, c, w in zip(pads, line, widths, strict=True)).rstrip()
        for line in table
    ]
    if rule:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def markdown_lines(table: list[list[str]], right: tuple[bool, ...] = ()) -> list[str]:
    """A markdown table of text cells, the first row its head; ``right`` as in plain_lines."""
    lines = ["| " + " | ".join(md_escape(c) for c in line) + " |" for line in table]
    marks = [" ---: |" if k < len(right) and right[k] else " --- |" for k in range(len(table[0]))]
    lines.insert(1, "|" + "".join(marks))
    return lines
