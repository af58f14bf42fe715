"""Reasoning that repeats itself: a cheap incremental check on the live stream.

The text is normalised (lowercase, runs of whitespace as one space). Every ``STEP`` characters
the newest ``WINDOW`` characters are looked up in the ``HISTORY`` characters before them: a
window found there is a repeat, its period the distance to the nearest earlier copy. A loop is
consecutive repeats covering at least ``MIN_CHARS`` characters and ``COPIES - 1`` periods: a
paragraph said again fires on its third copy; one long quote of earlier text does not, nor do
the phrases real reasoning repeats ("Wait,", "Let me check", a formula).

Work per delta is bounded by ``HISTORY``: one search (in C) per ``STEP`` characters. Hashing
every window in Python instead made ``think()`` 5-20% slower on the 25,000-chunk stream of
benchmarks/stream.py.
"""

from __future__ import annotations

import re

LOOP_NOTICE = "The reasoning repeats itself"
"""The start of the ``Notice`` a run yields (once) when its reasoning loops; views match it."""

REPETITION = "repetition"
"""The finish reason of a run its server stopped because the output repeats itself (vLLM's
``repetition_detection``, PR #35451: ``FinishReason.REPETITION``). Such a run is cut short, as at
its token limit (``Trace.finish``), and its warning says so (``server_stopped``)."""

WINDOW = 32
MIN_CHARS = 240
COPIES = 3
HISTORY = 8192
"""Tuned on every real reasoning text the tests hold (tests/test_loops.py): none fires."""
STEP = 16
"""Characters between two checks: a loop is found at most this much later than it could be."""

_SPACES = re.compile(r"\s+")


class LoopWatch:
    """``feed`` returns True once, when the reasoning loops."""

    def __init__(
        self,
        window: int = WINDOW,
        min_chars: int = MIN_CHARS,
        copies: int = COPIES,
        history: int = HISTORY,
        step: int = STEP,
    ):
        self.window, self.min_chars, self.copies = window, min_chars, copies
        self.history, self.step = history, step
        self.detected = False
        self.at_chars: int | None = None
        """Characters of normalised text read when the loop was found."""
        self.span = 0
        """Characters in a row, ending at ``at_chars``, that repeat earlier text."""
        self._text = ""  # the normalised text up to the last check point: at most ``history``
        self._read = 0  # normalised characters read in all
        self._run = 0  # consecutive check points whose window is a repeat
        self._pending: list[str] = []  # text read since the last check point
        self._last_space = False  # the text read so far ends in a space

    def feed(self, text: str) -> bool:
        if self.detected or not text:
            return False
        text = _SPACES.sub(" ", text.lower())
        if text[:1] == " " and self._last_space:
            text = text[1:]
        if not text:
            return False
        self._last_space = text[-1] == " "
        self._pending.append(text)
        start, self._read = self._read, self._read + len(text)
        if self._read // self.step == start // self.step:
            return False  # no check point in it: it waits (most deltas are a few characters)
        buf = self._text + "".join(self._pending)
        self._pending.clear()
        base = self._read - len(buf)  # where buf starts in the text
        for at in range(start - start % self.step + self.step, self._read + 1, self.step):
            if self._loops(buf, at - base):
                self.detected, self.at_chars = True, at
                return True
        self._text = buf[-self.history :]
        return False

    def _loops(self, buf: str, end: int) -> bool:
        """Does ``buf[:end]`` end a loop? (``end``: a check point, ``STEP`` after the last.)"""
        w = self.window
        since = max(0, end - self.history)
        earlier = -1 if end < w else buf.rfind(buf[end - w : end], since, end - 1)
        if earlier < 0:
            self._run = 0
            return False
        self._run += 1
        covered, period = (self._run - 1) * self.step + w, end - w - earlier
        if covered >= self.min_chars and covered >= (self.copies - 1) * period:
            self.span = covered
            return True
        return False

    def describe(self, stopped: bool = False) -> str:
        """The notice: what repeats (it is saved with the trace, so it gives no advice that only
        holds while the run streams: the live view offers Stop and Answer now beside it)."""
        what = f"{LOOP_NOTICE} (its last {self.span} characters repeat what it wrote before)"
        if stopped:
            return f"{what}: the run was stopped, as stop_on_loop asks."
        return f"{what}."


def server_stopped(warnings: list[str], answered: bool, advice: str = "") -> str:
    """The warning of a run its server stopped at a loop (``REPETITION``). ``warnings``: the
    run's own, where this watch may have named the loop already; ``advice``: what to try when no
    answer came (the rescue's words)."""
    if any(w.startswith(LOOP_NOTICE) for w in warnings):
        what = "The server stopped the run at that loop"
    else:
        what = f"{'The answer repeats itself' if answered else LOOP_NOTICE}: the server stopped it"
    said = f"{what} (finish reason {REPETITION!r})"
    return f"{said}, before any answer: {advice}" if advice else f"{said}."
