"""Pure builders of provider stream frames, in the shapes of spec/wire-formats.md.

Each stream builder takes the reasoning and the answer — a string (split into token-like
pieces by :func:`tokens`) or a list of pieces used as-is, so a test controls every split —
and returns a list of frames (str). Serve them with ``Reply.sse(frames)`` /
``Reply.ndjson(frames)`` from ``wire_server``; a correct parser must give back exactly the
reasoning and answer texts that went in.

Inline-tag layouts put nothing but the tags around the texts unless ``tag_newlines=True``
(then ``"<think>\\n"`` ... ``"</think>\\n\\n"`` as real chat templates render them).

Shapes: §1 Ollama native, §2 llama.cpp (the real captures of design/real-servers.md §3),
§3 LM Studio, §4 vLLM, §5 OpenAI, §6 Anthropic, §7 Gemini, §8 OpenRouter, §9 DeepSeek.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wire_server import Reply

Text = str | list[str]

# -- generic pieces --------------------------------------------------------------------------------

_TOKEN = re.compile(r" ?\w+| ?[^\w\s]+|\s")


def tokens(text: Text) -> list[str]:
    """Split text into token-like pieces (``" capital"``, ``","``, ``"\\n"``); lists pass through.

    ``"".join(tokens(t)) == t`` always holds.
    """
    return list(text) if isinstance(text, list) else _TOKEN.findall(text)


def split_tag(tag: str) -> list[str]:
    """``"</think>"`` -> ``["</", "think", ">"]``, as llama.cpp streams it (real-servers.md §3)."""
    if tag.startswith("</") and tag.endswith(">"):
        return ["</", tag[2:-1], ">"]
    if tag.startswith("<") and tag.endswith(">"):
        return ["<", tag[1:-1], ">"]
    half = len(tag) // 2
    return [tag[:half], tag[half:]]


def inline_pieces(
    reasoning: Text,
    answer: Text,
    *,
    open_tag: str = "<think>",
    close_tag: str = "</think>",
    tags_open: bool = True,
    tags_split: bool = False,
    tag_newlines: bool = False,
) -> list[str]:
    """Content pieces with the reasoning inline between tags.

    ``tags_open=False`` is the forced-open shape (the prompt ended with the opener, so only
    the closer is generated); ``tags_split`` splits each tag across pieces.
    """
    out: list[str] = []
    if tags_open:
        out += split_tag(open_tag) if tags_split else [open_tag]
        if tag_newlines:
            out.append("\n")
    out += tokens(reasoning)
    out += split_tag(close_tag) if tags_split else [close_tag]
    if tag_newlines:
        out += ["\n", "\n"] if tags_split else ["\n\n"]
    return out + tokens(answer)


def harmony_pieces(reasoning: Text, answer: Text) -> list[str]:
    """gpt-oss harmony channels inline in content (the leading ``<|start|>assistant`` is in the
    prompt; each marker is one token)."""
    return [
        "<|channel|>",
        "analysis",
        "<|message|>",
        *tokens(reasoning),
        "<|end|>",
        "<|start|>",
        "assistant",
        "<|channel|>",
        "final",
        "<|message|>",
        *tokens(answer),
    ]


def _dumps(obj: Any) -> str:
    # llama.cpp and Ollama send raw UTF-8, compact: multibyte characters get split by chunking
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def sse(obj: Any, event: str | None = None) -> str:
    """One SSE event: ``[event: X\\n]data: <json>\\n\\n``."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {obj if isinstance(obj, str) else _dumps(obj)}\n\n"


SSE_DONE = "data: [DONE]\n\n"


def keepalive(comment: str = "ping") -> str:
    """An SSE comment, e.g. ``": ping\\n\\n"``, or OpenRouter's ``": OPENROUTER PROCESSING"``."""
    return f": {comment}\n\n"


def with_pings(frames: list[str], every: int = 2, comment: str = "ping") -> list[str]:
    """Insert a keep-alive comment before the first frame and after every ``every`` frames."""
    out = [keepalive(comment)]
    for i, frame in enumerate(frames, 1):
        out.append(frame)
        if i % every == 0 and i < len(frames):
            out.append(keepalive(comment))
    return out


def crlf(frames: list[str]) -> list[str]:
    """The same frames with CRLF line endings (allowed by SSE; parsers must accept both)."""
    return [f.replace("\r\n", "\n").replace("\n", "\r\n") for f in frames]


