"""OpenAI over a real socket, through ``think`` / ``astream``: the Responses API (``openai:``) and
Chat Completions where asked (``openai-chat:``).

Shapes of wire-formats §5 served by ``wire_server`` with random chunk boundaries (several seeds):
reasoning summaries (one part, several parts, several items), raw ``reasoning_text`` (gpt-oss
servers), texts only in ``*.done`` events, terminal ``completed`` / ``incomplete`` / ``failed``
and in-band ``error`` events. Request bodies are held to spec/presets.md (the ``openai`` row,
clamped per model by the capability snapshot); faults: 401, 400 unsupported effort / temperature
/ unverified organisation (one retry), 429 with Retry-After, keys never leaked.
"""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from provider_harness import PROMPT, Provider, check_warning, n_tokens, usage
from wire_server import Reply

from reasoning_nb import (
    ConfigError,
    Done,
    Notice,
    ProviderError,
    ReasoningDelta,
    TextDelta,
    think,
)
from reasoning_nb.core import capabilities

RESPONSES = "/v1/responses"
CHAT = "/v1/chat/completions"
KEY = "sk-proj-very-secret-0123456789"
OPENAI = Provider("openai:gpt-5.1", RESPONSES, KEY)
run, events_of, serve = OPENAI.run, OPENAI.events, OPENAI.serve
REASONING = "**Planning** the product: 17 × 23 = 340 + 51 = 391. Café ☕, “done”."
PART2 = "**Checking**\n\n391 / 17 = 23, so it holds 😀."
ANSWER = "The answer is **391** (and 2 < 3 still holds) 😀."
FRAMES = wf.responses_sse(REASONING, ANSWER)
CHUNKINGS = [(1, 48), (2, 13), (3, 5)]


pytestmark = pytest.mark.usefixtures("no_provider_env")


@pytest.fixture(autouse=True)
def _no_overrides():
    yield
    capabilities.clear_overrides()


# -- Responses shapes ----------------------------------------------------------------------------


def _doubled_raw_and_summary() -> list[str]:
    """A server that sends each reasoning piece twice, as ``reasoning_text`` and as summary."""
    out = []
    for frame in wf.responses_sse(REASONING, ANSWER, raw=True):
        out.append(frame)
        if "response.reasoning_text.delta" in frame:
            obj = json.loads(frame.split("data: ", 1)[1])
            obj |= {"type": "response.reasoning_summary_text.delta", "summary_index": 0}
            del obj["content_index"]
            out.append(wf.sse(obj, obj["type"]))
    return out


# id -> (frames, reasoning, answer, reasoning tokens)
SHAPES = {
    "summary": (wf.responses_sse(REASONING, ANSWER), REASONING, ANSWER, n_tokens(REASONING)),
    # two summary parts of one reasoning item: two blocks, a blank line between
    "summary-parts": (
        wf.responses_sse("", ANSWER, parts=[REASONING, PART2]),
        f"{REASONING}\n\n{PART2}",
        ANSWER,
        n_tokens(REASONING, PART2),
    ),
    "summary-items": (
        wf.responses_sse("", ANSWER, parts=[REASONING, PART2], separate_items=True),
        f"{REASONING}\n\n{PART2}",
        ANSWER,
        n_tokens(REASONING, PART2),
    ),
    # gpt-oss servers (LM Studio, vLLM): raw reasoning
    "raw-reasoning-text": (
        wf.responses_sse(REASONING, ANSWER, raw=True, model="openai/gpt-oss-20b"),
        REASONING,
        ANSWER,
        n_tokens(REASONING),
    ),
    # a proxy that sends no deltas: the texts come from the .done events, once
    "done-events-only": (
        wf.responses_sse("", ANSWER, parts=[REASONING, PART2], deltas=False),
        f"{REASONING}\n\n{PART2}",
        ANSWER,
        n_tokens(REASONING, PART2),
    ),
    "raw-done-only": (
        wf.responses_sse(REASONING, ANSWER, raw=True, deltas=False),
        REASONING,
        ANSWER,
        n_tokens(REASONING),
    ),
    # encrypted content in the reasoning item is never shown; it is kept only in provider_state,
    # for the next --chat turn (test_wire_2026_h5.py)
    "encrypted-item": (
        wf.responses_sse(REASONING, ANSWER, encrypted="gAAAAABo-opaque"),
        REASONING,
        ANSWER,
        n_tokens(REASONING),
    ),
    "same-text-raw-and-summary": (
        _doubled_raw_and_summary(),
        REASONING,
        ANSWER,
        n_tokens(REASONING),
    ),
}


