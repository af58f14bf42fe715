"""A sweep's progress in words, once for every view, and as a terminal bar.

``figures`` is the one reading of a :class:`~.progress.Progress` (done/total, running, failed,
tokens, spend, time, ETA, the batch's state, why it stopped): the notebook's widget shows it,
the :class:`TerminalBar` prints it. The bar is an ``on_progress`` for plain Python: the engine
calls it after every change, and it redraws at most every ``interval`` seconds (a terminal), or
prints a line per tenth done (a log, a kernel's stdout: no carriage returns there).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..views.terminal import inert

BAR_WIDTH = 24
REDRAW = 0.2  # seconds between a terminal's redraws
STEPS = 10  # a line per tenth of the runs where the bar cannot redraw in place
STOPPED = {"max_usd": "stopped: the spend cap was reached", "cancelled": "stopped"}


def count(n: int | None) -> str:
    """``1234567`` -> ``1.2M``: token counts at a glance."""
    if n is None:
        return "?"
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def usd(value: float | None) -> str:
    if value is None:
        return "$?"
    return f"${value:.4f}" if 0 < value < 0.01 else f"${value:.2f}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def fraction(progress: Any) -> float:
    return progress.done / progress.total if progress.total else 1.0


def figures(progress: Any) -> list[tuple[str, str]]:
    """What a view shows, in order, as (name, text) pairs; a part that is naught is left out."""
    p = progress
    tokens = (p.input_tokens or 0) + (p.output_tokens or 0)
    out = [("done", f"{p.done}/{p.total} done")]
    if p.running:
        out.append(("running", f"{p.running} running"))
    if p.failed:
        out.append(("failed", f"{p.failed} failed"))
    if p.cached:
        out.append(("cached", f"{p.cached} from the cache"))
    reasoning = f" ({count(p.reasoning_tokens)} reasoning)" if p.reasoning_tokens else ""
    out.append(("tokens", f"{count(tokens)} tokens{reasoning}"))
    out.append(("spend", usd(p.usd)))
    out.append(("elapsed", duration(p.elapsed_s)))
    if not p.finished:
        out.append(("eta", f"ETA {duration(p.eta_s)}" if p.eta_s is not None else "ETA …"))
    if p.batch_state:
        out.append(("batch", f"batch: {inert(str(p.batch_state))}"))
    if p.stopped:
        out.append(("stopped", STOPPED.get(p.stopped, f"stopped: {inert(str(p.stopped))}")))
    return out


def line(progress: Any) -> str:
    return " · ".join(text for _, text in figures(progress))


def bar(progress: Any, width: int = BAR_WIDTH) -> str:
    filled = round(fraction(progress) * width)
    return "[" + "#" * filled + "." * (width - filled) + "]"


class TerminalBar:
    """``on_progress`` for a terminal (``\\r`` redraws) or a log (a line per tenth done)."""

    def __init__(
        self,
        out: TextIO | None = None,
        *,
        redraw: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        interval: float = REDRAW,
    ):
        self.out = out or sys.stdout
        self.redraw = self.out.isatty() if redraw is None else redraw
        self.clock, self.interval = clock, interval
        self._at = float("-inf")
        self._step = -1  # the last tenth printed (a log)
        self._said: tuple[Any, Any] = (None, None)  # batch state and stop printed (a log)
        self._ended = False

    def __call__(self, progress: Any) -> None:
        if self._ended:
            return
        if progress.finished:
            self.finish(progress)
        elif self.redraw:
            now = self.clock()
            if now >= self._at + self.interval:
                self._at = now
                self.out.write(f"\r\x1b[K{bar(progress)} {line(progress)}")
                self.out.flush()
        else:
            step = int(fraction(progress) * STEPS)
            said = (progress.batch_state, progress.stopped)
            if step > self._step or said != self._said:
                self._step, self._said = step, said
                self._print(progress)

    def finish(self, progress: Any) -> None:
        """The last state, once, on a line of its own."""
        if self._ended:
            return
        self._ended = True
        if self.redraw:
            self.out.write("\r\x1b[K")
        self._print(progress)

    def _print(self, progress: Any) -> None:
        self.out.write(f"{bar(progress)} {line(progress)}\n")
        self.out.flush()


__all__ = ["TerminalBar", "bar", "figures", "line"]
