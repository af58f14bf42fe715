"""The views of a search's hits: a table in HTML and in plain text.

Prompts, snippets and model ids are model or user text: everything is escaped, and the only
markup added around a match is ``<mark>``, made after the escape from the snippet's control
characters (``store.search.MARK``/``END``), so the text cannot open or close one. Only inline
styles the notebook sanitizer keeps are used, as in the stats table.
"""

from __future__ import annotations

import html
import re
from typing import Any

from ..core.text import clip
from ..store.search import END, MARK
from .theme import lab

PROMPT_CHARS = 60
TIP_CHARS = 1_000
"""The prompt in full on hover, up to this many characters (a prompt may be a whole file)."""
_PIECES = re.compile(f"({MARK}[^{MARK}{END}]*{END})")
_SPACE = re.compile(r"[\s\x00-\x1f\x7f]+")
_CELL = "padding:2px 6px;text-align:left;vertical-align:top"
_PART = f"font-size:0.8em;color:{lab('ui-font-color2')};text-transform:uppercase"


def pieces(snippet: str) -> list[tuple[str, bool]]:
    """The snippet as ``(text, is_match)`` pieces, each on one line (stray markers dropped)."""
    out = []
    for piece in _PIECES.split(snippet):
        marked = piece.startswith(MARK) and piece.endswith(END)
        text = _SPACE.sub(" ", piece.replace(MARK, "").replace(END, ""))
        if text:
            out.append((text, marked))
    return out


def plain(snippet: str) -> str:
    return "".join(f"«{text}»" if marked else text for text, marked in pieces(snippet))


def _marked_html(snippet: str) -> str:
    return "".join(
        f"<mark>{html.escape(text)}</mark>" if marked else html.escape(text)
        for text, marked in pieces(snippet)
    )


def _where(hit: Any) -> str:
    """The hit's source, with its cell where it has one (``cell 3`` is already in a notebook
    hit's source; a log hit of this kernel names its cell by link only)."""
    return hit.source if hit.cell is not None or hit.cell_id is None else f"{hit.source} · cell"


def text_view(query: str, hits: list[Any], notes: list[str]) -> str:
    if not hits:
        lines = [f"No run matches {query!r}."]
    else:
        lines = [f"{len(hits)} run{'' if len(hits) == 1 else 's'} match {query!r}:"]
    for n, hit in enumerate(hits, 1):
        head = [hit.started_at or "?", hit.model, hit.preset, _where(hit)]
        lines.append(f"{n}. " + "  ".join(h for h in head if h))
        found = dict(hit.snippets)  # the prompt once: marked where the query matched it
        prompt = plain(found.pop("prompt")) if "prompt" in found else hit.prompt
        lines.append(f"   prompt: {clip(prompt, PROMPT_CHARS)}")
        lines.extend(f"   {part}: {plain(snippet)}" for part, snippet in found.items())
    lines.extend(f"! {clip(note, 300)}" for note in notes)
    return "\n".join(lines)


def html_view(query: str, hits: list[Any], notes: list[str]) -> str:
    e = html.escape
    count = f"{len(hits)} run{'' if len(hits) == 1 else 's'}" if hits else "No run"
    out = [
        '<div class="reasoning-nb-search">',
        f'<div style="margin:0.2em 0">{count} match <code>{e(query)}</code></div>',
    ]
    if hits:
        out.append('<table style="font-size:0.9em;margin:0.3em 0"><thead><tr>')
        out.extend(
            f'<th style="{_CELL}">{t}</th>'
            for t in ("when", "model", "preset", "where", "prompt", "found")
        )
        out.append("</tr></thead><tbody>")
        out.extend(_row(hit) for hit in hits)
        out.append("</tbody></table>")
    out.extend(f'<div style="font-size:0.85em">⚠ {e(note)}</div>' for note in notes)
    out.append("</div>")
    return "".join(out)


def _row(hit: Any) -> str:
    e = html.escape
    where = e(_where(hit))
    if hit.link:  # Lab opens the notebook at the cell (Notebook.setFragment, Lab 4.1+)
        where = f'<a href="{e(hit.link, quote=True)}" title="go to the cell">{where}</a>'
    prompt = clip(hit.prompt, PROMPT_CHARS)
    found = "".join(
        f'<div><span style="{_PART}">{e(part)}</span> {_marked_html(snippet)}</div>'
        for part, snippet in hit.snippets
    )
    cells = [
        e((hit.started_at or "").replace("T", " ").rstrip("Z")),
        e(hit.model),
        e(hit.preset),
        where,
        f'<span title="{e(clip(hit.prompt, TIP_CHARS), quote=True)}">{e(prompt)}</span>',
        found,
    ]
    looks = [_CELL] * len(cells)
    looks[3] += ";white-space:nowrap"  # (the source and its link: "log #2 · cell" on one line)
    return (
        "<tr>"
        + "".join(f'<td style="{k}">{c}</td>' for k, c in zip(looks, cells, strict=True))
        + "</tr>"
    )
