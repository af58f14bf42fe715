"""When may the live view send, and how much has it sent? Pure bookkeeping (no ipywidgets).

Every widget ``update`` message carries whole trait values, so the live view coalesces: changes
wait in the widget and go out together. Two limits apply to every flush:

* **rate**: the first message after a quiet spell goes out at once (leading edge); after that,
  messages are paced, and a sliding-window cap keeps every closed window of ``window`` seconds
  at or below ``max_rate - reserve`` messages whatever the burst (``reserve`` is room for unpaced
  messages; ``headroom`` paces a little under the cap).
* **bytes**: with ``byte_ratio`` set, the state bytes of all updates stay within ``byte_ratio``
  x the text bytes received so far (:meth:`earn`) + ``byte_slack`` + ``byte_rate`` per second
  since the first text. Each update resends the live tail, so without this a slow stream costs
  many times its text; with it, it updates less often instead. The slack lets a short answer
  stream token by token; the per-second part lets a slow one show new text every second or so
  (each update has ~100 bytes of wrapping, whatever text it brings).

A caller asks ``ready(cost, nbytes=...)`` with an upper bound (or estimate) of what it is about
to send, sends, then reports what really went out with ``sent(n, nbytes=...)``. Messages that
must go out unpaced (the start and the end of a run, a click) are reported with ``note`` so the
window and the byte total still count them.

:class:`Meter` sets widget traits and counts the messages and their state bytes as the kernel
serialises them (``jupyter_client`` packs JSON with ``ensure_ascii=False``, UTF-8).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable

from .host import sent_keys


class Throttle:
    """Leading-edge, paced, window-capped message budget, with an optional byte budget."""

    def __init__(
        self,
        max_rate: float = 25.0,
        clock: Callable[[], float] = time.monotonic,
        *,
        window: float = 1.0,
        reserve: int = 0,
        headroom: int = 0,
        byte_ratio: float | None = None,
        byte_slack: int = 0,
        byte_rate: float = 0.0,
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
        self.byte_ratio, self.byte_rate = byte_ratio, byte_rate
        self.allowance = float(byte_slack)
        """Bytes that may have gone out so far, but for the per-second part."""
        self.earned = 0
        """Text bytes received so far (:meth:`earn`)."""
        self.spent = 0
        """State bytes of every update reported so far (paced and unpaced)."""
        self._since: float | None = None  # when the first text arrived
        self._next = float("-inf")
        self._times: deque[float] = deque()

    # -- bytes -----------------------------------------------------------------------------------

    def earn(self, text_bytes: int, now: float | None = None) -> None:
        """``text_bytes`` of model text arrived: that much more may be sent."""
        if self._since is None and text_bytes:
            self._since = self.clock() if now is None else now
        self.earned += text_bytes
        if self.byte_ratio is not None:
            self.allowance += self.byte_ratio * text_bytes

    def left(self, now: float | None = None) -> float:
        """Bytes that may still go out now."""
        if self.byte_ratio is None:
            return float("inf")
        since = self._since
        now = self.clock() if now is None else now
        return (
            self.allowance
            + (self.byte_rate * (now - since) if since is not None else 0)
            - self.spent
        )

    def affords(self, nbytes: int, now: float | None = None) -> bool:
        """Would ``nbytes`` more stay within the byte budget?"""
        return nbytes <= self.left(now)

    # -- messages --------------------------------------------------------------------------------

    def room(self, now: float | None = None) -> int:
        """How many more messages the window takes right now."""
        now = self.clock() if now is None else now
        times = self._times
        while times and times[0] < now - self.window:
            times.popleft()
        return self.cap - len(times)

    def ready(self, cost: int = 1, now: float | None = None, *, nbytes: int = 0) -> bool:
        """May ``cost`` messages of about ``nbytes`` go out now (pacing interval passed, window
        has room, byte budget allows)?"""
        now = self.clock() if now is None else now
        return now >= self._next and self.room(now) >= cost and self.affords(nbytes, now)

    def sent(self, n: int = 1, now: float | None = None, *, nbytes: int = 0) -> None:
        """``n`` paced messages (``nbytes`` in all) went out now: the next may go ``n *
        interval`` s later."""
        now = self.clock() if now is None else now
        self.spent += nbytes
        if n > 0:
            self._times.extend([now] * n)
            self._next = now + n * self.interval

    def note(self, n: int = 1, now: float | None = None, *, nbytes: int = 0) -> None:
        """``n`` unpaced messages went out now (counted in the window and the byte total, no
        pacing delay)."""
        self.spent += nbytes
        if n > 0:
            now = self.clock() if now is None else now
            self._times.extend([now] * n)


class Meter:
    """Sets widget traits, one ``update`` message per call, and counts messages and bytes."""

    def __init__(self) -> None:
        self.msgs = 0
        self.bytes = 0
        self.opened_bytes = 0
        """Text sent in the state of new widgets (``comm_open``, not an update)."""

    def set(self, widget, **traits) -> int:
        """Set the traits that differ, in order, in one message; returns how many went out
        (0 or 1)."""
        changed = False
        with widget.hold_sync():
            for key, value in traits.items():
                if getattr(widget, key) != value:  # checked in turn: new options reset a value
                    setattr(widget, key, value)
                    changed = True
            # what goes out (a Dropdown's ``value`` travels as ``index``...)
            keys = sent_keys(widget, traits)
        if not (changed and keys):
            return 0
        self.msgs += 1
        self.bytes += state_bytes(widget.get_state(keys))
        return 1

    def opened(self, widget, text: str) -> None:
        """``widget`` was made holding ``text``: count it (its ``comm_open`` carries it)."""
        self.opened_bytes += len(text.encode("utf-8", "replace"))


def state_bytes(state: dict) -> int:
    """The bytes of an update's ``state`` as the kernel serialises it."""
    return len(json.dumps(state, ensure_ascii=False, default=str).encode("utf-8", "replace"))
