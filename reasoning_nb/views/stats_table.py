"""The columns of the stats table, and how each cell reads: one source for the text, markdown
and HTML views of :class:`~reasoning_nb.views.stats.TraceStats`."""

from __future__ import annotations

from typing import Any

from ..core import cost
from ..core.presets import PRESETS
from ..core.text import clip, one_line

PROMPT_CHARS = 40

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
    "the plot shows complete runs only: cancelled, failed, truncated and replayed runs "
    "are listed, not plotted"
)


def plotted(r: dict[str, Any]) -> bool:
    """A complete run, not a replay, at a known preset (why: ``views.stats``'s docstring)."""
    return r["status"] == "complete" and not r.get("replay") and r["preset"] in PRESETS


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


def legend(rows: list[dict[str, Any]]) -> list[str]:
    """The legend lines: what the marks mean, and which rows the plot leaves out."""
    lines = [LEGEND] + ([UNPLOTTED] if not all(map(plotted, rows)) else [])
    return lines + ([total] if (total := cost_total(rows)) else [])


def cost_total(rows: list[dict[str, Any]]) -> str:
    """``cost ≈ $0.0400 over 3 runs (estimate; replays not counted)``: a replay repeats a
    recorded run, so its cost was billed once already; empty when no run has a cost."""
    billed = [r["cost_usd"] for r in rows if r["cost_usd"] is not None and not r["replay"]]
    if not billed:
        return ""
    runs = f"{len(billed)} run{'s' if len(billed) != 1 else ''}"
    return f"cost {cost.label({'usd': sum(billed)})} over {runs} (estimate; replays not counted)"
