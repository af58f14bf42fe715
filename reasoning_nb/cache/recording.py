"""A run as a timeline of its events, and the events again from a timeline.

A recording is ``{"trace": trace.to_dict(), "timeline": [[offset_ms, kind, fields], ...]}``.
Text deltas of one kind that arrive within ``MERGE_MS`` are stored as one: a live view shows
no more than ~25 updates a second anyway, and a long trace stays small.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import fields
from typing import Any

from ..core.events import (
    Event,
    Finish,
    Notice,
    ProviderState,
    ReasoningDelta,
    Reclassify,
    TextDelta,
    Usage,
)

MERGE_MS = 20.0
PACES = ("instant", "recorded")
_KINDS = {
    cls.kind: cls
    for cls in (ReasoningDelta, TextDelta, Reclassify, Usage, Notice, Finish, ProviderState)
}
"""What a replay sends again. ``Waiting`` is left out: a replay waits for nothing."""
_TEXT = (ReasoningDelta.kind, TextDelta.kind)


class Recorder:
    """Collects the timeline of a run as its events arrive (``clock`` in seconds)."""

    def __init__(self, clock: Callable[[], float]):
        self.clock, self.t0 = clock, clock()
        self.timeline: list[list[Any]] = []

    def add(self, event: Event) -> None:
        if event.kind not in _KINDS:
            return
        at = round((self.clock() - self.t0) * 1000, 1)
        last = self.timeline[-1] if self.timeline else None
        if (
            event.kind in _TEXT
            and last is not None
            and last[1] == event.kind
            and at - last[0] < MERGE_MS
        ):
            last[2]["text"] += event.text
            return
        data = {f.name: getattr(event, f.name) for f in fields(event)}
        self.timeline.append([at, event.kind, data])

    def recording(self, trace: dict[str, Any]) -> dict[str, Any]:
        return {"trace": trace, "timeline": self.timeline}


async def replay(
    timeline: list[list[Any]], pace: str, sleep: Callable[[float], Awaitable[Any]]
) -> AsyncIterator[Event]:
    """The recorded events again: at once (``instant``) or with the recorded gaps between
    them (``recorded``; ``sleep`` is injected so tests need no wall clock)."""
    previous = 0.0
    for at, kind, data in timeline:
        if pace == "recorded" and at > previous:
            await sleep((at - previous) / 1000)
        previous = max(previous, at)
        yield _KINDS[kind](**data)
