"""Reasoning that repeats itself: a cheap incremental check on the live stream.

The text is normalised (lowercase, runs of whitespace as one space) and every window of
``WINDOW`` characters is hashed as it completes. A window seen before, within ``HISTORY``
characters, is a repeat; a loop is a stretch of consecutive repeats that covers at least
``MIN_CHARS`` characters and at least ``COPIES - 1`` times the distance back to the earlier copy
(its period). So "the the the…" (period 4) fires after ``MIN_CHARS`` of it, and a paragraph said
again fires on its third copy; one long quote of earlier text (a single copy) does not, nor do the
phrases real reasoning repeats ("Wait,", "Let me check", a formula).

Work per character is constant (one slice of ``WINDOW`` characters, one hash, one dict lookup)
and memory is bounded by ``HISTORY``, however long the stream.
"""

from __future__ import annotations

import re
from collections import deque

LOOP_NOTICE = "The reasoning repeats itself"
"""The start of the ``Notice`` a run yields (once) when its reasoning loops; views match it."""

WINDOW = 32
MIN_CHARS = 240
COPIES = 3
HISTORY = 8192
"""Tuned on every real reasoning text the tests hold (tests/test_loops.py): none fires."""

_SPACES = re.compile(r"\s+")


class LoopWatch:
    """Feed it a reasoning stream piece by piece; ``feed`` returns True once, when it loops."""

    def __init__(
        self,
        window: int = WINDOW,
        min_chars: int = MIN_CHARS,
        copies: int = COPIES,
        history: int = HISTORY,
    ):
        self.window, self.min_chars, self.copies, self.history = window, min_chars, copies, history
        self.detected = False
        self.at_chars: int | None = None
        """Characters of normalised text read when the loop was found."""
        self.span = 0
        """Characters in a row, ending at ``at_chars``, that repeat earlier text."""
        self._tail = ""  # the last window - 1 characters read
        self._read = 0  # normalised characters read
        self._seen: dict[int, int] = {}  # window hash -> where it last ended
        self._order: deque[tuple[int, int]] = deque()  # (hash, end), oldest first, for eviction
        self._run = 0  # consecutive repeated windows, ending now

    def feed(self, text: str) -> bool:
        if self.detected or not text:
            return False
        text = _SPACES.sub(" ", text.lower())
        if text[0] == " " and self._tail.endswith(" "):
            text = text[1:]
        buf = self._tail + text
        w, start = self.window, len(self._tail)
        seen, order = self._seen, self._order
        for i in range(max(start, w - 1), len(buf)):
            end = self._read + i - start + 1
            key = hash(buf[i + 1 - w : i + 1])
            last = seen.get(key)
            seen[key] = end
            order.append((key, end))
            if len(order) > self.history:
                old, old_end = order.popleft()
                if seen.get(old) == old_end:
                    del seen[old]
            if last is None:
                self._run = 0
                continue
            self._run += 1
            covered, period = self._run + w - 1, end - last
            if covered >= self.min_chars and covered >= (self.copies - 1) * period:
                self.detected, self.at_chars, self.span = True, end, covered
                return True
        self._read += len(buf) - start
        self._tail = buf[-(w - 1) :]
        return False

    def describe(self, stopped: bool = False) -> str:
        """The notice: what repeats, and what the user can do about it."""
        what = f"{LOOP_NOTICE} (its last {self.span} characters repeat what it wrote before)"
        if stopped:
            return f"{what}: the run was stopped, as stop_on_loop asks."
        return f"{what}: press Stop, or Answer now to get an answer from what it has."
