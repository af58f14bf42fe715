"""When may the live view send? A pure coalescer with an injected clock (no ipywidgets).

Every widget ``update`` message carries whole trait values, so the live view coalesces: changes
wait in the widget and go out together. The first message after a quiet spell goes out at once
(leading edge); after that, messages are paced, and a sliding-window cap keeps every closed
window of ``window`` seconds at or below ``max_rate - reserve`` messages whatever the burst
(``reserve`` is room for unpaced messages; ``headroom`` paces a little under the cap). Whatever
is still pending goes out with the next caller that finds the throttle ready: the next event,
or the magic's periodic ``tick`` (trailing edge).

A caller asks ``ready(cost)`` with an upper bound of the messages it is about to send, sends,
then reports the real count with ``sent(n)``. Messages that must go out unpaced (the start and
the end of a run, a click) are reported with ``note(n)`` so the window still counts them."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class Throttle:
    """Leading-edge, paced, window-capped message budget."""

    def __init__(
        self,
        max_rate: float = 25.0,
        clock: Callable[[], float] = time.monotonic,
        *,
        window: float = 1.0,
        reserve: int = 0,
        headroom: int = 0,
    ) -> None:
        if max_rate <= 0:
            raise ValueError(f"max_rate must be positive, not {max_rate!r}")
        self.max_rate = float(max_rate)
        self.window = window
        self.cap = max(1, int(self.max_rate * window) - reserve)
        """Most paced messages in any closed window (``reserve`` is kept for unpaced ones)."""
        self.interval = window / max(1, self.cap - headroom)
        """Pacing per message; ``headroom`` keeps the window from filling up, so a flush of a
        few messages rarely has to wait for room."""
        self.clock = clock
        self.pending = False
        """Something changed and has not been sent yet."""
        self._next = float("-inf")
        self._times: deque[float] = deque()

    def want(self) -> None:
        """Note that something changed and waits to be sent."""
        self.pending = True

    def room(self, now: float | None = None) -> int:
        """How many more messages the window takes right now."""
        now = self.clock() if now is None else now
        times = self._times
        while times and times[0] < now - self.window:
            times.popleft()
        return self.cap - len(times)

    def ready(self, cost: int = 1, now: float | None = None) -> bool:
        """May ``cost`` messages go out now (pacing interval passed, window has room)?"""
        now = self.clock() if now is None else now
        return now >= self._next and self.room(now) >= cost

    def due(self, cost: int = 1, now: float | None = None) -> bool:
        """Something is pending and may go out now."""
        return self.pending and self.ready(cost, now)

    def sent(self, n: int = 1, now: float | None = None) -> None:
        """``n`` paced messages went out now: the next may go ``n * interval`` s later."""
        now = self.clock() if now is None else now
        self.pending = False
        if n > 0:
            self._times.extend([now] * n)
            self._next = now + n * self.interval

    def note(self, n: int = 1, now: float | None = None) -> None:
        """``n`` unpaced messages went out now (counted in the window, no pacing delay)."""
        if n > 0:
            now = self.clock() if now is None else now
            self._times.extend([now] * n)
