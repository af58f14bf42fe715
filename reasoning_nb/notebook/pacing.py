"""When may a live view send, and how much has it sent? One :class:`Pacer` per view.

Every widget ``update`` message carries whole trait values, so the live views coalesce: changes
wait in the widgets and go out together. The pacer holds two budgets over every flush:

* **rate**: the first message after a quiet spell goes out at once (leading edge); after that,
  messages are paced (``burst`` of them may go ahead of their turn when the caller comes late,
  as from a token bucket of that size), and a sliding-window cap keeps every closed window of
  ``window`` seconds at or below ``max_rate - reserve`` messages whatever the burst (``reserve``
  is room for unpaced messages; ``headroom`` paces a little under the cap).
* **bytes**: with ``byte_ratio`` set, the state bytes of all updates stay within ``byte_ratio``
  x the text bytes received so far (:meth:`earn`) + ``byte_slack`` + ``byte_rate`` per second
  since the first text. Each update resends the live tail, so without this a slow stream costs
  many times its text; with it, it updates less often instead, and the tails are cut shorter
  (:meth:`tail_limit`). The slack lets a short answer stream token by token; the per-second part
  lets a slow one show new text every second or so (an update wraps its text in ~100 bytes).

A caller asks ``ready(cost, nbytes=...)`` with an upper bound (or estimate) of what it is about
to send, sends, then reports what really went out with ``sent(n, nbytes=...)``. What must go out
unpaced (the start and the end of a run, a click) is sent inside ``with pacer.unpaced():``, so
the window and the byte total still count it.

:class:`UpdateMeter` sets widget traits and counts the messages and their state bytes as the
kernel serialises them (``jupyter_client`` packs JSON with ``ensure_ascii=False``, UTF-8).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .host import sent_keys

TEXT_INTERVAL = 0.1
"""The live tails change at most this often: at 10 a second the front end spent ~40% less time
than at 20 (MathJax typesets each new tail), and the text still reads as smooth. Once all but
``TIGHT`` of the byte slack is spent, a slow stream updates as often as the text earns the
update's bytes, up to every ``TEXT_SPREAD`` s."""
TEXT_SPREAD, TIGHT = 1.5, 0.25
STATUS_INTERVAL, STATUS_SHARE = 2.0, 0.1
"""The status line's figures ride along with the text at most every ``STATUS_INTERVAL`` s, and
take at most ``STATUS_SHARE`` of what the text earns (a new phase or warning goes out at once)."""
TAIL_SECONDS, MIN_TAIL, MAX_TAIL = 1.5, 160, 4_000
"""A live tail is cut by force past the text of ``TAIL_SECONDS`` at the rate it arrives, within
these bounds: each update re-sends the tail, so a slow stream sends short tails."""
RATE_WINDOW = 4.0
"""The text's arrival rate is measured over this many seconds."""
PAUSE = 0.3
"""No text for this long: the tails show what they hold back (the end of a word...)."""
BYTE_RATIO, BYTE_SLACK, BYTE_RATE = 4.0, 6_000, 100.0
"""A single run's byte budget (see above). The final render adds at most one resend of the
blocks cut by force (their join), so all told it stays within 5x the text."""


class UpdateMeter:
    """Sets widget traits, one ``update`` message per call, and counts messages and bytes."""

    def __init__(self) -> None:
        self.msgs = 0
        self.bytes = 0
        self.opened_bytes = 0
        """Text sent in the state of new widgets (``comm_open``, not an update)."""

    @property
    def all_bytes(self) -> int:
        """What counts against a byte budget: updates, and the text new widgets opened with."""
        return self.bytes + self.opened_bytes

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


