"""Where two runs' reasoning parts: the static views of ``core.diverge``'s alignment.

A fold, "Where the reasoning parts", holds the shared start (folded, with its length), the first
fork side by side (the first text's part struck in the answer diff's red, the other's in its
green: ``compare``'s look), and each later point where the texts meet again. Model text is
untrusted: every piece of it is escaped, shown as text (never markdown), and cut to a bounded
length, so a long reasoning does not double a notebook's size.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.diverge import ONLY_A, ONLY_B, Alignment, Segment, align
from .markdown_safety import html_block, html_label
from .math_text import IGNORE
from .theme import ADDED, DIFF_BOX, REMOVED, lab
from .trace_labels import label

if TYPE_CHECKING:
    from ..core.trace import Trace

CSS_CLASS = "reasoning-nb-parting"
TITLE = "Where the reasoning parts"
SHOWN = 1_500
"""At most this many characters of each side of a fork, of a meeting and of the shared start's
end are shown (the whole texts are in the runs themselves)."""
MAX_FORKS = 6
"""Forks shown after the first; the rest are counted."""

_GRID = "display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:0.3em 1em"
_TEXT = f"{DIFF_BOX};white-space:pre-wrap;margin:0.2em 0"
"""A text box: the answer diff's (``compare``), its long lines wrapped."""
_BODY = f"border-left:3px solid {lab('border-color2')};padding-left:0.8em;margin:0.3em 0"
"""The open fold's body, set off as the folded reasoning's is (``render``)."""
_MARK = "display:block;text-decoration:none;color:inherit"
_NOTE = f"font-size:0.85em;color:{lab('content-font-color2')};margin:0.4em 0 0.1em"
_SUMMARY = f"cursor:pointer;color:{lab('content-font-color2')}"


@dataclass(frozen=True, repr=False)
class Parting(Alignment):
    """:class:`~reasoning_nb.core.diverge.Alignment` with the two runs' names, shown in a
    notebook as the fold (open)."""

    names: tuple[str, str] = ("A", "B")

    def _repr_html_(self) -> str:
        return parting_html(self, opened=True)

    def _repr_markdown_(self) -> str:
        return parting_markdown(self, opened=True)

    def __str__(self) -> str:
        return parting_plain(self)

    def __repr__(self) -> str:  # (not the two texts: they may be long)
        return f"<Parting {self.names[0]!r} vs {self.names[1]!r}: {headline(self)}>"

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # IPython's text/plain: the view
        printer.text(parting_plain(self))


def diverge(a: Trace | str, b: Trace | str, *, names: tuple[str, str] | None = None) -> Parting:
    """Where two runs' reasoning parts (or two texts): the shared start, the first fork, and
    each point where they meet again, at sentence level, in time linear in the text.
    ``names``: what to call the two sides (else each trace's preset and model, or A and B)."""
    if names is None:
        sides = ((a, "A"), (b, "B"))
        names = tuple(side if isinstance(x, str) else label(x) for x, side in sides)
        if names[0] == names[1]:  # (two runs of one preset and model)
            names = (f"A: {names[0]}", f"B: {names[1]}")
    found = align(*(x if isinstance(x, str) else x.reasoning for x in (a, b)))
    return Parting(found.a, found.b, found.segments, names=names)


def first_against_others(traces: list[Trace]) -> list[Parting]:
    """The first trace that reasoned against each later one that did (as the answer diff
    compares the first variant with each other one)."""
    reasoned = [t for t in traces if t.reasoning.strip()]
    return [diverge(reasoned[0], other) for other in reasoned[1:]]


def headline(found: Alignment) -> str:
    """``shared start: 12 sentences (1,234 characters) · parts at sentence 13 · meets again
    twice``, or what stands for it."""
    if not found.segments:
        return "no reasoning on either side"
    if found.same:
        return "the same reasoning (whitespace aside)"
    start, parts = found.shared_start, []
    if start is None:
        parts.append("different from the first sentence")
    else:
        count = _count(start.units, "sentence")
        parts.append(f"shared start: {count} ({start.a[1] - start.a[0]:,} characters)")
        parts.append(f"parts at sentence {start.units + 1}")
    meets = len(found.meetings)
    again = {0: "never meets again", 1: "meets again once", 2: "meets again twice"}
    parts.append(again.get(meets, f"meets again {meets} times"))
    return " · ".join(parts)


@dataclass(frozen=True)
class _Fork:
    a: str
    b: str
    meeting: Segment | None  # the shared run after it


def _forks(found: Alignment) -> list[_Fork]:
    at, forks = found.parts_at, []
    if at is None:
        return []
    a_part = b_part = ""
    for seg in found.segments[at:]:
        if seg.kind == ONLY_A:
            a_part = found.a[seg.a[0] : seg.a[1]]
        elif seg.kind == ONLY_B:
            b_part = found.b[seg.b[0] : seg.b[1]]
        else:
            forks.append(_Fork(a_part, b_part, seg))
            a_part = b_part = ""
    if a_part or b_part:
        forks.append(_Fork(a_part, b_part, None))
    return forks


