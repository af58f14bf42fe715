"""The typed events every provider emits, in one order: reasoning of a step, then its answer.

Events are small frozen dataclasses with a ``kind`` discriminator so views can dispatch on a
string and tests can compare sequences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning ("thinking") text."""

    text: str
    kind: ClassVar[str] = "reasoning"


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer."""

    text: str
    kind: ClassVar[str] = "answer"


@dataclass(frozen=True, slots=True)
class Reclassify:
    """All answer text so far was really reasoning.

    Sent when a lone closing tag shows the template had pre-opened the reasoning block: the live
    view guessed "answer" and must move that text into the reasoning pane.
    """

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


@dataclass(frozen=True, slots=True)
class Notice:
    """A warning for the user (fallback used, value clamped, block left open...)."""

    text: str
    kind: ClassVar[str] = "notice"


@dataclass(frozen=True, slots=True)
class Waiting:
    """No token yet, and what the run waits for, as a status line says it: ``loading model…``
    once a server that loads models on demand has the request (or while the embedded server
    starts), ``waiting for the first token…`` once the server is working on the answer. Before
    either, the run is still connecting."""

    text: str
    kind: ClassVar[str] = "waiting"


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
