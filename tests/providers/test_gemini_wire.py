"""Gemini ``streamGenerateContent?alt=sse`` over a real socket, through ``think`` / ``astream``.

Stream shapes of wire-formats.md §7 (``thought: true`` parts, ``thoughtSignature`` on the first
answer part / a final empty part / a thought part, CRLF framing, cumulative ``usageMetadata``, no
terminator, finish reasons, blocked prompts, in-band errors) are served by ``wire_server`` with
random chunk boundaries; request bodies are held to spec/presets.md for gemini-2.5-flash,
-flash-lite, -pro and gemini-3 flash / pro; the key is only ever in ``x-goog-api-key``.
"""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from provider_harness import (
    Provider,
    check_reasoning_first,
    n_tokens,
    usage,
)
from wire_server import Reply

from reasoning_nb import ConfigError, ProviderError, think
from reasoning_nb.core.history import Conversation, assistant_turn
from reasoning_nb.core.trace import Trace
from reasoning_nb.errors import ProviderError as PE
from reasoning_nb.providers import gemini
from reasoning_nb.providers.catalog import PROVIDERS


def path(model: str) -> str:
    return f"/v1beta/models/{model}:streamGenerateContent"


FLASH = path("gemini-2.5-flash")
KEY = "AIzaSyD-SECRET-gemini-key-0123456789"
PROMPT = "Where does Alice live?"
GEMINI = Provider("gemini:gemini-2.5-flash", FLASH, KEY, PROMPT)
run, stream = GEMINI.run, GEMINI.events
REASONING = "**Analyzing**\nThe note says Paris; café ☕ “near the river”."
ANSWER = "Alice lives in Paris 😀."
SIG = "CiQBVKhc7test"
CHUNKINGS = [(1, 48), (2, 23), (3, 7)]


pytestmark = pytest.mark.usefixtures("no_provider_env")


# -- stream shapes ---------------------------------------------------------------------------------

NT, NA = n_tokens(REASONING), n_tokens(ANSWER)
FIRST, *REST = wf.tokens(ANSWER)
THOUGHT_FIRST, *THOUGHT_REST = wf.tokens(REASONING)

# id -> (frames, reasoning, answer, usage, replayed parts or None)
SHAPES = {
    "signature-on-first-answer-part": (
        wf.gemini_sse(REASONING, ANSWER),
        REASONING,
        ANSWER,
        usage(12, NT + NA, NT),
        [
            {"text": REASONING, "thought": True},
            {"text": FIRST, "thoughtSignature": SIG},
            {"text": "".join(REST)},
        ],
    ),
    "signature-on-final-empty-part": (
        wf.gemini_sse(REASONING, ANSWER, signature_on="final", use_crlf=False),
        REASONING,
        ANSWER,
        usage(12, NT + NA, NT),
        [
            {"text": REASONING, "thought": True},
            {"text": ANSWER},
            {"text": "", "thoughtSignature": SIG},
        ],
    ),
    "signature-on-a-thought-part": (
        wf.gemini_sse(REASONING, ANSWER, signature_on="thought"),
        REASONING,
        ANSWER,
        usage(12, NT + NA, NT),
        [
            {"text": THOUGHT_FIRST, "thought": True, "thoughtSignature": SIG},
            {"text": "".join(THOUGHT_REST), "thought": True},
            {"text": ANSWER},
        ],
    ),
    "no-thoughts-no-signature": (
        wf.gemini_sse("", ANSWER, signature=None),
        "",
        ANSWER,
        usage(12, NA, 0),
        None,
    ),
}


