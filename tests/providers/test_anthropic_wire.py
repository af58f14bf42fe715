"""Anthropic Messages API over a real socket, through ``think`` / ``astream``.

Stream shapes of wire-formats.md §6 (thinking + signature_delta, redacted_thinking, interleaved
blocks, omitted thinking, ping, in-band error, stop reasons, cumulative usage) are served by
``wire_server`` with random chunk boundaries; request bodies are held to spec/presets.md for a
manual-budget model and an adaptive one (claude-sonnet-4-5 / opus-4-1 vs sonnet-4-6 / opus-4-7 in
the shipped snapshot); faults and the history replay rule (signatures only to the same model).
"""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from provider_harness import (
    PROMPT,
    Provider,
    check_reasoning_first,
    n_tokens,
    usage,
)
from wire_server import Reply

from reasoning_nb import ConfigError, ProviderError, think
from reasoning_nb.core.history import Conversation, assistant_turn
from reasoning_nb.core.trace import Trace
from reasoning_nb.providers import anthropic
from reasoning_nb.providers.catalog import PROVIDERS

PATH = "/v1/messages"
KEY = "sk-ant-api03-SECRET-key-0123456789"
CLAUDE = Provider("anthropic:claude-sonnet-4-5", PATH, KEY)
run, stream = CLAUDE.run, CLAUDE.events
REASONING = "Let me see: 17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391. Café ☕, “done”."
ANSWER = "The answer is **391** 😀."
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
CHUNKINGS = [(1, 48), (2, 23), (3, 7)]

pytestmark = pytest.mark.usefixtures("no_provider_env")


def message_start(input_tokens: int = 25) -> str:
    return wf.anthropic_sse("", "", input_tokens=input_tokens)[0]


def message_end(stop_reason: str, output_tokens: int) -> list[str]:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    body = {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}}
    return [wf.sse(body, "message_delta"), wf.sse({"type": "message_stop"}, "message_stop")]


def text_block(index: int, text: str) -> list[str]:
    deltas = [{"type": "text_delta", "text": p} for p in wf.tokens(text)]
    return wf.anthropic_block(index, {"type": "text", "text": ""}, deltas)


# -- stream shapes ---------------------------------------------------------------------------------

N = n_tokens(REASONING, ANSWER)
R1, R2 = "First I add the tens.", "Then I check: 391 ✓."
A1, A2 = "It is 391.", " Checked twice."
INTERLEAVED = [
    message_start(),
    *wf.anthropic_thinking_block(0, R1, "sig-one"),
    *text_block(1, A1),
    wf.sse({"type": "ping"}, "ping"),
    *wf.anthropic_thinking_block(2, R2, "sig-two"),
    *text_block(3, A2),
    *message_end("end_turn", 40),
]
# Two thinking blocks in a row (interleaved thinking around a server tool): one blank line apart.
TWO_THINKING = [
    message_start(),
    *wf.anthropic_thinking_block(0, R1, "sig-one"),
    *wf.anthropic_thinking_block(1, R2, "sig-two"),
    *text_block(2, A1),
    *message_end("end_turn", 30),
]
# display "omitted" (Opus 4.7 default): an empty thinking block that still carries a signature.
OMITTED = [
    message_start(),
    *wf.anthropic_block(
        0,
        {"type": "thinking", "thinking": "", "signature": ""},
        [{"type": "signature_delta", "signature": SIGNATURE}],
    ),
    *text_block(1, ANSWER),
    *message_end("end_turn", 120),
]

