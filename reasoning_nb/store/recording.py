"""A run as a timeline of its events, and the events again from a timeline.

A recording is ``{"timeline": [[offset_ms, kind, fields], ...], "trace": trace.to_dict(
text=False)}``: the trace leaves out its reasoning and answer, as the timeline holds that text
and a replay folds it into the same trace again; a long run's text is stored once, not twice.
Text deltas of one kind that arrive within ``MERGE_MS`` are stored as one: a live view shows
no more than ~25 updates a second anyway, and a long trace stays small.

Stored, a recording is its JSON deflated. The ``Recorder`` writes it as the run goes, an entry
at a time: a run's recording holds about its compressed size in memory, not a list and a dict
per token (at a model's pace every token is an entry: ~300 bytes each, ~75 times its text).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import fields
from typing import Any

import orjson

from ..core import events
from ..core.events import Event, ReasoningDelta, TextDelta
from ..core.trace import TextBuffer, Trace

MERGE_MS = 20.0
_KINDS = {cls.kind: cls for cls in events.FOLDED}
"""What a replay sends again. ``Waiting`` is left out: a replay waits for nothing."""
_FIELDS = {cls.kind: tuple(f.name for f in fields(cls)) for cls in events.FOLDED}
"""Each kind's field names (``dataclasses.fields`` per event costs as much as the rest)."""
_TEXT = (ReasoningDelta.kind, TextDelta.kind)
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON: orjson's (a fifteenth of the time, and an entry is
    written for about every other token), else the standard library's, which also takes the
    lone surrogates a frame read by ``json.loads`` may hold."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _JSON.encode(value).encode("utf-8", "surrogatepass")


class Recorder:
    """Writes the recording of a run as its events arrive (``clock`` in seconds)."""

    def __init__(self, clock: Callable[[], float]):
        self.clock, self.t0 = clock, clock()
        self._writer = _Writer()
        self._open: list[Any] | None = None  # the last entry, written when the next one starts
        self._text: TextBuffer | None = None  # its text, if it is text

    def add(self, event: Event) -> None:
        if event.kind not in _KINDS:
            return
        at = round((self.clock() - self.t0) * 1000, 1)
        entry = self._open
        if (
            self._text is not None
            and entry is not None
            and entry[1] == event.kind
            and at - entry[0] < MERGE_MS
        ):
            self._text.append(event.text)
            return
        self._write_open()
        data = {name: getattr(event, name) for name in _FIELDS[event.kind]}
        if event.kind in _TEXT:
            self._text = TextBuffer(event.text)
        self._open = [at, event.kind, data]

    def _write_open(self) -> None:
        if self._open is None:
            return
        if self._text is not None:  # (a fast stream merges thousands of deltas in one)
            self._open[2]["text"] = self._text.text()
            self._text = None
        self._writer.entry(self._open)
        self._open = None

    def recording(self, trace: Trace) -> bytes:
        """The stored recording of ``trace``, the finished run."""
        self._write_open()
        return self._writer.close(trace.to_dict(text=False))


class _Writer:
    """A recording's JSON, deflated as it is written: entries first, then the trace."""

    def __init__(self) -> None:
        self._packer = zlib.compressobj(1)  # the fastest level: text packs well at any level
        self._out = [self._packer.compress(b'{"timeline":[')]
        self._entries = 0

    def entry(self, entry: list[Any]) -> None:
        data = _dumps(entry)
        packed = self._packer.compress(b"," + data if self._entries else data)
        if packed:
            self._out.append(packed)
        self._entries += 1

    def close(self, trace: dict[str, Any]) -> bytes:
        tail = b'],"trace":' + _dumps(trace) + b"}"
        self._out += [self._packer.compress(tail), self._packer.flush()]
        return b"".join(self._out)


def encode(recording: dict[str, Any]) -> bytes:
    """A recording held as a dict, as stored."""
    writer = _Writer()
    for entry in recording["timeline"]:
        writer.entry(entry)
    return writer.close(recording["trace"])


def decode(stored: str | bytes) -> dict[str, Any]:
    """A stored recording: deflated JSON, or the JSON text of a row an older version left
    (keys of version 1 no longer match, so such a row is read only by ``lookup(entry=...)``
    until the cap evicts it, least recently used first)."""
    return json.loads(zlib.decompress(stored) if isinstance(stored, bytes) else stored)


def restored(saved: dict[str, Any], replayed: Trace) -> dict[str, Any]:
    """A recording's trace, with the reasoning and answer that its replay folded again (an
    older version's row kept them itself; then they win)."""
    return {"reasoning": replayed.reasoning, "answer": replayed.answer} | saved


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