@pytest.mark.parametrize("seed,max_piece", CHUNKINGS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_responses_shapes_give_the_exact_trace(wire_server, shape, seed, max_piece):
    frames, reasoning, answer, hidden = SHAPES[shape]
    serve(wire_server, frames, seed=seed, max_piece=max_piece)
    events = events_of(wire_server, "openai:gpt-5.1")
    assert isinstance(events[-1], Done)
    trace = events[-1].trace
    assert trace.reasoning == reasoning
    assert trace.answer == answer
    assert trace.usage == usage(20, hidden + n_tokens(ANSWER), hidden)
    assert (trace.status, trace.finish_reason, trace.warnings) == ("complete", "stop", [])
    assert (trace.model, trace.provider) == ("openai:gpt-5.1", "openai")
    shown = {k: v for k, v in trace.to_dict().items() if k != "provider_state"}
    assert "gAAAA" not in json.dumps(shown)
    kinds = [type(e) for e in events]
    last_reasoning = max(i for i, k in enumerate(kinds) if k is ReasoningDelta)
    assert last_reasoning < kinds.index(TextDelta)
    streamed = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert streamed == reasoning  # the live view gets the same blocks as the trace
    assert wire_server.last.path == RESPONSES
    assert len(wire_server.requests_to(RESPONSES)) == 1


@pytest.mark.parametrize("seed", [4, 5])
def test_incomplete_for_max_output_tokens_is_truncated(wire_server, seed):
    serve(wire_server, wf.responses_sse(REASONING, ANSWER, status="incomplete"), seed=seed)
    trace = run(wire_server, max_tokens=64)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert (trace.status, trace.finish_reason) == ("truncated", "length")
    assert trace.usage["reasoning_tokens"] == n_tokens(REASONING)
    assert trace.warnings == []
    assert wire_server.last.json["max_output_tokens"] == 64


def test_incomplete_for_another_reason_says_which(wire_server):
    frames = wf.responses_sse(
        REASONING, ANSWER, status="incomplete", incomplete_reason="content_filter"
    )
    serve(wire_server, frames, seed=2)
    trace = run(wire_server)
    assert trace.status == "truncated"
    assert any("content_filter" in w for w in trace.warnings)


def _cut_before_answer_piece(frames: list[str], pieces: int) -> list[str]:
    """The frames up to (not including) the answer delta number ``pieces``."""
    seen = 0
    for i, frame in enumerate(frames):
        if "response.output_text.delta" in frame:
            if seen == pieces:
                return frames[:i]
            seen += 1
    return frames


@pytest.mark.parametrize("seed", [6, 7])
def test_response_failed_keeps_the_partial_trace(wire_server, seed):
    error = {"code": "server_error", "message": "The server had an error processing the request."}
    frames = wf.responses_sse(REASONING, ANSWER, status="failed", error=error)
    frames = [*_cut_before_answer_piece(frames, 2), frames[-1]]
    serve(wire_server, frames, seed=seed)
    with pytest.raises(ProviderError) as info:
        run(wire_server)
    err = info.value
    assert "The server had an error processing the request." in err.message
    assert "server_error" in err.message
    assert err.trace.reasoning == REASONING
    assert err.trace.answer == "".join(wf.tokens(ANSWER)[:2]).strip()
    assert err.trace.status == "error" and err.trace.error == err.message


def test_error_event_in_band_keeps_the_partial_trace_and_hides_the_key(wire_server):
    frames = _cut_before_answer_piece(wf.responses_sse(REASONING, ANSWER), 3)
    bad = {"type": "error", "code": "rate_limit_exceeded", "param": None, "sequence_number": 99}
    frames.append(wf.sse({**bad, "message": f"Slow down, key {KEY}"}, "error"))
    serve(wire_server, frames, seed=3, max_piece=9)
    with pytest.raises(ProviderError) as info:
        run(wire_server)
    err = info.value
    assert "Slow down" in err.message and "rate_limit_exceeded" in err.message
    assert KEY not in str(err) and KEY not in json.dumps(err.trace.to_dict())
    assert err.trace.reasoning == REASONING
    assert err.trace.answer == "".join(wf.tokens(ANSWER)[:3]).strip()


def test_stream_without_a_terminal_event_is_truncated(wire_server):
    frames = wf.responses_sse(REASONING, ANSWER)[:-1]
    serve(wire_server, frames, seed=4)
    trace = run(wire_server)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert trace.status == "truncated"
    assert any("ended before" in w for w in trace.warnings)


# -- Responses request bodies (spec/presets.md, openai row) --------------------------------------

A = {"summary": "auto"}
INCLUDE = {"include": ["reasoning.encrypted_content"]}  # on reasoning models: for --chat
# (model, preset, budget) -> (reasoning object sent or None, warning substring or None)
BODIES = {
    ("gpt-5.1", "auto", None): (A, None),
    ("gpt-5.1", "off", None): (A | {"effort": "none"}, None),
    ("gpt-5.1", "low", None): (A | {"effort": "low"}, None),
    ("gpt-5.1", "medium", None): (A | {"effort": "medium"}, None),
    ("gpt-5.1", "high", None): (A | {"effort": "high"}, None),
    ("gpt-5.1", "max", None): (A | {"effort": "high"}, "does not accept effort 'xhigh'"),
    ("gpt-5.1", "auto", 9000): (A | {"effort": "high"}, "budget_tokens=9000"),
    ("gpt-5", "off", None): (A | {"effort": "minimal"}, "cannot switch reasoning off"),
    ("gpt-5", "high", None): (A | {"effort": "high"}, None),
    ("o3", "off", None): (A | {"effort": "low"}, "cannot switch reasoning off"),
    ("o3", "low", None): (A | {"effort": "low"}, None),
    ("o3", "medium", None): (A | {"effort": "medium"}, None),
    ("o3", "high", None): (A | {"effort": "high"}, None),
    ("o3", "max", None): (A | {"effort": "high"}, "does not accept effort 'xhigh'"),
    ("gpt-5.2", "max", None): (A | {"effort": "xhigh"}, None),
    ("gpt-5.2", "auto", 20000): (A | {"effort": "xhigh"}, "budget_tokens=20000"),
    ("gpt-5.1-codex-max", "max", None): (A | {"effort": "xhigh"}, None),
    ("gpt-5-pro", "low", None): (A | {"effort": "high"}, "does not accept effort 'low'"),
    ("gpt-4.1", "auto", None): (None, None),  # not a reasoning model: no reasoning object
    ("gpt-4.1", "high", None): (None, "does not support reasoning controls"),
    ("gpt-9-unknown", "high", None): (A | {"effort": "high"}, None),  # not in the snapshot
}


@pytest.mark.parametrize("model,preset,budget", list(BODIES), ids=str)
def test_responses_body_matches_the_preset_table(wire_server, model, preset, budget):
    expected, warning = BODIES[(model, preset, budget)]
    trace, body = OPENAI.sent(wire_server, FRAMES, f"openai:{model}", preset, budget)
    assert body.get("reasoning") == expected
    assert trace.request == ({"reasoning": expected} | INCLUDE if expected else {})
    assert body.get("include") == (INCLUDE["include"] if expected else None)
    assert body["model"] == model and body["stream"] is True
    assert body["input"] == [{"role": "user", "content": PROMPT}]
    assert set(body) <= {"model", "input", "stream", "reasoning", "include"}
    check_warning(trace, warning)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)


