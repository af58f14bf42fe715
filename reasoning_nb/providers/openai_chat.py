"""Chat Completions SSE (llama.cpp, LM Studio, vLLM, any OpenAI-compatible server).

Reasoning may come as ``delta.reasoning_content`` (llama.cpp, LM Studio, DeepSeek, older vLLM),
``delta.reasoning`` (vLLM since 2025-11, Ollama /v1, LM Studio gpt-oss, OpenRouter), only as
``delta.reasoning_details`` text items (gateways that copy OpenRouter's shape), as ``thinking``
parts of a ``content`` list (Mistral) or inline in ``content`` (``--reasoning-format none``,
servers without a reasoning parser): all are read.

Dialects (the ``# -- dialects`` section at the end), as the provider's profile states them:
OpenAI through Chat Completions (``max_completion_tokens``, no sampling parameters on reasoning
models, and no reasoning text, only its token count, said once in a warning), OpenRouter
(``reasoning`` object; ``reasoning_details`` fragments merged by type+index and kept for the
history as provider state, its replay rule) and DeepSeek (``thinking`` toggle,
``reasoning_effort``, ``reasoning_content``; a temperature ignored while it thinks).
"""

from __future__ import annotations

import json
from typing import Any

from ..core.events import Event, Finish, Notice, ProviderState
from ..core.presets import merge
from ..errors import ProviderError
from . import openai_responses as openai
from . import resume
from .address import refused_key
from .base import ReasoningSource, RequestContext, StreamParser, UsageCounts, decode_json
from .http_errors import server_message
from .transport import HttpRequest

FRAMING = "sse"
REASONING_KEYS: tuple[str, ...] = ("chat_template_kwargs",)  # with a chat's keep-reasoning switch
SERVER = None
_CONTROLS = (
    "reasoning_effort",
    "chat_template_kwargs",
    "thinking_budget_tokens",
    "thinking_token_budget",
)
"""The local servers' reasoning fields (``profiles/chat.py``), dropped if a server rejects them."""


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
    _dialect(ctx, body)
    headers = {"authorization": f"Bearer {ctx.api_key}"} if ctx.api_key else {}
    request = HttpRequest(f"{ctx.base_url}/chat/completions", body, headers, framing=FRAMING)
    return request if ctx.prefix is None else resume.request(ctx, request)


def fallback(error: ProviderError, body: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """One retry with what a server takes, when it rejects a reasoning field outright.

    OpenAI's wording, whoever relays it (OpenAI, OpenRouter): an effort the model does not take
    -> the nearest one it lists; a rejected temperature -> none. DeepSeek-style servers that
    reject ``thinking`` -> no thinking fields. Other servers -> no reasoning fields."""
    if error.status != 400:
        return None
    for retry in (
        openai.effort_retry(error, body, ("reasoning_effort",)),
        openai.effort_retry(error, body, ("reasoning", "effort")),
        openai.sampling_retry(error, body),
    ):
        if retry is not None:
            return retry
    message = error.message.lower()
    if "thinking" in body and "thinking" in message:
        retry = {k: v for k, v in body.items() if k not in ("thinking", "reasoning_effort")}
        return retry, (
            f"The server rejected the thinking setting ({error.message[:120]}), so the request "
            "was sent again without it."
        )
    named = "reasoning" in message or "thinking" in message
    rejected = [key for key in _CONTROLS if key in body and (named or key in message)]
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
            f"({error.message[:160]}): check the base URL (it should end in /v1) and the model "
            "name."
        )
    if error.status in (401, 403):
        sent = ctx.api_key is not None
        return refused_key(ctx.ref.provider, ctx.base_url, sent, error.message[:160])
    return None


def Parser(ctx: RequestContext) -> StreamParser:
    """The parser of one response: a chat stream, or a resume's raw completion."""
    return resume.CompletionParser(ctx) if resume.raw(ctx) else ChatParser(ctx)


