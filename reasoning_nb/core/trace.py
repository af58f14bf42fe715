"""Trace: everything one run produced, folded from its events; what the notebook saves (its
saved form is declared in ``core.schema``)."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import events, schema
from .loops import REPETITION
from .schema import CACHE_KEYS, DISPLAY_KEY, TIMING, USAGE, USAGE_KEYS

STARTED_AT = "%Y-%m-%dT%H:%M:%SZ"
"""How ``started_at`` is written (UTC)."""
_BLANK_LINES = re.compile(r"\A(?:[ \t\r]*\n)+")


def answer_start(held: str, text: str) -> tuple[str, str]:
    """The first visible piece of an answer, and what to hold back: ``(show, hold)``.

    Whitespace waits until visible text comes (it may be a blank line after a closing tag, or the
    indentation of a code line); then only whole blank lines are dropped, never indentation."""
    text = held + text
    if not text.strip():
        return "", text
    return _BLANK_LINES.sub("", text), ""


class TextBuffer:
    """Text that grows by appending pieces, joined only when read.

    ``text += piece`` copies the whole string each time: quadratic on a long trace (100k deltas
    took ~10 s). A list of the pieces is linear, but a string object costs ~50 bytes besides
    its text, so a stream of 4-character tokens would take ~15 times its text. Pieces are
    joined in batches of ``BATCH`` as they come (each character is copied once more), and the
    whole is joined on read.
    """

    BATCH = 1024
    __slots__ = ("_chunks", "_tail", "chars")

    def __init__(self, text: str = ""):
        self._chunks: list[str] = [text] if text else []
        self._tail: list[str] = []
        self.chars = len(text)
        """Characters held: kept as pieces come, so a limit costs no join."""

    def append(self, piece: str) -> None:
        self._tail.append(piece)
        self.chars += len(piece)
        if len(self._tail) >= self.BATCH:
            self._chunks.append("".join(self._tail))
            self._tail.clear()

    def text(self) -> str:
        self._flush()
        if len(self._chunks) > 1:
            self._chunks[:] = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def since(self, start: int) -> str:
        """The text from character ``start`` on, joining only the pieces it spans (the live
        view reads what arrived since its last screen update)."""
        if start >= self.chars:
            return ""
        pieces, size = [], self.chars
        for piece in itertools.chain(reversed(self._tail), reversed(self._chunks)):
            pieces.append(piece)
            size -= len(piece)
            if size <= start:
                break
        pieces[-1] = pieces[-1][start - size :]
        return "".join(reversed(pieces))

    def strip(self, chars: str) -> None:
        """``str.strip(chars)`` on the text, without joining it."""
        self._flush()
        chunks = self._chunks
        while chunks and not chunks[0].lstrip(chars):
            del chunks[0]
        while chunks and not chunks[-1].rstrip(chars):
            del chunks[-1]
        if chunks:
            chunks[0] = chunks[0].lstrip(chars)
            chunks[-1] = chunks[-1].rstrip(chars)
        self.chars = sum(map(len, chunks))

    def _flush(self) -> None:
        if self._tail:
            self._chunks.append("".join(self._tail))
            self._tail.clear()

    def __bool__(self) -> bool:
        return self.chars > 0


class _Text:
    """A text field kept in a ``TextBuffer`` (``_<name>_parts``, where the fold appends)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = f"_{name}_parts"

    def __get__(self, obj: Any, owner: type | None = None) -> str:
        if obj is None:
            return ""  # the dataclass default
        return obj.__dict__[self.key].text()

    def __set__(self, obj: Any, value: str) -> None:
        obj.__dict__[self.key] = TextBuffer(value)