def test_preset_high_is_what_the_trace_says_was_sent(wire_server):
    serve(wire_server, FRAMES)
    trace = run(wire_server, "openai:o3", preset="high")
    assert trace.request == {"reasoning": {"effort": "high", "summary": "auto"}} | INCLUDE
    assert trace.request == {"reasoning": wire_server.last.json["reasoning"]} | INCLUDE
    assert trace.to_dict()["request"] == trace.request


def test_system_max_tokens_and_temperature_on_a_reasoning_model(wire_server):
    serve(wire_server, FRAMES)
    trace = run(wire_server, system="Be brief.", max_tokens=2048, temperature=0.2)
    body = wire_server.last.json
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": PROMPT}]
    assert body["max_output_tokens"] == 2048 and "max_tokens" not in body
    assert "temperature" not in body and "top_p" not in body
    assert len(trace.warnings) == 1 and "temperature=0.2 was not sent" in trace.warnings[0]


@pytest.mark.parametrize("model", ["gpt-4.1", "gpt-9-unknown"])
def test_temperature_is_sent_where_the_model_may_take_it(wire_server, model):
    serve(wire_server, FRAMES)
    trace = run(wire_server, f"openai:{model}", temperature=0.2)
    assert wire_server.last.json["temperature"] == 0.2
    assert trace.warnings == []


