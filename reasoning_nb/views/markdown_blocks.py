"""Where a growing markdown text may be frozen: block ends, code fences, tables, forced cuts.

A block ends at a blank line or a closing fence; never inside an open fence or ``$$``/``\\[``
display, nor between the items of a loose list (a blank line after a list ends a block only once
the next line does not go on with it). A tail past its limit without one is cut by force (see
:func:`_forced`); a cut inside a code fence or a table leaves a ``reopen`` that the next piece
opens with. A forced cut never goes inside math (:func:`may_cut`): an open span holds it back
until it closes, its paragraph ends, or the tail is ``MATH_WAIT`` past its limit. It lands at or
after ``keep`` where it can, so the frozen part never shows less than the tail did, and never
past :func:`table_hold`: a table only ever shows as a table. A :class:`Scanner` resumes at the
last line end it saw, so a live tail is scanned once, not once per delta.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from .live_markdown import math_extent, opens_table

TAIL_LIMIT = 400  # force a cut when the live tail grows past this many characters
Span = tuple[int, int | None]  # a math span's start and end (None: open, may still close)
# How far past its limit a tail may grow while math holds a forced cut back (a lone ``$`` in a
# long paragraph opens a span that no closer may ever end).
MATH_WAIT = 2_000

_SENTENCE_END = re.compile(r"[.!?][\"')\]*_]* ")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_DISPLAY = re.compile(r"(?<!\\)\$\$|\\[\[\]]")  # $$, \[ or \] (the normaliser makes $$ of them)
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_TABLE_ROW = re.compile(r"[ \t>]*\|")  # what models open a table's rows with (GFM needs no pipe)
_DELIMITER_ROW = re.compile(r"[ \t>]*\|?(?:[ \t]*:?-+:?[ \t]*\|)*[ \t]*:?-+:?[ \t]*\|?[ \t]*")
_MAY_BE_DELIMITER = re.compile(r"[ \t>|:-]*")  # (a delimiter row being written)
_OPENS_BLOCK = re.compile(r"(?:[-+*]|\d{1,9}[.)]|#{1,6})(?:\s|$)|[>|]|[-_*=]{2}|```|~~~")
"""What opens a block at a line's start (or a setext underline, a rule): no piece opens so."""
# What may open, close or end a math span (or hide it in code), and while one is open, what may
# close or end it (``$``, ``\\)``, ``\\]``, ``\\end{}``): only these make math_in read again.
_MATH_MOVES = re.compile(r"[$\\{}\n@`~]")
_MATH_CLOSES = re.compile(r"[$)\]}\n`]")


def fence_mark(opener: str) -> str:
    """The backticks or tildes of a fence opener line: what closes it."""
    stripped = opener.lstrip(" ")
    return stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]


def closing(reopen: str) -> str:
    """The line that closes in the frozen part what a cut left open (a table needs none)."""
    return "" if _is_table_head(reopen) else fence_mark(reopen)


def _is_table_head(reopen: str) -> bool:
    return "\n" in reopen  # (a fence opener is one line; a table's head is two)


def _table_head(header: str, delimiter: str) -> str | None:
    """The head of the table these two lines open, if any (a table may interrupt a paragraph)."""
    if not _DELIMITER_ROW.fullmatch(delimiter) or not header.strip():
        return None
    return f"{header}\n{delimiter}" if opens_table(header, delimiter) else None


def _opens(line: str) -> str | None:
    """The opener line if ``line`` opens a code fence (CommonMark: no backtick in the info)."""
    m = _FENCE_OPEN.fullmatch(line)
    if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None
    return line


def _closes(line: str, opener: str) -> bool:
    m = _FENCE_CLOSE.fullmatch(line)
    mark = fence_mark(opener)
    return m is not None and m.group(1)[0] == mark[0] and len(m.group(1)) >= len(mark)


class Cut(NamedTuple):
    at: int  # ``text[:at]`` may be frozen (0: nothing yet)
    reopen: str | None  # what opens the cut block again: a fence's opener line, a table's head
    forced: bool  # cut inside a block (the tail grew too long), not at a block boundary


