"""The static views of a ``--compare`` output: summary table, each variant's section, the answer
diff and where the reasoning parts, in one of ``render``'s modes. Shared by the notebook and the
exporters, so it imports nothing heavy (no anyio, no ipywidgets). A variant's name comes from its
trace (:func:`label`), so outputs carry no labels of their own and old outputs read the same way.
"""

from __future__ import annotations

import difflib
import html
import re
from typing import TYPE_CHECKING

from . import code_look, render
from .diverge_view import (
    first_against_others,
    parting_html,
    parting_markdown,
    parting_plain,
    saved_html,
)
from .markdown_safety import md_escape
from .math_text import IGNORE
from .stats import row
from .stats_table import cell_text, markdown_lines, plain_lines
from .theme import ADDED, DIFF_BOX, REMOVED, lab
from .trace_labels import label

if TYPE_CHECKING:
    from ..core.trace import Trace

COLUMNS = (
    ("variant", "variant"),
    ("reasoning_tokens", "reasoning tokens"),
    ("reasoning_ms", "reasoning time"),
    ("total_ms", "total time"),
    ("tokens_per_s", "tok/s"),
    ("status", "status"),
)
_TABLE = "border-collapse:collapse;font-size:0.9em;margin:0.5em 0"
_CELL = f"border:1px solid {lab('border-color1')};padding:2px 8px;text-align:left"
_GRID = "display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,16em),1fr));gap:0 1.5em"
# Added and removed lines are <ins> and <del>, each holding its line end: tinted blocks here,
# and where a notebook drops the <style> (untrusted), still a line each, underlined or struck.
STYLE = (
    "<style>.reasoning-nb-compare-diff :is(ins,del){display:block;text-decoration:none}"
    f".reasoning-nb-compare-diff ins{{background:{ADDED}}}"
    f".reasoning-nb-compare-diff del{{background:{REMOVED}}}"
    # a fold's label on one line in every column, so the columns' answers start level
    ".reasoning-nb-compare-columns summary"
    "{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}"
    + code_look.code_box_css(f".reasoning-nb-compare .{render.CSS_CLASS}-export")
    + "</style>"
)
DIFF_LINES, CONTEXT = 300, 2
"""A line diff compares at most this many lines of each answer, once their common first and last
lines are set aside (difflib's time grows faster than the square of what it compares: two answers
of 16 KB took 11 s); it shows ``CONTEXT`` lines around each change."""
_HUNK_START = re.compile(r"(?<=[-+])\d+")
SHARED_FOR_DIFF = 0.5
"""A line diff is shown when the answers share at least this part of their (non-blank) lines;
below that it would only repeat both answers, which the output shows side by side."""


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
    return "\n".join(markdown_lines([[h for _, h in COLUMNS], *table_rows(traces)]))


def table_plain(traces: list[Trace]) -> str:
    return "\n".join(plain_lines([[h for _, h in COLUMNS], *table_rows(traces)]))


def answer_diff(traces: list[Trace]) -> str:
    """The first variant's answer against each other one's (plain text): a unified diff, or one
    line saying they are the same or share too little for a line diff to help."""
    if len(traces) < 2:
        return ""
    first, name = traces[0].answer.splitlines(), label(traces[0])
    pairs = [(t.answer.splitlines(), label(t)) for t in traces[1:]]
    return "\n\n".join(_pair_diff(first, name, other, other_name) for other, other_name in pairs)


def _pair_diff(first: list[str], name: str, other: list[str], other_name: str) -> str:
    if not first and not other:
        return f"(neither {name} nor {other_name} answered)"
    if first == other:
        return f"(the answers of {name} and {other_name} are the same)"
    head = _shared_run(first, other)
    tail = _shared_run(first[head:][::-1], other[head:][::-1])
    middle = first[head : len(first) - tail], other[head : len(other) - tail]
    if max(map(len, middle)) > DIFF_LINES:
        return (
            f"(the answers of {name} and {other_name} differ over more than {DIFF_LINES} lines: "
            "too many for a line diff, read them side by side)"
        )
    matcher = difflib.SequenceMatcher(None, *middle, autojunk=False)
    same = first[:head] + first[len(first) - tail :]
    same += [
        line for i, _, size in matcher.get_matching_blocks() for line in middle[0][i : i + size]
    ]
    shared = sum(1 for line in same if line.strip())
    longest = max(sum(1 for line in lines if line.strip()) for lines in (first, other))
    if shared < SHARED_FOR_DIFF * longest:
        return (
            f"(the answers of {name} and {other_name} share {shared} of {longest} lines: "
            "too few for a line diff, read them side by side)"
        )
    return _unified(first, other, name, other_name, head, tail)


def _shared_run(first: list[str], other: list[str]) -> int:
    n = min(len(first), len(other))
    return next((k for k in range(n) if first[k] != other[k]), n)


def _unified(
    first: list[str], other: list[str], name: str, other_name: str, head: int, tail: int
) -> str:
    """The unified diff of two answers whose first ``head`` and last ``tail`` lines are the same:
    computed on the rest and the context around it, its line numbers then moved back."""
    start = max(head - CONTEXT, 0)
    end = max(tail - CONTEXT, 0)
    lines = difflib.unified_diff(
        first[start : len(first) - end],
        other[start : len(other) - end],
        name,
        other_name,
        lineterm="",
        n=CONTEXT,
    )

    def moved(number: re.Match) -> str:
        return str(int(number.group()) + start)

    return "\n".join(
        _HUNK_START.sub(moved, line) if line.startswith("@@") else line for line in lines
    )


