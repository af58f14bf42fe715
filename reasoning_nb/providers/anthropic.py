"""Anthropic Messages API (``POST /v1/messages``, SSE): thinking blocks in, thinking deltas out.

Shapes from wire-formats.md §6 (anthropic-sdk-python types, 2026-08): the stream is
``message_start`` → per block ``content_block_start`` / ``content_block_delta``* /
``content_block_stop`` → ``message_delta`` (stop reason, cumulative usage) → ``message_stop``;
``ping`` and an in-band ``error`` event may come anywhere. Reasoning control is manual
(``thinking: {type: enabled, budget_tokens}``, ≤ 4.5) or adaptive (``thinking: {type: adaptive}``
+ top-level ``output_config.effort``, 4.6+); the profile's rows (profiles/anthropic.py) pick
which, and add ``display: "summarized"`` for the models that hide thinking by default.

History: the thinking / redacted_thinking / text blocks of a turn, with their signatures, go
into ``ProviderState({"anthropic": {"model", "content"}})``; ``core.history`` hands them back as
``blocks`` on the assistant message and :func:`build_request` replays them only to the same
model (a signature never crosses to another model or provider).
"""

from __future__ import annotations

import copy
from typing import Any

from ..core.events import Event, Finish, Notice, ProviderState, ReasoningDelta, TextDelta
from ..core.presets import bucket, merge
from ..errors import ProviderError
from .base import RequestContext, StreamParser, UsageCounts, decode_json, message_text, split_system
from .base import explain_hosted as explain  # noqa: F401 - its WireProtocol.explain
from .http_errors import server_message
from .profiles.anthropic import MANUAL, SUMMARIZED
from .transport import HttpRequest

FRAMING = "sse"
REASONING_KEYS = ("thinking", "output_config", "max_tokens")
"""Body fields kept in ``trace.request`` (as sent, after any fallback)."""
SERVER = None
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 16000
"""``max_tokens`` is required; this is sent when neither the user nor the plan gave one."""
ADAPTIVE_MAX_TOKENS = 32000
"""Default with adaptive thinking on: the model picks its own depth, so leave it room."""
REDACTED_MARKER = "[redacted thinking]"
"""What ``redacted_thinking`` blocks show in the reasoning pane, once per run of them with a
count when there are several (``[redacted thinking × 3]``); their data stays opaque."""

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}


# -- request ---------------------------------------------------------------------------------------


def build_request(ctx: RequestContext) -> HttpRequest:
    fields = ctx.plan.fields
    asked = fields.get("thinking")
    thinking_on = isinstance(asked, dict) and asked.get("type") in ("enabled", "adaptive")
    body: dict[str, Any] = {"model": ctx.ref.name, "max_tokens": _default_max_tokens(ctx)}
    system, messages = _messages(ctx, thinking_on)
    if system:
        body["system"] = system
    body["messages"] = messages
    body["stream"] = True
    if ctx.temperature is not None:
        _temperature(ctx, body, thinking_on)
    merge(body, fields)  # `display: "summarized"` comes with the row of a model that hides it
    headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
    if ctx.api_key:
        headers["x-api-key"] = ctx.api_key
    return HttpRequest(messages_url(ctx.base_url), body, headers, framing=FRAMING)


def messages_url(base_url: str) -> str:
    """``…/v1/messages`` under a base URL with or without its ``/v1`` (Message Batches live
    under it too)."""
    base = base_url.rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def _default_max_tokens(ctx: RequestContext) -> int:
    if ctx.max_tokens is not None:
        return ctx.max_tokens
    adaptive = (ctx.plan.fields.get("thinking") or {}).get("type") == "adaptive"
    value = ADAPTIVE_MAX_TOKENS if adaptive else DEFAULT_MAX_TOKENS
    return min(value, ctx.caps.max_output) if ctx.caps.max_output else value


def _temperature(ctx: RequestContext, body: dict[str, Any], thinking_on: bool) -> None:
    t = ctx.temperature
    if ctx.caps.temperature is False:
        ctx.warnings.append(
            f"Model {ctx.ref.name!r} takes no sampling parameters, so temperature={t:g} was "
            "not sent."
        )
    elif thinking_on and t != 1:
        ctx.warnings.append(
            f"Anthropic allows only temperature=1 with thinking on, so temperature={t:g} was "
            "not sent."
        )
    else:
        body["temperature"] = t