def malformed_frame() -> str:
    """A ``data:`` line whose JSON is cut off."""
    return 'data: {"choices":[{"index":0,"delta":{"content":"x"}\n\n'


def sse_error(
    message: str = "an error occurred", *, code: int = 500, type: str = "server_error"
) -> str:
    """In-band error after HTTP 200 (llama.cpp / vLLM / OpenRouter): ``data: {"error":{...}}``.

    Real servers then close the stream without ``[DONE]``.
    """
    return sse({"error": {"code": code, "message": message, "type": type}})


# -- Ollama native (§1) ----------------------------------------------------------------------------

OLLAMA_CREATED_AT = "2026-01-01T00:00:00.000000Z"


def _ollama_usage(n_tokens: int, usage: bool | dict) -> dict:
    if usage is False:
        return {}
    base = {  # durations in NANOSECONDS, shapes of docs/api.md
        "total_duration": 4_883_583_458,
        "load_duration": 1_334_875,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 342_546_000,
        "eval_count": n_tokens,
        "eval_duration": n_tokens * 20_000_000,
    }
    return {**base, **(usage if isinstance(usage, dict) else {})}


def ollama_chat(
    reasoning: Text,
    answer: Text,
    *,
    inline_tags: bool = False,
    usage: bool | dict = True,
    done_reason: str = "stop",
    model: str = "qwen3",
    **inline: Any,
) -> list[str]:
    """``/api/chat`` NDJSON: ``message.thinking`` lines, then ``message.content`` lines, then
    ``done:true`` with counts and nanosecond durations.

    ``inline_tags=True``: no ``thinking`` field; ``<think>…</think>`` inside content (older
    Ollama or a model whose template Ollama does not parse). ``**inline`` goes to
    :func:`inline_pieces` (``tags_open``, ``tags_split``, ``tag_newlines``, tags).
    """

    def line(message: dict, **extra: Any) -> str:
        obj = {"model": model, "created_at": OLLAMA_CREATED_AT, "message": message, **extra}
        return _dumps(obj) + "\n"

    think, text = tokens(reasoning), tokens(answer)
    frames = []
    if inline_tags:
        for piece in inline_pieces(think, text, **inline):
            frames.append(line({"role": "assistant", "content": piece}, done=False))
    else:
        for piece in think:
            msg = {"role": "assistant", "content": "", "thinking": piece}
            frames.append(line(msg, done=False))
        for piece in text:
            frames.append(line({"role": "assistant", "content": piece}, done=False))
    final = {
        "done": True,
        "done_reason": done_reason,
        **_ollama_usage(len(think) + len(text), usage),
    }
    frames.append(line({"role": "assistant", "content": ""}, **final))
    return frames


def ollama_generate(
    reasoning: Text,
    answer: Text,
    *,
    usage: bool | dict = True,
    done_reason: str = "stop",
    model: str = "qwen3",
) -> list[str]:
    """``/api/generate`` NDJSON: top-level ``thinking`` / ``response``."""
    think, text = tokens(reasoning), tokens(answer)
    head = {"model": model, "created_at": OLLAMA_CREATED_AT}
    frames = [_dumps({**head, "response": "", "thinking": p, "done": False}) + "\n" for p in think]
    frames += [_dumps({**head, "response": p, "done": False}) + "\n" for p in text]
    final = {**head, "response": "", "done": True, "done_reason": done_reason}
    frames.append(_dumps({**final, **_ollama_usage(len(think) + len(text), usage)}) + "\n")
    return frames


def ollama_error_line(message: str = "an error was encountered while running the model") -> str:
    """Mid-stream error line after HTTP 200 (docs/api/errors.mdx)."""
    return _dumps({"error": message}) + "\n"


def ollama_not_found(model: str) -> Reply:
    return Reply.json({"error": f'model "{model}" not found, try pulling it first'}, 404)


def ollama_no_thinking(model: str) -> Reply:
    """``think`` truthy on a model without the thinking capability (routes_generate_test.go)."""
    return Reply.json({"error": f'"{model}" does not support thinking'}, 400)


def ollama_invalid_think(value: Any) -> Reply:
    return Reply.json(
        {
            "error": f"invalid think value: {json.dumps(value)} "
            '(must be "high", "medium", "low", "max", true, or false)'
        },
        400,
    )


