"""OpenAI Responses API (``POST /v1/responses``, SSE): reasoning summaries and the answer.

Request: ``reasoning: {effort, summary: "auto"}`` (the preset row; ``summary`` is what makes
reasoning visible at all) and, on reasoning models, ``include: ["reasoning.encrypted_content"]``;
``max_output_tokens`` (reasoning included), the system prompt as ``instructions``, the
conversation as ``input`` messages. Sampling parameters are dropped on reasoning models (OpenAI
rejects them), with a warning. ``reasoning.context`` and ``reasoning.mode`` are not sent: their
defaults (``auto``: the model decides; the standard mode) are what a preset means.

History (stateless, whatever ``store`` is: we leave it at its default and never send
``previous_response_id``): the reasoning items of a response, with their encrypted content, go
into ``ProviderState({"openai": {"model", "reasoning_items"}})``; ``core.history`` hands them
back on the assistant message and :func:`build_request` puts them before that answer in
``input``, exactly as they came, only to the same model. An item without encrypted content is
not kept: its id alone would fail where responses are not stored.

Stream (wire-formats §5b; dispatch on the JSON ``type``, which repeats the ``event:`` line):
``response.reasoning_summary_text.delta`` (one block per ``item_id`` + ``summary_index``; blocks
are joined with a blank line), ``response.reasoning_text.delta`` (raw reasoning, gpt-oss servers;
per reasoning item, the first of the two kinds to speak is shown, so a server sending both shows
one), ``response.output_text.delta`` / ``response.refusal.delta`` (the answer), ``*.done`` and
``response.output_item.done`` (only what the deltas did not already bring), terminal
``response.completed`` / ``response.incomplete`` (truncated) / ``response.failed`` and in-band
``error`` events. Usage: ``input_tokens``, ``output_tokens``,
``output_tokens_details.reasoning_tokens``. A summary asked for may still be empty (often at low
effort): a notice says so, rather than an empty reasoning pane.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from ..core.events import Event, Finish, Notice, ProviderState, ReasoningDelta, TextDelta
from ..core.presets import SCALE, merge, nearest
from ..errors import ProviderError
from .base import RequestContext, StreamParser, UsageCounts, decode_json, split_system
from .transport import HttpRequest

FRAMING = "sse"
REASONING_KEYS: tuple[str, ...] = ()
SERVER = None
SAMPLING = ("temperature", "top_p")


def build_request(ctx: RequestContext) -> HttpRequest:
    instructions, messages = split_system(ctx.messages)
    body: dict[str, Any] = {
        "model": ctx.ref.name,
        "input": _input(messages, ctx),
        "stream": True,
    }
    if instructions:
        body["instructions"] = instructions
    if ctx.max_tokens is not None:
        body["max_output_tokens"] = ctx.max_tokens
    if ctx.temperature is not None:
        if drops_sampling(ctx):
            ctx.warnings.append(sampling_warning(ctx, "temperature"))
        else:
            body["temperature"] = ctx.temperature
    merge(body, ctx.plan.fields)
    headers = {"authorization": f"Bearer {ctx.api_key}"} if ctx.api_key else {}
    return HttpRequest(f"{ctx.base_url}/responses", body, headers, framing=FRAMING)


def _input(messages: list[dict[str, Any]], ctx: RequestContext) -> list[dict[str, Any]]:
    """Chat messages -> ``input``; an earlier turn of this same model brings its reasoning items
    back first, as they came (another model could not read their encrypted content)."""
    rule = ctx.ref.provider.replay
    out: list[dict[str, Any]] = []
    for m in messages:
        items = m.get(rule.message) if rule is not None else None
        if isinstance(items, list) and m.get("replay_model") == ctx.ref.name:
            out += [copy.deepcopy(item) for item in items if isinstance(item, dict)]
        out.append({"role": m["role"], "content": m.get("content") or ""})
    return out


def drops_sampling(ctx: RequestContext) -> bool:
    """OpenAI reasoning models reject temperature/top_p unless the snapshot says they take it."""
    return ctx.caps.reasoning is True and ctx.caps.temperature is not True


def sampling_warning(ctx: RequestContext, name: str) -> str:
    return (
        f"{name}={getattr(ctx, name, None)!r} was not sent: OpenAI reasoning models such as "
        f"{ctx.ref.name!r} only accept the default."
    )


# -- fallbacks (shared with the OpenAI flavour of openai_chat) ------------------------------------

_SUPPORTED = re.compile(r"supported values are:?(.*)", re.IGNORECASE | re.DOTALL)


def supported_values(message: str) -> list[str]:
    """``'none', 'low', 'medium', and 'high'`` out of OpenAI's "Unsupported value" message."""
    found = _SUPPORTED.search(message)
    if not found:
        return []
    return [v.lower() for v in re.findall(r"'([^']+)'", found.group(1)) if v.lower() in SCALE]


