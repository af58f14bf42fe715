"""OpenRouter and DeepSeek over a real socket (Chat Completions dialects, wire-formats §8–9).

OpenRouter: ``: OPENROUTER PROCESSING`` comments, ``delta.reasoning`` and ``reasoning_details``
fragments (merged by type+index, kept in ``trace.provider_state`` and sent back unmodified in a
``--chat`` history to the same model only), in-band errors with ``finish_reason: "error"``, the
``reasoning`` object per preset (effort or ``max_tokens``). DeepSeek: ``reasoning_content``, the
``thinking`` toggle and ``reasoning_effort``, plain-text history.
"""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from provider_harness import (
    PROMPT,
    Provider,
    check_complete,
    check_one_done,
    check_warning,
    n_tokens,
    usage,
)
from wire_server import Reply

from reasoning_nb import ConfigError, ProviderError, ProviderState, think
from reasoning_nb.core.history import Conversation, assistant_turn
from reasoning_nb.core.trace import Trace
from reasoning_nb.providers.catalog import PROVIDERS

PATH = "/v1/chat/completions"
KEY = "sk-or-v1-very-secret-0123456789"
CLAUDE = "anthropic/claude-sonnet-4.5"
OPENROUTER = Provider(f"openrouter:{CLAUDE}", PATH, KEY)
run, events_of, serve = OPENROUTER.run, OPENROUTER.events, OPENROUTER.serve
REASONING = "Let me see: 17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391. Café ☕, “done”."
PART2 = "Double-check: 391 / 17 = 23 😀."
ANSWER = "The answer is **391** (and 2 < 3 still holds) 😀."
CHUNKINGS = [(1, 48), (2, 13), (3, 5)]


COUNTS = usage(20, n_tokens(REASONING, ANSWER), n_tokens(REASONING))
pytestmark = pytest.mark.usefixtures("no_provider_env")


def run_with_history(server, model: str, history: list) -> Trace:
    return OPENROUTER.run_with(server, model, history=history)


# -- OpenRouter shapes ---------------------------------------------------------------------------

SIGNED = {
    "type": "reasoning.text",
    "text": REASONING,
    "format": "anthropic-claude-v1",
    "index": 0,
    "signature": "EqQBCgIYAhIM-test",
}


@pytest.mark.parametrize("seed,max_piece", CHUNKINGS)
def test_openrouter_claude_reasoning_and_merged_details(wire_server, seed, max_piece):
    serve(wire_server, wf.openrouter_sse(REASONING, ANSWER, processing=3), seed, max_piece)
    events = events_of(wire_server, f"openrouter:{CLAUDE}")
    trace = check_complete(check_one_done(events), REASONING, ANSWER, COUNTS)
    # one merged block, signature from the last text-less fragment, in the saved trace
    states = [e for e in events if isinstance(e, ProviderState)]
    assert len(states) == 1
    assert trace.provider_state == {"openrouter": {"model": CLAUDE, "reasoning_details": [SIGNED]}}
    assert Trace.from_dict(trace.to_dict()).provider_state == trace.provider_state


@pytest.mark.parametrize("reasoning_field", [True, False])
@pytest.mark.parametrize("seed", [4, 5])
def test_openrouter_openai_summaries_are_separate_blocks(wire_server, seed, reasoning_field):
    """OpenAI upstreams: summary 0, encrypted 1, summary 2 (pydantic-ai #7214); with or without
    ``delta.reasoning`` beside the details."""
    frames = wf.openrouter_sse(
        "",
        ANSWER,
        provider="OpenAI",
        model="openai/gpt-5.1",
        fmt="openai-responses-v1",
        parts=[REASONING, PART2],
        detail_type="reasoning.summary",
        encrypted="gAAAAABo-opaque",
        reasoning_field=reasoning_field,
    )
    serve(wire_server, frames, seed=seed, max_piece=11)
    trace = run(wire_server, "openrouter:openai/gpt-5.1")
    assert trace.reasoning == f"{REASONING}\n\n{PART2}"
    assert trace.answer == ANSWER
    details = trace.provider_state["openrouter"]["reasoning_details"]
    assert [(d["type"], d["index"]) for d in details] == [
        ("reasoning.summary", 0),
        ("reasoning.encrypted", 1),
        ("reasoning.summary", 2),
    ]
    assert (details[0]["summary"], details[2]["summary"]) == (REASONING, PART2)
    assert details[1]["data"] == "gAAAAABo-opaque" and details[1]["id"] == "rs_1"
    assert "gAAAA" not in trace.reasoning + trace.answer