def ollama_show(capabilities: tuple[str, ...] = ("completion", "thinking"), **extra: Any) -> dict:
    """``POST /api/show`` body (abridged)."""
    return {
        "modelfile": "",
        "template": "",
        "details": {"family": "qwen3", "parameter_size": "8.2B", "quantization_level": "Q4_K_M"},
        "capabilities": list(capabilities),
        **extra,
    }


def ollama_tags(*names: str, capabilities: tuple[str, ...] | None = None) -> dict:
    """``GET /api/tags``; ``capabilities`` only on v0.30+ servers."""
    models = []
    for name in names or ("qwen3:latest",):
        entry: dict[str, Any] = {"name": name, "model": name, "size": 5_225_388_164}
        if capabilities is not None:
            entry["capabilities"] = list(capabilities)
        models.append(entry)
    return {"models": models}


# -- Chat Completions SSE (§2–5, 8, 9) -------------------------------------------------------------


def default_timings(prompt_n: int = 20, predicted_n: int = 15) -> dict:
    """llama.cpp ``timings`` of the last chunk (key set of real-servers.md §3 / wire-formats §2)."""
    return {
        "cache_n": 0,
        "prompt_n": prompt_n,
        "prompt_ms": 52.4,
        "prompt_per_token_ms": round(52.4 / prompt_n, 3),
        "prompt_per_second": round(prompt_n / 0.0524, 2),
        "predicted_n": predicted_n,
        "predicted_ms": predicted_n * 6.5,
        "predicted_per_token_ms": 6.5,
        "predicted_per_second": 153.85,
    }


def default_usage(
    completion_tokens: int, prompt_tokens: int = 20, reasoning_tokens: int | None = None
) -> dict:
    usage: dict[str, Any] = {
        "completion_tokens": completion_tokens,
        "prompt_tokens": prompt_tokens,
        "total_tokens": completion_tokens + prompt_tokens,
    }
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return usage


def chat_sse(
    reasoning: Text,
    answer: Text,
    *,
    field: str | None = "reasoning_content",
    tags_open: bool = True,
    tags_split: bool = False,
    tag_newlines: bool = False,
    open_tag: str = "<think>",
    close_tag: str = "</think>",
    harmony: bool = False,
    both: bool = False,
    usage: bool | dict | None = None,
    usage_chunk: bool = False,
    timings: bool | dict | None = None,
    finish_reason: str | None = "stop",
    done: bool = True,
    role_chunk: bool = True,
    style: str = "openai",
    model: str = "test-model",
    id: str = "chatcmpl-test",
    created: int = 1_795_304_046,
    system_fingerprint: str | None = None,
    extra: dict | None = None,
) -> list[str]:
    """Chat Completions ``chat.completion.chunk`` SSE frames.

    field: ``"reasoning_content"`` (llama.cpp, DeepSeek, LM Studio, old vLLM), ``"reasoning"``
    (vLLM now, Ollama /v1, OpenRouter, LM Studio gpt-oss) or ``None``: reasoning inline in
    ``content`` between tags (``tags_open=False``: forced-open, only the closer) or, with
    ``harmony=True``, as gpt-oss channel markup. ``both=True``: reasoning in ``field`` and also
    tagged in ``content`` (the documented deepseek-legacy shape).

    role_chunk: a first ``{"role":"assistant"}`` chunk; False merges the role into the first
    delta (LM Studio, vLLM). usage/timings: True for defaults or a dict; usage rides on the
    finish chunk (llama.cpp) or, with ``usage_chunk=True``, on an extra ``choices: []`` chunk
    (OpenAI ``include_usage``). ``finish_reason=None`` omits the finish chunk; ``done=False``
    omits ``data: [DONE]``. style ``"llamacpp"`` uses llama.cpp's key order; ``extra`` is
    merged into every chunk (e.g. OpenRouter's ``provider``).
    """
    think, text = tokens(reasoning), tokens(answer)
    n_tokens = len(think) + len(text)

    def chunk(delta: dict, finish: str | None = None, **more: Any) -> str:
        if style == "llamacpp":
            obj: dict[str, Any] = {
                "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
                "created": created,
                "id": id,
                "model": model,
                "system_fingerprint": system_fingerprint or "b0-unknown",
                "object": "chat.completion.chunk",
            }
        else:
            obj = {"id": id, "object": "chat.completion.chunk", "created": created, "model": model}
            if system_fingerprint:
                obj["system_fingerprint"] = system_fingerprint
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            obj["choices"] = [choice]
        return sse({**obj, **(extra or {}), **more})

    deltas: list[dict] = []
    if harmony:
        deltas = [{"content": p} for p in harmony_pieces(think, text)]
    elif field is None:
        deltas = [
            {"content": p}
            for p in inline_pieces(
                think,
                text,
                open_tag=open_tag,
                close_tag=close_tag,
                tags_open=tags_open,
                tags_split=tags_split,
                tag_newlines=tag_newlines,
            )
        ]
    elif both:
        deltas = [{"content": open_tag}] + [{field: p, "content": p} for p in think]
        deltas += [{"content": close_tag}] + [{"content": p} for p in text]
    else:
        deltas = [{field: p} for p in think] + [{"content": p} for p in text]

    frames = []
    if role_chunk:
        frames.append(chunk({"role": "assistant", "content": None if style == "llamacpp" else ""}))
    elif deltas:
        deltas[0] = {"role": "assistant", **deltas[0]}
    frames += [chunk(d) for d in deltas]

    usage_obj = default_usage(n_tokens) if usage is True else usage or None
    timings_obj = default_timings(predicted_n=n_tokens) if timings is True else timings or None
    if finish_reason is not None:
        more: dict[str, Any] = {}
        if usage_obj and not usage_chunk:
            more["usage"] = usage_obj
        if timings_obj:
            more["timings"] = timings_obj
        frames.append(chunk({}, finish_reason, **more))
    if usage_obj and usage_chunk:
        head = {"id": id, "object": "chat.completion.chunk", "created": created, "model": model}
        frames.append(sse({**head, **(extra or {}), "choices": [], "usage": usage_obj}))
    if done:
        frames.append(SSE_DONE)
    return frames