@dataclass
class Pacer:
    """Leading-edge, paced, window-capped message budget, with an optional byte budget, and the
    text's arrival rate that sizes the live tails and spaces their updates."""

    max_rate: float = 25.0
    clock: Callable[[], float] = time.monotonic
    window: float = 1.0
    reserve: int = 0
    headroom: int = 0
    burst: int = 1
    byte_ratio: float | None = None
    byte_slack: int = 0
    byte_rate: float = 0.0
    meter: UpdateMeter = field(default_factory=UpdateMeter)
    earned: int = field(default=0, init=False)
    """Text bytes received so far (:meth:`earn`)."""
    spent: int = field(default=0, init=False)
    """State bytes of every update reported so far (paced and unpaced)."""
    text_at: float = field(default=float("-inf"), init=False)
    """When the live text last went out (:meth:`text_due`)."""
    status_at: float = field(default=float("-inf"), init=False)
    status_bytes: int = field(default=100, init=False)
    """When the status line last went out, and how many bytes it took (:meth:`status_due`)."""

    def __post_init__(self) -> None:
        if self.max_rate <= 0:
            raise ValueError(f"max_rate must be positive, not {self.max_rate!r}")
        self.cap = max(1, int(self.max_rate * self.window) - self.reserve)
        """Most paced messages in any closed window (``reserve`` is kept for unpaced ones)."""
        self.interval = self.window / max(1, self.cap - self.headroom)
        """Pacing per message; ``headroom`` keeps the window from filling up, so a flush of a
        few messages rarely has to wait for room."""
        self._since: float | None = None  # when the first text arrived
        self._next = float("-inf")
        self._times: deque[float] = deque()
        self.new_run()

    @classmethod
    def for_view(cls, max_rate: float, clock: Callable[[], float]) -> Pacer:
        """A live view's pacer: a fifth of ``max_rate`` (1 to 5 messages) kept for the unpaced
        burst of a run's end, an eighth (1 to 3) of headroom, and the byte budget."""
        reserve = min(5, max(1, round(max_rate * 0.2)))
        headroom = min(3, max(1, round(max_rate * 0.12)))
        return cls(
            max_rate, clock, reserve=reserve, headroom=headroom,
            byte_ratio=BYTE_RATIO, byte_slack=BYTE_SLACK, byte_rate=BYTE_RATE,
        )  # fmt: skip

    # -- bytes -----------------------------------------------------------------------------------

    def earn(self, text_bytes: int, now: float | None = None) -> None:
        """``text_bytes`` of model text arrived: that much more may be sent."""
        if self._since is None and text_bytes:
            self._since = self.clock() if now is None else now
        self.earned += text_bytes

    def left(self, now: float | None = None) -> float:
        """Bytes that may still go out now."""
        if self.byte_ratio is None:
            return float("inf")
        now = self.clock() if now is None else now
        per_second = self.byte_rate * (now - self._since) if self._since is not None else 0
        return self.byte_slack + self.byte_ratio * self.earned + per_second - self.spent

    def affords(self, nbytes: int, now: float | None = None) -> bool:
        """Would ``nbytes`` more stay within the byte budget?"""
        return nbytes <= self.left(now)

    # -- messages --------------------------------------------------------------------------------

    def room(self, now: float | None = None) -> int:
        """How many more messages the window takes right now."""
        now = self.clock() if now is None else now
        while self._times and self._times[0] < now - self.window:
            self._times.popleft()
        return self.cap - len(self._times)

    def ready(self, cost: int = 1, now: float | None = None, *, nbytes: int = 0) -> bool:
        """May ``cost`` messages of about ``nbytes`` go out now (pacing interval passed, window
        has room, byte budget allows)?"""
        now = self.clock() if now is None else now
        early = (self.burst - min(cost, self.burst)) * self.interval  # (a burst's credit)
        return now >= self._next - early and self.room(now) >= cost and self.affords(nbytes, now)

    def sent(self, n: int = 1, now: float | None = None, *, nbytes: int = 0) -> None:
        """``n`` paced messages (``nbytes`` in all) went out now: the next may go ``n *
        interval`` s later (later still if sent before their turn: they repay it)."""
        now = self.clock() if now is None else now
        self.note(n, now, nbytes=nbytes)
        if n > 0:
            self._next = max(self._next, now) + n * self.interval

    def note(self, n: int = 1, now: float | None = None, *, nbytes: int = 0) -> None:
        """``n`` unpaced messages went out now (counted in the window and the byte total, no
        pacing delay)."""
        self.spent += nbytes
        if n > 0:
            self._times.extend([self.clock() if now is None else now] * n)

    @contextmanager
    def unpaced(self, now: float | None = None) -> Iterator[float]:
        """Count what the block sends through ``meter`` as unpaced; yields the time."""
        now = self.clock() if now is None else now
        msgs, nbytes = self.meter.msgs, self.meter.all_bytes
        yield now
        self.note(self.meter.msgs - msgs, now, nbytes=self.meter.all_bytes - nbytes)

    # -- the text's arrival rate -----------------------------------------------------------------

    def new_run(self) -> None:
        """A new run streams: its text's rate is measured afresh (the budgets go on)."""
        self._arrivals: deque[tuple[float, int]] = deque()  # (time, chars) of recent deltas
        self._recent = 0  # their chars
        self._text_since: float | None = None  # when the run's first text arrived
        self._text_last: float | None = None  # ...and its last

    def arrived(self, text: str, now: float) -> None:
        """A delta of the live run's text arrived: it earns bytes and counts in its rate."""
        self.earn(len(text.encode("utf-8", "replace")), now)
        self._arrivals.append((now, len(text)))
        self._recent += len(text)
        self._text_since = now if self._text_since is None else self._text_since
        self._text_last = now

    def rate(self, now: float) -> float:
        """Chars a second the text arrives at, over the last ``RATE_WINDOW`` s (0: none yet)."""
        while self._arrivals and self._arrivals[0][0] < now - RATE_WINDOW:
            self._recent -= self._arrivals.popleft()[1]
        if self._text_since is None:
            return 0.0
        return self._recent / min(RATE_WINDOW, max(1.0, now - self._text_since))

    def earning(self, now: float) -> float:
        """Bytes of budget the text earns a second, at the rate it arrives lately (half the
        per-second part is left as a cushion)."""
        return self.rate(now) * (self.byte_ratio or 0) + self.byte_rate / 2

    def tail_limit(self, now: float) -> int:
        """The live tail's length before a forced cut (see ``TAIL_SECONDS``)."""
        if self._text_since is None:
            return MAX_TAIL
        return max(MIN_TAIL, min(MAX_TAIL, round(self.rate(now) * TAIL_SECONDS)))

    def paused(self, now: float) -> bool:
        """No text for ``PAUSE`` s: the tails may show what they hold back."""
        return self._text_last is not None and now - self._text_last >= PAUSE

    def text_due(self, now: float, cost: Callable[[], int]) -> int | None:
        """The bytes of the live text's update (``cost()``) if it may go out now, else None (see
        ``TEXT_INTERVAL``): once the byte budget runs tight, updates are spread out rather than
        all the budget spent at once, then a long wait."""
        if now < self.text_at + TEXT_INTERVAL:
            return None
        nbytes = cost()
        tight = self.left(now) - nbytes < self.byte_slack * TIGHT
        if tight and now < self.text_at + min(TEXT_SPREAD, nbytes / self.earning(now)):
            return None
        return nbytes

    def status_due(self, now: float) -> bool:
        """May the status line's figures ride along now (see ``STATUS_INTERVAL``)?"""
        every = max(STATUS_INTERVAL, self.status_bytes / (self.earning(now) * STATUS_SHARE))
        return now >= self.status_at + every


def state_bytes(state: dict) -> int:
    """The bytes of an update's ``state`` as the kernel serialises it."""
    return len(json.dumps(state, ensure_ascii=False, default=str).encode("utf-8", "replace"))