# id -> (frames, reasoning, answer, usage, replayed blocks or None)
SHAPES = {
    "thinking-then-text": (
        wf.anthropic_sse(REASONING, ANSWER, thinking_tokens=n_tokens(REASONING)),
        REASONING,
        ANSWER,
        usage(25, N, n_tokens(REASONING)),
        [
            {"type": "thinking", "thinking": REASONING, "signature": SIGNATURE},
            {"type": "text", "text": ANSWER},
        ],
    ),
    "redacted-thinking-marker": (
        wf.anthropic_sse(REASONING, ANSWER, redacted="EmwKAhgBEgy3opaque"),
        f"{REASONING}\n\n{anthropic.REDACTED_MARKER}",
        ANSWER,
        usage(25, N),
        [
            {"type": "thinking", "thinking": REASONING, "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3opaque"},
            {"type": "text", "text": ANSWER},
        ],
    ),
    "redacted-only": (
        wf.anthropic_sse("", ANSWER, redacted="opaque=="),
        anthropic.REDACTED_MARKER,
        ANSWER,
        usage(25, n_tokens(ANSWER)),
        [{"type": "redacted_thinking", "data": "opaque=="}, {"type": "text", "text": ANSWER}],
    ),
    "no-thinking": (
        wf.anthropic_sse("", ANSWER, ping=False),
        "",
        ANSWER,
        usage(25, n_tokens(ANSWER)),
        None,
    ),
    "cached-prompt": (
        wf.anthropic_sse(REASONING, ANSWER, input_tokens=5, cache_read_input_tokens=2000),
        REASONING,
        ANSWER,
        usage(2005, N) | {"cache_read_tokens": 2000},  # billed at the cache rate (core.cost)
        [
            {"type": "thinking", "thinking": REASONING, "signature": SIGNATURE},
            {"type": "text", "text": ANSWER},
        ],
    ),
    "interleaved": (
        INTERLEAVED,
        f"{R1}\n\n{R2}",
        f"{A1}\n\n{A2.lstrip()}",  # separate text blocks read as separate paragraphs
        usage(25, 40),
        [
            {"type": "thinking", "thinking": R1, "signature": "sig-one"},
            {"type": "text", "text": A1},
            {"type": "thinking", "thinking": R2, "signature": "sig-two"},
            {"type": "text", "text": A2},
        ],
    ),
    "two-thinking-blocks": (
        TWO_THINKING,
        f"{R1}\n\n{R2}",
        A1,
        usage(25, 30),
        [
            {"type": "thinking", "thinking": R1, "signature": "sig-one"},
            {"type": "thinking", "thinking": R2, "signature": "sig-two"},
            {"type": "text", "text": A1},
        ],
    ),
    "omitted-thinking": (
        OMITTED,
        "",
        ANSWER,
        usage(25, 120),
        [
            {"type": "thinking", "thinking": "", "signature": SIGNATURE},
            {"type": "text", "text": ANSWER},
        ],
    ),
}


@pytest.mark.parametrize("seed,max_piece", CHUNKINGS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_shapes_give_the_exact_trace(wire_server, shape, seed, max_piece):
    frames, *expected, blocks = SHAPES[shape]
    state = None if blocks is None else {"model": "claude-sonnet-4-5", "content": blocks}
    events = CLAUDE.check_shape(
        wire_server, frames, seed, max_piece, expected, state, preset="high"
    )
    if shape == "thinking-then-text":  # reasoning streamed before the answer, piece by piece
        check_reasoning_first(events)


@pytest.mark.parametrize(
    "stop_reason,finish,status,notice",
    [
        ("max_tokens", "length", "truncated", None),
        ("model_context_window_exceeded", "length", "truncated", "context window"),
        ("stop_sequence", "stop", "complete", None),
        ("refusal", "refusal", "complete", "declined"),
    ],
)
def test_stop_reasons(wire_server, stop_reason, finish, status, notice):
    frames = wf.anthropic_sse(REASONING, ANSWER, stop_reason=stop_reason)
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=4))
    trace = run(wire_server)
    assert (trace.finish_reason, trace.status) == (finish, status)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    if notice:
        assert any(notice in w for w in trace.warnings)
    else:
        assert trace.warnings == []


def test_stream_without_message_stop_is_truncated(wire_server):
    frames = wf.anthropic_sse(REASONING, ANSWER, stop=False)
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=2))
    trace = run(wire_server)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert any("ended before" in w for w in trace.warnings)
    assert trace.provider_state == {}  # unfinished blocks are never replayed


# -- request bodies (spec/presets.md) --------------------------------------------------------------


def manual(budget: int, max_tokens: int) -> dict:
    return {"thinking": {"type": "enabled", "budget_tokens": budget}, "max_tokens": max_tokens}


def adaptive(effort: str, display: bool = False) -> dict:
    thinking = {"type": "adaptive", **({"display": "summarized"} if display else {})}
    return {"thinking": thinking, "output_config": {"effort": effort}, "max_tokens": 32000}