# -- faults ----------------------------------------------------------------------------------------

UNSUPPORTED_MINIMAL = (
    "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values "
    "are: 'none', 'low', 'medium', and 'high'."
)
UNSUPPORTED_TEMPERATURE = (
    "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) "
    "value is supported."
)


def _error(message: str, status: int = 400, param: str | None = None, code: str | None = None):
    return Reply.json(wf.openai_error_body(message, param=param, code=code), status)


@pytest.mark.parametrize(
    "model,path,field",
    [("openai:gpt-5.1", RESPONSES, "reasoning"), ("openai-chat:gpt-5.1", CHAT, "reasoning_effort")],
)
def test_unsupported_effort_is_retried_once_with_the_nearest_listed_value(
    wire_server, model, path, field
):
    # a stale snapshot that still lists 'minimal' for gpt-5.1, so preset off sends it
    capabilities.override(
        "openai*:gpt-5.1", efforts=("minimal", "low", "medium", "high"), can_disable=False
    )
    rejected = _error(UNSUPPORTED_MINIMAL, param="reasoning.effort", code="unsupported_value")
    ok = wf.responses_sse(REASONING, ANSWER) if path == RESPONSES else wf.chat_sse("", ANSWER)
    wire_server.route("POST", path, rejected, Reply.sse(ok, chunking="random", seed=3))
    trace = run(wire_server, model, preset="off")
    first, second = wire_server.bodies(path)
    effort = (lambda b: b["reasoning"]["effort"]) if path == RESPONSES else (lambda b: b[field])
    assert (effort(first), effort(second)) == ("minimal", "low")
    assert trace.request[field] == second[field]
    assert trace.answer == ANSWER and trace.status == "complete"
    retry = [w for w in trace.warnings if "'minimal'" in w and "'low'" in w]
    assert len(retry) == 1 and "none, low, medium, high" in retry[0]


def test_unsupported_effort_is_retried_only_once(wire_server):
    message = UNSUPPORTED_MINIMAL.replace("'minimal'", "'xhigh'")
    wire_server.route("POST", RESPONSES, _error(message))
    with pytest.raises(ProviderError) as info:
        run(wire_server, "openai:gpt-9-unknown", preset="max")
    assert info.value.status == 400 and "Unsupported value" in info.value.message
    first, second = wire_server.bodies(RESPONSES)
    assert first["reasoning"]["effort"] == "xhigh" and second["reasoning"]["effort"] == "high"


@pytest.mark.parametrize("model,path", [("openai:gpt-9", RESPONSES), ("openai-chat:gpt-9", CHAT)])
def test_rejected_temperature_is_retried_without_it(wire_server, model, path):
    ok = wf.responses_sse(REASONING, ANSWER) if path == RESPONSES else wf.chat_sse("", ANSWER)
    rejected = _error(UNSUPPORTED_TEMPERATURE, param="temperature", code="unsupported_value")
    wire_server.route("POST", path, rejected, Reply.sse(ok))
    trace = run(wire_server, model, temperature=0.2)
    first, second = wire_server.bodies(path)
    assert first["temperature"] == 0.2 and "temperature" not in second
    assert any("temperature=0.2" in w and "sent again" in w for w in trace.warnings)
    assert trace.answer == ANSWER


