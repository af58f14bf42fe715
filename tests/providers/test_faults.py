"""Faults over a real socket: dropped and refused connections, in-band errors, retries, timeouts,
malformed streams, bad configuration, cancellation, and the model-less call.

Contract (spec/api.md): a failure after the stream began raises ``ProviderError`` whose ``.trace``
holds what arrived (status ``error``), ``None`` when nothing did; a connection that cannot be made
is a ``ProviderError`` with ``.status = None`` naming the URL and what to start; misuse is a
``ConfigError`` with one sentence naming the fix.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from contextlib import aclosing

import anyio
import pytest
import wire_fixtures as wf
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_server import Reply

from reasoning_nb import (
    ConfigError,
    Done,
    ProviderError,
    ReasoningDelta,
    ReasoningNBError,
    TextDelta,
    Waiting,
    astream,
    think,
)
from reasoning_nb.providers import catalog, discovery
from reasoning_nb.providers.transport import Transport, proxy_for
from reasoning_nb.run import Run

CHAT = "/v1/chat/completions"
OLLAMA = "/api/chat"
PROMPT = "What is 17 × 23?"
REASONING = "First 17 × 20 = 340, then 17 × 3 = 51; together 391. Café ☕."
ANSWER = "The answer is 391, surely 😀."
THINK, TEXT = wf.tokens(REASONING), wf.tokens(ANSWER)

# protocol -> (model, path, frames builder, reply builder)
PROTOCOLS = {
    "chat": (
        "llamacpp:qwen3",
        CHAT,
        lambda **kw: wf.llamacpp_sse(REASONING, ANSWER, **kw),
        Reply.sse,
    ),
    "ollama": (
        "ollama:qwen3",
        OLLAMA,
        lambda **kw: wf.ollama_chat(REASONING, ANSWER, **kw),
        Reply.ndjson,
    ),
}


pytestmark = pytest.mark.usefixtures("no_provider_env", "fresh_discovery")


def frames_before(frames: list[str], text_frames: int, skip: int) -> str:
    """The wire bytes of the first ``skip`` framing frames plus ``text_frames`` text frames."""
    return "".join(frames[: skip + text_frames])


def run_think(server, proto: str, **kw):
    model, *_ = PROTOCOLS[proto]
    return think(PROMPT, model=model, base_url=server.url, **kw)


# -- dropped connections ---------------------------------------------------------------------------


def _drop_reply(proto: str, seed: int, reset: bool = False) -> tuple[str, Reply]:
    """The stream, cut 10 bytes into the frame after all reasoning and two answer pieces."""
    _model, path, build, reply = PROTOCOLS[proto]
    frames = build()
    role = 1 if proto == "chat" else 0  # llama.cpp's first chunk carries only the role
    drop_at = len(frames_before(frames, len(THINK) + 2, role).encode()) + 10
    return path, reply(frames, chunking="random", seed=seed, drop_after=drop_at, drop_reset=reset)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("proto", list(PROTOCOLS))
def test_drop_mid_stream_keeps_the_partial_trace(wire_server, proto, seed):
    wire_server.route("POST", *_drop_reply(proto, seed))
    with pytest.raises(ProviderError) as info:
        run_think(wire_server, proto)
    err = info.value
    assert err.status is None
    assert "dropped" in err.message
    assert err.trace is not None
    assert err.trace.reasoning == REASONING
    assert err.trace.answer == "".join(TEXT[:2]).strip()
    assert err.trace.status == "error" and err.trace.error == err.message
    assert wire_server.last.wait() == "dropped"


@pytest.mark.parametrize("proto", list(PROTOCOLS))
def test_reset_mid_stream_is_a_provider_error(wire_server, proto):
    """A TCP RST may discard bytes the client had not read yet: what arrived is a prefix."""
    wire_server.route("POST", *_drop_reply(proto, seed=2, reset=True))
    with pytest.raises(ProviderError) as info:
        run_think(wire_server, proto)
    err = info.value
    assert err.status is None
    if err.trace is not None:
        assert REASONING.startswith(err.trace.reasoning) and err.trace.status == "error"


@pytest.mark.parametrize("proto", list(PROTOCOLS))
def test_hangup_before_any_byte_has_no_trace(wire_server, proto):
    _model, path, build, reply = PROTOCOLS[proto]
    wire_server.route("POST", path, reply(build(), hangup=True))
    with pytest.raises(ProviderError) as info:
        run_think(wire_server, proto)
    assert info.value.trace is None and info.value.status is None
    assert wire_server.url.split("//")[1] in info.value.message


@pytest.mark.parametrize("proto", list(PROTOCOLS))
def test_drop_after_headers_before_any_text_has_no_trace(wire_server, proto):
    model, path, build, reply = PROTOCOLS[proto]
    frames = build()
    role_only = len(frames[0].encode()) if proto == "chat" else 0
    wire_server.route("POST", path, reply(frames, drop_after=role_only))

    async def main() -> list:
        return [e async for e in astream(PROMPT, model=model, base_url=wire_server.url)]

    with pytest.raises(ProviderError) as info:
        anyio.run(main)
    assert info.value.trace is None
    assert "dropped" in info.value.message


# -- in-band errors after HTTP 200 -----------------------------------------------------------------


# proto -> (the frames up to the first answer piece, the error that follows, its text)
IN_BAND_ERRORS = {
    "ollama": (
        wf.ollama_chat(REASONING, ANSWER)[: len(THINK) + 1],
        wf.ollama_error_line("model runner has unexpectedly stopped"),
        "model runner has unexpectedly stopped",
    ),
    "chat": (  # (llama.cpp's first chunk carries only the role)
        wf.llamacpp_sse(REASONING, ANSWER)[: 1 + len(THINK) + 1],
        wf.sse_error("failed to decode the batch", code=500),  # then no [DONE]
        "failed to decode the batch",
    ),
}


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("proto", list(IN_BAND_ERRORS))
def test_an_error_mid_stream_keeps_the_partial_trace(wire_server, proto, seed):
    _model, path, _build, reply = PROTOCOLS[proto]
    frames, error, text = IN_BAND_ERRORS[proto]
    wire_server.route("POST", path, reply([*frames, error], chunking="random", seed=seed))
    with pytest.raises(ProviderError) as info:
        run_think(wire_server, proto)
    err = info.value
    assert text in err.message
    assert err.trace.reasoning == REASONING and err.trace.answer == TEXT[0]
    assert err.trace.status == "error"


# -- HTTP errors and the Ollama fallbacks ----------------------------------------------------------


def test_ollama_404_says_to_pull_the_model(wire_server):
    wire_server.route("POST", OLLAMA, wf.ollama_not_found("qwen3:8b"))
    with pytest.raises(ProviderError) as info:
        think(PROMPT, model="ollama:qwen3:8b", base_url=wire_server.url)
    assert info.value.status == 404
    assert "ollama pull qwen3:8b" in info.value.message
    assert info.value.trace is None


def test_chat_404_says_to_check_the_base_url(wire_server):
    wire_server.route("POST", CHAT, Reply.json(wf.openai_error_body("File Not Found"), 404))
    with pytest.raises(ProviderError) as info:
        think(PROMPT, model="llamacpp:x", base_url=wire_server.url)
    assert info.value.status == 404
    assert "/v1" in info.value.message and "File Not Found" in info.value.message


def test_ollama_no_thinking_retries_once_without_think(wire_server):
    wire_server.route(
        "POST", OLLAMA, wf.ollama_no_thinking("llama3.2"), Reply.ndjson(wf.ollama_chat("", ANSWER))
    )
    trace = think(PROMPT, model="ollama:llama3.2", preset="high", base_url=wire_server.url)
    first, second = wire_server.bodies(OLLAMA)
    assert first["think"] == "high" and "think" not in second
    assert trace.request == {}  # what was finally sent
    assert len(trace.warnings) == 1 and "does not support thinking" in trace.warnings[0]
    assert trace.answer == ANSWER and trace.status == "complete"


def test_ollama_fallback_happens_exactly_once(wire_server):
    wire_server.route("POST", OLLAMA, wf.ollama_no_thinking("llama3.2"))  # every time
    with pytest.raises(ProviderError) as info:
        think(PROMPT, model="ollama:llama3.2", preset="low", base_url=wire_server.url)
    assert info.value.status == 400 and "does not support thinking" in info.value.message
    assert len(wire_server.requests_to(OLLAMA)) == 2


def test_ollama_max_rejected_is_sent_again_as_high(wire_server):
    wire_server.route(
        "POST",
        OLLAMA,
        wf.ollama_invalid_think("max"),
        Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)),
    )
    trace = think(PROMPT, model="ollama:qwen3", preset="max", base_url=wire_server.url)
    assert [b["think"] for b in wire_server.bodies(OLLAMA)] == ["max", "high"]
    assert trace.request == {"think": "high"}
    assert len(trace.warnings) == 1 and '"high"' in trace.warnings[0]
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)


def stream_think(server, proto: str, **kw):
    """``run_think`` through ``astream``, which takes a run's ``sleep``: its Done's trace."""
    model, *_ = PROTOCOLS[proto]

    async def main():
        return [e async for e in astream(PROMPT, model=model, base_url=server.url, **kw)]

    return anyio.run(main)[-1].trace


@pytest.mark.parametrize("proto", list(PROTOCOLS))
def test_429_honours_retry_after_then_succeeds(wire_server, proto, fake_clock):
    _model, path, build, reply = PROTOCOLS[proto]
    limited = Reply.json({"error": "rate limited"}, 429, retry_after=0.8)
    wire_server.route("POST", path, limited, reply(build()))
    trace = stream_think(wire_server, proto, sleep=fake_clock.sleep)
    assert len(wire_server.requests_to(path)) == 2
    assert fake_clock.slept == [0.8]  # the header's wait, not a backoff of its own
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.warnings == []


@pytest.mark.parametrize("proto", list(PROTOCOLS))
def test_503_then_success(wire_server, proto):
    _model, path, build, reply = PROTOCOLS[proto]
    loading = Reply.json({"error": {"code": 503, "message": "Loading model"}}, 503)
    wire_server.route("POST", path, loading, reply(build(), chunking="random", seed=5))
    trace = run_think(wire_server, proto)
    assert len(wire_server.requests_to(path)) == 2
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")


def test_429_gives_up_after_a_few_retries_with_the_servers_message(wire_server):
    wire_server.route("POST", CHAT, Reply.json({"error": "slow down please"}, 429, retry_after=0))
    with pytest.raises(ProviderError) as info:
        run_think(wire_server, "chat")
    assert info.value.status == 429 and "slow down please" in info.value.message
    assert 2 <= len(wire_server.requests_to(CHAT)) <= 6


def test_long_retry_after_is_reported_not_slept(wire_server, fake_clock):
    wire_server.route("POST", CHAT, Reply.json({"error": "quota exceeded"}, 429, retry_after=3600))
    with pytest.raises(ProviderError) as info:
        stream_think(wire_server, "chat", sleep=fake_clock.sleep)
    assert fake_clock.slept == []
    assert info.value.status == 429 and "quota exceeded" in info.value.message
    assert len(wire_server.requests_to(CHAT)) == 1


# -- malformed streams, keep-alives, missing end ---------------------------------------------------


def test_malformed_sse_event(wire_server):
    frames = [*wf.llamacpp_sse(REASONING, ANSWER)[:4], wf.malformed_frame()]
    wire_server.route("POST", CHAT, Reply.sse(frames, chunking="random", seed=6))
    with pytest.raises(ProviderError) as info:
        run_think(wire_server, "chat")
    assert "not JSON" in info.value.message and '{"choices"' in info.value.message
    assert info.value.trace.reasoning == "".join(THINK[:3])
    assert info.value.trace.status == "error"


def test_malformed_ndjson_line(wire_server):
    frames = [*wf.ollama_chat(REASONING, ANSWER)[:3], "<html>502 Bad Gateway</html>\n"]
    wire_server.route("POST", OLLAMA, Reply.ndjson(frames, chunking="random", seed=6))
    with pytest.raises(ProviderError) as info:
        run_think(wire_server, "ollama")
    assert "not JSON" in info.value.message and "Bad Gateway" in info.value.message
    assert info.value.trace.reasoning == "".join(THINK[:3])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_keep_alive_comments_are_ignored(wire_server, seed):
    frames = wf.with_pings(wf.llamacpp_sse(REASONING, ANSWER), every=1)
    frames = wf.with_pings(frames, every=5, comment="OPENROUTER PROCESSING")
    wire_server.route("POST", CHAT, Reply.sse(frames, chunking="random", seed=seed, max_piece=9))
    trace = run_think(wire_server, "chat")
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.warnings == []


def test_crlf_sse_is_read(wire_server):
    frames = wf.crlf(wf.llamacpp_sse(REASONING, ANSWER))
    wire_server.route("POST", CHAT, Reply.sse(frames, chunking="random", seed=2))
    trace = run_think(wire_server, "chat")
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")


@pytest.mark.parametrize("proto", list(PROTOCOLS))
def test_stream_cut_short_is_truncated_with_a_warning(wire_server, proto):
    _model, path, build, reply = PROTOCOLS[proto]
    if proto == "chat":
        frames = wf.llamacpp_sse(REASONING, ANSWER, finish_reason=None, done=False)
    else:
        frames = build()[:-1]  # no done:true line
    wire_server.route("POST", path, reply(frames, chunking="random", seed=7))
    trace = run_think(wire_server, proto)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert trace.status == "truncated"
    assert any("ended before the server said it was done" in w for w in trace.warnings)


def test_finish_without_done_still_warns(wire_server):
    frames = wf.llamacpp_sse(REASONING, ANSWER, done=False)  # finish_reason stop, no [DONE]
    wire_server.route("POST", CHAT, Reply.sse(frames, chunking="random", seed=8))
    trace = run_think(wire_server, "chat")
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert any("ended before the server said it was done" in w for w in trace.warnings)


# -- connection refused, timeouts ------------------------------------------------------------------


@pytest.mark.parametrize(
    "model,hint", [("llamacpp:x", "llama-server"), ("ollama:qwen3", "ollama serve")]
)
def test_connection_refused_names_the_url_and_what_to_start(fast_backoff, closed_port, model, hint):
    with pytest.raises(ProviderError) as info:
        think(PROMPT, model=model, base_url=f"http://127.0.0.1:{closed_port}")
    err = info.value
    assert err.status is None and err.trace is None
    assert f"127.0.0.1:{closed_port}" in err.message
    assert hint in err.message


def test_connection_refused_is_retried_with_backoff(closed_port, fake_clock):
    url = f"http://127.0.0.1:{closed_port}"

    async def main():
        async for _ in astream(PROMPT, model="vllm:x", base_url=url, sleep=fake_clock.sleep):
            pass

    with pytest.raises(ProviderError):
        anyio.run(main)
    waits = fake_clock.slept
    assert len(waits) == 3 and waits == sorted(waits)  # growing waits, then give up


def test_slow_server_times_out_with_the_timeout_in_the_message(wire_server):
    wire_server.route(
        "POST", CHAT, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER), delay_first_byte=5)
    )
    with pytest.raises(ProviderError) as info:  # (had the wait not ended it, 5 s on: a trace)
        run_think(wire_server, "chat", timeout=0.5)
    assert "No data" in info.value.message and "0.5 s" in info.value.message
    assert info.value.trace is None and info.value.status is None


def test_stall_mid_stream_times_out_and_keeps_the_partial_trace(wire_server):
    frames = wf.ollama_chat(REASONING, ANSWER)
    stall_after = len(THINK) + 1
    wire_server.route("POST", OLLAMA, Reply.ndjson(frames, stall_after=stall_after, stall=5))
    with pytest.raises(ProviderError) as info:  # (had the wait not ended it, 5 s on: a trace)
        run_think(wire_server, "ollama", timeout=0.5)
    assert "No data" in info.value.message and "0.5 s" in info.value.message
    assert info.value.trace.reasoning == REASONING and info.value.trace.answer == TEXT[0]
    assert info.value.trace.status == "error"


# -- configuration errors --------------------------------------------------------------------------


def _one_sentence(message: str) -> None:
    assert "\n" not in message and message.endswith(".")


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"model": "nosuch:model"}, "ollama, llamacpp"),  # lists the providers
        ({"model": "qwen3"}, "'ollama:qwen3'"),  # no provider prefix: shows the form
        ({"model": "ollama:"}, "names no model"),
        ({"model": "llamacpp:x", "preset": "extreme"}, "auto, off, low, medium, high, max"),
        ({"model": "llamacpp:x", "budget_tokens": -5}, "positive whole number"),
        ({"model": "llamacpp:x", "budget_tokens": 0}, "positive whole number"),
        ({"model": "llamacpp:x", "timeout": -1}, "timeout"),
        ({"model": "openai-compatible:x"}, "base_url="),
    ],
)
def test_config_errors_name_the_fix(wire_server, kwargs, needle):
    with pytest.raises(ConfigError) as info:
        think(PROMPT, **kwargs)
    assert needle in str(info.value)
    _one_sentence(str(info.value))
    assert isinstance(info.value, ReasoningNBError)
    assert wire_server.requests == []


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"temperature": float("inf")}, "temperature must be a finite number"),
        ({"max_chars": 0}, "max_chars"),
        ({"prompt": "a lone \ud800 surrogate"}, "prompt holds a lone surrogate"),
        ({"system": "be terse \udfff"}, "system holds a lone surrogate"),
        ({"history": [{"role": "user", "content": "x\ud83d"}]}, "history holds a lone"),
        ({"model": "ollama:qwen\ud800", "cache": True}, "model holds a lone surrogate"),
    ],
)
def test_input_that_cannot_be_sent_is_a_config_error_before_any_io(wire_server, kwargs, needle):
    """``inf`` is no JSON number and a lone surrogate no UTF-8: either failed the request as it
    was built, with a raw ValueError or UnicodeEncodeError."""
    options = {"prompt": PROMPT, "model": "ollama:qwen3", "base_url": wire_server.url, **kwargs}

    async def ask() -> None:  # astream: it takes every run option (think() has no history)
        async for _ in astream(**options):
            pass

    with pytest.raises(ConfigError) as info:
        anyio.run(ask)
    assert needle in str(info.value)
    _one_sentence(str(info.value))
    assert wire_server.requests == []


def test_missing_key_names_the_env_var_and_sends_nothing(wire_server):
    with pytest.raises(ConfigError) as info:
        think(PROMPT, model="openrouter:x", base_url=wire_server.url)
    assert "OPENROUTER_API_KEY" in str(info.value) and "api_key=" in str(info.value)
    _one_sentence(str(info.value))
    assert wire_server.requests == []


@pytest.mark.anyio
async def test_config_errors_from_astream(wire_server):
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
        async for _ in astream(PROMPT, model="openrouter:x", base_url=wire_server.url):
            pass
    with pytest.raises(ConfigError, match="preset"):
        async for _ in astream(PROMPT, model="llamacpp:x", preset="turbo"):
            pass


# -- cancellation ----------------------------------------------------------------------------------


def _long_stream(kind: str = "chat") -> Reply:
    """A short reasoning block, then thousands of paced answer frames: seconds of streaming
    left when the client hangs up, so the server sees the close on its next write."""
    think = [f" r{i}" for i in range(20)]
    text = [f" a{i}" for i in range(3000)]
    if kind == "chat":
        return Reply.sse(wf.llamacpp_sse(think, text), pause=0.002)
    return Reply.ndjson(wf.ollama_chat(think, text), pause=0.002)


@pytest.mark.anyio
async def test_breaking_out_of_astream_closes_the_response(wire_server):
    wire_server.route("POST", CHAT, _long_stream())
    seen = []
    async for event in astream(PROMPT, model="llamacpp:x", base_url=wire_server.url):
        if isinstance(event, Waiting):
            continue  # (the model loads, then the server answers)
        seen.append(event)
        if len(seen) == 3:
            break
    # the server hears the close within 2 s (it has seconds of answer left to send)
    outcome = await anyio.to_thread.run_sync(wire_server.last.wait, 2)
    assert outcome == "client_closed"
    assert all(isinstance(e, ReasoningDelta) for e in seen)


@pytest.mark.anyio
async def test_aclosing_a_run_marks_the_trace_cancelled(wire_server):
    wire_server.route("POST", OLLAMA, _long_stream("ollama"))
    run = Run(PROMPT, model="ollama:qwen3", base_url=wire_server.url)
    async with aclosing(run.events()) as events:
        async for event in events:
            if isinstance(event, ReasoningDelta):
                break
    assert run.trace.status == "cancelled"
    assert run.trace.reasoning.strip() == "r0"
    outcome = await anyio.to_thread.run_sync(wire_server.last.wait, 5)
    assert outcome == "client_closed"


@pytest.mark.anyio
@pytest.mark.parametrize("via", ["astream", "Run.events"])
async def test_aclose_closes_the_response_before_returning(wire_server, via):
    """Not left to the garbage collector: the socket is closed when aclose() returns. The wait
    below blocks the event loop on purpose, so no deferred clean-up task could run meanwhile."""
    wire_server.route("POST", OLLAMA, _long_stream("ollama"))
    run = Run(PROMPT, model="ollama:qwen3", base_url=wire_server.url)
    stream = astream(PROMPT, model="ollama:qwen3", base_url=wire_server.url)
    async with aclosing(run.events() if via == "Run.events" else stream) as events:
        async for event in events:
            if not isinstance(event, Waiting):  # (the response is open)
                break
    assert wire_server.last.wait(3) == "client_closed"
    if via == "Run.events":
        assert run.trace.status == "cancelled"


@pytest.mark.anyio
@pytest.mark.parametrize("proto", ["chat", "ollama"])
async def test_cancelling_the_task_closes_the_response_and_keeps_the_trace(wire_server, proto):
    path = CHAT if proto == "chat" else OLLAMA
    wire_server.route("POST", path, _long_stream(proto))
    run = Run(PROMPT, model=PROTOCOLS[proto][0], base_url=wire_server.url)
    answering = anyio.Event()

    async def consume() -> None:
        async for event in run.events():
            if isinstance(event, TextDelta):
                answering.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        with anyio.fail_after(10):
            await answering.wait()
        tg.cancel_scope.cancel()
    # the server hears the close within 2 s (it has seconds of answer left to send)
    outcome = await anyio.to_thread.run_sync(wire_server.last.wait, 2)
    assert outcome == "client_closed"
    trace = run.trace
    assert trace.status == "cancelled"
    assert trace.reasoning.strip() == " ".join(f"r{i}" for i in range(20))
    assert trace.answer.startswith(" a0")  # only blank lines are dropped from the start
    assert trace.timing["total_ms"] is not None


# -- sync think() inside a running loop, model-less calls ------------------------------------------


def test_think_inside_a_running_asyncio_loop(wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER)))

    async def notebook_cell():
        asyncio.get_running_loop()  # as in a Jupyter kernel
        return think(PROMPT, model="llamacpp:x", base_url=wire_server.url)

    trace = asyncio.run(notebook_cell())
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")


def test_think_inside_anyio_run(wire_server):
    wire_server.route("POST", OLLAMA, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))

    async def main():
        return think(PROMPT, model="ollama:qwen3", base_url=wire_server.url)

    trace = anyio.run(main)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)


def test_model_from_the_env_var(wire_server, monkeypatch):
    monkeypatch.setenv("REASONING_NB_MODEL", "llamacpp:foo")
    wire_server.route("POST", CHAT, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER)))
    trace = think("x", base_url=wire_server.url)
    assert trace.model == "llamacpp:foo" and trace.provider == "llamacpp"
    assert wire_server.last.json["model"] == "foo"
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)


def _only_ollama(monkeypatch, address: str) -> None:
    """Discovery probes only Ollama, at ``address``, never the real default ports."""
    monkeypatch.setattr(discovery, "PROVIDERS", {"ollama": catalog.PROVIDERS["ollama"]})
    monkeypatch.setenv("OLLAMA_HOST", address)


def test_model_found_on_a_local_server(wire_server, monkeypatch):
    _only_ollama(monkeypatch, wire_server.url)
    wire_server.route("GET", "/api/tags", wf.ollama_tags("llama3.2:latest", "qwen3:latest"))
    wire_server.route("POST", OLLAMA, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = think("x")
    assert trace.model == "ollama:qwen3:latest"  # the thinking model is preferred
    assert wire_server.last.json["model"] == "qwen3:latest"
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)


def test_no_model_anywhere_lists_the_ways(monkeypatch, closed_port):
    _only_ollama(monkeypatch, f"http://127.0.0.1:{closed_port}")
    monkeypatch.setattr(discovery, "embedded_installed", lambda: False)
    with pytest.raises(ConfigError) as info:
        think("x")
    message = str(info.value)
    for way in ("ollama pull", "--model", "REASONING_NB_MODEL", "reasoning_nb[local]"):
        assert way in message
    _one_sentence(message)


@pytest.mark.anyio
async def test_embedded_demo_is_the_last_default(monkeypatch, closed_port):
    _only_ollama(monkeypatch, f"http://127.0.0.1:{closed_port}")
    monkeypatch.setattr(discovery, "embedded_installed", lambda: True)
    model, why = await discovery.resolve_default()
    assert model == "local:smollm2" and "embedded" in why


@pytest.mark.anyio
async def test_done_is_last_and_only_once(wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER)))
    events = [e async for e in astream(PROMPT, model="llamacpp:x", base_url=wire_server.url)]
    assert isinstance(events[-1], Done) and sum(isinstance(e, Done) for e in events) == 1


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://127.0.0.1:99999/v1", "port out of range"),
        ("http://[::1/v1", "invalid ipv6 url"),
        ("ftp://127.0.0.1/v1", "the scheme 'ftp' is not http or https"),
        ("http:///v1", "it names no host"),
    ],
)
def test_a_bad_base_url_is_one_config_error_before_any_io(url, problem):
    with pytest.raises(ConfigError) as caught:
        Run("Hi", model="llamacpp:m", base_url=url)
    assert problem in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ConfigError) as caught:  # think() too: never a ValueError or a group
        think("Hi", model="llamacpp:m", base_url=url)
    assert type(caught.value) is ConfigError


def test_a_bad_base_url_from_the_environment_ends_the_run_as_a_config_error(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:70000")
    with pytest.raises(ConfigError, match="port out of range"):
        think("Hi", model="ollama:qwen3")


def test_a_bad_base_url_never_echoes_its_credentials():
    with pytest.raises(ConfigError) as caught:
        Run("Hi", model="llamacpp:m", base_url="http://user:sk-secret-123@[::1/v1")
    assert "sk-secret-123" not in str(caught.value) and "//…@" in str(caught.value)


def test_a_key_read_with_its_trailing_newline_is_sent_without_it(wire_server, monkeypatch):
    wire_server.route("POST", "/v1/chat/completions", Reply.sse(wf.chat_sse("r", "a")))
    monkeypatch.setenv("LLAMACPP_API_KEY", "sk-from-a-file-123\n")
    trace = think("Hi", model="llamacpp:m", base_url=wire_server.url)
    assert trace.status == "complete"
    assert wire_server.last.headers["authorization"] == "Bearer sk-from-a-file-123"


@pytest.mark.parametrize("bad", ["sk-abc\x7fdef", "sk-abc\ndef", "sk-ключ"])
def test_a_key_no_header_can_carry_is_refused_by_name_not_value(wire_server, monkeypatch, bad):
    monkeypatch.setenv("LLAMACPP_API_KEY", bad)
    with pytest.raises(ConfigError) as caught:
        think("Hi", model="llamacpp:m", base_url=wire_server.url)
    assert "LLAMACPP_API_KEY" in str(caught.value) and "sk-" not in str(caught.value)
    assert not wire_server.requests  # refused before any I/O


def test_scrub_covers_the_forms_libraries_quote_a_key_in():
    transport = Transport(secrets=("sk-a/b\n",))
    for quoted in ("b'Bearer sk-a/b\\n'", "'sk-a/b\\n'", "?key=sk-a%2Fb%0A", "raw sk-a/b\n"):
        assert "sk-a" not in transport.scrub(quoted), quoted


def _proxy_env(monkeypatch, proxy: str) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, proxy)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def test_a_remote_host_is_reached_through_the_environment_proxy(wire_server, monkeypatch):
    """The wire server plays the corporate proxy: the request for the remote host reaches it."""
    _proxy_env(monkeypatch, wire_server.url)
    wire_server.route("POST", "/v1/chat/completions", Reply.sse(wf.chat_sse("r", "via proxy")))
    trace = think("Hi", model="llamacpp:m", base_url="http://models.example.test/v1")
    assert trace.answer == "via proxy"
    assert wire_server.last.headers["host"] == "models.example.test"


def test_no_proxy_and_loopback_skip_the_proxy(wire_server, monkeypatch):
    _proxy_env(monkeypatch, "http://127.0.0.1:9")  # discard port: a proxy that never answers
    wire_server.route("POST", "/v1/chat/completions", Reply.sse(wf.chat_sse("r", "direct")))
    assert think("Hi", model="llamacpp:m", base_url=wire_server.url).answer == "direct"
    local = wire_server.url.replace("127.0.0.1", "localhost")
    assert think("Hi", model="llamacpp:m", base_url=local).answer == "direct"
    monkeypatch.setenv("NO_PROXY", "models.example.test")
    assert proxy_for("http://models.example.test/v1") is None
    assert proxy_for("https://api.example.test/v1") == "http://127.0.0.1:9"


def _chat(delta: dict) -> str:
    return wf.sse({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})


def _ollama(message: object, done: bool = False) -> str:
    return json.dumps({"model": "qwen3", "message": message, "done": done}) + "\n"


WRONG_SHAPES = {
    "choices-null": (CHAT, "llamacpp:m", Reply.sse, [
        _chat({"reasoning_content": "Think."}), _chat({"content": "Part"}),
        wf.sse({"choices": [None]}),
    ]),
    "delta-list": (CHAT, "llamacpp:m", Reply.sse, [
        _chat({"reasoning_content": "Think."}), _chat({"content": "Part"}),
        wf.sse({"choices": [{"index": 0, "delta": ["not", "an", "object"]}]}),
    ]),
    "ollama-message-string": (OLLAMA, "ollama:qwen3", Reply.ndjson, [
        _ollama({"role": "assistant", "thinking": "Think."}),
        _ollama({"role": "assistant", "content": "Part"}),
        _ollama("a string where an object belongs"),
    ]),
}  # fmt: skip


@pytest.mark.parametrize("case", WRONG_SHAPES)
def test_valid_json_of_the_wrong_shape_is_a_provider_error_keeping_the_trace(wire_server, case):
    path, model, reply, frames = WRONG_SHAPES[case]
    wire_server.route("POST", path, reply(frames))
    with pytest.raises(ProviderError) as caught:
        think("Hi", model=model, base_url=wire_server.url)
    error = caught.value
    assert type(error) is ProviderError and "\n" not in str(error)
    assert "cannot read" in str(error)
    assert error.trace is not None and error.trace.status == "error"
    assert (error.trace.reasoning, error.trace.answer) == ("Think.", "Part")


def test_mistral_part_lists_split_thinking_from_text(wire_server):
    thinking = [{"type": "text", "text": "Add "}, {"type": "text", "text": "them."}]
    frames = [
        _chat({"role": "assistant", "content": ""}),
        _chat({"content": [{"type": "thinking", "thinking": thinking}]}),
        _chat({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": " Do"}]}]}),
        _chat({"content": [{"type": "thinking", "thinking": "ne."}]}),
        _chat({"content": [{"type": "text", "text": "42"}]}),
        _chat({"content": " is it."}),
        wf.sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        wf.SSE_DONE,
    ]
    wire_server.route("POST", CHAT, Reply.sse(frames, chunking="random", seed=11))
    trace = think("17+25?", model="openai-compatible:magistral", base_url=wire_server.url)
    assert (trace.reasoning, trace.answer) == ("Add them. Done.", "42 is it.")
    assert trace.status == "complete"


# -- line splitting: only \n, \r\n and \r end a line -----------------------------------------------

SEPARATORS = "a\u2028b\u2029c\u0085d é 😀"  # raw in JSON strings, as llama.cpp and vLLM send them


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("proto", ["chat", "ollama"])
def test_unicode_line_separators_inside_json_do_not_cut_frames(wire_server, proto, seed):
    reasoning, answer = f"Think {SEPARATORS}.", f"Answer {SEPARATORS}."
    if proto == "chat":
        reply = Reply.sse(wf.chat_sse(reasoning, answer), chunking="random", seed=seed)
    else:
        reply = Reply.ndjson(wf.ollama_chat(reasoning, answer), chunking="random", seed=seed)
    assert "\u2028".encode() in reply.payload()  # sent raw, not as \\u2028
    wire_server.route("POST", PROTOCOLS[proto][1], reply)
    trace = think("Hi", model=PROTOCOLS[proto][0], base_url=wire_server.url)
    assert (trace.reasoning, trace.answer) == (reasoning, answer)


@pytest.mark.parametrize("proto", ["chat", "ollama"])
def test_a_compressed_stream_is_decompressed(wire_server, proto):
    # Uncompressed bodies skip httpx's decoding layer; a gzip one must still go through it.
    model, path, frames, reply = PROTOCOLS[proto]
    body = gzip.compress("".join(frames()).encode())
    wire_server.route(
        "POST", path, reply([body], chunking="random", seed=5, headers={"Content-Encoding": "gzip"})
    )
    trace = think("Hi", model=model, base_url=wire_server.url)
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")


def _split_lines(pieces: list[bytes]) -> list[str]:
    from reasoning_nb.providers.framing import Framer

    framer = Framer("ndjson")
    lines = [line for piece in pieces for line in framer.lines(piece)]
    return lines + framer.lines(b"", final=True)


@given(
    st.lists(st.sampled_from(["data: x", "é", "😀", "\u2028", "\r", "\n", "\r\n", "", "{}"])),
    st.data(),
)
@settings(max_examples=300, deadline=None)
def test_the_same_bytes_split_anywhere_give_the_same_lines(parts, data):
    whole = "".join(parts).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(whole)), max_size=8)))
    pieces = [whole[i:j] for i, j in zip([0, *cuts], [*cuts, len(whole)], strict=True)]
    expected = whole.decode().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if expected[-1] == "":
        expected.pop()  # a final line end makes no empty last line
    assert _split_lines(pieces) == expected


def _cut(whole: bytes, data) -> list[bytes]:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(whole)), max_size=8)))
    return [whole[i:j] for i, j in zip([0, *cuts], [*cuts, len(whole)], strict=True)]


def _frames(framing: str, pieces: list[bytes]) -> list:
    from reasoning_nb.providers.framing import Framer

    framer = Framer(framing)
    return [frame for piece in pieces for frame in framer.feed(piece)] + framer.close()


def test_sse_frames_join_data_lines_and_keep_event_names():
    body = b'event: delta\r\ndata: {"a":\r\ndata:1}\r\n\r\n: ping\n\nid: 7\ndata: [DONE]'
    assert _frames("sse", [body]) == [('{"a":\n1}', "delta"), ("[DONE]", None)]


SSE_LINES = ["data: {}", "data:x", "event: message_start", ": ping", "", "id: 3", "data: é😀\u2028"]


@given(st.lists(st.sampled_from(SSE_LINES)), st.sampled_from(["\n", "\r\n", "\r"]), st.data())
@settings(max_examples=300, deadline=None)
def test_sse_frames_are_the_same_however_the_body_is_cut(lines, end, data):
    whole = "".join(line + end for line in lines).encode()
    assert _frames("sse", _cut(whole, data)) == _frames("sse", [whole])