def _messages(ctx: RequestContext, thinking_on: bool) -> tuple[str, list[dict[str, Any]]]:
    """Chat messages -> (top-level ``system``, Messages API ``messages``)."""
    system, messages = split_system(ctx.messages)
    out: list[dict[str, Any]] = []
    for msg in messages:
        role = "assistant" if msg.get("role") == "assistant" else "user"
        content: Any = msg.get("content")
        blocks = msg.get("blocks")
        if role == "assistant" and isinstance(blocks, list):
            content = _replay(blocks, msg.get("replay_model"), ctx.ref.name, thinking_on, content)
        elif not isinstance(content, (str, list)):
            content = message_text(content)
        out.append({"role": role, "content": content})
    return system, out


def _replay(
    blocks: list[dict[str, Any]], model: Any, target: str, thinking_on: bool, fallback: Any
) -> Any:
    """A saved turn's blocks, signatures included, for the same model with thinking on; its
    text otherwise (signatures are model-specific)."""
    if model == target and thinking_on:
        return copy.deepcopy(blocks)
    return message_text(fallback) or "".join(
        b.get("text", "") for b in blocks if b.get("type") == "text"
    )


# -- errors and the one retry ----------------------------------------------------------------------


def fallback(error: ProviderError, body: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """One retry with the nearest value the server takes when it rejects a control outright."""
    if error.status != 400:
        return None
    msg = error.message.lower()
    quoted = error.message[:160]
    thinking = body.get("thinking") if isinstance(body.get("thinking"), dict) else None
    kind = thinking.get("type") if thinking else None
    retry = copy.deepcopy(body)

    sampling = [k for k in ("temperature", "top_p", "top_k") if k in body and k in msg]
    if sampling:
        for key in sampling:
            retry.pop(key)
        return retry, (
            f"Anthropic rejected {', '.join(sampling)} ({quoted}), so the request was sent "
            "again without it."
        )
    if kind == "enabled" and "max_tokens" in msg and "budget_tokens" in msg:
        budget = int(body.get("max_tokens", 0)) - 1
        if budget >= 1024:
            retry["thinking"]["budget_tokens"] = budget
            return retry, (
                f"Anthropic rejected budget_tokens={thinking.get('budget_tokens')} ({quoted}), so "
                f"it was sent again as {budget}."
            )
        return _without_thinking(retry, quoted)
    if kind == "enabled" and ("adaptive" in msg or "thinking.type.enabled" in msg):
        effort = bucket(int(thinking.get("budget_tokens") or 0))
        retry["thinking"] = dict(SUMMARIZED)  # the models that take only adaptive hide it
        retry.setdefault("output_config", {})["effort"] = effort
        return retry, (
            f"Anthropic rejected a manual thinking budget for this model ({quoted}), so it was "
            f"sent again as adaptive thinking with effort {effort!r}."
        )
    if kind and "display" in msg and "display" in thinking:
        del retry["thinking"]["display"]
        return retry, (
            f"Anthropic rejected thinking.display ({quoted}), so the request was sent again "
            "without it."
        )
    effort = (body.get("output_config") or {}).get("effort")
    if effort and "effort" in msg:
        if effort in ("xhigh", "max"):
            retry["output_config"]["effort"] = "high"
            return retry, (
                f"Anthropic rejected effort {effort!r} ({quoted}), so it was sent again as 'high'."
            )
        retry.pop("output_config")
        return retry, (
            f"Anthropic rejected effort {effort!r} ({quoted}), so the request was sent again "
            "without output_config (the model's default effort)."
        )
    if kind == "adaptive" and "adaptive" in msg:
        budgets = MANUAL.budgets or {}  # the preset table's, for an adaptive effort
        budget = min(
            budgets.get(effort or "high", budgets["max"]), int(body.get("max_tokens", 0)) - 1
        )
        if budget < 1024:
            return _without_thinking(retry, quoted)
        retry["thinking"] = {"type": "enabled", "budget_tokens": budget}
        retry.pop("output_config", None)
        return retry, (
            f"Anthropic rejected adaptive thinking for this model ({quoted}), so it was sent "
            f"again with a thinking budget of {budget} tokens."
        )
    if kind and "thinking" in msg:
        return _without_thinking(retry, quoted)
    return None


def _without_thinking(retry: dict[str, Any], quoted: str) -> tuple[dict[str, Any], str]:
    retry.pop("thinking", None)
    retry.pop("output_config", None)
    return retry, (
        f"Anthropic rejected the thinking settings ({quoted}), so the request was sent again "
        "without thinking."
    )


# -- stream ----------------------------------------------------------------------------------------


class Parser(StreamParser):
    """Messages SSE -> events; keeps each finished block (with its signature) for the history."""

    def __init__(self, ctx: RequestContext):
        self._model, self._provider = ctx.ref.name, ctx.ref.provider.id
        self._blocks: dict[int, dict[str, Any]] = {}
        self._done: list[dict[str, Any]] = []
        self._last = ""  # kind of the last text emitted: "reasoning" / "answer"
        self._separate = False
        self._answered = False  # some answer text came (a later text block is a new paragraph)
        self._new_paragraph = False
        self._redacted = 0  # redacted blocks in a row, shown once when the row ends
        self._input: int | None = None

    def feed(self, data: str, event: str | None = None) -> list[Event]:
        chunk = decode_json(
            data, who="Anthropic", hint="check that the base URL points at the Messages API"
        )
        return self.read(chunk, event)

    def read(self, chunk: dict[str, Any], event: str | None = None) -> list[Event]:
        """One decoded stream event (``read_body`` gives it a whole message's too)."""
        kind = chunk.get("type") or event
        if self._redacted and kind in ("content_block_start", "message_delta", "message_stop"):
            starts = chunk.get("content_block") or {} if kind == "content_block_start" else {}
            if starts.get("type") != "redacted_thinking":  # the row ended: show it, then this
                return self._redacted_row() + self.read(chunk, event)
        if kind == "message_start":
            return self._usage((chunk.get("message") or {}).get("usage"), start=True)
        if kind == "content_block_start":
            return self._start(chunk.get("index", 0), chunk.get("content_block") or {})
        if kind == "content_block_delta":
            return self._delta(chunk.get("index", 0), chunk.get("delta") or {})
        if kind == "content_block_stop":
            block = self._blocks.pop(chunk.get("index", 0), None)
            if block is not None:
                self._done.append(block)
            return []
        if kind == "message_delta":
            out = self._usage(chunk.get("usage"))
            reason = (chunk.get("delta") or {}).get("stop_reason")
            if reason:
                out.extend(_finish(str(reason)))
            return out
        if kind == "message_stop":
            self.finished = True
            return self._state()
        if kind == "error" or "error" in chunk:
            err = chunk.get("error")
            what = f"{err.get('type')}: " if isinstance(err, dict) and err.get("type") else ""
            raise ProviderError(
                f"Anthropic reported an error mid-stream ({what}{server_message(chunk)})."
            )
        return []  # ping, and event types newer than this parser

    def _start(self, index: int, block: dict[str, Any]) -> list[Event]:
        kind = block.get("type")
        if kind == "thinking":
            text = block.get("thinking") or ""
            signature = block.get("signature") or ""
            self._blocks[index] = {"type": "thinking", "thinking": text, "signature": signature}
            return self._reasoning(text, new_block=True)
        if kind == "redacted_thinking":
            self._blocks[index] = {"type": "redacted_thinking", "data": block.get("data", "")}
            self._redacted += 1
            return []
        if kind == "text":
            self._blocks[index] = {"type": "text", "text": ""}
            self._new_paragraph = self._answered  # text around a tool call, after a pause_turn
            return self._answer(index, block.get("text") or "")
        return []  # tool_use and server tools: not shown, not replayed

    def _delta(self, index: int, delta: dict[str, Any]) -> list[Event]:
        kind = delta.get("type")
        block = self._blocks.get(index)
        if kind == "thinking_delta":
            text = delta.get("thinking") or ""
            if block is not None and block["type"] == "thinking":
                block["thinking"] += text
            return self._reasoning(text)
        if kind == "signature_delta":
            if block is not None and block["type"] == "thinking":
                block["signature"] += delta.get("signature") or ""
            return []
        if kind == "text_delta":
            return self._answer(index, delta.get("text") or "")
        return []

    def _reasoning(self, text: str, *, new_block: bool = False) -> list[Event]:
        if new_block and self._last == "reasoning":
            self._separate = True  # blocks are joined with a blank line
        if not text:
            return []
        if self._separate:
            text, self._separate = "\n\n" + text, False
        self._last = "reasoning"
        return [ReasoningDelta(text)]

    def _redacted_row(self) -> list[Event]:
        count, self._redacted = self._redacted, 0
        return self._reasoning(
            REDACTED_MARKER if count == 1 else f"{REDACTED_MARKER[:-1]} × {count}]", new_block=True
        )

    def _answer(self, index: int, text: str) -> list[Event]:
        block = self._blocks.get(index)
        if block is not None and block["type"] == "text":
            block["text"] += text
        if not text:
            return []
        if self._new_paragraph:  # up to 3 leading spaces mean nothing in markdown; 4 are code
            indent = len(text) - len(text.lstrip(" "))
            text, self._new_paragraph = "\n\n" + (text[indent:] if indent < 4 else text), False
        self._last, self._answered = "answer", True
        return [TextDelta(text)]

    def _usage(self, usage: Any, *, start: bool = False) -> list[Event]:
        if not isinstance(usage, dict):
            return []
        counts = UsageCounts("Anthropic")
        # input_tokens excludes cached prompt tokens; the prompt's size is the sum.
        fresh = counts.get(usage, "input_tokens")
        cache = {
            "cache_write_tokens": counts.get(usage, "cache_creation_input_tokens"),
            "cache_read_tokens": counts.get(usage, "cache_read_input_tokens"),
        }
        if fresh is not None:  # (without it the prompt's size is unknown)
            self._input = fresh + sum(n for n in cache.values() if n is not None)
        if start:  # output_tokens here is a placeholder; message_delta has the count
            return counts.events(input_tokens=self._input, **cache)
        return counts.events(
            input_tokens=self._input,
            output_tokens=counts.get(usage, "output_tokens"),
            reasoning_tokens=counts.get(usage.get("output_tokens_details"), "thinking_tokens"),
            **cache,
        )

    def _state(self) -> list[Event]:
        blocks = [
            b
            for b in self._done
            if (b["type"] == "thinking" and b["signature"])
            or b["type"] == "redacted_thinking"
            or (b["type"] == "text" and b["text"])
        ]
        if not any(b["type"] != "text" for b in blocks):
            return []  # nothing opaque to carry: the answer text replays as it is
        return [ProviderState({self._provider: {"model": self._model, "content": blocks}})]


def read_body(ctx: RequestContext, message: dict[str, Any]) -> list[Event]:
    """A whole, non-streamed Message (a Message Batch's succeeded ``result.message``) as the
    events its stream would have brought: ``message_start``, each content block started whole
    and stopped, then ``message_delta`` (stop reason, usage) and ``message_stop``."""
    parser = Parser(ctx)
    usage = message.get("usage")
    out = parser.read({"type": "message_start", "message": {"usage": usage}})
    for index, block in enumerate(message.get("content") or ()):
        if isinstance(block, dict):
            start = {"type": "content_block_start", "index": index, "content_block": block}
            out += parser.read(start)
            out += parser.read({"type": "content_block_stop", "index": index})
    delta = {"stop_reason": message.get("stop_reason")}
    out += parser.read({"type": "message_delta", "delta": delta, "usage": usage})
    return out + parser.read({"type": "message_stop"})


def _finish(reason: str) -> list[Event]:
    out: list[Event] = [Finish(_STOP_REASONS.get(reason, reason))]
    if reason == "refusal":
        out.append(Notice("Claude declined to answer (stop reason 'refusal')."))
    elif reason == "model_context_window_exceeded":
        out.append(Notice("The answer stopped at the model's context window."))
    return out
