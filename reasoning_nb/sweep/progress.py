"""Where a sweep stands: one frozen ``Progress`` after every change, for a view to show.

The engine keeps a ``Tally`` and hands out snapshots of it; throttling what reaches the screen
is the view's job, so every change is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

STOPPED_BY_CAP = "max_usd"
CANCELLED = "cancelled"


@dataclass(frozen=True)
class Progress:
    total: int
    """Runs the sweep holds: prompts x models x presets."""
    done: int = 0
    """Runs finished, whatever their status (failed and replayed ones included)."""
    running: int = 0
    failed: int = 0
    cached: int = 0
    """Runs replayed from the replay cache (a resumed sweep): asked before, not asked again."""
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    """Tokens of the runs asked in this sweep (replays are not counted: nothing was spent)."""
    usd: float = 0.0
    """The estimated spend of the runs asked in this sweep (a replay bills nothing)."""
    elapsed_s: float = 0.0
    eta_s: float | None = None
    """Seconds left at the pace of the runs asked so far (replays are not a pace); None until
    one has finished, 0 once all have."""
    batch_state: str | None = None
    """The batch service's own state string while a batch sweep waits on it."""
    stopped: str | None = None
    """Why the sweep stopped before its end: ``"max_usd"`` or ``"cancelled"``; None otherwise."""

    @property
    def finished(self) -> bool:
        return self.stopped is not None or (self.done >= self.total and self.running == 0)


class Tally:
    """The engine's running count; ``changed`` hands a snapshot to ``on_progress``."""

    def __init__(
        self,
        total: int,
        clock: Callable[[], float],
        on_progress: Callable[[Progress], object] | None = None,
    ) -> None:
        self._clock, self._start = clock, clock()
        self._on_progress = on_progress
        self.progress = Progress(total=total)
        self.warning: str | None = None
        """Why ``on_progress`` is no longer called (it raised), if it is not."""

    def started(self) -> None:
        self._change(running=self.progress.running + 1)

    def finished(self, *, failed: bool, cached: bool, usage: dict, usd: float | None) -> None:
        p = self.progress
        # (a batch service's result was never counted as running here)
        counts = {"running": max(0, p.running - 1), "done": p.done + 1, "failed": p.failed + failed}
        if cached:
            counts["cached"] = p.cached + 1
        else:
            for key in ("input_tokens", "output_tokens", "reasoning_tokens"):
                counts[key] = getattr(p, key) + (usage.get(key) or 0)
            counts["usd"] = p.usd + (usd or 0.0)
        self._change(**counts)

    def retrying(self) -> None:
        """A refused request goes back to wait for its server: no longer running, not done."""
        self._change(running=self.progress.running - 1)

    def batch(self, state: str | None) -> None:
        self._change(batch_state=state)

    def stop(self, why: str) -> None:
        if self.progress.stopped is None:
            self._change(stopped=why)

    def _change(self, **changes) -> None:
        elapsed = self._clock() - self._start
        p = replace(self.progress, elapsed_s=elapsed, **changes)
        left, asked = p.total - p.done, p.done - p.cached  # replays take no time: not a pace
        eta = elapsed * left / asked if asked > 0 else None
        self.progress = p = replace(p, eta_s=0.0 if left <= 0 else eta)
        if self._on_progress is not None:
            try:
                self._on_progress(p)
            except Exception as exc:  # a view's bug must not end a sweep of thousands of runs
                self._on_progress = None
                self.warning = (
                    f"on_progress raised {type(exc).__name__}: {exc}; the sweep went on without "
                    "it: fix the callback to see the progress of the next sweep."
                )[:500]