def _cut(text: str, *, end: bool = False) -> str:
    """At most :data:`SHOWN` characters of ``text``: its start, or its ``end``."""
    text = text.strip()
    if len(text) <= SHOWN:
        return text
    return "…" + text[-SHOWN:] if end else text[:SHOWN] + "…"


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _title(found: Parting) -> str:
    return f"{TITLE}: {found.names[0]} vs {found.names[1]} — {headline(found)}"


# -- HTML ---------------------------------------------------------------------------------------


def parting_html(found: Parting, *, opened: bool = False) -> str:
    """The fold, closed unless ``opened`` (an export where nothing can be clicked opens it)."""
    head = html.escape(_title(found))
    body = "".join(_body_html(found, found.names))
    body = f'<div style="{_BODY}">{body}</div>' if body else ""
    return (
        f'<details class="{CSS_CLASS} {IGNORE}"{" open" if opened else ""}>'
        f'<summary style="{_SUMMARY}">{head}</summary>{body}</details>'
    )


def _body_html(found: Alignment, names: tuple[str, str]) -> list[str]:
    out = []
    start = found.shared_start
    if start is not None and not found.same:
        text = html.escape(_cut(found.a[start.a[0] : start.a[1]], end=True))
        size = f"{_count(start.units, 'sentence')}, {start.a[1] - start.a[0]:,} characters"
        out.append(
            f'<details class="{CSS_CLASS}-start"><summary style="{_SUMMARY}">'
            f"Shared start: {size}</summary>"
            f'<pre style="{_TEXT}">{text}</pre></details>'
        )
    forks = _forks(found)
    for n, fork in enumerate(forks[: MAX_FORKS + 1]):
        where = "They part here" if n == 0 else "They part again"
        out.append(f'<div class="{CSS_CLASS}-fork" style="{_NOTE}">{where}</div>')
        out.append(_side_by_side(fork, names))
        if fork.meeting is not None:
            out.append(_meeting_html(found, fork.meeting))
    if len(forks) > MAX_FORKS + 1:
        more = _count(len(forks) - MAX_FORKS - 1, "more fork")
        out.append(f'<div style="{_NOTE}">… and {more}</div>')
    return out


def _side_by_side(fork: _Fork, names: tuple[str, str]) -> str:
    cells = []
    sides = ((names[0], fork.a, "del", REMOVED), (names[1], fork.b, "ins", ADDED))
    for name, text, tag, tint in sides:
        shown = html.escape(_cut(text)) if text.strip() else "(nothing here)"
        mark = f'<{tag} style="{_MARK};background:{tint}">{shown}</{tag}>'
        title = html.escape(name)
        cells.append(
            f'<div style="min-width:0"><b title="{title}" style="display:block;overflow:hidden;'
            f'text-overflow:ellipsis;white-space:nowrap">{title}</b>'
            f'<pre style="{_TEXT}">{mark}</pre></div>'
        )
    return f'<div class="{CSS_CLASS}-sides" style="{_GRID}">{"".join(cells)}</div>'


def _meeting_html(found: Alignment, meeting: Segment) -> str:
    text = html.escape(_cut(found.a[meeting.a[0] : meeting.a[1]]))
    size = _count(meeting.units, "sentence")
    return (
        f'<div class="{CSS_CLASS}-meet" style="{_NOTE}">They meet again ({size}):</div>'
        f'<pre style="{_TEXT}">{text}</pre>'
    )


# -- markdown and plain text -------------------------------------------------------------------


def parting_markdown(found: Parting, *, opened: bool = False) -> str:
    """The fold for a markdown file: ``<details>`` around one HTML block of escaped text (its
    ``$`` and backslashes references too: a markdown renderer reads math before HTML)."""
    head = html_label(_title(found))
    body = "".join(_body_html(found, found.names)).replace("$", "&#36;").replace("\\", "&#92;")
    block = f"\n\n{html_block(body, f'{CSS_CLASS}-md')}" if body else ""
    return f"<details{' open' if opened else ''}>\n<summary>{head}</summary>{block}\n\n</details>"


def parting_plain(found: Parting) -> str:
    names = found.names
    out = [f"== {TITLE.lower()}: {names[0]} vs {names[1]} ==", headline(found)]
    start = found.shared_start
    if start is not None and not found.same:
        out.append(f"[shared start, its end]\n{_cut(found.a[start.a[0] : start.a[1]], end=True)}")
    forks = _forks(found)
    for n, fork in enumerate(forks[: MAX_FORKS + 1]):
        out.append("-- they part here --" if n == 0 else "-- they part again --")
        out += [f"[{names[0]}]\n{_cut(fork.a)}", f"[{names[1]}]\n{_cut(fork.b)}"]
        if fork.meeting is not None:
            m = fork.meeting
            size = _count(m.units, "sentence")
            out.append(f"-- they meet again ({size}) --\n{_cut(found.a[m.a[0] : m.a[1]])}")
    if len(forks) > MAX_FORKS + 1:
        out.append(f"… and {_count(len(forks) - MAX_FORKS - 1, 'more fork')}")
    return "\n\n".join(out)


__all__ = [
    "Parting",
    "diverge",
    "first_against_others",
    "headline",
    "parting_html",
    "parting_markdown",
    "parting_plain",
]