NONE = {"max_tokens": 16000}
# model -> {(preset, budget): (fields sent, a warning is expected)}
BODIES = {
    # manual budgets; max_tokens raised to budget + 4096 (capped by the model's output limit)
    "claude-sonnet-4-5": {
        ("auto", None): (NONE, False),
        ("off", None): (NONE, False),
        ("low", None): (manual(2048, 6144), False),
        ("medium", None): (manual(8192, 12288), False),
        ("high", None): (manual(16000, 20096), False),
        ("max", None): (manual(31999, 36095), False),
        ("auto", 500): (manual(1024, 5120), True),  # below Anthropic's 1024 floor
        ("auto", 5000): (manual(5000, 9096), False),
        ("off", 3000): (manual(3000, 7096), True),  # a budget wins over off
    },
    "claude-opus-4-1": {  # 32000 output tokens at most
        ("max", None): (manual(31999, 32000), False),
        ("auto", 40000): (manual(31999, 32000), True),
    },
    # adaptive with effort; a budget is bucketed to an effort with a warning
    "claude-sonnet-4-6": {
        ("auto", None): (NONE, False),
        ("off", None): (NONE, False),
        ("low", None): (adaptive("low"), False),
        ("medium", None): (adaptive("medium"), False),
        ("high", None): (adaptive("high"), False),
        ("max", None): (adaptive("max"), False),
        ("auto", 5000): (adaptive("medium"), True),
    },
    # Opus 4.7: no budget mode, thinking text omitted unless asked for a summary
    "claude-opus-4-7": {
        ("auto", None): (NONE, False),
        ("off", None): (NONE, False),
        ("low", None): (adaptive("low", display=True), False),
        ("high", None): (adaptive("high", display=True), False),
        ("max", None): (adaptive("max", display=True), False),
        ("auto", 20000): (adaptive("max", display=True), True),
    },
}
CASES = [(m, p, b) for m, rows in BODIES.items() for (p, b) in rows]


@pytest.mark.parametrize("model,preset,budget", CASES)
def test_request_body_follows_the_preset_table(wire_server, model, preset, budget):
    fields, warns = BODIES[model][(preset, budget)]
    wire_server.route("POST", PATH, Reply.sse(wf.anthropic_sse("r", "a")))
    trace = run(wire_server, f"anthropic:{model}", preset=preset, budget_tokens=budget)
    rec = wire_server.last
    assert (rec.method, rec.path, rec.query) == ("POST", PATH, "")
    assert rec.headers["x-api-key"] == KEY
    assert rec.headers["anthropic-version"] == "2023-06-01"
    body = rec.json
    sent = {k: body[k] for k in ("thinking", "output_config", "max_tokens") if k in body}
    assert sent == fields
    assert body["model"] == model and body["stream"] is True
    assert body["messages"] == [{"role": "user", "content": PROMPT}]
    assert not ({"temperature", "top_k", "system"} & set(body))
    assert trace.request == fields  # what was sent is kept, no secret in it
    assert bool(trace.warnings) == warns, trace.warnings
    assert KEY not in json.dumps(trace.to_dict()) and KEY not in rec.path + rec.query


def test_system_goes_top_level_and_max_tokens_is_honoured(wire_server):
    wire_server.route("POST", PATH, Reply.sse(wf.anthropic_sse("r", "a")))
    run(wire_server, system="Be terse.", max_tokens=30000, preset="low")
    body = wire_server.last.json
    assert body["system"] == "Be terse."
    assert all(m["role"] != "system" for m in body["messages"])
    assert body["max_tokens"] == 30000  # already above budget + room: kept
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_max_tokens_below_the_budget_is_raised_with_a_warning(wire_server):
    wire_server.route("POST", PATH, Reply.sse(wf.anthropic_sse("r", "a")))
    trace = run(wire_server, max_tokens=1000, preset="low")
    body = wire_server.last.json
    assert body["thinking"]["budget_tokens"] == 2048 and body["max_tokens"] == 6144
    assert any("max_tokens=1000" in w for w in trace.warnings)


@pytest.mark.parametrize(
    "model,preset,temperature,sent",
    [
        ("claude-sonnet-4-5", "high", 0.2, False),  # thinking on: only 1 is allowed
        ("claude-sonnet-4-5", "high", 1, True),
        ("claude-sonnet-4-5", "auto", 0.2, True),  # no thinking: any temperature
        ("claude-opus-4-7", "auto", 0.2, False),  # 4.7+ take no sampling parameters
        ("claude-sonnet-4-6", "medium", 0.7, False),
    ],
)
def test_temperature_rules(wire_server, model, preset, temperature, sent):
    wire_server.route("POST", PATH, Reply.sse(wf.anthropic_sse("r", "a")))
    trace = run(wire_server, f"anthropic:{model}", preset=preset, temperature=temperature)
    body = wire_server.last.json
    assert ("temperature" in body) == sent
    assert "top_k" not in body
    if sent:
        assert body["temperature"] == temperature and trace.warnings == []
    else:
        assert any("temperature" in w for w in trace.warnings)


