"""Terminal progress for the one-time ``llama-server`` build: stage, bar, elapsed, time left.

A terminal gets one line redrawn in place; a log (CI, binder, a pipe) gets a line per stage and
per tenth built, so the build never looks hung either way.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

WIDTH = 24


def clock_text(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class BuildProgress:
    """A ``llama_build.Report``: call it with (stage, fraction); ``done()`` ends the line."""

    def __init__(
        self,
        expected_s: float,
        out: TextIO | None = None,
        *,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.out = out or sys.stderr
        self.tty = self.out.isatty() if tty is None else tty
        self.expected_s = expected_s
        self.clock = clock
        self.start = clock()
        self._stage = ""
        self._tenths = -1
        self._drawn = -1.0

    def __call__(self, stage: str, fraction: float | None) -> None:
        now = self.clock()
        elapsed = now - self.start
        if fraction is None or stage != self._stage:
            if self.tty and self._stage:
                self.out.write("\n")
            self._stage = stage
            if fraction is None:
                self.out.write(f"  {stage}… ({clock_text(elapsed)})" + ("" if self.tty else "\n"))
                self.out.flush()
                return
        if self.tty:
            if now - self._drawn < 0.25 and fraction < 1:
                return
            self._drawn = now
            filled = round(WIDTH * fraction)
            bar = "█" * filled + "░" * (WIDTH - filled)
            self.out.write(f"\r  {stage} {bar} {fraction:4.0%}  {self._times(elapsed, fraction)}")
        else:
            tenths = int(fraction * 10)
            if tenths == self._tenths:
                return
            self._tenths = tenths
            self.out.write(f"  {stage}: {fraction:.0%}  {self._times(elapsed, fraction)}\n")
        self.out.flush()

    def _times(self, elapsed: float, fraction: float) -> str:
        # Until a tenth is built, the measured total is a better guess than the pace so far.
        total = elapsed / fraction if fraction >= 0.1 else self.expected_s
        left = max(0.0, total - elapsed)
        return f"{clock_text(elapsed)} elapsed, about {clock_text(left)} left"

    def done(self) -> None:
        end = "\n" if self.tty and self._stage else ""
        self.out.write(f"{end}  built in {clock_text(self.clock() - self.start)}\n")
        self.out.flush()