def test_unverified_organisation_gets_the_answer_without_summaries(wire_server):
    message = (
        "Your organization must be verified to generate reasoning summaries. Please go to: "
        "https://platform.openai.com/settings/organization/general and click on Verify "
        "Organization. If you just verified, it can take up to 15 minutes for access to propagate."
    )
    rejected = _error(message, param="reasoning.summary", code="unsupported_value")
    frames = wf.responses_sse("", ANSWER, reasoning_tokens=57)
    wire_server.route("POST", RESPONSES, rejected, Reply.sse(frames))
    trace = run(wire_server, preset="high")
    first, second = wire_server.bodies(RESPONSES)
    assert first["reasoning"] == {"effort": "high", "summary": "auto"}
    assert second["reasoning"] == {"effort": "high"}
    assert trace.request == {"reasoning": {"effort": "high"}} | INCLUDE
    assert (trace.reasoning, trace.answer) == ("", ANSWER)
    assert trace.usage["reasoning_tokens"] == 57
    assert any("verified organizations" in w for w in trace.warnings)


@pytest.mark.parametrize("model,path", [("openai:gpt-5.1", RESPONSES), ("openai-chat:o3", CHAT)])
def test_401_names_the_env_var_and_hides_the_key(wire_server, model, path):
    body = wf.openai_error_body(
        f"Incorrect API key provided: {KEY}. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        code="invalid_api_key",
    )
    wire_server.route("POST", path, Reply.json(body, 401))
    with pytest.raises(ProviderError) as info:
        run(wire_server, model)
    err = info.value
    assert err.status == 401 and "OPENAI_API_KEY" in err.message
    assert "Incorrect API key provided" in err.message
    assert KEY not in str(err) and err.trace is None
    assert len(wire_server.requests_to(path)) == 1  # not retried


def test_403_says_the_project_may_not_use_the_model(wire_server):
    body = wf.openai_error_body("Project proj_1 does not have access to model gpt-5.1-pro")
    wire_server.route("POST", RESPONSES, Reply.json(body, 403))
    with pytest.raises(ProviderError) as info:
        run(wire_server, "openai:gpt-5.1-pro")
    assert info.value.status == 403
    assert "does not have access" in info.value.message and "OPENAI_API_KEY" in info.value.message


def test_429_with_retry_after_is_waited_for_then_succeeds(wire_server, fake_clock):
    body = wf.openai_error_body("Rate limit reached for gpt-5.1", code="rate_limit_exceeded")
    limited = Reply.json(body, 429, retry_after=0.4)
    wire_server.route("POST", RESPONSES, limited, Reply.sse(wf.responses_sse(REASONING, ANSWER)))
    trace = events_of(wire_server, "openai:gpt-5.1", sleep=fake_clock.sleep)[-1].trace
    assert fake_clock.slept == [0.4]
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert len(wire_server.requests_to(RESPONSES)) == 2


def test_429_that_persists_explains_the_rate_limit(wire_server):
    body = wf.openai_error_body("You exceeded your current quota.", code="insufficient_quota")
    limited = Reply.json(body, 429, retry_after=3600)  # longer than we wait: reported at once
    wire_server.route("POST", RESPONSES, limited)
    with pytest.raises(ProviderError) as info:
        run(wire_server)
    assert info.value.status == 429
    assert "You exceeded your current quota." in info.value.message
    assert "rate limit or quota" in info.value.message


def test_404_suggests_the_chat_api_for_servers_without_responses(wire_server):
    wire_server.route("POST", RESPONSES, Reply.json(wf.openai_error_body("Not found"), 404))
    with pytest.raises(ProviderError) as info:
        run(wire_server, "openai:my-model")
    assert info.value.status == 404 and "openai-chat:MODEL" in info.value.message


def test_key_is_a_bearer_header_and_never_saved(wire_server):
    serve(wire_server, FRAMES)
    trace = run(wire_server)
    assert wire_server.last.headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in json.dumps(trace.to_dict()) and KEY not in repr(trace)


def test_key_from_the_env_and_missing_key_names_the_variable(wire_server, monkeypatch):
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        think(PROMPT, model="openai:gpt-5.1", base_url=wire_server.url)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        think(PROMPT, model="openai-chat:gpt-5.1", base_url=wire_server.url)
    assert wire_server.requests == []
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    serve(wire_server, FRAMES)
    trace = think(PROMPT, model="openai:gpt-5.1", base_url=wire_server.url + "/v1")  # this machine
    assert wire_server.last.headers["authorization"] == f"Bearer {KEY}"
    assert wire_server.last.path == RESPONSES
    assert KEY not in json.dumps(trace.to_dict())