# -- keys and errors -------------------------------------------------------------------------------


def test_key_from_the_env_in_its_header_only(wire_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    wire_server.route("POST", PATH, Reply.sse(wf.anthropic_sse(REASONING, ANSWER)))
    trace = think(  # not Anthropic's address: the key goes there only when named
        PROMPT,
        model="anthropic:claude-sonnet-4-5",
        base_url=wire_server.url,
        api_key_env="ANTHROPIC_API_KEY",
    )
    rec = wire_server.last
    assert rec.headers["x-api-key"] == KEY and "authorization" not in rec.headers
    assert KEY not in rec.path + rec.query and KEY not in rec.text
    assert KEY not in json.dumps(trace.to_dict())


def test_base_url_with_v1_is_not_doubled(wire_server):
    wire_server.route("POST", PATH, Reply.sse(wf.anthropic_sse("r", "a")))
    think(
        PROMPT, model="anthropic:claude-sonnet-4-5", base_url=wire_server.url + "/v1/", api_key=KEY
    )
    assert wire_server.last.path == PATH


def test_missing_key_names_the_env_var_and_sends_nothing(wire_server):
    with pytest.raises(ConfigError) as info:
        think(PROMPT, model="anthropic:claude-sonnet-4-5", base_url=wire_server.url)
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert wire_server.requests == []


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_names_the_env_var_and_never_the_key(wire_server, status):
    body = wf.anthropic_error_body(f"invalid x-api-key {KEY}", type="authentication_error")
    wire_server.route("POST", PATH, Reply.json(body, status))
    with pytest.raises(ProviderError) as info:
        run(wire_server)
    err = info.value
    assert err.status == status and "ANTHROPIC_API_KEY" in err.message
    assert "invalid x-api-key" in err.message
    assert KEY not in str(err) and KEY not in err.message and err.trace is None
    assert len(wire_server.requests_to(PATH)) == 1


def test_unknown_model_404(wire_server):
    body = wf.anthropic_error_body("model: claude-nope", type="not_found_error")
    wire_server.route("POST", PATH, Reply.json(body, 404))
    with pytest.raises(ProviderError) as info:
        run(wire_server, "anthropic:claude-nope")
    assert info.value.status == 404 and "claude-nope" in info.value.message


ENABLED_REJECTED = (
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" '
    'and "output_config.effort" to control thinking behavior.'
)
ADAPTIVE_REJECTED = (
    "thinking.type: Input tag 'adaptive' found using 'type' does not match any of the "
    "expected tags: 'disabled', 'enabled'"
)


@pytest.mark.parametrize(
    "model,kw,message,first,second",
    [
        # a manual budget on a model that takes adaptive only (the snapshot was behind)
        (
            "claude-sonnet-4-5",
            {"preset": "high"},
            ENABLED_REJECTED,
            manual(16000, 20096),
            {  # only models that hide thinking reject enabled: ask for its summary
                "thinking": {"type": "adaptive", "display": "summarized"},
                "output_config": {"effort": "high"},
                "max_tokens": 20096,
            },
        ),
        # adaptive on an older model the snapshot does not know: the preset's budget instead
        (
            "claude-3-5-haiku-latest",
            {"preset": "medium"},
            ADAPTIVE_REJECTED,
            adaptive("medium", display=True),
            manual(8192, 32000),
        ),
        # an effort the model does not take: the default, high
        (
            "claude-sonnet-4-6",
            {"preset": "max"},
            "output_config.effort: 'max' is not supported by this model",
            adaptive("max"),
            adaptive("high"),
        ),
        # a budget above max_tokens (a proxy with a smaller output cap)
        (
            "claude-sonnet-4-5",
            {"budget_tokens": 5000, "max_tokens": 6000},
            "`max_tokens` must be greater than `thinking.budget_tokens`.",
            manual(5000, 6000),
            manual(5999, 6000),
        ),
    ],
)
def test_400_on_a_control_retries_once_with_the_nearest_value(
    wire_server, model, kw, message, first, second
):
    rejected = Reply.json(wf.anthropic_error_body(message), 400)
    ok = Reply.sse(wf.anthropic_sse(REASONING, ANSWER), chunking="random", seed=3)
    wire_server.route("POST", PATH, rejected, ok)
    trace = run(wire_server, f"anthropic:{model}", **kw)
    bodies = wire_server.bodies(PATH)
    assert len(bodies) == 2
    pick = ("thinking", "output_config", "max_tokens")
    assert [{k: b[k] for k in pick if k in b} for b in bodies] == [first, second]
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert any("sent again" in w for w in trace.warnings)
    assert trace.request == second


def test_rejected_temperature_is_dropped_once(wire_server):
    rejected = Reply.json(wf.anthropic_error_body("temperature: not supported for this model"), 400)
    wire_server.route("POST", PATH, rejected, Reply.sse(wf.anthropic_sse("r", ANSWER)))
    trace = run(wire_server, "anthropic:claude-future-1", temperature=0.3)
    first, second = wire_server.bodies(PATH)
    assert first["temperature"] == 0.3 and "temperature" not in second
    assert trace.answer == ANSWER and any("temperature" in w for w in trace.warnings)


def test_the_fallback_happens_exactly_once(wire_server):
    wire_server.route("POST", PATH, Reply.json(wf.anthropic_error_body(ENABLED_REJECTED), 400))
    with pytest.raises(ProviderError) as info:
        run(wire_server, preset="high")
    assert info.value.status == 400 and "thinking.type.enabled" in info.value.message
    assert len(wire_server.requests_to(PATH)) == 2


def test_unrelated_400_is_not_retried(wire_server):
    body = wf.anthropic_error_body("messages: at least one message is required")
    wire_server.route("POST", PATH, Reply.json(body, 400))
    with pytest.raises(ProviderError):
        run(wire_server, preset="high")
    assert len(wire_server.requests_to(PATH)) == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_in_band_error_keeps_the_partial_trace(wire_server, seed):
    frames = wf.anthropic_sse(REASONING, ANSWER)
    cut = next(i for i, f in enumerate(frames) if '"text_delta"' in f) + 2  # two answer pieces
    frames = [*frames[:cut], wf.anthropic_error_event("overloaded_error", "Overloaded")]
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=seed, max_piece=9))
    with pytest.raises(ProviderError) as info:
        run(wire_server, preset="high")
    err = info.value
    assert "overloaded_error" in err.message and "Overloaded" in err.message
    assert err.status is None and err.trace is not None
    assert err.trace.status == "error" and err.trace.reasoning == REASONING
    assert err.trace.answer == "".join(wf.tokens(ANSWER)[:2])
    assert err.trace.provider_state == {}


