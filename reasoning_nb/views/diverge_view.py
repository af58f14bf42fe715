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


@dataclass(frozen=True)
class Room:
    """How much of the texts a fold quotes: at most ``shown`` characters of each side of a fork,
    of a meeting and of the shared start's end (the whole texts are in the runs themselves), and
    ``forks`` forks after the first (the rest are counted)."""

    shown: int
    forks: int


FULL = Room(1_500, 6)
"""An export's fold, and ``diverge()``'s."""
SAVED = Room(240, 0)
"""A notebook cell's fold: the first fork, a short quote each; the exports show more."""
BRIEF = Room(0, -1)
"""A fold that only says where: its headline, and where to see the rest."""
SAVED_PART, SAVED_ALWAYS = 0.05, 3_000
"""A cell saves the :data:`SAVED` folds where they (and the answer diff) take at most this part
of the runs' text, or this many bytes; else :data:`BRIEF` ones: so a cell run twice and a
``--compare`` keep the notebook's size budget (at most 2.5x its text, past a few KB)."""
ELSEWHERE = (
    "(where they part, in full: jupyter nbconvert --to reasoning-html, or reasoning_nb.diverge)"
)
SHOWN, MAX_FORKS = FULL.shown, FULL.forks

_SCOPE = f"details.{CSS_CLASS}"
_LOOK = (
    # a text box: the answer diff's (``compare``), its long lines wrapped; the fold's class twice,
    # to be as specific as Lab's ``.jp-OutputArea-output.jp-RenderedHTMLCommon pre``
    (f"{_SCOPE}.{CSS_CLASS} pre", f"{DIFF_BOX};white-space:pre-wrap;margin:0.2em 0"),
    (f"{_SCOPE} :is(ins,del)", "display:block;text-decoration:none;color:inherit"),
    (f"{_SCOPE} summary", f"cursor:pointer;color:{lab('content-font-color2')}"),
    # the open fold's body, set off as the folded reasoning's is (``render``)
    (f".{CSS_CLASS}-body", f"border-left:3px solid {lab('border-color2')};padding-left:0.8em"),
    (f".{CSS_CLASS}-note", f"font-size:.85em;color:{lab('content-font-color2')};margin-top:.4em"),
    (f".{CSS_CLASS}-sides", "display:grid;grid-template-columns:1fr 1fr;gap:0 1em"),
    (f".{CSS_CLASS}-sides>div", "min-width:0"),
    (
        f".{CSS_CLASS}-sides b",
        "display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap",
    ),
)
# One stylesheet a fold: where a notebook drops it (untrusted), the fold still reads, its parts
# still tinted (inline), as the answer diff's lines are still a line each.
STYLE = "<style>" + "".join(f"{s}{{{r}}}" for s, r in _LOOK) + "</style>"
_BRIEF_SUMMARY = f"color:{lab('content-font-color2')}"
_BRIEF_NOTE = "font-size:.85em;opacity:.7"


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


def _cut(text: str, shown: int, *, end: bool = False) -> str:
    """At most ``shown`` characters of ``text``: its start, or its ``end``."""
    text = text.strip()
    if len(text) <= shown:
        return text
    return "…" + text[-shown:] if end else text[:shown] + "…"


def _more(forks: list[_Fork], room: Room) -> str:
    """``… and 3 more forks`` past what ``room`` shows, or ""."""
    more = len(forks) - room.forks - 1
    if more <= 0:
        return ""
    elsewhere = " (every one: an export, or reasoning_nb.diverge)" if room != FULL else ""
    return f"… and {_count(more, 'more fork')}{elsewhere}"


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _title(found: Parting) -> str:
    return f"{TITLE}: {found.names[0]} vs {found.names[1]} — {headline(found)}"


# -- HTML ---------------------------------------------------------------------------------------


def parting_html(found: Parting, *, opened: bool = False, room: Room = FULL) -> str:
    """The fold, closed unless ``opened`` (an export where nothing can be clicked opens it)."""
    head, fold = html.escape(_title(found)), f'<details class="{CSS_CLASS} {IGNORE}"'
    if room == BRIEF:  # (no stylesheet: its few styles inline)
        note = "" if found.same else f'<div style="{_BRIEF_NOTE}">{html.escape(ELSEWHERE)}</div>'
        return f'{fold}><summary style="{_BRIEF_SUMMARY}">{head}</summary>{note}</details>'
    body = "".join(_body_html(found, found.names, room, opened))
    body = f'<div class="{CSS_CLASS}-body">{body}</div>' if body else ""
    return f"{fold}{' open' if opened else ''}>{STYLE}<summary>{head}</summary>{body}</details>"


