"""Where a growing markdown text may be frozen: block ends, code fences, forced cuts.

:func:`find_cut` finds the end of the finished blocks of the text not frozen yet (a blank line,
or a closing fence; never a blank line inside an open fence or an open ``$$``/``\\[`` display,
and never between the items of a loose list: after a list, a blank line is a block end only
once the next line shows it does not go on with the list). A tail that grows past its limit
without one is cut by force: at the last line end (a cut inside a fence closes it in the frozen
part and reopens it in the tail, see :func:`fence_mark`), or in one long line after the last
sentence in its newer half, else at the last space. A forced cut lands at or after ``keep`` (the
text the live tail already shows) where it can, so the frozen part never shows less than the
tail did (see :mod:`.live_text`). A :class:`Scanner` finds block ends in a text that grows at its
end, resuming at the last line end it saw, so a live tail is scanned once, not once per delta.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TAIL_LIMIT = 400
"""Force a cut when the live tail grows past this many characters."""

_SENTENCE_END = re.compile(r"[.!?][\"')\]*_]* ")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_DISPLAY = re.compile(r"(?<!\\)\$\$|\\[\[\]]")  # $$, \[ or \] (the normaliser makes $$ of them)
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")


def fence_mark(opener: str) -> str:
    """The backticks or tildes of a fence opener line: what closes it."""
    stripped = opener.lstrip(" ")
    return stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]


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
    fence: str | None
    """The opener line of a code fence still open at ``at``."""
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
    fence_at_last_end: str | None  # the fence open there
    open_fence: str | None  # the fence open at the end of the text
    prev_blank: bool = True  # the last line was blank (or closed a fence)
    display: bool = False  # a $$ (or \[) display is open
    listy: bool = False  # the block so far has a list item (or an indented line)
    candidate: int = 0  # a blank line after a list: a block end, unless the list goes on


def _scan(text: str, fence: str | None, start: _Scan | None = None) -> _Scan:
    """Block ends in ``text`` (``fence``: open at its start); from ``start``, a scan of a prefix
    of ``text`` (the lines up to its ``last_end`` are not read again)."""
    if start is None:
        natural, pos, prev_blank, open_fence = 0, 0, True, fence
        display = listy = False
        candidate = 0
    else:
        natural, pos, prev_blank = start.natural, start.last_end, start.prev_blank
        open_fence, display, listy = start.open_fence, start.display, start.listy
        candidate = start.candidate
    last_end, fence_at_last_end = pos, open_fence
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
            open_fence, prev_blank = opener, False
            listy = listy or _listy(line)
        elif line.strip():
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
            prev_blank = True
        last_end, fence_at_last_end = end, open_fence
        pos = end
    if candidate and _goes_on(text[last_end:]) is False:  # the new line says: the list ended
        natural, candidate = candidate, 0
    return _Scan(
        natural, last_end, fence_at_last_end, open_fence, prev_blank, display, listy, candidate
    )


class Scanner:
    """Scans a text that grows at its end (the live tail and what arrived since) for block ends,
    resuming at the last line end of the text before when the new text extends it."""

    def __init__(self) -> None:
        self._fence: str | None = None
        self._text = ""  # the text scanned last
        self._done = ""  # ...up to its last line end
        self._scan: _Scan | None = None

    def __call__(self, text: str, fence: str | None) -> _Scan:
        start = self._scan
        if start is not None and fence == self._fence and text is self._text:
            return start
        if start is not None and (fence != self._fence or not text.startswith(self._done)):
            start = None
        scan = _scan(text, fence, start)
        self._fence, self._text, self._scan = fence, text, scan
        if start is None or scan.last_end != start.last_end:
            self._done = text[: scan.last_end]
        return scan


def find_cut(
    text: str,
    fence: str | None = None,
    *,
    tail_limit: int = TAIL_LIMIT,
    keep: int = 0,
    scanner: Scanner | None = None,
) -> Cut:
    """Where the unfrozen ``text`` (starting at a line start) may be frozen.

    ``fence`` is the opener line of a code fence still open at the start of ``text`` (after a
    forced cut), else None. ``keep``: what the live tail shows already; a forced cut lands at or
    after it, else waits for more text (unless the tail was past ``tail_limit`` already).
    ``scanner``: one that scanned a prefix of ``text`` before, to go on from there.
    """
    scan = _scan(text, fence) if scanner is None else scanner(text, fence)
    cut = Cut(scan.natural, None, False) if scan.natural else Cut(0, fence, False)
    if len(text) - cut.at > tail_limit:
        ends = scan.last_end, scan.fence_at_last_end, scan.open_fence
        if forced := _forced(text, cut.at, max(cut.at, keep), *ends):
            return forced
        # None after what the tail shows: wait for one (the next words, the line end) unless the
        # tail was past its limit already; then cut where the old rule says.
        if keep - cut.at > tail_limit and (forced := _forced(text, cut.at, cut.at, *ends)):
            return forced
    return cut


def cut_at(text: str, fence: str | None, at: int) -> Cut | None:
    """A cut exactly at ``at`` if the text allows one there: the end of a block (then not
    forced: only blank lines after the last one), else a line end, or a space outside a code
    fence; None inside a word or a line of code."""
    if at <= 0:
        return None
    scan = _scan(text[:at], fence)
    if scan.last_end == at:
        if scan.natural and scan.open_fence is None and not text[scan.natural : at].strip():
            return Cut(at, None, False)
        return Cut(at, scan.fence_at_last_end, True)
    line = text[scan.last_end : at]
    if scan.open_fence is None and line.endswith(" ") and line.strip() and not _has_fence(line):
        return Cut(at, None, True)
    return None


def _forced(
    text: str, start: int, lo: int, last_end: int, fence_at: str | None, open_fence: str | None
) -> Cut | None:
    """A forced cut after ``start`` and at or after ``lo``: the last line end, else (in one long
    line, outside a fence) after the last sentence in the newer half, else at the last space."""
    if last_end > start and last_end >= lo:
        return Cut(last_end, fence_at, True)
    if open_fence is not None:
        return None
    half = max((start + len(text)) // 2, lo)
    stop = max((m.end() for m in _SENTENCE_END.finditer(text, half, len(text) - 1)), default=0)
    space = stop - 1 if stop else text.rfind(" ", max(start, lo - 1), len(text) - 1)
    if space > start and space + 1 >= lo:
        return Cut(space + 1, None, True)
    return None