def test_429_honours_retry_after_then_succeeds(wire_server, fake_clock):
    limited = Reply.json(
        wf.anthropic_error_body(
            "Number of request tokens has exceeded your rate limit", type="rate_limit_error"
        ),
        429,
        retry_after=0.8,
    )
    ok = Reply.sse(wf.anthropic_sse(REASONING, ANSWER), chunking="random", seed=8)
    wire_server.route("POST", PATH, limited, ok)
    trace = stream(wire_server, preset="high", sleep=fake_clock.sleep)[-1].trace
    assert len(wire_server.requests_to(PATH)) == 2 and fake_clock.slept == [0.8]
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.warnings == []


def test_529_overloaded_is_retried(wire_server, fake_clock):
    overloaded = Reply.json(wf.anthropic_error_body("Overloaded", type="overloaded_error"), 529)
    wire_server.route("POST", PATH, overloaded, Reply.sse(wf.anthropic_sse(REASONING, ANSWER)))
    trace = stream(wire_server, sleep=fake_clock.sleep)[-1].trace
    assert len(wire_server.requests_to(PATH)) == 2 and trace.answer == ANSWER
    [backoff] = fake_clock.slept  # no Retry-After: the first backoff, 0.5 s ± 25 %
    assert 0.375 <= backoff <= 0.625


# -- history (--chat) ------------------------------------------------------------------------------


def _first_turn(wire_server, model: str = "claude-sonnet-4-5") -> Trace:
    frames = wf.anthropic_sse(REASONING, ANSWER, redacted="opaque-data")
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=6))
    return run(wire_server, f"anthropic:{model}", preset="high")


def _second_request(wire_server, model: str, history, **kw) -> dict:
    wire_server.route("POST", PATH, Reply.sse(wf.anthropic_sse("more", "Sure.")))
    turn = Provider(f"anthropic:{model}", PATH, KEY, "And 18 × 23?")
    turn.run_with(wire_server, history=history, **kw)
    return wire_server.last.json