@pytest.mark.parametrize("seed,max_piece", CHUNKINGS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_shapes_give_the_exact_trace(wire_server, shape, seed, max_piece):
    frames, *expected, parts = SHAPES[shape]
    if parts is None:
        GEMINI.check_shape(wire_server, frames, seed, max_piece, expected, None, preset="high")
    else:  # signed parts kept to replay, and reasoning streamed before the answer
        state = {"model": "gemini-2.5-flash", "parts": parts}
        events = GEMINI.check_shape(
            wire_server, frames, seed, max_piece, expected, state, preset="high"
        )
        check_reasoning_first(events)


@pytest.mark.parametrize(
    "reason,finish,status,notice",
    [
        ("MAX_TOKENS", "length", "truncated", None),
        ("SAFETY", "safety", "complete", "SAFETY"),
        ("RECITATION", "recitation", "complete", "RECITATION"),
    ],
)
def test_finish_reasons(wire_server, reason, finish, status, notice):
    frames = wf.gemini_sse(REASONING, ANSWER, finish_reason=reason)
    wire_server.route("POST", FLASH, Reply.sse(frames, chunking="random", seed=5))
    trace = run(wire_server)
    assert (trace.finish_reason, trace.status) == (finish, status)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert bool(trace.warnings) == bool(notice)
    if notice:
        assert notice in trace.warnings[0]


def test_stream_without_a_finish_reason_is_truncated(wire_server):
    frames = wf.gemini_sse(REASONING, ANSWER, finish_reason=None)
    wire_server.route("POST", FLASH, Reply.sse(frames, chunking="random", seed=2))
    trace = run(wire_server)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert trace.status == "truncated" and any("ended before" in w for w in trace.warnings)


def test_blocked_prompt(wire_server):
    chunk = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": "gemini-2.5-flash",
    }
    wire_server.route("POST", FLASH, Reply.sse([wf.sse(chunk)]))
    trace = run(wire_server)
    assert trace.answer == "" and trace.finish_reason == "content_filter"
    assert any("PROHIBITED_CONTENT" in w for w in trace.warnings)
    assert trace.usage == usage(9, None, None)


# -- request bodies (spec/presets.md) --------------------------------------------------------------


def tc(**fields) -> dict:
    return {"includeThoughts": True, **fields}


# model -> {(preset, budget): (thinkingConfig sent, a warning is expected)}
BODIES = {
    "gemini-2.5-flash": {  # 0–24576, can switch off
        ("auto", None): (tc(), False),
        ("off", None): (tc(thinkingBudget=0), False),
        ("low", None): (tc(thinkingBudget=2048), False),
        ("medium", None): (tc(thinkingBudget=8192), False),
        ("high", None): (tc(thinkingBudget=16000), False),
        ("max", None): (tc(thinkingBudget=24576), False),
        ("auto", 50): (tc(thinkingBudget=50), False),
        ("auto", 100000): (tc(thinkingBudget=24576), True),
    },
    "gemini-2.5-flash-lite": {  # 512–24576, 0 switches it off
        ("off", None): (tc(thinkingBudget=0), False),
        ("auto", 100): (tc(thinkingBudget=512), True),
        ("max", None): (tc(thinkingBudget=24576), False),
    },
    "gemini-2.5-pro": {  # 128–32768, cannot switch off
        ("auto", None): (tc(), False),
        ("off", None): (tc(thinkingBudget=128), True),
        ("high", None): (tc(thinkingBudget=16000), False),
        ("max", None): (tc(thinkingBudget=32768), False),
        ("auto", 50): (tc(thinkingBudget=128), True),
        ("auto", 100000): (tc(thinkingBudget=32768), True),
    },
    "gemini-3-flash-preview": {  # minimal..high
        ("auto", None): (tc(), False),
        ("off", None): (tc(thinkingLevel="minimal"), True),
        ("low", None): (tc(thinkingLevel="low"), False),
        ("medium", None): (tc(thinkingLevel="medium"), False),
        ("high", None): (tc(thinkingLevel="high"), False),
        ("max", None): (tc(thinkingLevel="high"), False),
        ("auto", 5000): (tc(thinkingLevel="medium"), True),
    },
    "gemini-3-pro-preview": {  # low / high only
        ("off", None): (tc(thinkingLevel="low"), True),
        ("medium", None): (tc(thinkingLevel="high"), True),
        ("max", None): (tc(thinkingLevel="high"), False),
    },
}
CASES = [(m, p, b) for m, rows in BODIES.items() for (p, b) in rows]