def llamacpp_sse(
    reasoning: Text, answer: Text, *, reasoning_format: str = "deepseek", **kw: Any
) -> list[str]:
    """llama-server b10434/b11434 as captured in real-servers.md §3.

    ``"deepseek"`` (also what ``deepseek-legacy`` really sends): ``reasoning_content`` then
    ``content``. ``"none"``: tags in ``content``; the server re-emits the prompt's ``<think>\\n``
    glued to the first token and streams ``</think>`` as ``"</"``, ``"think"``, ``">"``.
    Timings on the finish chunk by default.
    """
    kw.setdefault("style", "llamacpp")
    kw.setdefault("timings", True)
    if reasoning_format != "none":
        return chat_sse(reasoning, answer, field="reasoning_content", **kw)
    think = tokens(reasoning)
    head = ["<think>\n" + (think[0] if think else ""), *think[1:]]
    return chat_sse(
        head, answer, field=None, tags_open=False, tags_split=True, tag_newlines=True, **kw
    )


def vllm_sse(reasoning: Text, answer: Text, *, legacy: bool = False, **kw: Any) -> list[str]:
    """vLLM: ``delta.reasoning`` (``reasoning_content`` before PR #27752 with ``legacy=True``)."""
    kw.setdefault("role_chunk", False)
    kw.setdefault("model", "Qwen/Qwen3-8B")
    return chat_sse(reasoning, answer, field="reasoning_content" if legacy else "reasoning", **kw)


def lmstudio_sse(
    reasoning: Text, answer: Text, *, gpt_oss: bool = False, separate: bool = True, **kw: Any
) -> list[str]:
    """LM Studio: ``reasoning_content`` (0.3.9+), ``reasoning`` for gpt-oss (0.3.23+), or
    ``<think>`` left in content when the "separate reasoning_content" setting is off."""
    kw.setdefault("role_chunk", False)
    kw.setdefault("model", "openai/gpt-oss-20b" if gpt_oss else "deepseek-r1-distill-qwen-7b")
    if not separate:
        return chat_sse(reasoning, answer, field=None, **kw)
    return chat_sse(reasoning, answer, field="reasoning" if gpt_oss else "reasoning_content", **kw)


