"""When may a live view send, and how much has it sent? One :class:`Pacer` per view.

Widget updates carry whole trait values, so the views coalesce: changes wait in the widgets and
go out together, under two budgets:

* **rate**: the first message after a quiet spell goes at once, later ones are paced (``burst``
  may go early, as from a token bucket), and no ``window`` holds more than ``max_rate -
  reserve`` (``reserve``: room for unpaced messages).
* **bytes** (with ``byte_ratio``): all updates stay within ``byte_ratio`` x the text received
  + ``byte_slack`` + ``byte_rate`` per second. Each update resends the live tail, so without it
  a slow stream would cost many times its text; with it, updates come less often and tails are
  cut shorter. The slack lets a short answer stream token by token.

A caller asks ``ready(cost, nbytes=...)``, sends, then reports ``sent(n, nbytes=...)``; what must
go out at once (a run's start and end, a click) goes inside ``with pacer.unpaced():``.
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
"""The tails change at most this often: at 10 a second the page spent ~40% less time than at 20
(MathJax typesets each tail). Past all but ``TIGHT`` of the byte slack, a slow stream updates as
often as the text earns the bytes, up to every ``TEXT_SPREAD`` s."""
TEXT_SPREAD, TIGHT = 1.5, 0.25
STATUS_INTERVAL, STATUS_SHARE = 2.0, 0.1
"""The status figures ride along with the text at most this often, for this share of what it
earns (a new phase or warning goes at once)."""
TAIL_SECONDS, MIN_TAIL, MAX_TAIL = 1.5, 160, 4_000
"""A tail is cut by force past ``TAIL_SECONDS`` of text at its rate: each update resends it."""
RATE_WINDOW = 4.0  # seconds over which the text's rate is measured
PAUSE = 0.3  # no text for this long: the tails show what they hold back
BYTE_RATIO, BYTE_SLACK, BYTE_RATE = 4.0, 6_000, 100.0
"""A run's byte budget; the final render adds at most one resend (the join): within 5x."""


class UpdateMeter:
    """Sets widget traits, one ``update`` message per call, and counts messages and bytes."""

    def __init__(self) -> None:
        self.msgs = 0
        self.bytes = 0
        self.opened_bytes = 0  # text sent in new widgets' state (``comm_open``)

    @property
    def all_bytes(self) -> int:
        """What counts against a byte budget: updates, and the text new widgets opened with."""
        return self.bytes + self.opened_bytes

    def set(self, widget, **traits) -> int:
        """Set the traits that differ, in order, in one message; returns 0 or 1."""
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
    """The message and byte budgets, and the text's rate that sizes and spaces the tails."""

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
    earned: int = field(default=0, init=False)  # text bytes received
    spent: int = field(default=0, init=False)  # state bytes of every update reported
    text_at: float = field(default=float("-inf"), init=False)  # the tails' last update
    status_at: float = field(default=float("-inf"), init=False)  # the status line's...
    status_bytes: int = field(default=100, init=False)  # ...and its size

    def __post_init__(self) -> None:
        if self.max_rate <= 0:
            raise ValueError(f"max_rate must be positive, not {self.max_rate!r}")
        self.cap = max(1, int(self.max_rate * self.window) - self.reserve)
        # (``headroom`` keeps the window from filling: a flush rarely waits for room)
        self.interval = self.window / max(1, self.cap - self.headroom)
        self._since: float | None = None  # when the first text arrived
        self._next = float("-inf")
        self._times: deque[float] = deque()
        self.new_run()

    @classmethod
    def for_view(cls, max_rate: float, clock: Callable[[], float]) -> Pacer:
        """A fifth of ``max_rate`` (1 to 5) kept for a run's unpaced end, an eighth (1 to 3) of
        headroom, and the byte budget."""
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
        """May ``cost`` messages of about ``nbytes`` go out now?"""
        now = self.clock() if now is None else now
        early = (self.burst - min(cost, self.burst)) * self.interval  # (a burst's credit)
        return now >= self._next - early and self.room(now) >= cost and self.affords(nbytes, now)

    def sent(self, n: int = 1, now: float | None = None, *, nbytes: int = 0) -> None:
        """``n`` paced messages went out: the next waits ``n * interval`` s (more if early)."""
        now = self.clock() if now is None else now
        self.note(n, now, nbytes=nbytes)
        if n > 0:
            self._next = max(self._next, now) + n * self.interval

    def note(self, n: int = 1, now: float | None = None, *, nbytes: int = 0) -> None:
        """``n`` unpaced messages went out: counted, but they delay nothing."""
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
        """Budget bytes the text earns a second lately (half the per-second part kept back)."""
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
        """The bytes of the text's update (``cost()``) if it may go now, else None: a tight
        budget spreads updates out rather than spend it all, then wait long."""
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
    """The bytes of an update's ``state`` as the kernel sends it (``ensure_ascii=False``)."""
    return len(json.dumps(state, ensure_ascii=False, default=str).encode("utf-8", "replace"))