class ChatParser(StreamParser):
    def __init__(self, ctx: RequestContext):
        # Its splitter is not ``preopened`` even for templates that pre-open <think>: servers
        # with a reasoning parser send the answer as plain content, and a lone </think> is
        # reclassified anyway. A resume starts inside the reasoning: its text up to a closing
        # tag is reasoning, where the server does not split it off itself.
        prefix = ctx.prefix if ctx is not None else None
        self._reasoning = ReasoningSource(prefix, preopened=prefix is not None)
        self._usage_seen = False
        self._hosted = HostedStream(ctx)

    def feed(self, data: str, event: str | None = None) -> list[Event]:
        if data[:1] != "{" and data.strip() == "[DONE]":
            self.finished = True
            return self._reasoning.close() + self._hosted.end()
        chunk = decode_json(
            data, hint="check that the base URL points at an OpenAI-compatible /v1 endpoint"
        )
        if chunk.get("error"):
            raise ProviderError(f"The server reported an error mid-stream: {server_message(chunk)}")
        if self.stream_id is None and isinstance(chunk.get("id"), str):
            self.stream_id = chunk["id"]  # llama.cpp's control endpoint names the stream by it
        out: list[Event] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            # Either name, said once: ``reasoning`` (vLLM since PR #27752, alone since #33402),
            # ``reasoning_content`` (llama.cpp, DeepSeek, older vLLM and its mlx forks); a
            # server may send both with the same text, or one empty.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if "reasoning_details" in delta:
                reasoning = self._hosted.reasoning(delta, reasoning)
            if reasoning:
                out += self._reasoning.native(reasoning)
            content = delta.get("content")
            if isinstance(content, list):  # Mistral: thinking and text parts
                out += self._parts(content)
            elif content:
                out += self._reasoning.content(content)
            reason = choice.get("finish_reason")
            if reason:
                self._hosted.finish(str(reason))
                out.append(Finish(str(reason)))
        if "usage" in chunk or "timings" in chunk:  # the last chunks only
            out += self._usage(chunk)
        return out

    def _usage(self, chunk: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        counts = UsageCounts()
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage_seen = True
            hidden = counts.get(usage.get("completion_tokens_details"), "reasoning_tokens")
            out += counts.events(
                input_tokens=counts.get(usage, "prompt_tokens"),
                output_tokens=counts.get(usage, "completion_tokens"),
                reasoning_tokens=hidden,
                cache_read_tokens=cached_tokens(usage, counts),
            )
            out.extend(self._hosted.usage(hidden, self._reasoning.source is not None))
        timings = chunk.get("timings")
        if isinstance(timings, dict) and not self._usage_seen:
            # llama.cpp sends timings on the last chunk even when usage is off.
            prompt = (counts.get(timings, "prompt_n") or 0) + (counts.get(timings, "cache_n") or 0)
            out += counts.events(
                input_tokens=prompt or None, output_tokens=counts.get(timings, "predicted_n")
            )
        return out

    def close(self) -> list[Event]:
        if self.finished:
            return []
        return self._reasoning.close() + self._hosted.end()

    def _parts(self, parts: list[Any]) -> list[Event]:
        """``[{"type": "thinking", "thinking": [{"type": "text", "text": …}]}, {"type": "text",
        "text": …}]``: thinking parts are reasoning, text parts the answer."""
        out: list[Event] = []
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "thinking":
                out.extend(self._reasoning.native(_text_of(part.get("thinking"))))
            elif kind == "text" and isinstance(part.get("text"), str):
                out.extend(self._reasoning.content(part["text"]))
        return out


def _text_of(value: Any) -> str | None:
    """A part's text: a string, or the text items of a list of parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return None


# -- dialects: what a profile says beyond the common protocol ------------------------------------

NO_REASONING_TEXT = (
    "OpenAI's Chat Completions API does not return reasoning text, only its token count; use "
    "'openai:{model}' (the Responses API) to see reasoning summaries."
)


def _dialect(ctx: RequestContext, body: dict[str, Any]) -> None:
    profile = ctx.ref.provider
    if "max_tokens" in body and profile.tokens_field != "max_tokens":
        body[profile.tokens_field] = body.pop("max_tokens")
    if "temperature" in body and not profile.sampling_on_reasoning and openai.drops_sampling(ctx):
        del body["temperature"]
        ctx.warnings.append(openai.sampling_warning(ctx, "temperature"))
    if not profile.reasoning_text and _expects_hidden_reasoning(ctx):
        ctx.warnings.append(NO_REASONING_TEXT.format(model=ctx.ref.name))
    if profile.thinking_ignores_temperature:
        _temperature_while_thinking(ctx, body)
    if profile.replay is not None:  # past reasoning goes back only to the model that made it
        key = profile.replay.message
        body["messages"] = [_replayed(m, ctx.ref.name, key) for m in body["messages"]]
        if profile.keeps_reasoning:
            _keep_reasoning(body, key, profile.keeps_reasoning)


def _expects_hidden_reasoning(ctx: RequestContext) -> bool:
    return ctx.caps.reasoning is True and ctx.plan.effort != "none"


def _temperature_while_thinking(ctx: RequestContext, body: dict[str, Any]) -> None:
    """DeepSeek takes the preset row as is; temperature is sent but ignored while thinking."""
    thinking = (body.get("thinking") or {}).get("type")
    on = thinking == "enabled" or (thinking is None and ctx.caps.reasoning is True)
    if "temperature" in body and on:
        ctx.warnings.append(
            f"DeepSeek ignores temperature={body['temperature']!r} while the model thinks; "
            "preset 'off' switches thinking off."
        )


def _keep_reasoning(body: dict[str, Any], key: str, switches: tuple[str, ...]) -> None:
    """Tell the template to keep the earlier turns' reasoning exactly when it goes back, and to
    drop it otherwise, whatever its default: Qwen 3.5/3.6 templates drop it unless told, Qwen
    3.8's keeps it (an empty block for a turn sent without), and llama.cpp sets every template's
    switch on since PR #28174. A first turn sends nothing; a template without the switch
    ignores it."""
    turns = [m for m in body["messages"] if m.get("role") == "assistant"]
    if turns:
        kept = any(key in m for m in turns)
        merge(body, {"chat_template_kwargs": dict.fromkeys(switches, kept)})


def _replayed(message: dict[str, Any], model: str, key: str) -> dict[str, Any]:
    """(``replay_model`` is set by ``core/history.py``; a signature never crosses models.)"""
    if "replay_model" not in message:
        return message
    out = {k: v for k, v in message.items() if k != "replay_model"}
    if message["replay_model"] != model:
        out.pop(key, None)
    return out


class HostedStream:
    """A dialect's extras while parsing: ``reasoning_details`` merged and kept as provider state
    for the history (a profile that replays them: OpenRouter), the one notice about hidden
    reasoning (a profile with no reasoning text: OpenAI chat)."""

    def __init__(self, ctx: RequestContext):
        profile = ctx.ref.provider
        self.provider = profile.id
        self.keeps_details = profile.replay is not None and profile.replay.saved == DETAILS
        self.model = ctx.ref.name
        self.details: list[dict[str, Any]] = []
        self._text_index: Any = None
        self._finished_ok = False
        self._ended = False
        self._warned = profile.reasoning_text or _expects_hidden_reasoning(ctx)

    def reasoning(self, delta: dict[str, Any], text: str | None) -> str | None:
        """The reasoning text of one delta, from ``reasoning_details`` when that is the only
        place it comes (OpenRouter, and gateways that copy its shape); OpenRouter's details are
        also merged on the way, for the history."""
        fragments = delta.get("reasoning_details")
        if not isinstance(fragments, list):
            return text
        if self.keeps_details:
            merge_reasoning_details(self.details, fragments)
        texty = [
            f
            for f in fragments
            if isinstance(f, dict) and f.get("type") in ("reasoning.text", "reasoning.summary")
        ]
        if not text:  # a model that fills only the details (summaries of OpenAI models)
            text = "".join(
                value
                for f in texty
                for value in (f.get("text"), f.get("summary"))
                if isinstance(value, str)
            )
        if text and texty and texty[0].get("index") is not None:
            index = texty[0]["index"]
            if self._text_index is not None and index != self._text_index:
                text = "\n\n" + text  # a new reasoning block (OpenAI summaries: 0, 2, ...)
            self._text_index = index
        return text

    def finish(self, reason: str) -> None:
        self._finished_ok = reason != "error"

    def usage(self, hidden: int | None, reasoning_seen: bool) -> list[Event]:
        """``hidden``: the reasoning tokens the server counted."""
        if self._warned or reasoning_seen or not hidden:
            return []
        self._warned = True
        return [Notice(NO_REASONING_TEXT.format(model=self.model))]

    def end(self) -> list[Event]:
        """The merged details, once, if the stream finished normally."""
        if self._ended or not self.details or not self._finished_ok:
            return []
        self._ended = True
        state = {"model": self.model, DETAILS: json.loads(json.dumps(self.details))}
        return [ProviderState({self.provider: state})]


DETAILS = "reasoning_details"
_CONCATENATED = ("text", "summary", "data")


def merge_reasoning_details(merged: list[dict[str, Any]], fragments: list[Any]) -> None:
    """Append streamed ``reasoning_details`` fragments to ``merged``, joining a fragment to the
    previous entry when both have the same ``type`` and ``index`` (OpenRouter streams one block
    over many chunks; the signature often comes last, in a fragment with no text). Text fields
    are concatenated, other fields keep the latest non-empty value; entries without an index
    are kept as they are. Order is preserved (langchain #36400, agno #8861)."""
    for fragment in fragments:
        if not isinstance(fragment, dict):
            continue
        last = merged[-1] if merged else None
        same = (
            last is not None
            and fragment.get("index") is not None
            and last.get("index") == fragment.get("index")
            and last.get("type") == fragment.get("type")
        )
        if not same:
            merged.append(dict(fragment))
            continue
        assert last is not None
        for key, value in fragment.items():
            if key in _CONCATENATED and isinstance(value, str):
                last[key] = (last.get(key) or "") + value
            elif value not in (None, "") or key not in last:
                last[key] = value


def cached_tokens(usage: dict[str, Any], counts: UsageCounts) -> int | None:
    """Prompt tokens served from the cache, inside ``prompt_tokens``: OpenAI and OpenRouter say
    ``prompt_tokens_details.cached_tokens``, DeepSeek ``prompt_cache_hit_tokens``."""
    details = usage.get("prompt_tokens_details")
    return counts.get(details, "cached_tokens") or counts.get(usage, "prompt_cache_hit_tokens")
