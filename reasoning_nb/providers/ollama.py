"""Ollama native ``/api/chat`` (NDJSON): the ``think`` field in, ``message.thinking`` out.

Shapes from ollama docs/api.md and server/routes.go (2026-08): durations are nanoseconds, the
final ``done: true`` line carries the counts, errors are ``{"error": "..."}``.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.events import Event, Finish
from ..core.presets import merge
from ..errors import ProviderError
from .address import refused_key
from .base import ReasoningSource, RequestContext, StreamParser, UsageCounts, decode_json
from .transport import HttpRequest

FRAMING = "ndjson"
REASONING_KEYS: tuple[str, ...] = ()
SERVER = None


def build_request(ctx: RequestContext) -> HttpRequest:
    body: dict[str, Any] = {"model": ctx.ref.name, "messages": ctx.messages, "stream": True}
    options: dict[str, Any] = {}
    if ctx.max_tokens is not None:
        options["num_predict"] = ctx.max_tokens
    if ctx.temperature is not None:
        options["temperature"] = ctx.temperature
    if options:
        body["options"] = options
    merge(body, ctx.plan.fields)
    # Ollama itself takes no key; one behind an auth proxy (or Ollama's cloud) does.
    headers = {"authorization": f"Bearer {ctx.api_key}"} if ctx.api_key else {}
    return HttpRequest(f"{ctx.base_url}/api/chat", body, headers, framing=FRAMING)


def fallback(error: ProviderError, body: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """One retry when the server rejects the ``think`` value we sent."""
    if error.status != 400 or "think" not in body:
        return None
    message = error.message.lower()
    sent = body["think"]
    if "does not support thinking" in message:
        retry = {k: v for k, v in body.items() if k != "think"}
        return retry, (
            f"This model does not support thinking controls, so think={json.dumps(sent)} was "
            "dropped and the request sent again without it."
        )
    if "invalid think value" in message and sent == "max":
        return {**body, "think": "high"}, (
            'This Ollama server does not know think="max" (added in v0.21.3), so "high" was sent.'
        )
    return None


def explain(error: ProviderError, ctx: RequestContext) -> str | None:
    if error.status == 404 and "not found" in error.message.lower():
        return (
            f"Ollama has no model {ctx.ref.name!r}: run `ollama pull {ctx.ref.name}` "
            "(or pick one from `ollama list`)."
        )
    if error.status in (401, 403):  # ollama.com, or a server behind a proxy that asks for one
        sent = ctx.api_key is not None
        return refused_key(ctx.ref.provider, ctx.base_url, sent, error.message[:160])
    return None


class Parser(StreamParser):
    """NDJSON lines -> events. Content still runs through the tag splitter: older servers and
    models without a thinking parser leave ``<think>`` inline."""

    def __init__(self, ctx: RequestContext):
        self._reasoning = ReasoningSource()

    def feed(self, data: str, event: str | None = None) -> list[Event]:
        chunk = decode_json(
            data, who="Ollama", hint="check that the base URL points at Ollama itself, not a proxy"
        )
        if "error" in chunk:
            raise ProviderError(f"Ollama reported an error mid-stream: {chunk['error']}")
        message = chunk.get("message") or {}
        out: list[Event] = self._reasoning.native(message.get("thinking"))
        content = message.get("content")
        if content:
            out += self._reasoning.content(content)
        if chunk.get("done"):
            self.finished = True
            out += self._reasoning.close()
            out += _final(chunk)
        return out

    def close(self) -> list[Event]:
        return [] if self.finished else self._reasoning.close()


def _final(chunk: dict[str, Any]) -> list[Event]:
    counts = UsageCounts("Ollama")
    out = counts.events(
        input_tokens=counts.get(chunk, "prompt_eval_count"),
        output_tokens=counts.get(chunk, "eval_count"),
    )
    reason = chunk.get("done_reason")
    if reason:
        out.append(Finish("length" if reason == "length" else str(reason)))
    return out
