"""The typed events every provider emits, in one order: reasoning of a step, then its answer.

Events are small frozen dataclasses with a ``kind`` discriminator so views can dispatch on a
string and tests can compare sequences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class _Said:
    """An event that carries a piece of text; its subclasses differ only in ``kind``."""

    text: str
    kind: ClassVar[str]


class ReasoningDelta(_Said):
    __slots__ = ()
    kind = "reasoning"


class TextDelta(_Said):
    __slots__ = ()
    kind = "answer"


@dataclass(frozen=True, slots=True)
class Reclassify:
    """All answer text so far was really reasoning: a lone closing tag showed the template had
    pre-opened the reasoning block."""

    kind: ClassVar[str] = "reclassify"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the server reports them; ``None`` where it does not say."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_read_tokens: int | None = None
    """Prompt tokens read from the provider's cache (inside ``input_tokens``; billed cheaper)."""
    cache_write_tokens: int | None = None
    """Prompt tokens written to the cache (inside ``input_tokens``; Anthropic bills them more)."""
    kind: ClassVar[str] = "usage"


class Notice(_Said):
    """A warning for the user (fallback used, value clamped, block left open...)."""

    __slots__ = ()
    kind = "notice"


class Waiting(_Said):
    """No token yet, and what the run waits for (``run.LOADING``, ``run.FIRST_TOKEN``); before
    either, the run is still connecting."""

    __slots__ = ()
    kind = "waiting"


@dataclass(frozen=True, slots=True)
class Finish:
    """Why the model stopped: ``stop``, ``length``, ... (the provider's word, normalised)."""

    reason: str
    kind: ClassVar[str] = "finish"


@dataclass(frozen=True, slots=True)
class ProviderState:
    """Opaque data that must travel back with the history (signatures, encrypted reasoning)."""

    data: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "provider_state"


@dataclass(frozen=True, slots=True)
class Done:
    """The last event of every stream: the folded trace."""

    trace: Any
    """The ``core.trace.Trace`` (not named as a type: the trace is folded from these events, so
    this module sits below it)."""
    kind: ClassVar[str] = "done"


Event = (
    ReasoningDelta
    | TextDelta
    | Reclassify
    | Usage
    | Notice
    | Waiting
    | Finish
    | ProviderState
    | Done
)
FOLDED = (ReasoningDelta, TextDelta, Reclassify, Usage, Notice, Finish, ProviderState)
"""The events that change a trace (``Trace.fold``) and that a replay sends again."""
