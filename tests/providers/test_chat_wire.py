"""Chat Completions SSE over a real socket, through the public API (``think`` / ``astream``).

Every shape of wire-formats §2–4 (llama.cpp, vLLM, LM Studio, inline tags, harmony) is served by
``wire_server`` with random chunk boundaries (several seeds, so JSON, UTF-8 characters and tags
get cut), and the trace must come back exact: reasoning and answer apart, no tag left, usage,
status and finish reason. The request bodies are held to spec/presets.md.
"""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from provider_harness import Provider, check_length_limit, n_tokens, usage
from provider_harness import check_events as check_tagless
from wire_server import Reply

from reasoning_nb import (
    ProviderError,
    ReasoningDelta,
    Reclassify,
    TextDelta,
    astream,
    think,
)

PATH = "/v1/chat/completions"
PROMPT = "What is 17 × 23?"
REASONING = "Let me see: 17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391. Café ☕, “done”."
ANSWER = "The answer is **391** (and 2 < 3 still holds) 😀."
TAGS = ("<think>", "</think>", "<|", "|>", "</", "[THINK]")

# (seed, max_piece): where the HTTP chunks are cut; small pieces cut inside characters and tags.
CHUNKINGS = [(1, 48), (2, 29), (3, 7)]


pytestmark = pytest.mark.usefixtures("no_provider_env")
LLAMACPP = Provider("llamacpp:x", PATH, prompt=PROMPT)
run, stream = LLAMACPP.run, LLAMACPP.events


def check_events(events: list, reasoning: str, answer: str, *, single_block: bool = True):
    return check_tagless(events, reasoning, answer, tags=TAGS, single_block=single_block)


# -- shapes ----------------------------------------------------------------------------------------

N = n_tokens(REASONING, ANSWER)
DETAILED_USAGE = wf.default_usage(N, prompt_tokens=21, reasoning_tokens=n_tokens(REASONING))
TIMINGS = wf.default_timings(prompt_n=11, predicted_n=N) | {"cache_n": 4}

# id -> (model, frames, expected usage, single reasoning block before the answer)
SHAPES = {
    # llama.cpp --reasoning-format deepseek (and what deepseek-legacy really sends): timings only,
    # so usage comes from them (prompt_n + cache_n, predicted_n).
    "llamacpp-deepseek": (
        "llamacpp:qwen3-8b",
        wf.llamacpp_sse(REASONING, ANSWER, timings=TIMINGS),
        usage(15, N),
        True,
    ),
    # --reasoning-format none: "<think>\n" re-emitted at the start, "</think>" split in three.
    "llamacpp-none": (
        "llamacpp:qwen3-8b",
        wf.llamacpp_sse(REASONING, ANSWER, reasoning_format="none", timings=TIMINGS),
        usage(15, N),
        True,
    ),
    # the documented deepseek-legacy shape: reasoning both in the field and tagged in content.
    "llamacpp-deepseek-legacy": (
        "llamacpp:qwen3-8b",
        wf.chat_sse(REASONING, ANSWER, both=True, style="llamacpp", timings=TIMINGS),
        usage(15, N),
        True,
    ),
    # usage and timings on the same chunk: usage (what the server counted) wins.
    "llamacpp-usage-and-timings": (
        "llamacpp:qwen3-8b",
        wf.llamacpp_sse(REASONING, ANSWER, usage=DETAILED_USAGE, timings=TIMINGS),
        usage(21, N, n_tokens(REASONING)),
        True,
    ),
    "vllm-reasoning": (
        "vllm:Qwen/Qwen3-8B",
        wf.vllm_sse(REASONING, ANSWER, usage=DETAILED_USAGE),
        usage(21, N, n_tokens(REASONING)),
        True,
    ),
    # vLLM before PR #27752, usage on its own `choices: []` chunk (OpenAI include_usage).
    "vllm-legacy-reasoning_content": (
        "vllm:Qwen/Qwen3-8B",
        wf.vllm_sse(REASONING, ANSWER, legacy=True, usage=DETAILED_USAGE, usage_chunk=True),
        usage(21, N, n_tokens(REASONING)),
        True,
    ),
    "lmstudio-reasoning_content": (
        "lmstudio:deepseek-r1-distill-qwen-7b",
        wf.lmstudio_sse(REASONING, ANSWER, usage=True),
        usage(20, N),
        True,
    ),
    "lmstudio-gpt-oss-reasoning": (
        "lmstudio:openai/gpt-oss-20b",
        wf.lmstudio_sse(REASONING, ANSWER, gpt_oss=True, usage=DETAILED_USAGE),
        usage(21, N, n_tokens(REASONING)),
        True,
    ),
    # the "separate reasoning_content" setting off: <think> stays in content.
    "lmstudio-inline-tags": (
        "lmstudio:deepseek-r1-distill-qwen-7b",
        wf.lmstudio_sse(REASONING, ANSWER, separate=False, tag_newlines=True),
        usage(),
        True,
    ),
    # a template that pre-opened <think>: only the closer is generated.
    "forced-open": (
        "openai-compatible:qwq-32b",
        wf.chat_sse(REASONING, ANSWER, field=None, tags_open=False, tags_split=True),
        usage(),
        False,
    ),
    "gpt-oss-harmony-inline": (
        "openai-compatible:gpt-oss-20b",
        wf.chat_sse(REASONING, ANSWER, field=None, harmony=True, usage=True),
        usage(20, N),
        True,
    ),
}