def effort_retry(
    error: ProviderError, body: dict[str, Any], path: tuple[str, ...]
) -> tuple[dict[str, Any], str] | None:
    """400 "Unsupported value: 'minimal' ... Supported values are: ..." -> the nearest one."""
    if error.status != 400:
        return None
    sent = _get(body, path)
    if not isinstance(sent, str) or f"'{sent.lower()}'" not in error.message.lower():
        return None
    accepted = supported_values(error.message)
    new = nearest(sent, accepted) if accepted else sent
    if new == sent:
        return None
    name = ".".join(path)
    return _set(body, path, new), (
        f"The server does not accept {name}={sent!r} for this model (it takes "
        f"{', '.join(accepted)}), so the request was sent again with {new!r}."
    )


def sampling_retry(error: ProviderError, body: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """400 on temperature/top_p (``Unsupported value: 'temperature' does not support 0.2 with
    this model`` / ``Unsupported parameter: 'temperature' ...``) -> send again without them."""
    message = error.message.lower()
    dropped = [k for k in SAMPLING if k in body and k in message]
    if error.status != 400 or not dropped:
        return None
    retry = {k: v for k, v in body.items() if k not in SAMPLING}
    sent = ", ".join(f"{k}={body[k]!r}" for k in SAMPLING if k in body)
    return retry, (
        f"The model rejected {sent} ({error.message[:120]}), so the request was sent again "
        "without sampling parameters."
    )


def fallback(error: ProviderError, body: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """One retry when OpenAI rejects part of the request we can do without or adjust."""
    if error.status != 400:
        return None
    message = error.message.lower()
    reasoning = body.get("reasoning")
    if (
        isinstance(reasoning, dict)
        and "summary" in reasoning
        and ("organization must be verified" in message or "reasoning.summary" in message)
    ):
        retry = {**body, "reasoning": {k: v for k, v in reasoning.items() if k != "summary"}}
        if not retry["reasoning"]:
            del retry["reasoning"]
        return retry, (
            "OpenAI returns reasoning summaries only to verified organizations "
            "(platform.openai.com/settings/organization/general), so the request was sent again "
            "without reasoning.summary: no reasoning text is shown, its token count still is."
        )
    if "include" in body and ("encrypted" in message or "include" in message):
        retry = {k: v for k, v in body.items() if k != "include"}
        return retry, (
            f"The server does not take include={body['include']!r} ({error.message[:120]}), so "
            "the request was sent again without it: a --chat turn after this one gets its answer "
            "back, not its reasoning."
        )
    for retry in (effort_retry(error, body, ("reasoning", "effort")), sampling_retry(error, body)):
        if retry is not None:
            return retry
    if isinstance(reasoning, dict) and "reasoning" in message and "unsupported" in message:
        # the include is about reasoning items too: it goes with them
        retry = {k: v for k, v in body.items() if k not in ("reasoning", "include")}
        return retry, (
            f"The model does not take reasoning settings ({error.message[:120]}), so the request "
            "was sent again without them."
        )
    return None


def explain(error: ProviderError, ctx: RequestContext) -> str | None:
    envs = " or ".join(ctx.ref.provider.key_envs) or "api_key="
    if error.status == 401:
        return f"OpenAI refused the API key ({error.message[:160]}): check {envs}."
    if error.status == 403:
        return (
            f"OpenAI refused the request ({error.message[:160]}): check that the project of "
            f"{envs} may use {ctx.ref.name!r}."
        )
    if error.status == 404:
        return (
            f"{ctx.base_url}/responses has no model {ctx.ref.name!r} ({error.message[:160]}): "
            "check the model name and the base URL (it should end in /v1); for a server without "
            "the Responses API use 'openai-chat:MODEL' or 'openai-compatible:MODEL'."
        )
    return None


def _get(body: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = body
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _set(body: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of ``body`` with ``path`` set to ``value`` (the original is left alone)."""
    out = dict(body)
    if len(path) == 1:
        out[path[0]] = value
    else:
        out[path[0]] = _set(dict(body.get(path[0]) or {}), path[1:], value)
    return out


# -- stream ---------------------------------------------------------------------------------------

_REASONING_KINDS = ("summary", "raw")


class Parser(StreamParser):
    def __init__(self, ctx: RequestContext):
        self._provider, self._model = ctx.ref.provider.id, ctx.ref.name
        self._keeps_items = ctx.ref.provider.replay is not None
        self._items: list[dict[str, Any]] = []
        """Reasoning items with encrypted content, as done, for the next ``--chat`` turn."""
        asked = ctx.plan.fields.get("reasoning")
        self._asked_summary = isinstance(asked, dict) and bool(asked.get("summary"))
        self._texts: dict[tuple, str] = {}
        """(kind, item, index) -> text emitted so far."""
        self._item_kind: dict[Any, str] = {}
        """Reasoning item -> the first kind (summary / raw) that spoke for it; the other is
        dropped, so a server sending both copies of one text shows it once."""
        self._last_reasoning: tuple | None = None
        self._last_answer: tuple | None = None
        self._last_was_reasoning = False
        self._tail = ""

    def feed(self, data: str, event: str | None = None) -> list[Event]:
        if data.strip() == "[DONE]":  # not sent by OpenAI; some compatible servers add it
            self.finished = True
            return []
        obj = decode_json(
            data, hint="check that the base URL points at an OpenAI Responses endpoint (…/v1)"
        )
        return self.read(obj, event)

    def read(self, obj: dict[str, Any], event: str | None = None) -> list[Event]:
        """One decoded stream event (``read_body`` gives it a whole response's too)."""
        kind = obj.get("type") or event or ""
        # output_index is in every event about an item (output_item.done keeps the id in "item")
        item = obj.get("output_index", obj.get("item_id"))
        if kind == "response.reasoning_summary_text.delta":
            return self._text("summary", item, obj.get("summary_index", 0), obj.get("delta"))
        if kind == "response.reasoning_text.delta":
            return self._text("raw", item, obj.get("content_index", 0), obj.get("delta"))
        if kind == "response.output_text.delta":
            return self._text("answer", item, obj.get("content_index", 0), obj.get("delta"))
        if kind == "response.refusal.delta":
            return self._text("refusal", item, obj.get("content_index", 0), obj.get("delta"))
        if kind in _DONE:
            text_kind, field, index_key = _DONE[kind]
            text = obj.get(field)
            if isinstance(text, dict):  # summary_part.done carries {"type", "text"}
                text = text.get("text")
            return self._rest(text_kind, item, obj.get(index_key, 0), text)
        if kind == "response.content_part.done":
            part = obj.get("part") or {}
            part_kind = _PART_KIND.get(part.get("type"))
            if part_kind is None:
                return []
            return self._rest(part_kind, item, obj.get("content_index", 0), part.get("text"))
        if kind == "response.output_item.done":
            return self._item_done(obj.get("item") or {}, obj.get("output_index"))
        if kind in ("response.completed", "response.incomplete"):
            self.finished = True
            return self._end(kind, obj.get("response") or {})
        if kind == "response.failed":
            response = obj.get("response") or {}
            raise ProviderError(f"OpenAI reported that the response failed: {_error(response)}")
        if kind == "error":
            raise ProviderError(f"OpenAI reported an error mid-stream: {_error(obj)}")
        return []  # created, in_progress, *.added, annotations, function calls...

    # -- text ------------------------------------------------------------------------------------

    def _text(self, kind: str, item: Any, index: Any, delta: Any) -> list[Event]:
        if not isinstance(delta, str) or not delta:
            return []
        key = (kind, item, index)
        if kind in _REASONING_KINDS:
            if self._item_kind.setdefault(item, kind) != kind:
                return []
            self._texts[key] = self._texts.get(key, "") + delta
            text = delta
            if self._last_was_reasoning and self._last_reasoning != key:
                text = _separator(self._tail) + delta  # a new summary part / item: a new block
            self._last_reasoning, self._last_was_reasoning = key, True
            self._tail = (self._tail + text)[-2:]
            return [ReasoningDelta(text)]
        self._texts[key] = self._texts.get(key, "") + delta
        text = delta
        if self._last_answer is not None and self._last_answer != key:
            text = "\n\n" + delta
        self._last_answer, self._last_was_reasoning = key, False
        return [TextDelta(text)]

    def _rest(self, kind: str, item: Any, index: Any, full: Any) -> list[Event]:
        """What a ``*.done`` event's full text has beyond the deltas (all of it if none came)."""
        if not isinstance(full, str):
            return []
        have = self._texts.get((kind, item, index), "")
        if len(full) <= len(have) or not full.startswith(have):
            return []
        return self._text(kind, item, index, full[len(have) :])

    def _item_done(self, item: dict[str, Any], output_index: Any) -> list[Event]:
        item_id = output_index if output_index is not None else item.get("id")
        out: list[Event] = []
        if item.get("type") == "reasoning":
            if self._keeps_items and isinstance(item.get("encrypted_content"), str):
                self._items.append({k: copy.deepcopy(v) for k, v in item.items() if v is not None})
            for i, part in enumerate(item.get("summary") or ()):
                if isinstance(part, dict):
                    out += self._rest("summary", item_id, i, part.get("text"))
        for i, part in enumerate(item.get("content") or ()):
            if isinstance(part, dict) and part.get("type") in _PART_KIND:
                kind = _PART_KIND[part["type"]]  # a refusal part holds its text as "refusal"
                out += self._rest(kind, item_id, i, part.get(kind if kind == "refusal" else "text"))
        return out

    # -- end -------------------------------------------------------------------------------------

    def _end(self, kind: str, response: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        usage = response.get("usage")
        if isinstance(usage, dict):
            counts = UsageCounts()
            hidden = counts.get(usage.get("output_tokens_details"), "reasoning_tokens")
            out += counts.events(
                input_tokens=counts.get(usage, "input_tokens"),
                output_tokens=counts.get(usage, "output_tokens"),
                reasoning_tokens=hidden,
                cache_read_tokens=counts.get(usage.get("input_tokens_details"), "cached_tokens"),
            )
            out += self._no_summary(response, hidden)
        if self._items:
            state = {"model": self._model, "reasoning_items": self._items}
            out.append(ProviderState({self._provider: state}))
        if kind == "response.completed":
            out.append(Finish("stop"))
            return out
        reason = (response.get("incomplete_details") or {}).get("reason")
        if reason != "max_output_tokens":
            why = f"the server gave the reason {reason!r}" if reason else "no reason was given"
            out.append(Notice(f"OpenAI stopped the response before it was complete ({why})."))
        out.append(Finish("length"))
        return out

    def _no_summary(self, response: dict[str, Any], hidden: int | None) -> list[Event]:
        """The notice for a summary asked for that never came although the model reasoned."""
        echoed = response.get("reasoning")  # the effective settings, after any fallback
        asked = bool(echoed.get("summary")) if isinstance(echoed, dict) else self._asked_summary
        shown = any(kind in _REASONING_KINDS and text for (kind, *_), text in self._texts.items())
        if not asked or shown or not hidden:
            return []
        return [Notice(NO_SUMMARY.format(n=hidden))]


def read_body(ctx: RequestContext, response: dict[str, Any]) -> list[Event]:
    """A whole, non-streamed response (a Batch API output line's ``body``) as the events its
    stream would have brought: each output item as its ``response.output_item.done``, then the
    terminal event its ``status`` names (``failed`` raises, as in a stream)."""
    parser = Parser(ctx)
    out: list[Event] = []
    for index, item in enumerate(response.get("output") or ()):
        if isinstance(item, dict):
            done = {"type": "response.output_item.done", "output_index": index, "item": item}
            out += parser.read(done)
    status = response.get("status") or "completed"
    if status not in _TERMINAL:  # cancelled, or never finished
        raise ProviderError(f"OpenAI returned the response unfinished (status {status!r}).")
    return out + parser.read({"type": f"response.{status}", "response": response})


_TERMINAL = ("completed", "incomplete", "failed")
NO_SUMMARY = (
    "OpenAI sent no reasoning summary this time, though the model reasoned for {n} tokens: "
    "summaries are not guaranteed and low efforts often get none, so a higher --preset is the "
    "way to see one."
)
_DONE = {  # event -> (kind of text, the field with the full text, the field with its index)
    "response.reasoning_summary_text.done": ("summary", "text", "summary_index"),
    "response.reasoning_summary_part.done": ("summary", "part", "summary_index"),
    "response.reasoning_text.done": ("raw", "text", "content_index"),
    "response.output_text.done": ("answer", "text", "content_index"),
    "response.refusal.done": ("refusal", "refusal", "content_index"),
}
_PART_KIND = {"output_text": "answer", "refusal": "refusal", "reasoning_text": "raw"}


def _separator(tail: str) -> str:
    """A blank line between reasoning blocks, counting newlines the last block ended with."""
    if tail.endswith("\n\n"):
        return ""
    return "\n" if tail.endswith("\n") else "\n\n"


def _error(obj: dict[str, Any]) -> str:
    """``{"code","message"}`` flat (``error`` event) or under ``error`` (``response.failed``)."""
    err = obj.get("error") if isinstance(obj.get("error"), dict) else obj
    message = err.get("message") or "no message"
    code = err.get("code") or err.get("type")
    return f"{message} ({code})" if code and code != "error" else str(message)