@pytest.mark.parametrize("seed", [6, 7])
def test_openrouter_in_band_error_keeps_the_partial_trace(wire_server, seed):
    error = {"code": 502, "message": f"Provider returned error (key {KEY})"}
    frames = wf.openrouter_sse(REASONING, ANSWER, error=error, error_after=2)
    serve(wire_server, frames, seed=seed, max_piece=9)
    with pytest.raises(ProviderError) as info:
        run(wire_server, f"openrouter:{CLAUDE}")
    err = info.value
    assert "Provider returned error" in err.message and KEY not in err.message
    assert err.trace.reasoning == REASONING
    assert err.trace.answer == "".join(wf.tokens(ANSWER)[:2]).strip()
    assert err.trace.status == "error"
    assert err.trace.provider_state == {}  # an unfinished block is never replayed
    assert KEY not in json.dumps(err.trace.to_dict())


def test_openrouter_402_says_to_add_credits(wire_server):
    body = wf.openai_error_body("Insufficient credits", code="402")
    wire_server.route("POST", PATH, Reply.json(body, 402))
    with pytest.raises(ProviderError) as info:
        run(wire_server, f"openrouter:{CLAUDE}")
    assert info.value.status == 402
    assert "Insufficient credits" in info.value.message and "credits" in info.value.message


# -- OpenRouter request bodies -------------------------------------------------------------------

# (model, preset, budget) -> (reasoning object or None, warning substring or None)
OPENROUTER_BODIES = {
    (CLAUDE, "auto", None): (None, None),
    (CLAUDE, "off", None): ({"effort": "none"}, None),
    (CLAUDE, "low", None): ({"effort": "low"}, None),
    (CLAUDE, "medium", None): ({"effort": "medium"}, None),
    (CLAUDE, "high", None): ({"effort": "high"}, None),
    (CLAUDE, "max", None): ({"effort": "xhigh"}, None),
    (CLAUDE, "auto", 3000): ({"max_tokens": 3000}, None),
    (CLAUDE, "high", 500): ({"max_tokens": 1024}, "minimum 1024"),  # the model's floor
    ("openai/gpt-5.1", "max", None): ({"effort": "high"}, "does not accept effort 'xhigh'"),
    ("openai/gpt-5.2", "max", None): ({"effort": "xhigh"}, None),
    ("openai/o3", "off", None): ({"effort": "low"}, "cannot switch reasoning off"),
    ("deepseek/deepseek-v4-flash", "low", None): ({"effort": "high"}, "does not accept"),
    ("some/new-model", "medium", None): ({"effort": "medium"}, None),
}


@pytest.mark.parametrize("model,preset,budget", list(OPENROUTER_BODIES), ids=str)
def test_openrouter_body_matches_the_preset_table(wire_server, model, preset, budget):
    expected, warning = OPENROUTER_BODIES[(model, preset, budget)]
    frames = wf.openrouter_sse(REASONING, ANSWER)
    trace, body = OPENROUTER.sent(wire_server, frames, f"openrouter:{model}", preset, budget)
    assert body.get("reasoning") == expected
    assert trace.request == ({"reasoning": expected} if expected else {})
    assert body["model"] == model and body["messages"] == [{"role": "user", "content": PROMPT}]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    check_warning(trace, warning)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)  # shown whatever the preset


def test_openrouter_passes_max_tokens_and_temperature_through(wire_server):
    serve(wire_server, wf.openrouter_sse(REASONING, ANSWER))
    trace = run(wire_server, f"openrouter:{CLAUDE}", max_tokens=900, temperature=0.3)
    body = wire_server.last.json
    assert (body["max_tokens"], body["temperature"]) == (900, 0.3)
    assert trace.warnings == []


def test_openrouter_key_header_and_missing_key(wire_server):
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
        think(PROMPT, model=f"openrouter:{CLAUDE}", base_url=wire_server.url)
    serve(wire_server, wf.openrouter_sse(REASONING, ANSWER))
    trace = run(wire_server, f"openrouter:{CLAUDE}")
    assert wire_server.last.headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in json.dumps(trace.to_dict())


