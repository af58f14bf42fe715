"""Google Gemini ``models/{model}:streamGenerateContent?alt=sse``: ``thinkingConfig`` in,
``thought: true`` parts out.

Shapes from wire-formats.md §7 (python-genai types, 2026-08): each SSE event is a whole
``GenerateContentResponse`` chunk, there is no terminator (a stream that ends after a
``finishReason`` is complete), ``usageMetadata`` is cumulative (the last chunk's values count).
The key goes in the ``x-goog-api-key`` header, never in the URL, where proxies and logs see it.

Usage: ``input_tokens`` = ``promptTokenCount``; ``output_tokens`` = ``candidatesTokenCount`` +
``thoughtsTokenCount`` (Gemini counts thoughts apart from the candidates; every other provider's
output count includes reasoning, so the two are added to compare alike);
``reasoning_tokens`` = ``thoughtsTokenCount``.

History: the model's parts, ``thoughtSignature`` on the very parts that carried it, go into
``ProviderState({"gemini": {"model", "parts"}})``; ``core.history`` hands them back as ``parts``
on the assistant message and :func:`build_request` replays them only to the same model.
"""

from __future__ import annotations

import copy
import re
from typing import Any
from urllib.parse import quote

from ..core.events import Event, Finish, Notice, ProviderState, ReasoningDelta, TextDelta
from ..core.presets import merge, nearest
from ..errors import ProviderError
from .base import (
    RequestContext,
    StreamParser,
    UsageCounts,
    decode_json,
    explain_hosted,
    message_text,
    split_system,
)
from .http_errors import server_message
from .profiles.gemini import LEVELS
from .transport import HttpRequest

FRAMING = "sse"
REASONING_KEYS = ("generationConfig",)
"""Body fields kept in ``trace.request`` (as sent, after any fallback)."""
SERVER = None
API_VERSION = "v1beta"
LEVEL_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 16000}
"""Preset table budgets, for the fallback from a level to a budget (a 2.5 model)."""
SAFE_BUDGET = (512, 24576)
"""The budget range every Gemini 2.5 model takes (Pro 128–32768, Flash 0–24576, Lite 512–24576):
where a rejected budget is moved to when the model's own range is unknown."""
PRO_MIN_BUDGET = 128

_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}
_BLOCKED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}


# -- request ---------------------------------------------------------------------------------------


def build_request(ctx: RequestContext) -> HttpRequest:
    system, contents = _contents(ctx)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    config: dict[str, Any] = {}
    if ctx.max_tokens is not None:
        config["maxOutputTokens"] = ctx.max_tokens
    if ctx.temperature is not None:
        config["temperature"] = ctx.temperature
        if ctx.temperature != 1 and "gemini-3" in ctx.ref.name.lower():
            ctx.warnings.append(
                f"Google recommends temperature 1.0 for Gemini 3 models; temperature="
                f"{ctx.temperature:g} was sent as asked, but may cause looping or worse reasoning."
            )
    if config:
        body["generationConfig"] = config
    merge(body, ctx.plan.fields)
    headers = {"content-type": "application/json"}
    if ctx.api_key:
        headers["x-goog-api-key"] = ctx.api_key
    return HttpRequest(_endpoint(ctx.base_url, ctx.ref.name), body, headers, framing=FRAMING)


def _endpoint(base_url: str, model: str) -> str:
    base = base_url.rstrip("/")
    if not base.rsplit("/", 1)[-1].startswith("v1"):  # v1, v1beta, v1alpha given by the user
        base = f"{base}/{API_VERSION}"
    name = model[len("models/") :] if model.startswith("models/") else model
    return f"{base}/models/{quote(name, safe='-._~')}:streamGenerateContent?alt=sse"