def _listy(line: str) -> bool:
    """A list item's line, or an indented one (an item's paragraph, code...)."""
    return line[:1] in (" ", "\t") or _LIST_ITEM.match(line) is not None


def _goes_on(line: str) -> bool | None:
    """Does the line after a blank line go on with a list? None: too little of it arrived yet."""
    if not line.strip(" \t"):
        return None if "\n" not in line else False
    if line[0] in " \t":
        return True
    if _LIST_ITEM.match(line):
        return True
    head = line.split("\n", 1)[0]
    if "\n" in line or len(head) > 11 or not re.fullmatch(r"[-+*]|\d{1,9}[.)]?", head):
        return False
    return None  # "-", "12", "3." so far: a list item may follow


class _Scan(NamedTuple):
    natural: int  # the end of the last finished block (0: none)
    last_end: int  # the last line end
    open_fence: str | None  # the fence open there (its opener line)
    prev_blank: bool = True  # the last line was blank (or closed a fence)
    display: bool = False  # a $$ (or \[) display is open
    listy: bool = False  # the block so far has a list item (or an indented line)
    candidate: int = 0  # a blank line after a list: a block end, unless the list goes on
    table: str | None = None  # the head of a table open at ``last_end``
    rows: int = 0  # ...and its rows after the head (or after the start of the text)

    @property
    def reopen(self) -> str | None:
        """What a cut at ``last_end`` leaves open (see ``Cut.reopen``)."""
        return self.open_fence if self.open_fence is not None else self.table


def _scan(text: str, reopen: str | None, start: _Scan | None = None) -> _Scan:
    """Block ends in ``text`` (``reopen``: open at its start), resuming from ``start``'s scan."""
    if start is None:
        natural, pos, prev_blank = 0, 0, True
        table = reopen if reopen is not None and _is_table_head(reopen) else None
        open_fence = reopen if table is None else None
        display = listy = False
        candidate = rows = 0
    else:
        natural, pos, prev_blank = start.natural, start.last_end, start.prev_blank
        open_fence, display, listy = start.open_fence, start.display, start.listy
        candidate, table, rows = start.candidate, start.table, start.rows
    last_end = pos
    while (nl := text.find("\n", pos)) >= 0:
        line, end = text[pos:nl], nl + 1
        if candidate and line.strip():
            if _goes_on(line):
                listy = True  # the list goes on across the blank line
            else:
                natural, listy = candidate, False
            candidate = 0
        if open_fence is not None:
            if _closes(line, open_fence):
                open_fence, prev_blank = None, True  # a closed fence ends a block...
                if not listy:  # (...unless it is an item's: the list may go on)
                    natural = end
                else:
                    candidate = end
        elif (opener := _opens(line)) is not None:
            open_fence, prev_blank, table = opener, False, None
            listy = listy or _listy(line)
        elif line.strip():
            if table is not None:
                rows += 1
            elif not prev_blank and "-" in line:
                table = _table_head(text[text.rfind("\n", 0, pos - 1) + 1 : pos - 1], line)
                rows = 0
            prev_blank = False
            listy = listy or _listy(line)
            for mark in _DISPLAY.findall(line):
                display = not display if mark == "$$" else mark.endswith("[")
        else:
            if not prev_blank and not display:
                if listy:
                    candidate = end
                else:
                    natural = end
            prev_blank, table = True, None
        last_end = pos = end
    if candidate and _goes_on(text[last_end:]) is False:  # the new line says: the list ended
        natural, candidate = candidate, 0
    return _Scan(natural, last_end, open_fence, prev_blank, display, listy, candidate, table, rows)


def table_hold(text: str, scan: _Scan) -> int | None:
    """Where a table not whole yet starts at the end of ``text``, else None: a last row before
    its line end, or a header-like line until its delimiter row is whole."""
    line = text[scan.last_end :]
    if scan.open_fence is not None or scan.display:
        return None
    if scan.table is not None:
        return scan.last_end if line else None
    if scan.last_end and not scan.prev_blank and _MAY_BE_DELIMITER.fullmatch(line):
        header = text.rfind("\n", 0, scan.last_end - 1) + 1
        if _TABLE_ROW.match(text, header):
            return header
    return scan.last_end if _TABLE_ROW.match(line) else None