@pytest.mark.parametrize(
    "model,env",
    [(f"openrouter:{CLAUDE}", "OPENROUTER_API_KEY"), ("deepseek:x", "DEEPSEEK_API_KEY")],
)
def test_401_names_the_env_var_and_hides_the_key(wire_server, model, env):
    body = wf.openai_error_body(f"No auth credentials found for {KEY}", code="401")
    wire_server.route("POST", PATH, Reply.json(body, 401))
    with pytest.raises(ProviderError) as info:
        run(wire_server, model)
    assert info.value.status == 401 and env in info.value.message
    assert KEY not in str(info.value)


def test_openrouter_relayed_unsupported_effort_is_retried_with_the_nearest(wire_server):
    message = (
        "Unsupported value: 'xhigh' is not supported with the 'o3' model. Supported values are: "
        "'low', 'medium', and 'high'."
    )
    rejected = Reply.json(wf.openai_error_body(message), 400)
    wire_server.route("POST", PATH, rejected, Reply.sse(wf.openrouter_sse(REASONING, ANSWER)))
    trace = run(wire_server, "openrouter:some/o3-proxy", preset="max")
    first, second = wire_server.bodies(PATH)
    assert (first["reasoning"], second["reasoning"]) == ({"effort": "xhigh"}, {"effort": "high"})
    assert trace.request == {"reasoning": {"effort": "high"}}
    assert any("'xhigh'" in w and "'high'" in w for w in trace.warnings)


# -- OpenRouter history ----------------------------------------------------------------------------


def test_chat_history_replays_merged_details_to_the_same_model_only(wire_server):
    serve(wire_server, wf.openrouter_sse(REASONING, ANSWER), seed=3, max_piece=7)
    first = run(wire_server, f"openrouter:{CLAUDE}")
    chat = Conversation("c")
    chat.add(first)

    turn = assistant_turn(first, PROVIDERS["openrouter"])
    assert turn["reasoning_details"] == [SIGNED] and turn["content"] == ANSWER

    # same model: the assistant message carries the details, unmodified and in order
    serve(wire_server, wf.openrouter_sse(REASONING, ANSWER))
    run_with_history(wire_server, f"openrouter:{CLAUDE}", chat.messages(PROVIDERS["openrouter"]))
    messages = wire_server.last.json["messages"]
    assert messages == [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": ANSWER, "reasoning_details": [SIGNED]},
        {"role": "user", "content": PROMPT},
    ]

    # another OpenRouter model: text only, the signature stays home
    run_with_history(
        wire_server, "openrouter:openai/gpt-5.1", chat.messages(PROVIDERS["openrouter"])
    )
    assert wire_server.last.json["messages"][1] == {"role": "assistant", "content": ANSWER}

    # another provider: text only
    for flavor in ("deepseek", "openai", "openai-chat", "llamacpp"):
        assert assistant_turn(first, PROVIDERS[flavor]) == {"role": "assistant", "content": ANSWER}


def test_history_from_another_provider_never_carries_openrouter_details():
    trace = Trace(model="deepseek:deepseek-v4-pro", provider="deepseek", answer=ANSWER)
    trace.provider_state = {"openrouter": {"model": CLAUDE, "reasoning_details": [SIGNED]}}
    assert assistant_turn(trace, PROVIDERS["openrouter"]) == {
        "role": "assistant",
        "content": ANSWER,
    }


# -- DeepSeek --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed,max_piece", CHUNKINGS)
def test_deepseek_reasoning_content_gives_the_exact_trace(wire_server, seed, max_piece):
    serve(wire_server, wf.deepseek_sse(REASONING, ANSWER), seed, max_piece)
    trace = run(wire_server, "deepseek:deepseek-v4-pro")
    check_complete(trace, REASONING, ANSWER, COUNTS)
    assert trace.provider_state == {}
    assert wire_server.last.path == PATH  # https://api.deepseek.com gets /v1 like any chat URL


def test_deepseek_length_limit_is_truncated(wire_server):
    frames = wf.deepseek_sse(REASONING, ANSWER)
    frames[-2] = frames[-2].replace('"finish_reason":"stop"', '"finish_reason":"length"')
    serve(wire_server, frames, seed=2)
    trace = run(wire_server, "deepseek:deepseek-v4-flash")
    assert trace.status == "truncated" and trace.finish_reason == "length"