def deepseek_sse(reasoning: Text, answer: Text, *, usage: bool | dict = True) -> list[str]:
    """DeepSeek API, after the captured chunk of wire-formats §9: every delta carries ``role``,
    ``content`` ("" while reasoning) and ``reasoning_content`` (null while answering);
    ``usage: null`` until the last chunk."""
    think, text = tokens(reasoning), tokens(answer)

    def chunk(delta: dict, finish: str | None = None, use: dict | None = None) -> str:
        choice = {"delta": delta, "index": 0, "finish_reason": finish}
        return sse(
            {
                "choices": [choice],
                "created": 1_741_668_925,
                "id": "0217-test",
                "model": "deepseek-reasoner",
                "service_tier": "default",
                "object": "chat.completion.chunk",
                "usage": use,
            }
        )

    frames = [chunk({"content": "", "reasoning_content": p, "role": "assistant"}) for p in think]
    frames += [chunk({"content": p, "reasoning_content": None, "role": "assistant"}) for p in text]
    use = default_usage(len(think) + len(text), reasoning_tokens=len(think))
    use |= {"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": use["prompt_tokens"]}
    if isinstance(usage, dict):
        use = usage
    last = {"content": "", "reasoning_content": None, "role": "assistant"}
    frames.append(chunk(last, "stop", use if usage else None))
    return [*frames, SSE_DONE]


def openrouter_sse(
    reasoning: Text,
    answer: Text,
    *,
    provider: str = "Anthropic",
    processing: int = 1,
    usage: bool = True,
    fmt: str = "anthropic-claude-v1",
    model: str = "anthropic/claude-sonnet-4.5",
    signature: str | None = "EqQBCgIYAhIM-test",
    parts: list[Text] | None = None,
    detail_type: str = "reasoning.text",
    encrypted: str | None = None,
    reasoning_field: bool = True,
    error: dict | None = None,
    error_after: int = 2,
) -> list[str]:
    """OpenRouter: ``: OPENROUTER PROCESSING`` comments, ``delta.reasoning`` plus
    ``reasoning_details`` fragments, ``native_finish_reason``, usage with ``cost``.

    Default: one ``reasoning.text`` block (index 0) streamed a piece per chunk, then a text-less
    fragment with its ``signature`` (Anthropic upstreams). ``parts``: several blocks instead of
    ``reasoning``, at indices 0, 1, ... (``detail_type="reasoning.summary"`` puts the text in
    ``summary``, as for OpenAI upstreams, ``fmt="openai-responses-v1"``); ``encrypted``: a
    ``reasoning.encrypted`` detail with that ``data`` after each part but the last, taking the
    next index (the OpenAI dump of pydantic-ai #7214: summary 0, encrypted 1, summary 2).
    ``reasoning_field=False``: no ``delta.reasoning``, only the details. ``error``: after all
    reasoning and ``error_after`` answer pieces, a chunk with top-level ``error`` and
    ``finish_reason: "error"``, then the stream ends (no ``[DONE]``).
    """
    groups = [tokens(p) for p in parts] if parts is not None else [tokens(reasoning)]
    text = tokens(answer)
    n_think = sum(len(g) for g in groups)
    head = {"id": "gen-test", "provider": provider, "model": model}
    head |= {"object": "chat.completion.chunk", "created": 1_795_304_046}
    field = "summary" if detail_type == "reasoning.summary" else "text"

    def chunk(delta: dict, finish: str | None = None, **more: Any) -> str:
        choice = {
            "index": 0,
            "delta": delta,
            "finish_reason": finish,
            "native_finish_reason": finish,
        }
        return sse({**head, "choices": [choice], **more})

    def details(items: list[dict], text: str | None = None) -> str:
        delta: dict[str, Any] = {"role": "assistant", "content": ""}
        delta["reasoning"] = text if reasoning_field else None
        return chunk({**delta, "reasoning_details": items})

    frames = [keepalive("OPENROUTER PROCESSING")] * processing
    index = 0
    for n, group in enumerate(groups):
        for p in group:
            detail = {"type": detail_type, field: p, "format": fmt, "index": index}
            frames.append(details([detail], p))
        if signature is not None and detail_type == "reasoning.text":
            sig = {"type": detail_type, "signature": signature, "format": fmt, "index": index}
            frames.append(details([sig]))
        index += 1
        if encrypted is not None and n < len(groups) - 1:
            enc = {"type": "reasoning.encrypted", "data": encrypted, "id": f"rs_{index}"}
            frames.append(details([{**enc, "format": fmt, "index": index}]))
            index += 1
    answer_frames = [chunk({"role": "assistant", "content": p}) for p in text]
    if error is not None:
        frames += answer_frames[:error_after]
        frames.append(chunk({"role": "assistant", "content": ""}, "error", error=error))
        return frames
    frames += answer_frames
    more = {}
    if usage:
        more["usage"] = default_usage(n_think + len(text), reasoning_tokens=n_think) | {
            "cost": 0.00042
        }
    frames.append(chunk({"role": "assistant", "content": ""}, "stop", **more))
    return [*frames, SSE_DONE]


