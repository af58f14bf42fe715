"""The static views of a ``--compare`` output: summary table, each variant's section, the answer
diff, in one of ``render``'s modes. Shared by the notebook (collapsible) and the exporters (any
mode), so it imports nothing heavy (no anyio, no ipywidgets).

A variant's name comes from its trace (:func:`label`): what ``--compare`` varies is the preset or
the model, and both are saved in every trace, so outputs carry no labels of their own and old
outputs read the same way.

Model text is untrusted (see ``render``): escaped in HTML, ``md_escape``d in markdown labels and
cells, and the diff goes to markdown through ``render.safe_markdown`` (a strict fence or HTML).

Colours read in JupyterLab Light and Dark and on a white page: Lab's CSS variables with light
fallbacks, always a background with its text colour; a diff line's green or red is translucent,
so it tints whichever background it is on.
"""

from __future__ import annotations

import difflib
import html
from typing import TYPE_CHECKING

from . import render
from .analytics import cell_text, row
from .markdown_safety import md_escape, one_line
from .math_text import IGNORE

if TYPE_CHECKING:
    from .core.trace import Trace

COLUMNS = (
    ("variant", "variant"),
    ("reasoning_tokens", "reasoning tokens"),
    ("reasoning_ms", "reasoning time"),
    ("total_ms", "total time"),
    ("tokens_per_s", "tok/s"),
    ("status", "status"),
)
LABEL_LIMIT = 120
_TABLE = "border-collapse:collapse;font-size:0.9em;margin:0.5em 0"
_CELL = "border:1px solid var(--jp-border-color1,#d0d7de);padding:2px 8px;text-align:left"
_DIFF = (
    "font-size:0.85em;background:var(--jp-layout-color2,#f6f8fa);"
    "color:var(--jp-content-font-color1,#24292f);padding:0.5em 0.8em;overflow-x:auto"
)
_LINE = "display:block;white-space:pre"
_MARKS = {  # a diff line's first character -> (class, tint)
    "+": ("add", "background:rgba(46,160,67,0.22)"),
    "-": ("del", "background:rgba(248,81,73,0.22)"),
    "@": ("hunk", "font-style:italic"),
}


def label(trace: Trace) -> str:
    """``high · ollama:qwen3``: one line, of sane length (a saved trace is anyone's text)."""
    text = f"{one_line(trace.preset)} · {one_line(trace.model) or '(default model)'}"
    return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 1] + "…"


def table_rows(traces: list[Trace]) -> list[list[str]]:
    out = []
    for trace in traces:
        r = row(trace)
        cells = [label(trace)]
        for key, _ in COLUMNS[1:]:
            cells.append(cell_text(r, key, full=True) if key != "status" else trace.status)
        out.append(cells)
    return out


def table_html(traces: list[Trace]) -> str:
    head = "".join(f'<th style="{_CELL}">{html.escape(h)}</th>' for _, h in COLUMNS)
    body = "".join(
        "<tr>" + "".join(f'<td style="{_CELL}">{html.escape(c)}</td>' for c in cells) + "</tr>"
        for cells in table_rows(traces)
    )
    return (
        f'<table class="reasoning-nb-compare-table" style="{_TABLE}">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def table_markdown(traces: list[Trace]) -> str:
    lines = ["| " + " | ".join(h for _, h in COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for cells in table_rows(traces):
        lines.append("| " + " | ".join(md_escape(c) for c in cells) + " |")
    return "\n".join(lines)


def table_plain(traces: list[Trace]) -> str:
    rows = [[h for _, h in COLUMNS], *table_rows(traces)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def answer_diff(traces: list[Trace]) -> str:
    """Unified diffs of the answers: the first variant against each other one (plain text)."""
    if len(traces) < 2:
        return ""
    first, name = traces[0].answer.splitlines(), label(traces[0])
    parts = []
    for trace in traces[1:]:
        other = label(trace)
        lines = difflib.unified_diff(
            first, trace.answer.splitlines(), name, other, lineterm="", n=2
        )
        parts.append("\n".join(lines) or f"(the answers of {name} and {other} are the same)")
    return "\n\n".join(parts)


def _diff_line(line: str) -> str:
    """One line of the diff: a block (its tint spans the width), added or removed tinted."""
    kind, tint = _MARKS.get(line[:1], ("", ""))
    if line.startswith(("+++ ", "--- ")):
        kind, tint = "file", "font-weight:600"
    cls = f' class="reasoning-nb-diff-{kind}"' if kind else ""
    return f'<span{cls} style="{_LINE};{tint}">{html.escape(line) or " "}</span>'


def diff_html(traces: list[Trace]) -> str:
    diff = answer_diff(traces)
    if not diff:
        return ""
    lines = "".join(_diff_line(line) for line in diff.split("\n"))
    return (
        '<div class="reasoning-nb-compare-diff"><b>Answer diff</b>'
        f'<pre style="{_DIFF}">{lines}</pre></div>'
    )


def bundle(traces: list[Trace], mode: str = "collapsible") -> dict[str, str]:
    """The static MIME bundle: summary table, each variant's section (``render.bundle`` in
    ``mode``), the answer diff."""
    html_parts = [table_html(traces)]
    md_parts = [table_markdown(traces)]
    plain_parts = [table_plain(traces)]
    for trace in traces:
        name, one = label(trace), render.bundle(trace, mode)
        html_parts.append(f"<h4>{html.escape(name)}</h4>{one['text/html']}")
        md_parts.append(f"#### {md_escape(name)}\n\n{one['text/markdown']}")
        plain_parts.append(f"== {name} ==\n{one['text/plain']}")
    diff = answer_diff(traces)
    if diff:
        html_parts.append(diff_html(traces))
        fenced = render.safe_markdown(f"```diff\n{diff}\n```")  # a strict fence, or HTML
        md_parts.append(f"**Answer diff**\n\n{fenced}")
        plain_parts.append(f"== answer diff ==\n{diff}")
    return {
        "text/html": f'<div class="reasoning-nb-compare {IGNORE}">{"".join(html_parts)}</div>',
        "text/markdown": "\n\n".join(md_parts),
        "text/plain": "\n\n".join(plain_parts),
    }


def cell_bundle(traces: list[Trace]) -> dict[str, str]:
    """What a ``--compare`` cell saves beside its traces (see ``render.cell_bundle``): the table
    and each variant's section once, as ``text/html``; ``text/markdown`` and ``text/plain``:
    the table. The answer diff stays in the live view and the exports: for answers that
    differ, it holds them both again."""
    parts = [table_html(traces)]
    for trace in traces:
        parts.append(f"<h4>{html.escape(label(trace))}</h4>")
        parts.append(render.to_html(trace, highlight=False))
    parts.append(f'<p class="reasoning-nb-meta">{html.escape(DIFF_ELSEWHERE)}</p>')
    html_view = f'<div class="reasoning-nb-compare {IGNORE}">{"".join(parts)}</div>'
    return {
        "text/html": render.flat(html_view),
        "text/markdown": f"{table_markdown(traces)}\n\n*{md_escape(render.FULL_TEXT)}*",
        "text/plain": f"{table_plain(traces)}\n\n{render.FULL_TEXT}",
    }


DIFF_ELSEWHERE = "(the answer diff: in the live view, or jupyter nbconvert --to reasoning-html)"