@pytest.mark.parametrize("seed,max_piece", CHUNKINGS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_shapes_give_the_exact_trace(wire_server, shape, seed, max_piece):
    model, frames, expected_usage, single_block = SHAPES[shape]
    reply = Reply.sse(frames, chunking="random", seed=seed, max_piece=max_piece)
    wire_server.route("POST", PATH, reply)
    events = stream(wire_server, model)
    trace = check_events(events, REASONING, ANSWER, single_block=single_block)
    assert trace.usage == expected_usage
    assert trace.status == "complete"
    assert trace.finish_reason == "stop"
    assert trace.warnings == []
    assert trace.model == model and trace.provider == model.split(":")[0]
    if not single_block:  # the live view guessed "answer", then learned it was reasoning
        assert Reclassify in [type(e) for e in events]
    assert len(wire_server.requests_to(PATH)) == 1


def test_deepseek_legacy_counts_reasoning_once_and_keeps_the_answer_clean(wire_server):
    frames = wf.chat_sse(REASONING, ANSWER, both=True, style="llamacpp", tags_split=True)
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=11, max_piece=5))
    events = stream(wire_server, "llamacpp:x")
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == REASONING  # not twice
    check_events(events, REASONING, ANSWER)


def test_openrouter_and_deepseek_hosted_shapes(wire_server):
    """Hosted Chat Completions dialects: OpenRouter processing comments + reasoning_details,
    DeepSeek's content "" / reasoning_content null pairs."""
    wire_server.route(
        "POST", PATH, Reply.sse(wf.openrouter_sse(REASONING, ANSWER), chunking="random", seed=5)
    )
    trace = run(wire_server, "openrouter:anthropic/claude-sonnet-4.5", api_key="sk-or-test")
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.usage["reasoning_tokens"] == n_tokens(REASONING)

    wire_server.route(
        "POST", PATH, Reply.sse(wf.deepseek_sse(REASONING, ANSWER), chunking="random", seed=6)
    )
    trace = run(wire_server, "deepseek:deepseek-reasoner", api_key="sk-ds")
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.usage == usage(20, N, n_tokens(REASONING))


@pytest.mark.parametrize("seed", [1, 2])
def test_length_limit_is_truncated(wire_server, seed):
    frames = wf.llamacpp_sse(REASONING, ANSWER, finish_reason="length")
    check_length_limit(LLAMACPP, wire_server, frames, seed, (REASONING, ANSWER))


def test_reasoning_only_stream_left_open(wire_server):
    """A 135M model that never closes </think> (real-servers.md): all reasoning, no answer."""
    frames = wf.llamacpp_sse(REASONING, "", reasoning_format="none")
    frames = [f for f in frames if '"</"' not in f and '"think"' not in f and '">"' not in f]
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=3))
    trace = run(wire_server)
    assert trace.reasoning.startswith("Let me see") and "<think>" not in trace.reasoning
    assert trace.answer == ""
    assert any("never closed" in w for w in trace.warnings)


# -- request bodies (spec/presets.md) --------------------------------------------------------------