def openai_error_body(
    message: str,
    *,
    type: str = "invalid_request_error",
    param: str | None = None,
    code: str | int | None = None,
) -> dict:
    """``{"error": {"message", "type", "param", "code"}}`` (OpenAI, vLLM; llama.cpp: code=HTTP)."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def llamacpp_props(*, reasoning_format: str = "deepseek", preserve_reasoning: bool = False) -> dict:
    """``GET /props`` (abridged)."""
    caps = {
        "supports_tools": True,
        "supports_tool_calls": True,
        "supports_system_role": True,
        "supports_parallel_tool_calls": False,
        "supports_preserve_reasoning": preserve_reasoning,
    }
    return {
        "default_generation_settings": {"params": {"reasoning_format": reasoning_format}},
        "chat_template": "{%- for message in messages %}...",
        "chat_template_caps": caps,
        "build_info": "b11434-unknown",
    }


def openai_models(*ids: str, owned_by: str = "llamacpp") -> dict:
    """``GET /v1/models``."""
    data = [
        {"id": i, "object": "model", "created": 1_795_304_046, "owned_by": owned_by} for i in ids
    ]
    return {"object": "list", "data": data}


# -- Anthropic Messages (§6) -----------------------------------------------------------------------


def anthropic_block(index: int, start: dict, deltas: list[dict]) -> list[str]:
    """One content block: ``content_block_start``, its ``content_block_delta``s, ``_stop``."""
    frames = [
        sse(
            {"type": "content_block_start", "index": index, "content_block": start},
            "content_block_start",
        )
    ]
    for d in deltas:
        frames.append(
            sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta")
        )
    frames.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return frames


def anthropic_thinking_block(index: int, reasoning: Text, signature: str) -> list[str]:
    """A thinking block: ``thinking_delta``s, then one ``signature_delta`` just before the stop."""
    deltas = [{"type": "thinking_delta", "thinking": p} for p in tokens(reasoning)]
    deltas.append({"type": "signature_delta", "signature": signature})
    return anthropic_block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)


def anthropic_sse(
    reasoning: Text,
    answer: Text,
    *,
    signature: str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    redacted: str | None = None,
    stop_reason: str = "end_turn",
    ping: bool = True,
    model: str = "claude-sonnet-4-5",
    input_tokens: int = 25,
    cache_read_input_tokens: int | None = None,
    thinking_tokens: int | None = None,
    stop: bool = True,
) -> list[str]:
    """Messages stream: thinking block (deltas + signature_delta), optional redacted_thinking
    block (``redacted`` = its opaque data), text block, message_delta, message_stop.

    ``message_start`` carries ``input_tokens`` (+ the cache fields, 0 unless given) and the
    placeholder ``output_tokens: 1``; ``message_delta`` the cumulative ``output_tokens`` (one per
    piece) and, with ``thinking_tokens``, ``output_tokens_details.thinking_tokens``.
    ``stop=False`` leaves out ``message_stop``.
    """
    think, text = tokens(reasoning), tokens(answer)
    start_usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cache_read_input_tokens or 0,
        "output_tokens": 1,
    }
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    frames = [sse({"type": "message_start", "message": message}, "message_start")]
    if ping:
        frames.append(sse({"type": "ping"}, "ping"))

    index = 0
    if think:
        frames += anthropic_thinking_block(index, think, signature)
        index += 1
    if redacted is not None:
        frames += anthropic_block(index, {"type": "redacted_thinking", "data": redacted}, [])
        index += 1
    frames += anthropic_block(
        index, {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in text]
    )
    usage: dict[str, Any] = {"output_tokens": len(think) + len(text)}
    if thinking_tokens is not None:
        usage["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
    frames.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": usage,
            },
            "message_delta",
        )
    )
    if stop:
        frames.append(sse({"type": "message_stop"}, "message_stop"))
    return frames


def anthropic_error_event(type: str = "overloaded_error", message: str = "Overloaded") -> str:
    """In-band ``event: error`` after HTTP 200."""
    return sse({"type": "error", "error": {"type": type, "message": message}}, "error")


def anthropic_error_body(message: str, *, type: str = "invalid_request_error") -> dict:
    """HTTP error body: ``{"type":"error","error":{"type","message"},"request_id"}``."""
    return {"type": "error", "error": {"type": type, "message": message}, "request_id": "req_1"}


# -- OpenAI Responses (§5b) ------------------------------------------------------------------------


def responses_sse(
    reasoning: Text,
    answer: Text,
    *,
    raw: bool = False,
    encrypted: str | None = None,
    status: str = "completed",
    parts: list[Text] | None = None,
    separate_items: bool = False,
    deltas: bool = True,
    error: dict | None = None,
    incomplete_reason: str = "max_output_tokens",
    model: str = "gpt-5",
    reasoning_tokens: int | None = None,
) -> list[str]:
    """Responses stream: reasoning summary deltas (``raw=True``: ``response.reasoning_text.delta``,
    as gpt-oss servers send), then ``response.output_text.delta``, then the terminal event
    (``response.completed`` / ``.incomplete`` / ``.failed``) with usage.

    ``parts``: several summary parts (``summary_index`` 0, 1, ...) in one reasoning item instead
    of ``reasoning``; ``separate_items=True`` puts each part in its own reasoning item (``rs_1``,
    ``rs_2``... at ``output_index`` 0, 1...). ``deltas=False``: no text deltas at all, the texts
    arrive only in the ``*.done`` / ``output_item.done`` events (some proxies). ``status``
    ``"failed"`` carries ``response.error`` (``error``, default a ``server_error``);
    ``"incomplete"`` carries ``incomplete_details.reason``. ``reasoning_tokens`` overrides the
    count in usage (default: one per reasoning piece).
    """
    groups = [tokens(p) for p in parts] if parts is not None else [tokens(reasoning)]
    groups = [g for g in groups if g]
    text = tokens(answer)
    n_think = sum(len(g) for g in groups)
    frames: list[str] = []
    seq = 0

    def emit(type: str, **body: Any) -> None:
        nonlocal seq
        frames.append(sse({"type": type, **body, "sequence_number": seq}, type))
        seq += 1

    resp = {
        "id": "resp_1",
        "object": "response",
        "status": "in_progress",
        "model": model,
        "output": [],
    }
    emit("response.created", response=resp)
    emit("response.in_progress", response=resp)

    # reasoning items: one with every part, or one per part
    items = (
        [[(i, g) for i, g in enumerate(groups)]]
        if not separate_items
        else [[(0, g)] for g in groups]
    )
    done_items: list[dict] = []
    for out_index, item_parts in enumerate(items):
        rs_id = f"rs_{out_index + 1}"
        rs_item: dict[str, Any] = {"type": "reasoning", "id": rs_id, "summary": []}
        if encrypted is not None:
            rs_item["encrypted_content"] = encrypted
        emit("response.output_item.added", output_index=out_index, item=rs_item)
        if raw:
            full = "".join(p for _i, g in item_parts for p in g)
            where = {"item_id": rs_id, "output_index": out_index, "content_index": 0}
            for p in [p for _i, g in item_parts for p in g] if deltas else []:
                emit("response.reasoning_text.delta", **where, delta=p)
            emit("response.reasoning_text.done", **where, text=full)
            done_item = {**rs_item, "content": [{"type": "reasoning_text", "text": full}]}
        else:
            summary = []
            for summary_index, g in item_parts:
                full = "".join(g)
                part = {"type": "summary_text", "text": ""}
                where = {
                    "item_id": rs_id,
                    "output_index": out_index,
                    "summary_index": summary_index,
                }
                emit("response.reasoning_summary_part.added", **where, part=part)
                for p in g if deltas else []:
                    emit("response.reasoning_summary_text.delta", **where, delta=p)
                emit("response.reasoning_summary_text.done", **where, text=full)
                emit("response.reasoning_summary_part.done", **where, part={**part, "text": full})
                summary.append({"type": "summary_text", "text": full})
            done_item = {**rs_item, "summary": summary}
        emit("response.output_item.done", output_index=out_index, item=done_item)
        done_items.append(done_item)

    msg_index = len(items)
    msg = {
        "type": "message",
        "id": "msg_1",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    emit("response.output_item.added", output_index=msg_index, item=msg)
    where = {"item_id": "msg_1", "output_index": msg_index, "content_index": 0}
    emit(
        "response.content_part.added",
        **where,
        part={"type": "output_text", "text": "", "annotations": []},
    )
    for p in text if deltas else []:
        emit("response.output_text.delta", **where, delta=p, logprobs=[])
    answer_text = "".join(text)
    emit("response.output_text.done", **where, text=answer_text, logprobs=[])
    out_part = {"type": "output_text", "text": answer_text, "annotations": []}
    emit("response.content_part.done", **where, part=out_part)
    emit(
        "response.output_item.done",
        output_index=msg_index,
        item={**msg, "status": "completed", "content": [out_part]},
    )
    n_reasoning = n_think if reasoning_tokens is None else reasoning_tokens
    usage = {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n_reasoning + len(text),
        "output_tokens_details": {"reasoning_tokens": n_reasoning},
        "total_tokens": 20 + n_reasoning + len(text),
    }
    final: dict[str, Any] = {
        **resp,
        "status": status,
        "output": [*done_items, {**msg, "status": "completed", "content": [out_part]}],
        "usage": usage,
    }
    if status == "failed":
        final["error"] = error or {"code": "server_error", "message": "The model failed."}
    if status == "incomplete":
        final["incomplete_details"] = {"reason": incomplete_reason}
    emit(f"response.{status}", response=final)
    return frames


# -- Gemini (§7) -----------------------------------------------------------------------------------


def gemini_sse(
    reasoning: Text,
    answer: Text,
    *,
    signature: str | None = "CiQBVKhc7test",
    signature_on: str = "first",
    use_crlf: bool = True,
    finish_reason: str | None = "STOP",
    model: str = "gemini-2.5-flash",
    prompt_tokens: int = 12,
) -> list[str]:
    """``streamGenerateContent?alt=sse``: ``thought: true`` parts, then answer parts, cumulative
    ``usageMetadata`` on every chunk, no ``[DONE]``.

    ``signature_on``: ``"first"`` — ``thoughtSignature`` on the first answer part; ``"final"`` —
    on an extra last part with empty text (how streaming delivers it, wire-formats §7);
    ``"thought"`` — on the first thought part. ``finish_reason=None`` leaves it out (a cut
    stream). ``use_crlf`` (default): CRLF line endings, as Google's front end is reported to send.
    """
    think, text = tokens(reasoning), tokens(answer)
    frames = []

    def chunk(part: dict, n_answer: int, finish: str | None = None) -> str:
        cand: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if finish:
            cand["finishReason"] = finish
        meta = {"promptTokenCount": prompt_tokens, "thoughtsTokenCount": len(think)}
        if n_answer:
            meta["candidatesTokenCount"] = n_answer
        meta["totalTokenCount"] = prompt_tokens + len(think) + n_answer
        return sse(
            {
                "candidates": [cand],
                "usageMetadata": meta,
                "modelVersion": model,
                "responseId": "resp-test",
            }
        )

    final = signature and signature_on == "final"
    for i, p in enumerate(think):
        part: dict[str, Any] = {"text": p, "thought": True}
        if i == 0 and signature and signature_on == "thought":
            part["thoughtSignature"] = signature
        frames.append(chunk(part, 0))
    for i, p in enumerate(text):
        part = {"text": p}
        if i == 0 and signature and signature_on == "first":
            part["thoughtSignature"] = signature
        last = i == len(text) - 1 and not final
        frames.append(chunk(part, i + 1, finish_reason if last else None))
    if final:
        frames.append(chunk({"text": "", "thoughtSignature": signature}, len(text), finish_reason))
    return crlf(frames) if use_crlf else frames


def gemini_error_body(message: str, *, code: int = 400, status: str = "INVALID_ARGUMENT") -> dict:
    return {"error": {"code": code, "message": message, "status": status}}


# -- volume ----------------------------------------------------------------------------------------


def many_chunks_texts(n: int) -> tuple[str, str]:
    """The (reasoning, answer) texts that :func:`many_chunks` streams."""
    half = n // 2
    return "".join(f" r{i}" for i in range(half)), "".join(f" a{i}" for i in range(n - half))


def many_chunks(n: int, kind: str = "chat", **kw: Any) -> list[str]:
    """A stream with ``n`` content-carrying frames (half reasoning, half answer), e.g. 25_000,
    for benchmarks and traffic tests. kind: ``"chat"`` (SSE, reasoning_content), ``"ollama"``,
    ``"llamacpp"`` or ``"vllm"``. Framing frames (role, finish, [DONE]) come on top."""
    half = n // 2
    think = [f" r{i}" for i in range(half)]
    text = [f" a{i}" for i in range(n - half)]
    builders = {"chat": chat_sse, "ollama": ollama_chat, "llamacpp": llamacpp_sse, "vllm": vllm_sse}
    return builders[kind](think, text, **kw)