def test_openai_base_url_env_is_used(wire_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", wire_server.url + "/v1")
    serve(wire_server, FRAMES)
    trace = think(PROMPT, model="openai:gpt-5.1", api_key=KEY)
    assert trace.answer == ANSWER and wire_server.last.path == RESPONSES


# -- where a key may go (a key from the environment goes only to its provider's own address) -----


def test_openai_key_goes_to_openai_base_url_the_environment_pairs_it_with(wire_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", wire_server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    serve(wire_server, FRAMES)
    think(PROMPT, model="openai:gpt-5.1")
    assert wire_server.last.headers["authorization"] == f"Bearer {KEY}"


def test_openai_key_is_not_sent_to_another_address_unless_named(
    wire_server, elsewhere, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    serve(wire_server, FRAMES)
    with pytest.raises(ConfigError) as info:
        think(PROMPT, model="openai:gpt-5.1", base_url=elsewhere)
    message = str(info.value)
    assert "api_key_env='OPENAI_API_KEY'" in message and "https://api.openai.com/v1" in message
    assert KEY not in message and "\n" not in message
    assert wire_server.requests == []  # refused before any I/O
    think(PROMPT, model="openai:gpt-5.1", base_url=elsewhere, api_key_env="OPENAI_API_KEY")
    assert wire_server.last.headers["host"] == "colleague.example:8080"
    assert wire_server.last.headers["authorization"] == f"Bearer {KEY}"


def test_openai_compatible_never_sends_the_openai_key_elsewhere_unless_named(
    wire_server, elsewhere, monkeypatch
):
    """A colleague's server at base_url must not receive the user's OpenAI key; a server on this
    machine does (the contract's "OPENAI_API_KEY if set": the key does not leave the machine)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    serve(wire_server, wf.chat_sse(REASONING, ANSWER), path=CHAT)
    trace = think(PROMPT, model="openai-compatible:m", base_url=elsewhere)
    assert trace.answer == ANSWER and wire_server.last.headers["host"] == "colleague.example:8080"
    assert "authorization" not in wire_server.last.headers
    think(PROMPT, model="openai-compatible:m", base_url=elsewhere, api_key_env="OPENAI_API_KEY")
    assert wire_server.last.headers["authorization"] == f"Bearer {KEY}"
    think(PROMPT, model="openai-compatible:m", base_url=wire_server.url)  # this machine
    assert wire_server.last.headers["authorization"] == f"Bearer {KEY}"


def test_a_refusal_for_want_of_a_key_held_back_says_how_to_send_it(
    wire_server, elsewhere, monkeypatch
):
    """The server asks for a key that the environment holds but did not send there: the error
    names the variable and the flag, not "check OPENAI_API_KEY" (that key was never sent)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    wire_server.route("POST", CHAT, Reply.json({"error": {"message": "missing key"}}, 401))
    with pytest.raises(ProviderError) as info:
        think(PROMPT, model="openai-compatible:m", base_url=elsewhere)
    message = str(info.value)
    assert "none was sent" in message and "--api-key-env OPENAI_API_KEY" in message
    assert KEY not in message and "authorization" not in wire_server.last.headers
    with pytest.raises(ProviderError) as info:  # the key was sent and refused
        think(PROMPT, model="openai-compatible:m", base_url=elsewhere, api_key_env="OPENAI_API_KEY")
    assert "refused the API key" in str(info.value) and KEY not in str(info.value)


def test_a_password_in_the_base_url_is_scrubbed_like_a_key(wire_server):
    secret = "pw-0123456789abcdef"
    message = f"user admin with password {secret} may not use this model"
    wire_server.route("POST", CHAT, Reply.json({"error": {"message": message}}, 403))
    base = wire_server.url.replace("http://", f"http://admin:{secret}@")
    with pytest.raises(ProviderError) as info:
        think(PROMPT, model="openai-compatible:m", base_url=base)
    assert secret not in str(info.value) and "[redacted]" in str(info.value)


def test_the_command_line_names_the_key_with_api_key_env(wire_server, monkeypatch, capsys):
    from reasoning_nb.__main__ import main

    monkeypatch.setenv("GATEWAY_KEY", KEY)
    serve(wire_server, wf.chat_sse(REASONING, ANSWER), path=CHAT)
    argv = ["Q", "-m", "openai-compatible:m", "--base-url", wire_server.url]
    assert main([*argv, "--api-key-env", "GATEWAY_KEY"]) == 0
    assert wire_server.last.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in capsys.readouterr().out


def test_api_key_env_misuse_is_a_config_error_before_any_io(wire_server, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    model = "openai-compatible:m"
    with pytest.raises(ConfigError, match="NO_SUCH_KEY_VAR, which is not set"):
        think(PROMPT, model=model, base_url=wire_server.url, api_key_env="NO_SUCH_KEY_VAR")
    with pytest.raises(ConfigError, match="not both"):
        think(PROMPT, model=model, base_url=wire_server.url, api_key=KEY, api_key_env="X")
    with pytest.raises(ConfigError, match="api_key_env must name"):
        think(PROMPT, model=model, base_url=wire_server.url, api_key_env=" ")
    assert wire_server.requests == []


# -- malformed base URLs: a ConfigError before any I/O ---------------------------------------------


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://my server:8080/v1", "space"),
        ("http://127.0.0.1:0/v1", "port 0"),
        ("http://exa$mple.com/v1", "not a host name"),
        ("http://127.0.0.1:8080/v1?key=sk-in-the-query", "no query"),
    ],
)
def test_a_malformed_base_url_is_refused_when_the_run_is_made(url, problem):
    from reasoning_nb.run import Run

    with pytest.raises(ConfigError) as info:  # making a Run does no I/O
        Run(PROMPT, model="openai-compatible:m", base_url=url)
    message = str(info.value)
    assert problem in message and "\n" not in message
    assert "sk-in-the-query" not in message
    if ":0/" in url:
        assert "127.0.0.1:0/v1" in message  # the port the user wrote, not the port dropped


# -- Chat Completions (openai-chat:) -------------------------------------------------------------

HIDDEN = 321
CHAT_USAGE = wf.default_usage(HIDDEN + n_tokens(ANSWER), prompt_tokens=21, reasoning_tokens=HIDDEN)


def chat_frames(reasoning_tokens: int = HIDDEN) -> list[str]:
    """OpenAI Chat Completions: no reasoning text, usage on an extra ``choices: []`` chunk."""
    use = wf.default_usage(
        reasoning_tokens + n_tokens(ANSWER), 21, reasoning_tokens=reasoning_tokens
    )
    return wf.chat_sse("", ANSWER, usage=use, usage_chunk=True, system_fingerprint="fp_1")


def notices(events: list) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


@pytest.mark.parametrize("seed,max_piece", CHUNKINGS)
def test_chat_says_once_that_reasoning_is_hidden_and_counts_it(wire_server, seed, max_piece):
    serve(wire_server, chat_frames(), path=CHAT, seed=seed, max_piece=max_piece)
    events = events_of(wire_server, "openai-chat:o3")
    trace = events[-1].trace
    assert (trace.reasoning, trace.answer) == ("", ANSWER)
    assert trace.usage == usage(21, HIDDEN + n_tokens(ANSWER), HIDDEN)
    assert trace.status == "complete" and trace.finish_reason == "stop"
    said = notices(events)
    assert len(said) == 1 and "does not return reasoning text" in said[0]
    assert "'openai:o3'" in said[0]
    assert trace.warnings == said


def test_chat_unknown_model_warns_when_reasoning_tokens_show_up(wire_server):
    serve(wire_server, chat_frames(), path=CHAT, seed=2)
    events = events_of(wire_server, "openai-chat:gpt-9-unknown")
    said = notices(events)
    assert len(said) == 1 and "does not return reasoning text" in said[0]
    assert events[-1].trace.usage["reasoning_tokens"] == HIDDEN


def test_chat_non_reasoning_model_says_nothing(wire_server):
    serve(wire_server, chat_frames(reasoning_tokens=0), path=CHAT, seed=2)
    events = events_of(wire_server, "openai-chat:gpt-4.1")
    assert notices(events) == [] and events[-1].trace.answer == ANSWER


# (model, preset) -> (reasoning_effort sent or None, a clamp warning expected)
CHAT_BODIES = {
    ("gpt-5.1", "auto"): (None, False),
    ("gpt-5.1", "off"): ("none", False),
    ("gpt-5.1", "high"): ("high", False),
    ("gpt-5.1", "max"): ("high", True),
    ("gpt-5", "off"): ("minimal", True),
    ("o3", "low"): ("low", False),
    ("o3", "max"): ("high", True),
    ("gpt-5.2", "max"): ("xhigh", False),
}


@pytest.mark.parametrize("model,preset", list(CHAT_BODIES), ids=str)
def test_chat_body_matches_the_preset_table(wire_server, model, preset):
    effort, clamped = CHAT_BODIES[(model, preset)]
    serve(wire_server, chat_frames(0 if effort == "none" else HIDDEN), path=CHAT)
    trace = run(wire_server, f"openai-chat:{model}", preset=preset, max_tokens=4000)
    body = wire_server.last.json
    assert body.get("reasoning_effort") == effort
    assert trace.request == ({"reasoning_effort": effort} if effort else {})
    assert body["max_completion_tokens"] == 4000 and "max_tokens" not in body
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": PROMPT}]
    clamp = [w for w in trace.warnings if "does not return reasoning text" not in w]
    assert bool(clamp) == clamped
    hidden = [w for w in trace.warnings if "does not return reasoning text" in w]
    assert len(hidden) == (0 if effort == "none" else 1)


def test_chat_drops_temperature_on_reasoning_models(wire_server):
    serve(wire_server, chat_frames(), path=CHAT)
    trace = run(wire_server, "openai-chat:o3", temperature=0.2)
    assert "temperature" not in wire_server.last.json
    assert any("temperature=0.2 was not sent" in w for w in trace.warnings)
    serve(wire_server, chat_frames(reasoning_tokens=0), path=CHAT)
    trace = run(wire_server, "openai-chat:gpt-4.1", temperature=0.2)
    assert wire_server.last.json["temperature"] == 0.2 and trace.warnings == []


# -- odd token counts ------------------------------------------------------------------------------


def _views_render(trace) -> None:
    from reasoning_nb.views import render
    from reasoning_nb.views.stats import row

    for mode in render.MODES:
        assert trace.answer[:10] in render.bundle(trace, mode)["text/plain"]
    row(trace)


@pytest.mark.parametrize(
    "odd",
    ["12", 1e308, 10**400, [3], {"n": 1}, float("nan")],
    ids=["str", "1e308", "10**400", "list", "object", "nan"],
)
def test_odd_counts_in_a_chat_usage_are_dropped_with_a_warning(wire_server, odd):
    counts = {"prompt_tokens": 30, "completion_tokens": odd}
    counts["completion_tokens_details"] = {"reasoning_tokens": odd}
    counts["prompt_tokens_details"] = {"cached_tokens": odd}
    frames = wf.chat_sse(REASONING, ANSWER, usage=counts, usage_chunk=True)
    wire_server.route("POST", CHAT, Reply.sse(frames, chunking="random", seed=2))
    trace = run(wire_server, "openai-chat:o3")
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.usage == usage(30, None, None)
    [warning] = [w for w in trace.warnings if "token counts" in w]
    for key in ("completion_tokens", "reasoning_tokens", "cached_tokens"):
        assert key in warning
    _views_render(trace)


def test_odd_llamacpp_timings_are_dropped_with_a_warning(wire_server):
    timings = {"prompt_n": "5", "cache_n": 2, "predicted_n": 1e308}
    frames = wf.chat_sse(REASONING, ANSWER, timings=timings)
    wire_server.route("POST", CHAT, Reply.sse(frames, chunking="random", seed=3))
    trace = think(PROMPT, model="llamacpp:x", base_url=wire_server.url + "/v1")
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.usage == usage(2, None, None)  # the cached prompt tokens only
    [warning] = trace.warnings
    assert "prompt_n '5'" in warning and "predicted_n 1e+308" in warning
    _views_render(trace)


def test_odd_counts_in_a_responses_usage_are_dropped_with_a_warning(wire_server):
    serve(wire_server, wf.responses_sse(REASONING, ANSWER, reasoning_tokens=1e308))
    trace = run(wire_server)
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.usage == usage(20, None, None)
    [warning] = [w for w in trace.warnings if "token counts" in w]
    assert "output_tokens 1e+308" in warning and "reasoning_tokens 1e+308" in warning
    _views_render(trace)