class Scanner:
    """Scans a text that grows at its end for block ends (see the module docstring)."""

    def __init__(self) -> None:
        self._reopen: str | None = None
        self._text = ""  # the text scanned last
        self._done = ""  # ...up to its last line end
        self._scan: _Scan | None = None
        self._math: tuple[tuple, str, list[Span]] = ((), "", [])

    def math(self, text: str, reopen: str | None, start: int) -> list[Span]:
        """:func:`math_in`, read again only when the new text could move a span (a forced cut
        may wait many deltas for a span to close, each asking)."""
        key, before, spans = self._math
        moves = _MATH_CLOSES if spans and spans[-1][1] is None else _MATH_MOVES
        if key != (reopen, start) or not text.startswith(before) or moves.search(text, len(before)):
            spans = math_in(text, reopen, start)
        self._math = ((reopen, start), text, spans)
        return spans

    def __call__(self, text: str, reopen: str | None) -> _Scan:
        start = self._scan
        if start is not None and reopen == self._reopen and text is self._text:
            return start
        if start is not None and (reopen != self._reopen or not text.startswith(self._done)):
            start = None
        scan = _scan(text, reopen, start)
        self._reopen, self._text, self._scan = reopen, text, scan
        if start is None or scan.last_end != start.last_end:
            self._done = text[: scan.last_end]
        return scan


def find_cut(
    text: str,
    reopen: str | None = None,
    *,
    tail_limit: int = TAIL_LIMIT,
    keep: int = 0,
    scanner: Scanner | None = None,
    at_keep: Callable[[], Cut | None] | None = None,
) -> Cut:
    """Where the unfrozen ``text`` (starting at a line start) may be frozen.

    ``reopen``: open at its start (see ``Cut.reopen``). ``keep``: what the live tail shows
    already; a forced cut lands at or after it, else waits for more text. ``scanner``: one that
    scanned a prefix of ``text``. ``at_keep``: :func:`cut_at` ``keep``, if the caller remembers
    it; a forced cut goes there if it fits (the block then needs no resend).
    """
    scanner = scanner or Scanner()
    scan = scanner(text, reopen)
    cut = Cut(scan.natural, None, False) if scan.natural else Cut(0, reopen, False)
    if len(text) - cut.at <= tail_limit:
        return cut
    math = scanner.math(text, cut.reopen, cut.at) if scan.open_fence is None else []
    if len(text) - cut.at > tail_limit + MATH_WAIT:
        math = []  # (a span this long is no math a model meant: cut anyway)
    if forced := _forced(text, cut.at, max(cut.at, keep), scan, math):
        hold = table_hold(text, scan)
        if 0 < keep <= (len(text) if hold is None else hold) and at_keep is not None:
            here = at_keep()
            if here is not None and (not here.forced or _fits(text, here, math)):
                return here
        return forced
    # None after what the tail shows: wait, unless the tail was past its limit already and no
    # math span is open (that one closes soon, or the wait ends).
    if keep - cut.at > tail_limit and not (math and math[-1][1] is None):
        return _forced(text, cut.at, cut.at, scan, math) or cut
    return cut


def math_in(text: str, reopen: str | None, start: int) -> list[Span]:
    """:func:`.live_markdown.math_extent` of ``text[start:]`` as offsets in ``text``."""
    head = f"{reopen}\n" if reopen is not None else ""
    shift = start - len(head)
    return [
        (a + shift, None if b is None else b + shift) for a, b in math_extent(head + text[start:])
    ]