@dataclass
class Trace:
    """One model run: reasoning and answer kept apart, with usage, timing, status and warnings."""

    model: str = ""  # as given, e.g. ollama:qwen3:0.6b
    provider: str = ""
    preset: str = "auto"
    budget_tokens: int | None = None
    prompt: str = ""
    reasoning: str = _Text()  # type: ignore[assignment]
    """All reasoning text; separate blocks are joined with a blank line."""
    answer: str = _Text()  # type: ignore[assignment]
    """The answer, with no reasoning tags left in it."""
    usage: dict[str, int | None] = field(default_factory=USAGE.default)
    timing: dict[str, float | None] = field(default_factory=TIMING.default)
    status: str = "running"
    finish_reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    request: dict[str, Any] = field(default_factory=dict)
    """The reasoning-related request fields actually sent (never a secret)."""
    provider_state: dict[str, Any] = field(default_factory=dict)
    """Opaque data a provider needs back in the history (signatures...)."""
    started_at: str | None = None
    continued: dict[str, Any] | None = None
    """Set on a run that continues a stopped one (``core.continuation``, ``core.rescue``)."""
    replay: dict[str, Any] | None = None
    """Set on a run served from the replay cache instead of the model."""
    cost: dict[str, Any] | None = None
    """An estimate from published prices (``core.cost``); None for local models and unknown
    prices (no cost is not ``$0``)."""

    # Live bookkeeping, not saved.
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    _t0: float | None = field(default=None, repr=False, compare=False)
    _first_reasoning: float | None = field(default=None, repr=False, compare=False)
    _last_reasoning: float | None = field(default=None, repr=False, compare=False)
    _first_answer: float | None = field(default=None, repr=False, compare=False)
    _last_kind: str = field(default="", repr=False, compare=False)
    _held: str = field(default="", repr=False, compare=False)  # whitespace before the answer

    markdown_view: ClassVar[Callable[[Trace], str]] = str
    """How a trace shows in a notebook (``_repr_markdown_``). The views sit above the core, so
    the package sets it (to ``views.render.to_markdown``); the answer alone until then."""

    # -- folding -------------------------------------------------------------------------------

    def start(self) -> Trace:
        """Start the clocks (called by the runner just before the request goes out)."""
        self._t0 = self.clock()
        if self.started_at is None:
            self.started_at = time.strftime(STARTED_AT, time.gmtime())
        return self

    def fold(self, event: events.Event) -> None:
        if isinstance(event, events.ReasoningDelta):
            self._on_reasoning(event.text)
        elif isinstance(event, events.TextDelta):
            self._on_answer(event.text)
        elif isinstance(event, events.Reclassify):
            self._reclassify()
        elif isinstance(event, events.Usage):
            for key in USAGE_KEYS:
                value = getattr(event, key)
                if value is not None:
                    self.usage[key] = value
            for key in CACHE_KEYS:
                if value := getattr(event, key):
                    self.usage[key] = value
        elif isinstance(event, events.Notice):
            self.warn(event.text)
        elif isinstance(event, events.Finish):
            self.finish_reason = event.reason
        elif isinstance(event, events.ProviderState):
            self.provider_state.update(event.data)

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def _stamp(self, now: float) -> float:
        """``now``, noted as the first token's time if it is the first."""
        if self._t0 is None:
            self._t0 = now
        if self.timing["first_token_ms"] is None:
            self.timing["first_token_ms"] = self._ms(now)
        return now

    # The two below run once per delta: the clock is read only where a time is kept.

    def _on_reasoning(self, text: str) -> None:
        if not text:
            return
        parts = self._reasoning_parts
        if self._last_kind == "answer" and parts:
            parts.append("\n\n")  # a new block after some answer text
        parts.append(text)
        self._last_reasoning = now = self.clock()
        if self._first_reasoning is None:
            self._first_reasoning = self._stamp(now)
        self._last_kind = "reasoning"

    def _on_answer(self, text: str) -> None:
        if not text:
            return
        self._last_kind = "answer"
        parts = self._answer_parts
        if not parts:
            text, self._held = answer_start(self._held, text)
            if not text:
                return
        parts.append(text)
        if self._first_answer is None:
            self._first_answer = self._stamp(self.clock())

    def _reclassify(self) -> None:
        moved = self.answer
        self.answer = ""
        if moved:
            self.reasoning = f"{self.reasoning}\n\n{moved}" if self.reasoning else moved
            if self._first_reasoning is None:
                self._first_reasoning = self._first_answer
            self._last_reasoning = self.clock()
        self._first_answer = None
        self._last_kind = "reasoning"

    def finish(self, status: str | None = None, error: str | None = None) -> Trace:
        if status is None:
            # cut short: at the token limit, or by a server that stopped a loop
            status = "truncated" if self.finish_reason in ("length", REPETITION) else "complete"
        self.status = status
        if error is not None:
            self.error = error
        now = self.clock()
        if self._t0 is not None:
            self.timing["total_ms"] = self._ms(now)
        if self._first_reasoning is not None:
            end = _first_set(self._first_answer, self._last_reasoning, now)
            self.timing["reasoning_ms"] = round(max(0.0, end - self._first_reasoning) * 1000, 1)
        self._reasoning_parts.strip("\n")  # (not joined here: a long text is joined once,
        self._answer_parts.strip("\n")  # when it is read, after the replay cache has saved)
        return self

    def _ms(self, now: float) -> float:
        return round((now - _first_set(self._t0, now)) * 1000, 1)

    # -- reading ------------------------------------------------------------------------------

    @property
    def chars(self) -> int:
        """Characters of reasoning and answer so far (counted as they come: no join)."""
        return self._reasoning_parts.chars + self._answer_parts.chars

    @property
    def progress(self) -> tuple[int, int, str]:
        """``(reasoning chars, answer chars, "reasoning" | "answer" | "")``, the last being the
        part that grew last: what the live view compares at each event (it reads the texts
        themselves, with :meth:`text_from`, once per screen update)."""
        return self._reasoning_parts.chars, self._answer_parts.chars, self._last_kind

    def text_from(self, part: str, start: int) -> str:
        """``reasoning`` or ``answer`` from character ``start`` on, joining only that much."""
        return getattr(self, f"_{part}_parts").since(start)

    @property
    def moments(self) -> tuple[float | None, float | None, float | None]:
        """When (on ``clock``) the reasoning began and last grew, and the answer began: the
        live view's figures come from the fold's timers, not timers of its own."""
        return self._first_reasoning, self._last_reasoning, self._first_answer

    @property
    def done(self) -> bool:
        return self.status != "running"

    def __str__(self) -> str:
        return self.answer

    def _repr_markdown_(self) -> str:
        return Trace.markdown_view(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        # The markdown view plus a marker in the output's metadata (IPython adds text/plain).
        return {"text/markdown": self._repr_markdown_()}, {DISPLAY_KEY: self.to_dict()}

    # -- saving -------------------------------------------------------------------------------

    def to_dict(self, *, text: bool = True) -> dict[str, Any]:
        """JSON-safe, never a secret; ``text=False``: no reasoning or answer (a replay recording
        holds them in its timeline)."""
        return schema.saved(self, text=text)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """Rebuild a trace from ``to_dict()`` output; unknown keys are ignored."""
        return cls(**schema.loaded(data))


def read_trace(data: Any) -> tuple[Trace | None, list[str]]:
    """A saved trace from anyone (a notebook's metadata, a log), checked field by field:
    ``(trace, warnings)``; ``trace`` is None when unreadable, and nothing raises. ``from_dict``
    trusts its input (our own ``to_dict``); this is the gate for everyone else's."""
    fields, warnings = schema.checked(data)
    return (None if fields is None else Trace(**fields)), warnings


def _first_set(*times: float | None) -> float:
    """The first timestamp that is set (0.0 is a time like any other, not "unset")."""
    return next(t for t in times if t is not None)
