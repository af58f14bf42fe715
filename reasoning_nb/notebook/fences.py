"""Where a growing markdown text may be frozen: block ends, code fences, forced cuts.

:func:`find_cut` finds the end of the finished blocks of the text not frozen yet (a blank line,
or a closing fence, never a blank line inside an open fence). A tail that grows past its limit
without one is cut by force: at the last line end (a cut inside a fence closes it in the frozen
part and reopens it in the tail, see :func:`fence_mark`), or in one long line after the last
sentence in its newer half, else at the last space.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TAIL_LIMIT = 400
"""Force a cut when the live tail grows past this many characters."""

_SENTENCE_END = re.compile(r"[.!?][\"')\]*_]* ")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")


def fence_mark(opener: str) -> str:
    """The backticks or tildes of a fence opener line: what closes it."""
    stripped = opener.lstrip(" ")
    return stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]


def bare_opener(opener: str) -> str:
    """``opener`` without its info string: the same fence, code left unstyled."""
    return opener[: len(opener) - len(opener.lstrip(" "))] + fence_mark(opener)


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


def has_fence(src: str) -> bool:
    """Might ``src`` hold (part of) a code fence? Cheap and generous."""
    return "```" in src or "~~~" in src


class Cut(NamedTuple):
    at: int
    """``text[:at]`` may be frozen (0: nothing yet)."""
    fence: str | None
    """The opener line of a code fence still open at ``at``."""
    forced: bool
    """Cut inside a block (the tail grew too long), not at a block boundary."""


def find_cut(
    text: str,
    fence: str | None = None,
    *,
    tail_limit: int = TAIL_LIMIT,
) -> Cut:
    """Where the unfrozen ``text`` (starting at a line start) may be frozen.

    ``fence`` is the opener line of a code fence still open at the start of ``text`` (after a
    forced cut), else None.
    """
    natural, pos, prev_blank = 0, 0, True
    open_fence = fence
    last_end, fence_at_last_end = 0, fence
    while (nl := text.find("\n", pos)) >= 0:
        line, end = text[pos:nl], nl + 1
        if open_fence is not None:
            if _closes(line, open_fence):
                open_fence, natural, prev_blank = None, end, True  # a closed fence ends a block
        elif (opener := _opens(line)) is not None:
            open_fence, prev_blank = opener, False
        elif line.strip():
            prev_blank = False
        else:
            if not prev_blank:
                natural = end
            prev_blank = True
        last_end, fence_at_last_end = end, open_fence
        pos = end
    cut = Cut(natural, None, False) if natural else Cut(0, fence, False)
    if len(text) - cut.at > tail_limit:
        if last_end > cut.at:
            return Cut(last_end, fence_at_last_end, True)
        # One long line: cut after the last sentence in the newer half, else at a space.
        half = (cut.at + len(text)) // 2
        stop = max((m.end() for m in _SENTENCE_END.finditer(text, half, len(text) - 1)), default=0)
        space = stop - 1 if stop else text.rfind(" ", cut.at, len(text) - 1)
        if open_fence is None and space > cut.at:
            return Cut(space + 1, None, True)
    return cut
