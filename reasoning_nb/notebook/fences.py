"""Where a growing markdown text may be frozen: block ends, code fences, tables, forced cuts.

:func:`find_cut` finds the end of the finished blocks of the text not frozen yet (a blank line,
or a closing fence; never a blank line inside an open fence or an open ``$$``/``\\[`` display,
and never between the items of a loose list: after a list, a blank line is a block end only
once the next line shows it does not go on with the list). A tail that grows past its limit
without one is cut by force: at the last line end, or in one long line after the last sentence
in its newer half, else at the last space. A cut inside a code fence or a table leaves a
``reopen``: the fence's opener line (closed in the frozen part, see :func:`closing`) or the
table's head, which the next piece opens with. A forced cut lands at or after ``keep`` (the
text the live tail already shows) where it can, so the frozen part never shows less than the
tail did (see :mod:`.live_text`), and never past :func:`table_hold`, the start of a table not
whole yet: a table only ever shows as a table. A :class:`Scanner` finds block ends in a text
that grows at its end, resuming at the last line end it saw, so a live tail is scanned once,
not once per delta.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .live_markdown import opens_table

TAIL_LIMIT = 400
"""Force a cut when the live tail grows past this many characters."""

_SENTENCE_END = re.compile(r"[.!?][\"')\]*_]* ")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_DISPLAY = re.compile(r"(?<!\\)\$\$|\\[\[\]]")  # $$, \[ or \] (the normaliser makes $$ of them)
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_TABLE_ROW = re.compile(r"[ \t>]*\|")  # what models open a table's rows with (GFM needs no pipe)
_DELIMITER_ROW = re.compile(r"[ \t>]*\|?(?:[ \t]*:?-+:?[ \t]*\|)*[ \t]*:?-+:?[ \t]*\|?[ \t]*")
_MAY_BE_DELIMITER = re.compile(r"[ \t>|:-]*")  # (a delimiter row being written)


def fence_mark(opener: str) -> str:
    """The backticks or tildes of a fence opener line: what closes it."""
    stripped = opener.lstrip(" ")
    return stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]


def closing(reopen: str) -> str:
    """The line that closes what a cut left open in the frozen part: a code fence's backticks or
    tildes; a table needs none (empty)."""
    return "" if _is_table_head(reopen) else fence_mark(reopen)


def _is_table_head(reopen: str) -> bool:
    return "\n" in reopen  # (a fence opener is one line; a table's head is two)


def _table_head(header: str, delimiter: str) -> str | None:
    """The head of the table that ``header`` then ``delimiter`` open, if they open one (a
    table may interrupt a paragraph: the header is the line before the delimiter row)."""
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


def _has_fence(src: str) -> bool:
    """Might ``src`` hold (part of) a code fence? Cheap and generous."""
    return "```" in src or "~~~" in src


class Cut(NamedTuple):
    at: int
    """``text[:at]`` may be frozen (0: nothing yet)."""
    reopen: str | None
    """What opens the block cut at ``at`` again after it: the opener line of a code fence, or
    the head (header and delimiter rows) of a table; None: no block is open there."""
    forced: bool
    """Cut inside a block (the tail grew too long), not at a block boundary."""


def _listy(line: str) -> bool:
    """A list item's line, or an indented one (an item's paragraph, code...)."""
    return line[:1] in (" ", "\t") or _LIST_ITEM.match(line) is not None


def _goes_on(line: str) -> bool | None:
    """Does the line after a blank line go on with a list (indented, or a list item)? None:
    too little of it arrived to tell."""
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
    """Block ends in ``text`` (``reopen``: open at its start); from ``start``, a scan of a
    prefix of ``text`` (the lines up to its ``last_end`` are not read again)."""
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
    """Where a table not whole yet starts at the end of ``text`` (``scan``: of it), else None:
    the last row of a table before its line end, or a line that looks like a table's header
    until its delimiter row is whole (a table shows as a table only once both are there)."""
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
    """Scans a text that grows at its end (the live tail and what arrived since) for block ends,
    resuming at the last line end of the text before when the new text extends it."""

    def __init__(self) -> None:
        self._reopen: str | None = None
        self._text = ""  # the text scanned last
        self._done = ""  # ...up to its last line end
        self._scan: _Scan | None = None

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
) -> Cut:
    """Where the unfrozen ``text`` (starting at a line start) may be frozen.

    ``reopen``: what is open at the start of ``text`` after a forced cut (see ``Cut.reopen``),
    else None. ``keep``: what the live tail shows already; a forced cut lands at or
    after it, else waits for more text (unless the tail was past ``tail_limit`` already).
    ``scanner``: one that scanned a prefix of ``text`` before, to go on from there.
    """
    scan = _scan(text, reopen) if scanner is None else scanner(text, reopen)
    cut = Cut(scan.natural, None, False) if scan.natural else Cut(0, reopen, False)
    if len(text) - cut.at > tail_limit:
        if forced := _forced(text, cut.at, max(cut.at, keep), scan):
            return forced
        # None after what the tail shows: wait for one (the next words, the line end) unless the
        # tail was past its limit already; then cut where the old rule says.
        if keep - cut.at > tail_limit and (forced := _forced(text, cut.at, cut.at, scan)):
            return forced
    return cut


def cut_at(text: str, reopen: str | None, at: int) -> Cut | None:
    """A cut exactly at ``at`` if the text allows one there: the end of a block (then not
    forced: only blank lines after the last one), else a line end, or a space outside a code
    fence or a table row; None inside a word or a line of code. (Not past a ``table_hold``:
    the caller's to check, with the text after ``at``.)"""
    if at <= 0:
        return None
    scan = _scan(text[:at], reopen)
    if scan.last_end == at:
        if scan.natural and scan.open_fence is None and not text[scan.natural : at].strip():
            return Cut(at, None, False)
        return Cut(at, scan.reopen, True) if _row_end(text, scan) == at else None
    line = text[scan.last_end : at]
    if scan.reopen is None and line.endswith(" ") and line.strip() and not _has_fence(line):
        return Cut(at, None, True)
    return None


def _row_end(text: str, scan: _Scan) -> int:
    """The last line end a forced cut may go at: in a table, the last after an even number of
    rows, so each piece's stripes go on from the rows above (Lab stripes each piece's rows
    from its first)."""
    if scan.table is None or scan.rows % 2 == 0:
        return scan.last_end
    return text.rfind("\n", 0, scan.last_end - 1) + 1


def _forced(text: str, start: int, lo: int, scan: _Scan) -> Cut | None:
    """A forced cut after ``start`` and at or after ``lo``, not past a table not whole yet: the
    last line end, else (in one long line, outside a fence or a table) after the last sentence
    in the newer half, else at the last space."""
    hold, end = table_hold(text, scan), _row_end(text, scan)
    if end > start and lo <= end and (hold is None or end <= hold):
        return Cut(end, scan.reopen, True)
    if scan.reopen is not None or hold is not None:
        return None
    half = max((start + len(text)) // 2, lo)
    stop = max((m.end() for m in _SENTENCE_END.finditer(text, half, len(text) - 1)), default=0)
    space = stop - 1 if stop else text.rfind(" ", max(start, lo - 1), len(text) - 1)
    if space > start and space + 1 >= lo:
        return Cut(space + 1, None, True)
    return None
