"""What every protocol module gets and gives: the request context, the parser contract, an
embedded server (``protocols.WireProtocol`` is the whole interface)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..core.capabilities import Capabilities
from ..core.events import Event, Notice, ReasoningDelta, Reclassify, Usage
from ..core.presets import ReasoningPlan
from ..core.tags import InlineSplitter
from ..core.tokens import count, shown
from ..errors import ProviderError
from .profile import ModelRef


@dataclass
class RequestContext:
    """Everything a protocol needs to build one request; built by ``run``."""

    ref: ModelRef
    base_url: str
    messages: list[dict[str, Any]]
    plan: ReasoningPlan
    caps: Capabilities
    api_key: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    warnings: list[str] = field(default_factory=list)
    """Warnings the request builder adds (dropped parameters...)."""
    prefix: str | None = None
    """A resume: the reasoning the model goes on from (``providers/resume.py``)."""
    rendered: str | None = None
    """A resume by raw completion: the chat prompt as the server's template renders it."""


@dataclass(frozen=True)
class EmbeddedServer:
    """A server the package starts itself, where no base URL is given (``local:``)."""

    started: Callable[[], bool]
    """Whether it runs (else starting it loads its model first)."""
    start: Callable[[], Awaitable[str]]
    """Its base URL, starting it if needed."""


class StreamParser:
    """One response's frames in, its events out; each protocol module's ``Parser`` is one."""

    finished = False
    """True once the server said the stream is complete ([DONE], done:true, ...)."""
    stream_id: str | None = None
    """The server's id of this completion, where a control request names it (``control``)."""

    def feed(self, frame_data: str, event: str | None = None) -> list[Event]:
        raise NotImplementedError

    def close(self) -> list[Event]:
        """The events the end of the body completes."""
        return []


class ReasoningSource:
    """Reasoning from one source only, and the content's inline tags split off the answer.

    Some servers send the same reasoning twice: in a native field and as tagged text in the
    content (llama.cpp ``deepseek-legacy``, proxies). Whichever source speaks first wins; the
    other's reasoning is dropped while its tags are still stripped from the answer. Once native
    reasoning came, only an inline block at the very start of the content is such a copy: after
    the first answer text, tags are the answer's own text (the splitter is told so).
    """

    def __init__(self, prefix: str | None = None, *, preopened: bool = False) -> None:
        self.source: str | None = None
        self._tags = InlineSplitter(preopened=preopened)
        self._preopened = preopened
        """The stream starts inside the reasoning (a resume): content is reasoning up to a
        closing tag, unless the server sends its reasoning in a field of its own."""
        self._prefix = prefix or ""
        """A resume's reasoning so far: it comes first, with the first events of the stream
        (not before: the first token's time stays the model's)."""

    def native(self, text: str | None) -> list[Event]:
        """Reasoning from the server's own field."""
        if not text or self.source == "inline":
            return []
        if self.source is None:
            if self._preopened:  # the server split the reasoning off: content is the answer
                self._tags = InlineSplitter()
            self._tags.tags_end_with_answer()
        self.source = "native"
        return self._first([ReasoningDelta(text)])

    def content(self, text: str) -> list[Event]:
        """A piece of the content: answer text, with any reasoning between tags split off."""
        return self._first(self._inline(self._tags.feed(text)))

    def close(self) -> list[Event]:
        """End of stream: what the splitter held back, and a warning for an unclosed block."""
        return self._first(self._inline(self._tags.close()), always=True)

    def _first(self, events: list[Event], *, always: bool = False) -> list[Event]:
        if self._prefix and (events or always):
            prefix, self._prefix = self._prefix, ""
            return [ReasoningDelta(prefix), *events]
        return events

    def _inline(self, events: list[Event]) -> list[Event]:
        if self.source == "native":
            if self._tags.literal:  # only answer text comes out now (this runs once per token)
                return events
            # a copy of the native reasoning: neither kept nor moved
            return [e for e in events if not isinstance(e, ReasoningDelta | Reclassify)]
        # Reasoning comes inline only after a tag: most content never looks further.
        tagged = self.source is None and self._tags.saw_markers
        if tagged and any(isinstance(e, ReasoningDelta) for e in events):
            self.source = "inline"
        return events


class UsageCounts:
    """One usage report's token counts, each read by ``tokens.count``. A count that is not one
    (``"12"``, ``1e308``, ``true``) is left out and named in a Notice: the views do arithmetic
    on counts, and a finished run must keep its text rather than fail there."""

    def __init__(self, who: str = "The server"):
        self.who = who
        self._odd: list[str] = []

    def get(self, obj: Any, key: str) -> int | None:
        """``obj[key]`` as a count; None when it is absent, or odd (then noted)."""
        value = obj.get(key) if isinstance(obj, dict) else None
        found = count(value)
        if found is None and value is not None:
            self._odd.append(f"{key} {shown(value)}")
        return found

    def events(self, **counts: int | None) -> list[Event]:
        """The ``Usage`` of ``counts``, and a Notice naming the odd counts read for it."""
        out: list[Event] = [Usage(**counts)]
        if self._odd:
            out.append(
                Notice(
                    f"{self.who} sent token counts that are not plausible whole numbers "
                    f"({'; '.join(self._odd)}); the usage leaves them out."
                )
            )
            self._odd = []
        return out


def explain_hosted(
    error: ProviderError, ctx: RequestContext, *, key_refused: bool = False
) -> str | None:
    """A hosted provider's words for a refused key (401, 403, or ``key_refused``) and an unknown
    model (404), from its profile."""
    profile, quoted = ctx.ref.provider, error.message[:160]
    if key_refused or error.status in (401, 403):
        envs = " or ".join(profile.key_envs)
        return f"{profile.name} refused the API key ({quoted}): check {envs} (or pass api_key=)."
    if error.status == 404:
        return (
            f"{profile.name} has no model {ctx.ref.name!r} ({quoted}): check the model name, "
            f"e.g. '{profile.id}:{profile.example_model}'."
        )
    return None


def decode_json(data: str, *, who: str = "The server", hint: str = "") -> dict[str, Any]:
    """One frame's JSON object; anything else is a ProviderError saying what to check."""
    try:
        value = _loads(data)
    except ValueError:
        check = f"; {hint}" if hint else ""
        raise ProviderError(
            f"{who} sent a frame that is not JSON ({data[:80]!r}){check}."
        ) from None
    if not isinstance(value, dict):
        raise ProviderError(f"{who} sent an unexpected frame: {data[:80]!r}.")
    return value


def _loads(data: str) -> Any:
    """One frame's JSON. orjson reads a token's frame in about a quarter of ``json.loads``'s
    time, which was over a tenth of all a token costs (``benchmarks/stream.py``); what it
    rejects but ``json`` takes (NaN, integers past 64 bits, lone surrogates) is read as before,
    and errors keep their wording."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def split_system(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(the system messages' text, the other messages), for APIs that take the system prompt
    apart from the conversation."""
    system = [message_text(m.get("content")) for m in messages if m.get("role") == "system"]
    return "\n\n".join(s for s in system if s), [m for m in messages if m.get("role") != "system"]


def message_text(content: Any) -> str:
    """The text of a chat message's content (a string, or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else str(content)