ON = {"thinking": {"type": "enabled"}}
OFF = {"thinking": {"type": "disabled"}}
# (model, preset, budget) -> (fields sent, warning substring or None)
DEEPSEEK_BODIES = {
    ("deepseek-v4-pro", "auto", None): ({}, None),
    ("deepseek-v4-pro", "off", None): (OFF, None),
    ("deepseek-v4-pro", "low", None): (ON | {"reasoning_effort": "low"}, None),
    ("deepseek-v4-pro", "medium", None): (ON | {"reasoning_effort": "high"}, "'medium'"),
    ("deepseek-v4-pro", "high", None): (ON | {"reasoning_effort": "high"}, None),
    ("deepseek-v4-pro", "max", None): (ON | {"reasoning_effort": "max"}, None),
    ("deepseek-v4-flash", "max", None): (ON | {"reasoning_effort": "max"}, None),
    ("deepseek-v4-flash", "off", None): (OFF, None),
    ("deepseek-v4-flash", "auto", 20000): (ON | {"reasoning_effort": "max"}, "20000"),
    ("deepseek-v4-flash", "auto", 10000): (ON | {"reasoning_effort": "high"}, "10000"),
    ("deepseek-reasoner", "high", None): (ON | {"reasoning_effort": "high"}, None),
    ("deepseek-chat", "high", None): ({}, "does not support reasoning controls"),
}


@pytest.mark.parametrize("model,preset,budget", list(DEEPSEEK_BODIES), ids=str)
def test_deepseek_body_matches_the_preset_table(wire_server, model, preset, budget):
    fields, warning = DEEPSEEK_BODIES[(model, preset, budget)]
    frames = wf.deepseek_sse(REASONING, ANSWER)
    trace, body = OPENROUTER.sent(wire_server, frames, f"deepseek:{model}", preset, budget)
    sent = {k: body[k] for k in body if k not in ("model", "messages", "stream", "stream_options")}
    assert sent == fields
    assert trace.request == fields
    assert body["model"] == model
    check_warning(trace, warning)


def test_deepseek_temperature_is_sent_but_said_to_be_ignored_while_thinking(wire_server):
    serve(wire_server, wf.deepseek_sse(REASONING, ANSWER))
    trace = run(wire_server, "deepseek:deepseek-v4-pro", preset="high", temperature=0.5)
    assert wire_server.last.json["temperature"] == 0.5
    assert len(trace.warnings) == 1 and "ignores temperature=0.5" in trace.warnings[0]
    trace = run(wire_server, "deepseek:deepseek-v4-pro", preset="off", temperature=0.5)
    assert trace.warnings == []
    trace = run(wire_server, "deepseek:deepseek-v4-pro", max_tokens=777)
    assert wire_server.last.json["max_tokens"] == 777


def test_deepseek_server_rejecting_thinking_is_retried_without_it(wire_server):
    rejected = Reply.json(wf.openai_error_body("Unknown parameter: thinking"), 400)
    wire_server.route("POST", PATH, rejected, Reply.sse(wf.deepseek_sse(REASONING, ANSWER)))
    trace = run(wire_server, "deepseek:deepseek-v4-pro", preset="max")
    first, second = wire_server.bodies(PATH)
    assert first["thinking"] == {"type": "enabled"} and first["reasoning_effort"] == "max"
    assert "thinking" not in second and "reasoning_effort" not in second
    assert trace.request == {}
    assert any("thinking" in w for w in trace.warnings)


def test_deepseek_history_sends_content_only(wire_server):
    serve(wire_server, wf.deepseek_sse(REASONING, ANSWER), seed=5)
    first = run(wire_server, "deepseek:deepseek-v4-pro")
    chat = Conversation("d")
    chat.add(first)
    assert chat.messages(PROVIDERS["deepseek"])[1] == {"role": "assistant", "content": ANSWER}
    run_with_history(wire_server, "deepseek:deepseek-v4-pro", chat.messages(PROVIDERS["deepseek"]))
    sent = wire_server.last.json["messages"]
    assert sent[1] == {"role": "assistant", "content": ANSWER}  # no reasoning_content
    assert REASONING not in json.dumps(sent)
