"""Going on from a point in the reasoning: the request that makes a model continue a reasoning
prefix, where its provider can take one (``Profile.resume``), and the one sentence where not.

``completion`` (llama-server, and the embedded demo, which is one): the chat prompt is rendered
by the server's own template (``POST /apply-template``), an open ``<think>`` is added where the
template's generation prompt did not open one, and the prompt with the prefix goes to the raw
``POST /completion`` with ``stream: true``. Its text is the rest of the reasoning, ``</think>``,
then the answer, read by the tag splitter started inside the reasoning. Not the chat endpoint
with a final assistant message: llama-server refuses an assistant prefill while thinking is on
("Assistant response prefill is incompatible with enable_thinking"), and a template renders a
past turn's reasoning as a closed block, so the model would answer instead of thinking on.

``final_message`` (vLLM): a last assistant turn of ``<think>`` and the prefix, with
``continue_final_message: true, add_generation_prompt: false``: vLLM renders the turn and cuts the
prompt at the end of its text, so the model writes on from there. The prefix goes in the
content, not the ``reasoning`` field: templates render a turn's reasoning as a closed block. A
template that puts an empty think block before every last assistant turn (Qwen3's) shows it
before the prefix; the model still thinks on in the block the prefix opens.
"""

from __future__ import annotations

from typing import Any

import httpx

from ..core.events import Event, Finish
from ..errors import ConfigError, ProviderError
from .address import shown
from .base import ReasoningSource, RequestContext, StreamParser, UsageCounts, decode_json
from .profile import Profile
from .transport import LOCAL_WAIT, HttpRequest, ssl_context

OPEN = "<think>"
"""The tag a prefix is opened with where the template did not open the block itself."""
COMPLETION, FINAL_MESSAGE = "completion", "final_message"


def cannot(profile: Profile) -> str:
    who = profile.name or profile.id
    return (
        f"{who} cannot continue from a point in the reasoning (it takes no prefilled "
        "reasoning): use Continue with a hint instead (continue_from=trace, hint=...), which "
        "asks again with the reasoning so far."
    )


def check(profile: Profile) -> None:
    if profile.resume is None:
        raise ConfigError(cannot(profile))


def raw(ctx: RequestContext | None) -> bool:
    """The request is a raw completion of a rendered prompt (not a chat request)."""
    return ctx is not None and ctx.prefix is not None and ctx.ref.provider.resume == COMPLETION


def server_root(base_url: str) -> str:
    """llama-server's own routes sit beside ``/v1``, not under it."""
    return base_url.rstrip("/").removesuffix("/v1")


async def render(ctx: RequestContext) -> str:
    """The chat prompt as the server's template renders it, with the generation prompt."""
    url = f"{server_root(ctx.base_url)}/apply-template"
    headers = {"authorization": f"Bearer {ctx.api_key}"} if ctx.api_key else {}
    failed = (
        f"The server at {shown(server_root(ctx.base_url))} could not render the chat prompt "
        "(POST /apply-template {}), which continuing from a point in the reasoning needs: "
        "update llama-server, or use Continue with a hint (continue_from=trace)."
    )
    try:
        async with httpx.AsyncClient(
            timeout=LOCAL_WAIT, trust_env=False, verify=ssl_context()
        ) as client:
            body = {"model": ctx.ref.name, "messages": ctx.messages}  # (model: router mode)
            response = await client.post(url, json=body, headers=headers)
    except httpx.HTTPError as exc:
        raise ProviderError(failed.format(f"failed: {type(exc).__name__}")) from None
    try:
        prompt = response.json().get("prompt") if response.status_code == 200 else None
    except (ValueError, AttributeError):
        prompt = None
    if not isinstance(prompt, str) or not prompt:
        status = response.status_code
        raise ProviderError(failed.format(f"answered {status}"), status=status)
    return prompt


def opened(prompt: str) -> str:
    """``prompt`` ending inside an open reasoning block."""
    return prompt if prompt.rstrip().endswith(OPEN) else f"{prompt}{OPEN}\n"


def request(ctx: RequestContext, chat: HttpRequest) -> HttpRequest:
    """The resume request, made from the chat request ``chat`` the protocol built."""
    body: dict[str, Any] = chat.body or {}
    if ctx.ref.provider.resume == FINAL_MESSAGE:
        turn = {"role": "assistant", "content": f"{OPEN}\n{ctx.prefix}"}
        body["messages"] = [*body["messages"], turn]
        body |= {"continue_final_message": True, "add_generation_prompt": False}
        return chat
    assert ctx.rendered is not None, "render() first"
    completion: dict[str, Any] = {
        "model": ctx.ref.name,  # routes the request in llama-server's router mode
        "prompt": opened(ctx.rendered) + (ctx.prefix or ""),
        "stream": True,
        "cache_prompt": True,
    }
    if ctx.max_tokens is not None:
        completion["n_predict"] = ctx.max_tokens
    if "temperature" in body:
        completion["temperature"] = body["temperature"]
    url = f"{server_root(ctx.base_url)}/completion"
    return HttpRequest(url, completion, chat.headers, framing="sse")


def tokens_field(req: HttpRequest) -> str:
    """The output cap's name in this request (the raw completion calls it ``n_predict``)."""
    return "n_predict" if "prompt" in (req.body or {}) else "max_tokens"


class CompletionParser(StreamParser):
    """llama-server's raw ``/completion`` stream: ``{"content": ..., "stop": false}`` frames,
    then one with ``stop: true``, its ``stop_type`` and counts."""

    def __init__(self, ctx: RequestContext):
        self._reasoning = ReasoningSource(ctx.prefix, preopened=True)

    def feed(self, data: str, event: str | None = None) -> list[Event]:
        chunk = decode_json(data, hint="check that the base URL points at llama-server")
        if chunk.get("error"):
            raise ProviderError(f"The server reported an error mid-stream: {chunk['error']}")
        out: list[Event] = []
        content = chunk.get("content")
        if isinstance(content, str) and content:
            out += self._reasoning.content(content)
        if chunk.get("stop") is True:
            self.finished = True
            out += self._reasoning.close()
            counts = UsageCounts()
            out += counts.events(
                input_tokens=counts.get(chunk, "tokens_evaluated"),
                output_tokens=counts.get(chunk, "tokens_predicted"),
            )
            out.append(Finish("length" if chunk.get("stop_type") == "limit" else "stop"))
        return out

    def close(self) -> list[Event]:
        return [] if self.finished else self._reasoning.close()