LLAMACPP_OFF = {"chat_template_kwargs": {"enable_thinking": False}, "reasoning_effort": "none"}
# (provider, preset, budget) -> (reasoning fields sent, a warning is expected)
BODIES = {
    ("llamacpp", "auto", None): ({}, False),
    ("llamacpp", "off", None): (LLAMACPP_OFF, False),
    ("llamacpp", "low", None): ({"reasoning_effort": "low"}, False),
    ("llamacpp", "medium", None): ({"reasoning_effort": "medium"}, False),
    ("llamacpp", "high", None): ({"reasoning_effort": "high"}, False),
    ("llamacpp", "max", None): ({"reasoning_effort": "high"}, True),
    ("llamacpp", "auto", 5): ({"thinking_budget_tokens": 5}, False),
    ("llamacpp", "high", 12000): ({"thinking_budget_tokens": 12000}, False),
    ("vllm", "auto", None): ({}, False),
    ("vllm", "off", None): ({"chat_template_kwargs": {"enable_thinking": False}}, False),
    ("vllm", "low", None): ({"reasoning_effort": "low"}, False),
    ("vllm", "medium", None): ({"reasoning_effort": "medium"}, False),
    ("vllm", "high", None): ({"reasoning_effort": "high"}, False),
    ("vllm", "max", None): ({"reasoning_effort": "high"}, True),
    ("vllm", "auto", 3000): ({"thinking_token_budget": 3000}, False),
    ("lmstudio", "auto", None): ({}, False),
    ("lmstudio", "off", None): ({"reasoning_effort": "none"}, False),
    ("lmstudio", "low", None): ({"reasoning_effort": "low"}, False),
    ("lmstudio", "medium", None): ({"reasoning_effort": "medium"}, False),
    ("lmstudio", "high", None): ({"reasoning_effort": "high"}, False),
    ("lmstudio", "max", None): ({"reasoning_effort": "high"}, True),
    ("lmstudio", "auto", 3000): ({"reasoning_effort": "medium"}, True),  # bucketed
    ("lmstudio", "auto", 20000): ({"reasoning_effort": "high"}, True),  # max -> high
    ("openai-compatible", "off", None): (LLAMACPP_OFF, False),
    ("openai-compatible", "high", None): ({"reasoning_effort": "high"}, False),
    ("openai-compatible", "auto", 9000): ({"reasoning_effort": "high"}, True),  # no llama.cpp field
    ("openrouter", "off", None): ({"reasoning": {"effort": "none"}}, False),
    ("openrouter", "max", None): ({"reasoning": {"effort": "xhigh"}}, False),
    ("openrouter", "auto", 3000): ({"reasoning": {"max_tokens": 3000}}, False),
    ("deepseek", "off", None): ({"thinking": {"type": "disabled"}}, False),
    ("deepseek", "low", None): (
        {"thinking": {"type": "enabled"}, "reasoning_effort": "low"},
        False,
    ),
    ("deepseek", "medium", None): (  # DeepSeek has no medium: high, said
        {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
        True,
    ),
    ("deepseek", "max", None): (
        {"thinking": {"type": "enabled"}, "reasoning_effort": "max"},
        False,
    ),
}


@pytest.mark.parametrize("provider,preset,budget", list(BODIES), ids=lambda v: str(v))
def test_request_body_matches_the_preset_table(wire_server, provider, preset, budget):
    fields, warned = BODIES[(provider, preset, budget)]
    wire_server.route("POST", PATH, Reply.sse(wf.chat_sse(REASONING, ANSWER), chunking="random"))
    key = {"api_key": "sk-test"} if provider in ("openrouter", "deepseek") else {}
    trace = run(wire_server, f"{provider}:some-model", preset=preset, budget_tokens=budget, **key)
    body = wire_server.last.json
    sent = {k: body[k] for k in body if k not in ("model", "messages", "stream", "stream_options")}
    assert sent == fields
    assert trace.request == fields  # what was actually sent, in the trace
    assert body["model"] == "some-model"
    assert body["messages"] == [{"role": "user", "content": PROMPT}]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert bool(trace.warnings) == warned
    assert trace.preset == preset and trace.budget_tokens == budget
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)  # reasoning shown, any preset


def test_gpt_oss_cannot_be_switched_off_on_vllm(wire_server):
    wire_server.route("POST", PATH, Reply.sse(wf.vllm_sse(REASONING, ANSWER)))
    trace = run(wire_server, "vllm:openai/gpt-oss-20b", preset="off")
    assert wire_server.last.json["reasoning_effort"] == "low"
    assert "chat_template_kwargs" not in wire_server.last.json
    assert trace.request == {"reasoning_effort": "low"}
    assert any("cannot switch reasoning off" in w for w in trace.warnings)


def test_system_max_tokens_temperature_are_sent(wire_server):
    wire_server.route("POST", PATH, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER)))
    url = wire_server.url + "/v1/"  # trailing slash and explicit /v1 both work
    run(wire_server, system="Be brief.", max_tokens=64, temperature=0.2, base_url=url)
    body = wire_server.last.json
    assert wire_server.last.path == PATH
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": PROMPT},
    ]
    assert (body["max_tokens"], body["temperature"]) == (64, 0.2)


def test_server_rejecting_the_reasoning_field_is_retried_once_without_it(wire_server):
    rejected = Reply.json(wf.openai_error_body("Unknown field reasoning_effort"), 400)
    ok = Reply.sse(wf.lmstudio_sse(REASONING, ANSWER), chunking="random", seed=2)
    wire_server.route("POST", PATH, rejected, ok)
    trace = run(wire_server, "lmstudio:x", preset="high")
    first, second = wire_server.bodies(PATH)
    assert first["reasoning_effort"] == "high" and "reasoning_effort" not in second
    assert trace.request == {}
    assert any("reasoning_effort" in w for w in trace.warnings)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)