def test_replay_rules_per_model_and_thinking(wire_server):
    first = _first_turn(wire_server)
    chat = Conversation("c")
    chat.add(first)
    blocks = first.provider_state["anthropic"]["content"]
    # same model, thinking on: the blocks as they came, signatures and order kept
    body = _second_request(
        wire_server, "claude-sonnet-4-5", chat.messages(PROVIDERS["anthropic"]), preset="high"
    )
    assert body["messages"][1] == {"role": "assistant", "content": blocks}
    # another Claude model: its signature would not verify, so the answer text only
    body = _second_request(
        wire_server, "claude-opus-4-1", chat.messages(PROVIDERS["anthropic"]), preset="high"
    )
    assert body["messages"][1] == {"role": "assistant", "content": ANSWER}
    # same model with thinking off: text only (thinking blocks need thinking on)
    body = _second_request(wire_server, "claude-sonnet-4-5", chat.messages(PROVIDERS["anthropic"]))
    assert body["messages"][1] == {"role": "assistant", "content": ANSWER}


def test_signatures_never_cross_to_another_provider(wire_server):
    first = _first_turn(wire_server)
    for flavor in ("gemini", "openai", "openrouter", "deepseek", "llamacpp", "ollama"):
        turn = assistant_turn(first, PROVIDERS[flavor])
        assert SIGNATURE not in json.dumps(turn) and "opaque-data" not in json.dumps(turn)
        assert turn["content"] == ANSWER
    # a saved trace from another provider carrying an "anthropic" key is not trusted either
    forged = Trace.from_dict({**first.to_dict(), "provider": "openrouter"})
    assert assistant_turn(forged, PROVIDERS["anthropic"]) == {
        "role": "assistant",
        "content": ANSWER,
    }
    # and the state survives to_dict / from_dict (a reopened notebook)
    again = Trace.from_dict(json.loads(json.dumps(first.to_dict())))
    assert (
        assistant_turn(again, PROVIDERS["anthropic"])["blocks"]
        == first.provider_state["anthropic"]["content"]
    )


def _message(blocks: list[list[str]], stop_reason: str = "end_turn") -> list[str]:
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 9}}}
    tail = [
        wf.sse({"type": "message_delta", "delta": {"stop_reason": stop_reason}}, "message_delta"),
        wf.sse({"type": "message_stop"}, "message_stop"),
    ]
    return [wf.sse(start, "message_start"), *[f for b in blocks for f in b], *tail]


def _text(index: int, *pieces: str) -> list[str]:
    deltas = [{"type": "text_delta", "text": p} for p in pieces]
    return wf.anthropic_block(index, {"type": "text", "text": ""}, deltas)


@pytest.mark.parametrize("seed", range(4))
def test_text_blocks_around_a_tool_call_read_as_paragraphs(wire_server, seed):
    tool = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    blocks = [_text(0, "Let me ", "start:"), wf.anthropic_block(1, tool, []), _text(2, " Go on")]
    frames = _message(blocks)
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=seed))
    trace = stream(wire_server, preset="high")[-1].trace
    assert trace.answer == "Let me start:\n\nGo on"


@pytest.mark.parametrize("seed", range(4))
def test_redacted_blocks_in_a_row_show_once_with_a_count(wire_server, seed):
    redacted = [
        wf.anthropic_block(i, {"type": "redacted_thinking", "data": f"opaque{i}"}, [])
        for i in range(3)
    ]
    frames = _message([*redacted, _text(3, "42")])
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=seed))
    trace = stream(wire_server, preset="high")[-1].trace
    assert (trace.reasoning, trace.answer) == ("[redacted thinking × 3]", "42")
    kept = trace.provider_state["anthropic"]["content"]
    assert [b.get("data") for b in kept[:3]] == ["opaque0", "opaque1", "opaque2"]  # all replayed


def test_odd_counts_are_dropped_with_a_warning_and_the_run_keeps_its_text(wire_server):
    """``"25"`` on message_start and ``1e308`` on message_delta: left out, said once each."""
    from reasoning_nb.views import render

    frames = wf.anthropic_sse(REASONING, ANSWER, input_tokens="25", thinking_tokens=1e308)
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=6))
    trace = run(wire_server)
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    out = len(wf.tokens(REASONING)) + len(wf.tokens(ANSWER))
    assert trace.usage == usage(None, out, None)
    assert any("input_tokens '25'" in w for w in trace.warnings)
    assert any("thinking_tokens 1e+308" in w for w in trace.warnings)
    for mode in render.MODES:
        render.bundle(trace, mode)