@pytest.mark.parametrize("model,preset,budget", CASES)
def test_request_body_follows_the_preset_table(wire_server, model, preset, budget):
    config, warns = BODIES[model][(preset, budget)]
    wire_server.route("POST", path(model), Reply.sse(wf.gemini_sse("r", "a")))
    trace = run(wire_server, f"gemini:{model}", preset=preset, budget_tokens=budget)
    rec = wire_server.last
    assert (rec.method, rec.path, rec.query) == ("POST", path(model), "alt=sse")
    assert rec.headers["x-goog-api-key"] == KEY
    assert KEY not in rec.path + rec.query and "key" not in rec.params
    body = rec.json
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": PROMPT}]}],
        "generationConfig": {"thinkingConfig": config},
    }
    assert trace.request == {"generationConfig": {"thinkingConfig": config}}
    assert bool(trace.warnings) == warns, trace.warnings
    assert KEY not in json.dumps(trace.to_dict())


def test_system_max_tokens_and_temperature(wire_server):
    wire_server.route("POST", FLASH, Reply.sse(wf.gemini_sse("r", "a")))
    trace = run(wire_server, system="Be terse.", max_tokens=2000, temperature=0.4, preset="low")
    body = wire_server.last.json
    assert body["systemInstruction"] == {"parts": [{"text": "Be terse."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": PROMPT}]}]
    assert body["generationConfig"] == {
        "maxOutputTokens": 2000,
        "temperature": 0.4,
        "thinkingConfig": tc(thinkingBudget=2048),
    }
    assert trace.warnings == []  # 2.5: any temperature


def test_gemini_3_temperature_is_sent_with_a_warning(wire_server):
    wire_server.route("POST", path("gemini-3-flash-preview"), Reply.sse(wf.gemini_sse("r", "a")))
    trace = run(wire_server, "gemini:gemini-3-flash-preview", temperature=0.2)
    assert wire_server.last.json["generationConfig"]["temperature"] == 0.2
    assert any("1.0" in w and "Gemini 3" in w for w in trace.warnings)
    run(wire_server, "gemini:gemini-3-flash-preview", temperature=1.0)
    assert wire_server.last.json["generationConfig"]["temperature"] == 1.0


def test_models_prefix_and_versioned_base_url(wire_server):
    wire_server.route("POST", FLASH, Reply.sse(wf.gemini_sse("r", "a")))
    run(wire_server, "gemini:models/gemini-2.5-flash")
    assert wire_server.last.path == FLASH
    think(
        PROMPT, model="gemini:gemini-2.5-flash", base_url=wire_server.url + "/v1beta", api_key=KEY
    )
    assert wire_server.last.path == FLASH and wire_server.last.query == "alt=sse"


# -- keys and errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("env", ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
def test_key_from_the_env_in_its_header_only(wire_server, monkeypatch, env):
    monkeypatch.setenv(env, KEY)
    wire_server.route("POST", FLASH, Reply.sse(wf.gemini_sse(REASONING, ANSWER)))
    # not Google's address: the key goes there only when named
    trace = think(
        PROMPT, model="gemini:gemini-2.5-flash", base_url=wire_server.url, api_key_env=env
    )
    rec = wire_server.last
    assert rec.headers["x-goog-api-key"] == KEY and "authorization" not in rec.headers
    assert KEY not in rec.path + rec.query and KEY not in rec.text
    assert KEY not in json.dumps(trace.to_dict())


def test_missing_key_names_both_env_vars_and_sends_nothing(wire_server):
    with pytest.raises(ConfigError) as info:
        think(PROMPT, model="gemini:gemini-2.5-flash", base_url=wire_server.url)
    assert "GEMINI_API_KEY" in str(info.value) and "GOOGLE_API_KEY" in str(info.value)
    assert wire_server.requests == []


@pytest.mark.parametrize(
    "status,message,api_status",
    [
        (400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"),
        (403, f"Permission denied for key {KEY}.", "PERMISSION_DENIED"),
        (401, "Request had invalid authentication credentials.", "UNAUTHENTICATED"),
    ],
)
def test_refused_key_names_the_env_var_and_never_the_key(wire_server, status, message, api_status):
    body = wf.gemini_error_body(message, code=status, status=api_status)
    wire_server.route("POST", FLASH, Reply.json(body, status))
    with pytest.raises(ProviderError) as info:
        run(wire_server, preset="high")
    err = info.value
    assert err.status == status and "GEMINI_API_KEY" in err.message
    assert KEY not in str(err) and err.trace is None
    assert len(wire_server.requests_to(FLASH)) == 1  # a key problem is not a thinking problem


def test_unknown_model_404(wire_server):
    msg = "models/gemini-nope is not found for API version v1beta"
    wire_server.route(
        "POST", path("gemini-nope"), Reply.json(wf.gemini_error_body(msg, code=404), 404)
    )
    with pytest.raises(ProviderError) as info:
        run(wire_server, "gemini:gemini-nope")
    assert info.value.status == 404 and "gemini-nope" in info.value.message


@pytest.mark.parametrize(
    "model,kw,message,first,second",
    [
        # a budget outside the range of a 2.5 model the snapshot does not know
        (
            "gemini-2.5-flash-preview-09-2025",
            {"budget_tokens": 52428},
            "The thinking budget (52428) is invalid. Please choose a value between 0 and 24576.",
            tc(thinkingBudget=52428),
            tc(thinkingBudget=24576),
        ),
        # "off" on an unknown 2.5 Pro
        (
            "gemini-2.5-pro-exp",
            {"preset": "off"},
            "Budget 0 is invalid. This model only works in thinking mode.",
            tc(thinkingBudget=0),
            tc(thinkingBudget=128),
        ),
        (
            "gemini-2.5-pro-exp",
            {"preset": "off"},
            "Thinking can't be disabled for this model.",
            tc(thinkingBudget=0),
            tc(thinkingBudget=128),
        ),
        # the lowest level on a 3.x Pro the snapshot does not know
        (
            "gemini-3.5-pro-preview",
            {"preset": "off"},
            "Thinking level MINIMAL is not supported for this model.",
            tc(thinkingLevel="minimal"),
            tc(thinkingLevel="low"),
        ),
        # a level sent to a model that takes budgets
        (
            "gemini-exp-thinking",
            {"preset": "medium"},
            "Thinking level is not supported for this model.",
            tc(thinkingLevel="medium"),
            tc(thinkingBudget=8192),
        ),
        # a model that does not think at all
        (
            "gemma-3-27b-it",
            {},
            "Thinking is not enabled for models/gemma-3-27b-it",
            tc(),
            None,
        ),
    ],
)
def test_400_on_a_control_retries_once_with_the_nearest_value(
    wire_server, model, kw, message, first, second
):
    rejected = Reply.json(wf.gemini_error_body(message), 400)
    ok = Reply.sse(wf.gemini_sse(REASONING, ANSWER), chunking="random", seed=3)
    wire_server.route("POST", path(model), rejected, ok)
    trace = run(wire_server, f"gemini:{model}", **kw)
    bodies = wire_server.bodies(path(model))
    assert len(bodies) == 2
    sent = [b.get("generationConfig", {}).get("thinkingConfig") for b in bodies]
    assert sent == [first, second]
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert any("sent again" in w for w in trace.warnings)


def test_budget_and_level_together_keeps_the_level():
    body = {"generationConfig": {"thinkingConfig": tc(thinkingBudget=1024, thinkingLevel="low")}}
    error = PE("You can only set only one of thinking budget and thinking level.", status=400)
    retry, warning = gemini.fallback(error, body)
    assert retry["generationConfig"]["thinkingConfig"] == tc(thinkingLevel="low")
    assert "'low'" in warning and body["generationConfig"]["thinkingConfig"]["thinkingBudget"]


def test_include_thoughts_rejected_is_dropped():
    body = {"generationConfig": {"thinkingConfig": tc(thinkingBudget=0)}}
    error = PE("include_thoughts is only enabled when thinking is enabled.", status=400)
    retry, _ = gemini.fallback(error, body)
    assert retry["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}


def test_the_fallback_happens_exactly_once(wire_server):
    model = "gemini-3.5-pro-preview"
    msg = "Thinking level MINIMAL is not supported for this model."
    wire_server.route("POST", path(model), Reply.json(wf.gemini_error_body(msg), 400))
    with pytest.raises(ProviderError) as info:
        run(wire_server, f"gemini:{model}", preset="off")
    assert info.value.status == 400 and "MINIMAL" in info.value.message
    assert len(wire_server.requests_to(path(model))) == 2


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_in_band_error_keeps_the_partial_trace(wire_server, seed):
    frames = wf.gemini_sse(REASONING, ANSWER, use_crlf=False)
    frames = frames[: NT + 2]  # all thoughts and two answer pieces
    frames.append(wf.sse(wf.gemini_error_body("Internal error", code=500, status="INTERNAL")))
    wire_server.route("POST", FLASH, Reply.sse(frames, chunking="random", seed=seed, max_piece=9))
    with pytest.raises(ProviderError) as info:
        run(wire_server, preset="high")
    err = info.value
    assert "Internal error" in err.message and err.status is None
    assert err.trace is not None and err.trace.status == "error"
    assert err.trace.reasoning == REASONING
    assert err.trace.answer == "".join(wf.tokens(ANSWER)[:2])


def test_429_honours_retry_after_then_succeeds(wire_server, fake_clock):
    limited = Reply.json(
        wf.gemini_error_body("Resource has been exhausted", code=429, status="RESOURCE_EXHAUSTED"),
        429,
        retry_after=0.8,
    )
    ok = Reply.sse(wf.gemini_sse(REASONING, ANSWER), chunking="random", seed=8)
    wire_server.route("POST", FLASH, limited, ok)
    trace = stream(wire_server, preset="high", sleep=fake_clock.sleep)[-1].trace
    assert len(wire_server.requests_to(FLASH)) == 2 and fake_clock.slept == [0.8]
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.warnings == []


# -- history (--chat) ------------------------------------------------------------------------------


def _second_request(wire_server, model: str, history) -> dict:
    wire_server.route("POST", path(model), Reply.sse(wf.gemini_sse("more", "Yes.")))
    Provider(f"gemini:{model}", path(model), KEY, "And Bob?").run_with(wire_server, history=history)
    return wire_server.last.json


def test_signed_parts_are_replayed_to_the_same_model_only(wire_server):
    frames = wf.gemini_sse(REASONING, ANSWER, signature_on="final")
    wire_server.route("POST", FLASH, Reply.sse(frames, chunking="random", seed=4))
    first = run(wire_server, preset="high")
    chat = Conversation("c")
    chat.add(first)
    parts = first.provider_state["gemini"]["parts"]
    assert parts[-1] == {"text": "", "thoughtSignature": SIG}

    body = _second_request(wire_server, "gemini-2.5-flash", chat.messages(PROVIDERS["gemini"]))
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": PROMPT}]},
        {"role": "model", "parts": parts},
        {"role": "user", "parts": [{"text": "And Bob?"}]},
    ]
    body = _second_request(wire_server, "gemini-2.5-pro", chat.messages(PROVIDERS["gemini"]))
    assert body["contents"][1] == {"role": "model", "parts": [{"text": ANSWER}]}

    for flavor in ("anthropic", "openai", "openrouter", "llamacpp", "ollama"):
        turn = assistant_turn(first, PROVIDERS[flavor])
        assert SIG not in json.dumps(turn) and turn["content"] == ANSWER
    again = Trace.from_dict(json.loads(json.dumps(first.to_dict())))
    assert assistant_turn(again, PROVIDERS["gemini"])["parts"] == parts


def test_odd_counts_are_dropped_with_a_warning_and_the_run_keeps_its_text(wire_server):
    from reasoning_nb.views import render

    frames = wf.gemini_sse(REASONING, ANSWER, prompt_tokens=1e308)
    wire_server.route("POST", FLASH, Reply.sse(frames, chunking="random", seed=3))
    trace = run(wire_server)
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.usage == usage(None, NT + NA, NT)
    [warning] = trace.warnings
    assert "promptTokenCount 1e+308" in warning
    for mode in render.MODES:
        render.bundle(trace, mode)