# -- keys ------------------------------------------------------------------------------------------

SECRET = "sk-very-secret-0123456789"


def test_no_authorization_header_without_a_key(wire_server):
    wire_server.route("POST", PATH, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER)))
    run(wire_server)
    assert "authorization" not in wire_server.last.headers


def test_key_is_sent_as_bearer_and_never_saved(wire_server):
    wire_server.route("POST", PATH, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER)))
    trace = run(wire_server, api_key=SECRET)
    assert wire_server.last.headers["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(trace.to_dict())
    assert SECRET not in repr(trace)


def test_key_from_the_provider_env_var(wire_server, monkeypatch):
    monkeypatch.setenv("LLAMACPP_API_KEY", SECRET)
    wire_server.route("POST", PATH, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER)))
    trace = run(wire_server)
    assert wire_server.last.headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(trace.to_dict())


def test_refused_key_names_the_env_var_and_hides_the_key(wire_server):
    body = wf.openai_error_body(f"Invalid API key {SECRET}", type="authentication_error")
    wire_server.route("POST", PATH, Reply.json(body, 401))
    with pytest.raises(ProviderError) as info:
        run(wire_server, api_key=SECRET)
    err = info.value
    assert err.status == 401
    assert "LLAMACPP_API_KEY" in err.message
    assert SECRET not in str(err) and SECRET not in err.message
    assert err.trace is None


def test_key_echoed_in_an_in_band_error_is_hidden(wire_server):
    frames = [*wf.llamacpp_sse(REASONING, ANSWER)[:4], wf.sse_error(f"bad token {SECRET}")]
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=9))
    with pytest.raises(ProviderError) as info:
        run(wire_server, api_key=SECRET)
    err = info.value
    assert "bad token" in err.message
    assert SECRET not in str(err) and SECRET not in err.message
    assert err.trace is not None and SECRET not in json.dumps(err.trace.to_dict())


# -- astream ---------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_astream_deltas_add_up_to_the_trace(wire_server):
    frames = wf.llamacpp_sse(REASONING, ANSWER, reasoning_format="none")
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=8, max_piece=4))
    events = [e async for e in astream(PROMPT, model="llamacpp:x", base_url=wire_server.url)]
    trace = check_events(events, REASONING, ANSWER)
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    answer = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert reasoning.strip() == trace.reasoning
    assert answer.strip() == trace.answer
    assert trace.timing["first_token_ms"] is not None
    assert trace.timing["total_ms"] >= trace.timing["first_token_ms"]


def test_an_answer_that_starts_indented_keeps_its_indentation(wire_server):
    code = "    x = 1\n    y = 2"
    wire_server.route(
        "POST",
        "/v1/chat/completions",
        Reply.sse(wf.chat_sse("Plan.", "\n\n" + code), chunking="random", seed=7),
    )
    trace = think("Code?", model="llamacpp:m", base_url=wire_server.url)
    assert trace.answer == code


def test_reasoning_only_in_reasoning_details_is_shown(wire_server):
    """A gateway that copies OpenRouter's shape sends the reasoning only as ``reasoning.text``
    items, with no ``reasoning`` field; it is the run's reasoning, blocks apart."""

    def delta(**d):
        return wf.sse({"choices": [{"index": 0, "delta": d, "finish_reason": None}]})

    def details(text, index):
        return delta(reasoning_details=[{"type": "reasoning.text", "text": text, "index": index}])

    frames = [
        delta(role="assistant"),
        details("First I ", 0),
        details("add.", 0),
        details("Then check.", 1),
        delta(reasoning_details=[{"type": "reasoning.encrypted", "data": "opaque", "index": 2}]),
        delta(content="42"),
        wf.sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        "data: [DONE]\n\n",
    ]
    wire_server.route("POST", "/v1/chat/completions", Reply.sse(frames, chunking="random", seed=5))
    trace = think("17+25?", model="openai-compatible:m", base_url=wire_server.url)
    assert trace.reasoning == "First I add.\n\nThen check."
    assert trace.answer == "42" and "opaque" not in trace.reasoning
    assert trace.provider_state == {}  # the details go back in the history for OpenRouter only


@pytest.mark.parametrize("seed", range(5))
def test_tags_quoted_after_reasoning_content_stay_in_the_answer(wire_server, seed):
    answer = "Use <think>…</think> for notes; a lone </think> ends them."
    frames = wf.chat_sse("Plan it.", answer)
    route = "/v1/chat/completions"
    wire_server.route("POST", route, Reply.sse(frames, chunking="random", seed=seed))
    trace = think("Tags?", model="llamacpp:m", base_url=wire_server.url)
    assert (trace.reasoning, trace.answer) == ("Plan it.", answer)