def _diff_line(line: str) -> str:
    """One line of the diff, its line end included (see ``STYLE``)."""
    text = html.escape(line) + "\n"
    if line.startswith(("+++ ", "--- ")):
        return text
    tag = {"+": "ins", "-": "del"}.get(line[:1])
    return f"<{tag}>{text}</{tag}>" if tag else text


def diff_html(traces: list[Trace], diff: str | None = None) -> str:
    """The answer diff as HTML; ``diff``: :func:`answer_diff` of ``traces``, if computed."""
    diff = answer_diff(traces) if diff is None else diff
    if not diff:
        return ""
    lines = "".join(_diff_line(line) for line in diff.split("\n"))
    return (
        '<div class="reasoning-nb-compare-diff"><b>Answer diff</b>'
        f'<pre style="{DIFF_BOX}">{lines}</pre></div>'
    )


TITLE_STYLE = "white-space:nowrap;overflow:hidden;text-overflow:ellipsis"
"""A column's title on one line (whole in its tooltip): the columns' contents start level."""


def columns_html(traces: list[Trace], sections: list[str]) -> str:
    """The variants side by side, each under its title; ``sections``: each one's
    ``render.to_html`` with ``with_subject=False`` (the title says the preset and model)."""
    cells = []
    for trace, section in zip(traces, sections, strict=True):
        name = html.escape(label(trace))
        title = f'<h4 style="{TITLE_STYLE}" title="{name}">{name}</h4>'
        cells.append(f'<div style="min-width:0">{title}{section}</div>')
    return f'<div class="reasoning-nb-compare-columns" style="{_GRID}">{"".join(cells)}</div>'


def _page(parts: list[str]) -> str:
    return f'<div class="reasoning-nb-compare {IGNORE}">{STYLE}{"".join(parts)}</div>'


def bundle(traces: list[Trace], mode: str = "collapsible") -> dict[str, str]:
    ones = [render.bundle(trace, mode) for trace in traces]
    md_parts = [table_markdown(traces)]
    plain_parts = [table_plain(traces)]
    for trace, one in zip(traces, ones, strict=True):
        md_parts.append(f"#### {md_escape(label(trace))}\n\n{one['text/markdown']}")
        plain_parts.append(f"== {label(trace)} ==\n{one['text/plain']}")
    sections = [render.to_html(trace, mode, with_subject=False) for trace in traces]
    html_parts = [table_html(traces), columns_html(traces, sections)]
    diff = answer_diff(traces)
    if diff:
        html_parts.append(diff_html(traces, diff))  # (computed once: it is the costly part)
        fenced = render.safe_markdown(f"```diff\n{diff}\n```")  # a strict fence, or HTML
        md_parts.append(f"**Answer diff**\n\n{fenced}")
        plain_parts.append(f"== answer diff ==\n{diff}")
    for parting in first_against_others(traces) if mode != "strip" else ():
        html_parts.append(parting_html(parting, opened=mode == "inline"))
        md_parts.append(parting_markdown(parting, opened=mode == "inline"))
        plain_parts.append(parting_plain(parting))
    return {
        "text/html": _page(html_parts),
        "text/markdown": "\n\n".join(md_parts),
        "text/plain": "\n\n".join(plain_parts),
    }


def cell_bundle(traces: list[Trace]) -> dict[str, str]:
    """What a ``--compare`` cell saves beside its traces (see ``render.cell_bundle``): the
    table, each variant's section, the answer diff (where it is short enough) and where the
    reasoning parts (folded; its first fork where there is room: ``diverge_view.saved_html``)
    once, as ``text/html``; ``text/markdown`` and ``text/plain``: the table."""
    sections = [render.to_html(t, highlight=False, with_subject=False) for t in traces]
    columns = columns_html(traces, sections)
    diff = diff_html(traces)
    text = sum(len((t.reasoning + t.answer).encode()) for t in traces)
    if len(diff.encode()) > max(DIFF_SAVED * text, DIFF_SAVED_ALWAYS):
        diff = f'<p class="reasoning-nb-meta">{html.escape(DIFF_ELSEWHERE)}</p>'
    partings = saved_html(first_against_others(traces), text, len(diff.encode()))
    html_view = _page([table_html(traces), columns, diff, *partings])
    return {
        "text/html": render.flat(html_view),
        "text/markdown": f"{table_markdown(traces)}\n\n*{md_escape(render.FULL_TEXT)}*",
        "text/plain": f"{table_plain(traces)}\n\n{render.FULL_TEXT}",
    }


DIFF_SAVED, DIFF_SAVED_ALWAYS = 0.05, 1_500
"""A cell saves the answer diff where it is at most this part of the variants' text (reasoning
and answers), or this many bytes: so a ``--compare`` cell keeps the notebook's size budget (at
most 2.5x its text, past a few KB), as the answers side by side and the traces hold the text
already. The exports always show it."""
DIFF_ELSEWHERE = (
    "(the answer diff is too long to save in the notebook: jupyter nbconvert --to reasoning-html "
    "shows it)"
)
