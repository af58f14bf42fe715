"""Chat Completions SSE (llama.cpp, LM Studio, vLLM, any OpenAI-compatible server).

Reasoning may come as ``delta.reasoning_content`` (llama.cpp, LM Studio, DeepSeek, older vLLM),
``delta.reasoning`` (vLLM since 2025-11, Ollama /v1, LM Studio gpt-oss, OpenRouter) or inline in
``content`` (``--reasoning-format none``, servers without a reasoning parser): all three are read.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.events import Event, Finish, Usage
from ..core.presets import merge
from ..core.tags import InlineSplitter
from ..errors import ProviderError
from .base import ReasoningSource, RequestContext
from .transport import HttpRequest, server_message

FRAMING = "sse"


def build_request(ctx: RequestContext) -> HttpRequest:
    body: dict[str, Any] = {
        "model": ctx.ref.name,
        "messages": ctx.messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if ctx.max_tokens is not None:
        body["max_tokens"] = ctx.max_tokens
    if ctx.temperature is not None:
        body["temperature"] = ctx.temperature
    merge(body, ctx.plan.fields)
    headers = {"authorization": f"Bearer {ctx.api_key}"} if ctx.api_key else {}
    return HttpRequest(f"{ctx.base_url}/chat/completions", body, headers, framing=FRAMING)


def fallback(error: ProviderError, body: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """One retry without the reasoning fields when a server rejects them outright."""
    if error.status != 400:
        return None
    message = error.message.lower()
    rejected = [
        key
        for key in ("reasoning_effort", "chat_template_kwargs", "thinking_budget_tokens",
                    "thinking_token_budget")
        if key in body and (key in message or "reasoning" in message or "thinking" in message)
    ]
    if not rejected:
        return None
    retry = {k: v for k, v in body.items() if k not in rejected}
    return retry, (
        f"The server rejected {', '.join(rejected)} ({error.message[:120]}), so the request was "
        "sent again without the reasoning control."
    )


def explain(error: ProviderError, ctx: RequestContext) -> str | None:
    if error.status == 404:
        return (
            f"{ctx.base_url} has no chat endpoint or no model {ctx.ref.name!r} "
            f"({error.message[:160]}): check the base URL (it should end in /v1) and the model name."
        )
    if error.status in (401, 403):
        envs = " or ".join(ctx.ref.provider.key_envs) or "api_key="
        return f"The server refused the API key ({error.message[:160]}): check {envs}."
    return None


class Parser:
    def __init__(self, ctx: RequestContext):
        self.finished = False
        # Not ``preopened`` even for templates that pre-open <think>: servers with a reasoning
        # parser send the answer as plain content, and a lone </think> is reclassified anyway.
        self._tags = InlineSplitter()
        self._reasoning = ReasoningSource()
        self._usage_seen = False

    def feed(self, data: str, event: str | None = None) -> list[Event]:
        if data.strip() == "[DONE]":
            self.finished = True
            return self._reasoning.inline(self._tags.close())
        chunk = _loads(data)
        if chunk.get("error"):
            raise ProviderError(f"The server reported an error mid-stream: {server_message(chunk)}")
        out: list[Event] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            # Whichever of the two names is non-empty; servers differ by version.
            out.extend(
                self._reasoning.native(delta.get("reasoning_content") or delta.get("reasoning"))
            )
            content = delta.get("content")
            if content:
                out.extend(self._reasoning.inline(self._tags.feed(content)))
            reason = choice.get("finish_reason")
            if reason:
                out.append(Finish(str(reason)))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage_seen = True
            details = usage.get("completion_tokens_details") or {}
            out.append(
                Usage(
                    input_tokens=usage.get("prompt_tokens"),
                    output_tokens=usage.get("completion_tokens"),
                    reasoning_tokens=details.get("reasoning_tokens"),
                )
            )
        timings = chunk.get("timings")
        if isinstance(timings, dict) and not self._usage_seen:
            # llama.cpp sends timings on the last chunk even when usage is off.
            prompt = (timings.get("prompt_n") or 0) + (timings.get("cache_n") or 0)
            out.append(Usage(input_tokens=prompt or None, output_tokens=timings.get("predicted_n")))
        return out

    def close(self) -> list[Event]:
        return [] if self.finished else self._reasoning.inline(self._tags.close())


def _loads(data: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except ValueError:
        raise ProviderError(
            f"The server sent an event that is not JSON ({data[:80]!r}); check that the base URL "
            "points at an OpenAI-compatible /v1 endpoint."
        ) from None
    if not isinstance(value, dict):
        raise ProviderError(f"The server sent an unexpected event: {data[:80]!r}.")
    return value
