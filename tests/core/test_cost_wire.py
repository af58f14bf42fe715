"""Cost over a real socket: per provider, the run's ``trace.cost`` equals the provider's bill
computed by hand from the fixture's usage numbers and the published rates, reasoning billed once.

Each provider reports reasoning its own way (wire-formats.md): OpenAI, OpenRouter and DeepSeek
count it inside ``completion_tokens`` / ``output_tokens``, Anthropic inside ``output_tokens``,
Gemini apart (``thoughtsTokenCount`` next to ``candidatesTokenCount``, both billed). The
expected totals below are written from the wire fields, not from the trace, so adding the
reasoning to an output that already holds it (the 2.67x bug) or dropping Gemini's thoughts
fails here.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from decimal import Decimal

import pytest
import wire_fixtures as wf
from wire_server import Reply

from reasoning_nb import think
from reasoning_nb.core import cost
from reasoning_nb.core.text import parse_time
from reasoning_nb.providers.catalog import PROVIDERS

PROMPT = "What is 17 × 23?"
REASONING = "Let me see: 17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391. Café ☕, “done”."
ANSWER = "The answer is **391** 😀."
KEY = "sk-test-0123456789"


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    from reasoning_nb.store import db as store

    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))
    monkeypatch.delenv("REASONING_NB_LOG", raising=False)
    for name in ("OPENAI_BASE_URL", "REASONING_NB_MODEL"):
        monkeypatch.delenv(name, raising=False)


def n(text: str) -> int:
    return len(wf.tokens(text))


def rates(provider: str, model: str, started_at: str) -> tuple[Decimal, Decimal]:
    """The published $/Mtok input and output rates in force when the run started."""
    from genai_prices import Usage, calc_price

    when = parse_time(started_at)
    price = calc_price(
        Usage(input_tokens=1), model, provider_id=provider, genai_request_timestamp=when
    ).model_price

    def base(rate):  # a tiered rate's first tier: these fixtures are far below 200k tokens
        return getattr(rate, "base", rate)

    return base(price.input_mtok), base(price.output_mtok)


def bill(trace, provider: str, model: str, inp: int, out: int) -> float:
    rin, rout = rates(provider, model, trace.started_at)
    return float((inp * rin + out * rout) / 1_000_000)


def run(server, path: str, frames, model: str):
    server.route("POST", path, Reply.sse(frames, chunking="random", seed=3, max_piece=40))
    return think(PROMPT, model=model, base_url=server.url, api_key=KEY)


def check(trace, expected: float, out: int) -> None:
    assert trace.cost is not None
    assert trace.cost["usd"] == pytest.approx(expected, rel=1e-9)
    assert trace.cost["estimate"] is True
    assert trace.cost["output_tokens"] == out
    source, as_of = cost.source()  # (a date where the installed release's is listed)
    assert (trace.cost["source"], trace.cost["prices_as_of"]) == (source, as_of)
    assert source.startswith("genai-prices ")
    assert trace.to_dict()["cost"] == trace.cost  # saved with the trace


def test_openai_responses_reasoning_inside_output_tokens(wire_server):
    frames = wf.responses_sse(REASONING, ANSWER, reasoning_tokens=40)
    trace = run(wire_server, "/v1/responses", frames, "openai:gpt-5.1")
    # wire: input_tokens 20; output_tokens = 40 reasoning + the answer (reasoning inside)
    out = 40 + n(ANSWER)
    assert trace.usage["reasoning_tokens"] == 40
    check(trace, bill(trace, "openai", "gpt-5.1", 20, out), out)


def test_openai_chat_reasoning_inside_completion_tokens(wire_server):
    usage = wf.default_usage(completion_tokens=90, prompt_tokens=30, reasoning_tokens=70)
    frames = wf.chat_sse([], ANSWER, usage=usage, usage_chunk=True)
    trace = run(wire_server, "/v1/chat/completions", frames, "openai-chat:o3")
    assert trace.usage["reasoning_tokens"] == 70
    # billed: 30 in, 90 out; the 70 reasoning tokens are among the 90, not on top
    check(trace, bill(trace, "openai", "o3", 30, 90), 90)
    assert trace.cost["usd"] < bill(trace, "openai", "o3", 30, 90 + 70)


def test_anthropic_thinking_inside_output_tokens(wire_server):
    frames = wf.anthropic_sse(REASONING, ANSWER, input_tokens=25, thinking_tokens=n(REASONING))
    trace = run(wire_server, "/v1/messages", frames, "anthropic:claude-sonnet-4-5")
    out = n(REASONING) + n(ANSWER)  # message_delta output_tokens: thinking and text
    check(trace, bill(trace, "anthropic", "claude-sonnet-4-5", 25, out), out)


def test_gemini_thoughts_billed_apart_from_candidates(wire_server):
    model = "gemini-2.5-flash"
    frames = wf.gemini_sse(REASONING, ANSWER, prompt_tokens=12)
    trace = run(
        wire_server, f"/v1beta/models/{model}:streamGenerateContent", frames, f"gemini:{model}"
    )
    # wire: candidatesTokenCount (answer) + thoughtsTokenCount (reasoning), both at output rate
    out = n(ANSWER) + n(REASONING)
    check(trace, bill(trace, "google", model, 12, out), out)


def test_openrouter_reasoning_inside_completion_tokens(wire_server):
    model = "anthropic/claude-sonnet-4.5"
    trace = run(
        wire_server,
        "/v1/chat/completions",
        wf.openrouter_sse(REASONING, ANSWER),
        f"openrouter:{model}",
    )
    out = n(REASONING) + n(ANSWER)  # completion_tokens, reasoning_tokens inside
    assert trace.usage["reasoning_tokens"] == n(REASONING)
    check(trace, bill(trace, "openrouter", model, 20, out), out)


def test_deepseek_reasoning_inside_completion_tokens(wire_server):
    frames = wf.deepseek_sse(REASONING, ANSWER)
    trace = run(wire_server, "/v1/chat/completions", frames, "deepseek:deepseek-v4-pro")
    out = n(REASONING) + n(ANSWER)
    check(trace, bill(trace, "deepseek", "deepseek-v4-pro", 20, out), out)


@pytest.mark.parametrize(
    ("model", "path", "frames"),
    [
        ("ollama:qwen3", "/api/chat", lambda: wf.ollama_chat(REASONING, ANSWER)),
        ("llamacpp:x", "/v1/chat/completions", lambda: wf.llamacpp_sse(REASONING, ANSWER)),
        (
            "vllm:openai/gpt-oss-20b",
            "/v1/chat/completions",
            lambda: wf.vllm_sse(REASONING, ANSWER, usage=True),
        ),
    ],
)
def test_local_models_have_no_cost_not_zero(wire_server, model, path, frames):
    reply = Reply.ndjson if path == "/api/chat" else Reply.sse
    wire_server.route("POST", path, reply(frames()))
    base = wire_server.url if path == "/api/chat" else wire_server.url + "/v1"
    trace = think(PROMPT, model=model, base_url=base)
    assert trace.answer and trace.usage["output_tokens"]
    assert trace.cost is None and "cost" not in trace.to_dict()
    assert "$" not in trace._repr_markdown_()


def test_unknown_model_has_no_cost(wire_server):
    frames = wf.responses_sse(REASONING, ANSWER)
    trace = run(wire_server, "/v1/responses", frames, "openai:no-such-model-xyz")
    assert trace.answer and trace.cost is None


def test_fixed_prices_by_hand():
    """The absolute numbers, at a fixed date: gpt-5.1 is $1.25 in / $10 out per Mtok."""
    from reasoning_nb.core.trace import Trace

    trace = Trace(model="openai:gpt-5.1", provider="openai", started_at="2026-11-25T00:00:00Z")
    trace.usage |= {"input_tokens": 1000, "output_tokens": 2000, "reasoning_tokens": 1500}
    got = cost.estimate(trace, PROVIDERS["openai"].cost)
    assert got["usd"] == pytest.approx(1000 * 1.25e-6 + 2000 * 10e-6)  # 0.02125, not 0.03625
    assert cost.label(got) == "≈ $0.0213"
    as_of, source = got["prices_as_of"], got["source"]
    when = f"prices of {as_of}" if as_of else f"prices from {source}"
    assert cost.note(got) == f"≈ $0.0213, estimate, {when}"
    assert cost.note({**got, "prices_as_of": None}).endswith(f"prices from {source}")
    # offline: genai-prices' updater thread (its only network I/O) was never started
    assert not any(t.name.startswith("genai_prices") for t in threading.enumerate())


def test_every_cloud_provider_has_a_rule():
    cloud = {p for p, info in PROVIDERS.items() if not info.local}
    assert cloud == {p for p, info in PROVIDERS.items() if info.cost is not None}


def test_a_separate_reasoning_count_is_added_once():
    apart = replace(PROVIDERS["gemini"].cost, reasoning_in_output=False)
    usage = {"input_tokens": 5, "output_tokens": 10, "reasoning_tokens": 7}
    assert cost.billed_tokens(apart, usage) == {"input_tokens": 5, "output_tokens": 17}
    assert cost.billed_tokens(PROVIDERS["openai"].cost, usage) == {
        "input_tokens": 5,
        "output_tokens": 10,
    }
    assert cost.billed_tokens(PROVIDERS["ollama"].cost, usage) is None
    assert cost.label(None) == "" and cost.note(None) == ""


def cache_rates(provider: str, model: str, started_at: str) -> tuple[Decimal, Decimal]:
    from genai_prices import Usage, calc_price

    when = parse_time(started_at)
    price = calc_price(
        Usage(input_tokens=1), model, provider_id=provider, genai_request_timestamp=when
    ).model_price
    return tuple(getattr(r, "base", r) for r in (price.cache_read_mtok, price.cache_write_mtok))


def test_anthropic_cache_reads_billed_at_the_cache_rate(wire_server):
    model = "claude-sonnet-4-5"
    frames = wf.anthropic_sse(REASONING, ANSWER, input_tokens=5, cache_read_input_tokens=2000)
    trace = run(wire_server, "/v1/messages", frames, f"anthropic:{model}")
    assert trace.usage["input_tokens"] == 2005 and trace.usage["cache_read_tokens"] == 2000
    out = n(REASONING) + n(ANSWER)
    rin, rout = rates("anthropic", model, trace.started_at)
    read, _ = cache_rates("anthropic", model, trace.started_at)
    expected = float((5 * rin + 2000 * read + out * rout) / 1_000_000)
    check(trace, expected, out)
    assert trace.cost["usd"] < bill(trace, "anthropic", model, 2005, out)  # not all at full rate


@pytest.mark.parametrize(
    ("model", "provider", "extra"),
    [
        ("openai-chat:o3", "openai", {"prompt_tokens_details": {"cached_tokens": 1024}}),
        ("deepseek:deepseek-v4-pro", "deepseek", {"prompt_cache_hit_tokens": 1024}),
    ],
)
def test_chat_cached_prompt_tokens_billed_at_the_cache_rate(wire_server, model, provider, extra):
    usage = wf.default_usage(completion_tokens=90, prompt_tokens=1500, reasoning_tokens=70) | extra
    frames = wf.chat_sse([], ANSWER, usage=usage, usage_chunk=True)
    trace = run(wire_server, "/v1/chat/completions", frames, model)
    assert trace.usage["cache_read_tokens"] == 1024
    name = model.split(":", 1)[1]
    rin, rout = rates(provider, name, trace.started_at)
    read, _ = cache_rates(provider, name, trace.started_at)
    # prompt_tokens holds the cached ones: 476 at the input rate, 1024 at the cache rate
    check(trace, float(((1500 - 1024) * rin + 1024 * read + 90 * rout) / 1_000_000), 90)


def test_a_cache_count_beyond_the_input_is_not_believed():
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 50}
    assert cost.billed_tokens(PROVIDERS["openai"].cost, usage) == {
        "input_tokens": 10,
        "output_tokens": 5,
    }


def test_a_replay_keeps_its_recorded_cost_and_is_counted_once(wire_server):
    from reasoning_nb import stats

    frames = wf.responses_sse(REASONING, ANSWER, reasoning_tokens=40)
    wire_server.route("POST", "/v1/responses", Reply.sse(frames))
    kw = {"model": "openai:gpt-5.1", "base_url": wire_server.url, "api_key": KEY, "log": True}
    first = think(PROMPT, cache=True, **kw)
    again = think(PROMPT, cache=True, **kw)
    assert len(wire_server.requests_to("/v1/responses")) == 1  # the second was a replay
    assert again.replay and again.cost == first.cost and first.cost["usd"] > 0
    logged = stats("log")
    assert [r["replay"] for r in logged.rows] == [False, True]
    assert f"cost {cost.label(first.cost)} over 1 run (estimate; replays not counted)" in (
        logged.legend()
    )