def saved_html(partings: list[Parting], text: int, used: int = 0) -> list[str]:
    """The folds a notebook cell saves, for runs of ``text`` bytes whose answer diff took
    ``used`` (see :data:`SAVED_PART`)."""
    folds = [parting_html(p, room=SAVED) for p in partings]
    room = max(SAVED_PART * text, SAVED_ALWAYS) - used
    if sum(len(fold.encode()) for fold in folds) <= room:
        return folds
    return [parting_html(p, room=BRIEF) for p in partings]


def _body_html(
    found: Alignment, names: tuple[str, str], room: Room, opened: bool = False
) -> list[str]:
    """``opened``: the shared start open too (where nothing can be clicked)."""
    out = []
    start = found.shared_start
    if start is not None and not found.same:
        text = html.escape(_cut(found.a[start.a[0] : start.a[1]], room.shown, end=True))
        size = f"{_count(start.units, 'sentence')}, {start.a[1] - start.a[0]:,} characters"
        out.append(
            f'<details class="{CSS_CLASS}-start"{" open" if opened else ""}>'
            f"<summary>Shared start: {size}</summary>"
            f"<pre>{text}</pre></details>"
        )
    forks = _forks(found)
    for n, fork in enumerate(forks[: room.forks + 1]):
        where = "They part here" if n == 0 else "They part again"
        out.append(f'<div class="{CSS_CLASS}-note {CSS_CLASS}-fork">{where}</div>')
        out.append(_side_by_side(fork, names, room.shown))
        if fork.meeting is not None:
            out.append(_meeting_html(found, fork.meeting, room.shown))
    more = _more(forks, room)
    out += [f'<div class="{CSS_CLASS}-note">{html.escape(more)}</div>'] if more else []
    return out


def _side_by_side(fork: _Fork, names: tuple[str, str], shown: int) -> str:
    cells = []
    sides = ((names[0], fork.a, "del", REMOVED), (names[1], fork.b, "ins", ADDED))
    for name, text, tag, tint in sides:
        quoted = html.escape(_cut(text, shown)) if text.strip() else "(nothing here)"
        mark = f'<{tag} style="background:{tint}">{quoted}</{tag}>'
        title = html.escape(name)
        cells.append(f'<div><b title="{title}">{title}</b><pre>{mark}</pre></div>')
    return f'<div class="{CSS_CLASS}-sides">{"".join(cells)}</div>'


def _meeting_html(found: Alignment, meeting: Segment, shown: int) -> str:
    text = html.escape(_cut(found.a[meeting.a[0] : meeting.a[1]], shown))
    size = _count(meeting.units, "sentence")
    return (
        f'<div class="{CSS_CLASS}-note {CSS_CLASS}-meet">They meet again ({size}):</div>'
        f"<pre>{text}</pre>"
    )


# -- markdown and plain text -------------------------------------------------------------------


def parting_markdown(found: Parting, *, opened: bool = False) -> str:
    """The fold for a markdown file: ``<details>`` around one HTML block of escaped text (its
    ``$`` and backslashes references too: a markdown renderer reads math before HTML)."""
    head = html_label(_title(found))
    body = (
        "".join(_body_html(found, found.names, FULL, opened))
        .replace("$", "&#36;")
        .replace("\\", "&#92;")
    )
    block = f"\n\n{html_block(body, f'{CSS_CLASS}-md')}" if body else ""
    return f"<details{' open' if opened else ''}>\n<summary>{head}</summary>{block}\n\n</details>"


def parting_plain(found: Parting) -> str:
    names = found.names
    out = [f"== {TITLE.lower()}: {names[0]} vs {names[1]} ==", headline(found)]
    start = found.shared_start
    if start is not None and not found.same:
        shared = _cut(found.a[start.a[0] : start.a[1]], SHOWN, end=True)
        out.append(f"[shared start, its end]\n{shared}")
    forks = _forks(found)
    for n, fork in enumerate(forks[: MAX_FORKS + 1]):
        out.append("-- they part here --" if n == 0 else "-- they part again --")
        out += [f"[{names[0]}]\n{_cut(fork.a, SHOWN)}", f"[{names[1]}]\n{_cut(fork.b, SHOWN)}"]
        if fork.meeting is not None:
            m = fork.meeting
            size = _count(m.units, "sentence")
            out.append(f"-- they meet again ({size}) --\n{_cut(found.a[m.a[0] : m.a[1]], SHOWN)}")
    out += [_more(forks, FULL)] if len(forks) > MAX_FORKS + 1 else []
    return "\n\n".join(out)


__all__ = [
    "FULL",
    "SAVED",
    "Parting",
    "Room",
    "diverge",
    "first_against_others",
    "headline",
    "parting_html",
    "parting_markdown",
    "parting_plain",
    "saved_html",
]