def may_cut(text: str, at: int, math: list[Span], *, prose: bool = True) -> bool:
    """May a forced cut outside a code fence go at ``at``? Only before a word that has begun
    (before a blank line, the next piece could not see it end the block); in ``prose`` not
    before what opens a block (a list item, a heading, a quote...); not inside ``math``: each
    piece would show half as raw TeX, and pair its other dollar with the next span's. In prose,
    not after an indent of 4 columns or more following a line with less (the next piece would
    open a code block), nor inside such a line (its rest would read as prose)."""
    if at >= len(text):
        return False
    if text[at - 1] == "\n":
        end = text.find("\n", at)
        line = text[at:] if end < 0 else text[at:end]
        if not line.strip():  # a blank line, or a line not begun
            return False
        if prose and _indent(line) >= 4 > _indent(text[text.rfind("\n", 0, at - 1) + 1 : at]):
            return False
    elif text[at].isspace() or (
        prose
        and (
            _OPENS_BLOCK.match(text, at)  # (the piece would open a block of its own)
            or _indent(text[text.rfind("\n", 0, at) + 1 : at]) >= 4  # (a code block's line)
        )
    ):
        return False  # mid-line: only before a word, in prose not one of those
    k = bisect.bisect_left(math, at, key=lambda span: span[0])  # (in order, apart)
    end = math[k - 1][1] if k else at
    return end is not None and end <= at


def _indent(line: str) -> int:
    """The columns of a line's indent (a tab to the next multiple of 4, as CommonMark)."""
    return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(4))


def _fits(text: str, cut: Cut, math: list[Span]) -> bool:
    """May a forced ``cut`` go where it is (any line end in a code fence; else :func:`may_cut`)?"""
    if cut.reopen is not None and not _is_table_head(cut.reopen):
        return True
    return may_cut(text, cut.at, math, prose=cut.reopen is None)


def cut_at(text: str, reopen: str | None, at: int) -> Cut | None:
    """A cut exactly at ``at`` if the text allows one: a block's end (not forced), a line end,
    or a space outside a code fence or table row. (``table_hold`` and :func:`may_cut`, which
    need the text after ``at``, are the caller's to check.)"""
    if at <= 0:
        return None
    scan = _scan(text[:at], reopen)
    if scan.last_end == at:
        if scan.natural and scan.open_fence is None and not text[scan.natural : at].strip():
            return Cut(at, None, False)
        return Cut(at, scan.reopen, True) if _row_end(text, scan) == at else None
    line = text[scan.last_end : at]
    fenced = "```" in line or "~~~" in line
    if scan.reopen is None and line.endswith(" ") and line.strip() and not fenced:
        return Cut(at, None, True)
    return None


def _row_end(text: str, scan: _Scan) -> int:
    """The last line end a forced cut may go at: in a table, after an even number of rows (Lab
    stripes each piece's rows from its first)."""
    if scan.table is None or scan.rows % 2 == 0:
        return scan.last_end
    return text.rfind("\n", 0, scan.last_end - 1) + 1


def _forced(text: str, start: int, lo: int, scan: _Scan, math: list[Span]) -> Cut | None:
    """A forced cut after ``start``, at or after ``lo``, not past a ``table_hold``: the last line
    (or row) end :func:`may_cut` allows, else in one long line outside a table after the last
    sentence in its newer half, else at the last space."""
    hold, end = table_hold(text, scan), _row_end(text, scan)
    if scan.open_fence is not None:
        return Cut(end, scan.reopen, True) if start < end and lo <= end else None
    lines = _line_starts(text, max(start + 1, lo), end)
    for at in itertools.islice(lines, 1 if scan.table is not None else None):
        if (hold is None or at <= hold) and may_cut(text, at, math, prose=scan.table is None):
            return Cut(at, scan.reopen, True)
    if scan.reopen is not None or hold is not None:
        return None
    half = max((start + len(text)) // 2, lo)
    stops = [m.end() for m in _SENTENCE_END.finditer(text, half, len(text) - 1)]
    spaces = _spaces(text, max(start, lo - 1), len(text) - 1)
    for at in itertools.chain(reversed(stops), spaces):  # (lazily: the last space mostly does)
        if at > start and at >= lo and may_cut(text, at, math):
            return Cut(at, None, True)
    return None


def _line_starts(text: str, lo: int, end: int) -> Iterator[int]:
    """The line starts from ``end`` back to ``lo``, the last first."""
    while end >= lo and end > 0:
        yield end
        end = text.rfind("\n", 0, end - 1) + 1


def _spaces(text: str, lo: int, hi: int) -> Iterator[int]:
    """Just after each space in ``text[lo:hi]``, the last first."""
    while (space := text.rfind(" ", lo, hi)) >= 0:
        yield space + 1
        hi = space