def _contents(ctx: RequestContext) -> tuple[str, list[dict[str, Any]]]:
    """Chat messages -> (``systemInstruction`` text, ``contents`` with roles user/model)."""
    system, messages = split_system(ctx.messages)
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.get("role") in ("assistant", "model"):
            parts = msg.get("parts")
            if isinstance(parts, list) and parts and msg.get("replay_model") == ctx.ref.name:
                out.append({"role": "model", "parts": copy.deepcopy(parts)})
            else:  # another model's signatures would be rejected: its text only
                out.append({"role": "model", "parts": [{"text": message_text(msg.get("content"))}]})
        else:
            out.append({"role": "user", "parts": [{"text": message_text(msg.get("content"))}]})
    return system, out


# -- errors and the one retry ----------------------------------------------------------------------


def fallback(error: ProviderError, body: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """One retry with the nearest value the server takes when it rejects a thinking control."""
    if error.status != 400:
        return None
    msg = error.message.lower()
    quoted = error.message[:160]
    config = (body.get("generationConfig") or {}).get("thinkingConfig")
    if not isinstance(config, dict) or not config:
        return None
    retry = copy.deepcopy(body)
    tc = retry["generationConfig"]["thinkingConfig"]
    budget, level = config.get("thinkingBudget"), config.get("thinkingLevel")
    says_level = any(w in msg for w in ("thinking level", "thinking_level", "thinkinglevel"))
    says_budget = any(w in msg for w in ("thinking budget", "thinking_budget", "thinkingbudget"))

    if budget is not None and level is not None and says_level and says_budget:
        del tc["thinkingBudget"]
        return retry, (
            f"Gemini takes a thinking budget or a level, not both ({quoted}), so the request was "
            f"sent again with level {level!r} only."
        )
    if level is not None and says_level:
        name = str(level).lower()
        if re.search(rf"\b{re.escape(name)}\b", msg):  # "Thinking level MINIMAL is not ..."
            new = nearest(name, [x for x in LEVELS.vocab if x != name])
            tc["thinkingLevel"] = new
            return retry, (
                f"Gemini rejected thinking level {level!r} for this model ({quoted}), so it was "
                f"sent again as {new!r}."
            )
        del tc["thinkingLevel"]
        tc["thinkingBudget"] = new_budget = LEVEL_BUDGETS.get(name, 8192)
        return retry, (
            f"This model takes a thinking budget, not a level ({quoted}), so level {level!r} was "
            f"sent again as thinkingBudget {new_budget}."
        )
    # "Thinking can't be disabled for this model." / "Budget 0 is invalid. This model only works
    # in thinking mode." (2.5 Pro)
    if budget == 0 and any(w in msg for w in ("disabled", "budget", "thinking mode")):
        tc["thinkingBudget"] = PRO_MIN_BUDGET
        return retry, (
            f"This model cannot switch thinking off ({quoted}), so the request was sent again "
            f"with the smallest thinking budget Gemini 2.5 Pro takes, {PRO_MIN_BUDGET}."
        )
    if budget is not None and says_budget:
        low, high = SAFE_BUDGET
        if budget == -1 or low <= budget <= high:
            del tc["thinkingBudget"]
            return retry, (
                f"Gemini rejected thinkingBudget {budget} ({quoted}), so the request was sent "
                "again without it (the model's default, dynamic thinking)."
            )
        tc["thinkingBudget"] = new_budget = min(max(budget, low), high)
        return retry, (
            f"Gemini rejected thinkingBudget {budget} ({quoted}), so it was sent again as "
            f"{new_budget}, which every Gemini 2.5 model takes."
        )
    if "includethoughts" in msg.replace("_", "") and "includeThoughts" in tc:
        del tc["includeThoughts"]
        return retry, (
            f"Gemini rejected includeThoughts ({quoted}), so the request was sent again without "
            "it (reasoning will not be shown)."
        )
    if "thinking" in msg:
        del retry["generationConfig"]["thinkingConfig"]
        if not retry["generationConfig"]:
            del retry["generationConfig"]
        return retry, (
            f"Gemini rejected the thinking settings ({quoted}), so the request was sent again "
            "without thinkingConfig."
        )
    return None


def explain(error: ProviderError, ctx: RequestContext) -> str | None:
    # An invalid key is a 400 INVALID_ARGUMENT ("API key not valid") on the Gemini API.
    bad_key = error.status == 400 and "api key" in error.message.lower()
    return explain_hosted(error, ctx, key_refused=bad_key)


# -- stream ----------------------------------------------------------------------------------------


class Parser(StreamParser):
    """``GenerateContentResponse`` chunks -> events; keeps the model's parts for the history."""

    def __init__(self, ctx: RequestContext):
        self._model, self._provider = ctx.ref.name, ctx.ref.provider.id
        self._parts: list[dict[str, Any]] = []
        self._finish_seen = False
        self._usage: list[Event] = []  # the last chunk's: the counts are cumulative
        self._signed = False

    def feed(self, data: str, event: str | None = None) -> list[Event]:
        chunk = decode_json(
            data, who="Gemini", hint="check that the base URL points at the Gemini API"
        )
        if "error" in chunk:
            raise ProviderError(f"Gemini reported an error mid-stream: {server_message(chunk)}")
        out: list[Event] = []
        candidates = chunk.get("candidates") or []
        cand = next((c for c in candidates if c.get("index", 0) == 0), None)
        if cand is not None:
            for part in (cand.get("content") or {}).get("parts") or ():
                if isinstance(part, dict):
                    out.extend(self._part(part))
            reason = cand.get("finishReason")
            if reason and reason != "FINISH_REASON_UNSPECIFIED":
                self._finish_seen = True
                out.append(Finish(_FINISH.get(reason, str(reason).lower())))
                if reason in _BLOCKED:
                    out.append(Notice(f"Gemini stopped the answer ({reason})."))
        blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            self._finish_seen = True
            out.append(Notice(f"Gemini blocked the prompt ({blocked}); nothing was generated."))
            out.append(Finish("content_filter"))
        meta = chunk.get("usageMetadata")
        if isinstance(meta, dict):
            self._usage = _usage(meta)
        return out

    def close(self) -> list[Event]:
        # No terminator: a stream that ends after a finishReason is complete.
        self.finished = self._finish_seen
        out = list(self._usage)
        if self._signed:
            parts = [_clean(p) for p in self._parts]
            out.append(ProviderState({self._provider: {"model": self._model, "parts": parts}}))
        return out

    def _part(self, part: dict[str, Any]) -> list[Event]:
        self._keep(part)
        text = part.get("text")
        if not isinstance(text, str) or not text:
            return []
        return [ReasoningDelta(text) if part.get("thought") else TextDelta(text)]

    def _keep(self, part: dict[str, Any]) -> None:
        """Merge streamed text pieces into parts; a signed part is never merged with another."""
        self._signed = self._signed or bool(part.get("thoughtSignature"))
        last = self._parts[-1] if self._parts else None
        text_only = {"text", "thought"}  # a signed part has a signature beside them
        if (
            last is not None
            and set(part) <= text_only
            and set(last) <= text_only
            and bool(last.get("thought")) == bool(part.get("thought"))
        ):
            last["text"] = last.get("text", "") + (part.get("text") or "")
            return
        self._parts.append(copy.deepcopy(part))


def _clean(part: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in part.items() if v is not None}


def _usage(meta: dict[str, Any]) -> list[Event]:
    counts = UsageCounts("Gemini")
    thoughts = counts.get(meta, "thoughtsTokenCount")
    known = [n for n in (counts.get(meta, "candidatesTokenCount"), thoughts) if n is not None]
    return counts.events(
        input_tokens=counts.get(meta, "promptTokenCount"),
        output_tokens=sum(known) if known else None,
        reasoning_tokens=thoughts,
        cache_read_tokens=counts.get(meta, "cachedContentTokenCount"),  # inside promptTokenCount
    )
