"""Ollama native ``/api/chat`` (NDJSON) over a real socket, through the public API.

The server is ``wire_server`` scripted with the shapes of wire-formats §1, cut at random places
(several seeds); the request bodies are held to the ollama row of spec/presets.md.
"""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_harness import Provider, check_length_limit, n_tokens
from provider_harness import check_events as check_tagless
from wire_server import Reply

from reasoning_nb import Reclassify, think

PATH = "/api/chat"
PROMPT = "What is 17 × 23?"
REASONING = "Okay: 17 × 23 = 17 × 20 + 17 × 3 = 340 + 51 = 391. Café ☕, “done”."
ANSWER = "The answer is **391** (and 2 < 3 still holds) 😀."
TAGS = ("<think>", "</think>", "</", "<|")
CHUNKINGS = [(1, 48), (2, 29), (3, 7)]


pytestmark = pytest.mark.usefixtures("no_provider_env", "fresh_discovery")


OLLAMA = Provider("ollama:qwen3", PATH, prompt=PROMPT, framing="ndjson")
run, stream = OLLAMA.run, OLLAMA.events


def check_events(events: list, *, single_block: bool = True):
    return check_tagless(events, REASONING, ANSWER, tags=TAGS, single_block=single_block)


# -- shapes ----------------------------------------------------------------------------------------

SHAPES = {
    "thinking-field": (wf.ollama_chat(REASONING, ANSWER), True),
    # older Ollama, or a template Ollama does not parse: tags inline in content
    "inline-tags": (wf.ollama_chat(REASONING, ANSWER, inline_tags=True), True),
    "inline-tags-split-newlines": (
        wf.ollama_chat(REASONING, ANSWER, inline_tags=True, tags_split=True, tag_newlines=True),
        True,
    ),
    # deepseek-r1 templates pre-open <think>: only the closer arrives
    "inline-forced-open": (
        wf.ollama_chat(REASONING, ANSWER, inline_tags=True, tags_open=False, model="deepseek-r1"),
        False,
    ),
}


@pytest.mark.parametrize("seed,max_piece", CHUNKINGS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_shapes_give_the_exact_trace(wire_server, shape, seed, max_piece):
    frames, single_block = SHAPES[shape]
    wire_server.route(
        "POST", PATH, Reply.ndjson(frames, chunking="random", seed=seed, max_piece=max_piece)
    )
    events = stream(wire_server)
    trace = check_events(events, single_block=single_block)
    n = n_tokens(REASONING, ANSWER)  # eval_count of the done line
    assert trace.usage == {"input_tokens": 26, "output_tokens": n, "reasoning_tokens": None}
    assert trace.status == "complete" and trace.finish_reason == "stop"
    assert trace.warnings == []
    assert (trace.model, trace.provider) == ("ollama:qwen3", "ollama")
    if not single_block:
        assert Reclassify in [type(e) for e in events]
    # auto asks nothing of /api/show and sends no `think`
    assert [r.path for r in wire_server.requests] == ["/api/ps", PATH]  # (/api/ps: status line)
    assert "think" not in wire_server.last.json and trace.request == {}


def test_reasoning_in_both_thinking_and_content_is_kept_once(wire_server):
    """A proxy that forwards the thinking field and leaves the tags in content too."""
    think_lines = wf.ollama_chat(REASONING, "")[:-1]
    tagged = wf.ollama_chat(REASONING, ANSWER, inline_tags=True)
    wire_server.route("POST", PATH, Reply.ndjson(think_lines + tagged, chunking="random", seed=4))
    trace = check_events(stream(wire_server))
    assert trace.reasoning.count("17 × 20") == 1


@pytest.mark.parametrize("seed", [1, 2])
def test_length_limit_is_truncated(wire_server, seed):
    frames = wf.ollama_chat(REASONING, ANSWER, done_reason="length")
    check_length_limit(OLLAMA, wire_server, frames, seed, (REASONING, ANSWER))


def test_no_counts_means_unknown_usage(wire_server):
    frames = wf.ollama_chat(REASONING, ANSWER, usage=False)
    wire_server.route("POST", PATH, Reply.ndjson(frames, chunking="random", seed=3))
    trace = run(wire_server)
    assert trace.usage == {"input_tokens": None, "output_tokens": None, "reasoning_tokens": None}
    assert trace.status == "complete"


def test_model_with_colons_keeps_its_tag(wire_server):
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = run(wire_server, "ollama:qwen3:0.6b", base_url=wire_server.url + "/")
    assert wire_server.last.json["model"] == "qwen3:0.6b"
    assert (trace.model, trace.provider) == ("ollama:qwen3:0.6b", "ollama")


def test_ollama_host_env_is_the_default_address(wire_server, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{wire_server.port}")  # no scheme, as often set
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = think(PROMPT, model="ollama:qwen3")
    assert trace.answer == ANSWER and len(wire_server.requests_to(PATH)) == 1


@pytest.mark.parametrize(
    "form", ["127.0.0.1:{port}", ":{port}", "0.0.0.0:{port}", "http://:{port}/"]
)
def test_ollama_host_forms_reach_the_server(wire_server, monkeypatch, form):
    """Ollama's own reading of OLLAMA_HOST: no scheme is http, no host is this machine, and the
    bind address 0.0.0.0 (Ollama's FAQ sets it to expose the server) is this machine."""
    monkeypatch.setenv("OLLAMA_HOST", form.format(port=wire_server.port))
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = think(PROMPT, model="ollama:qwen3")
    assert trace.answer == ANSWER and len(wire_server.requests_to(PATH)) == 1


@pytest.mark.parametrize(
    ("form", "address"),
    [
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("127.0.0.1", "http://127.0.0.1:11434"),
        ("localhost", "http://localhost:11434"),
        ("[::]", "http://[::1]:11434"),
        (":11434", "http://127.0.0.1:11434"),
        ("ollama.lan:8000/", "http://ollama.lan:8000"),
        ("https://ollama.com", "https://ollama.com"),  # a scheme given: its own port, as Ollama
        ("http://10.0.0.5", "http://10.0.0.5"),
    ],
)
def test_ollama_host_forms_without_a_port_go_to_11434(monkeypatch, form, address):
    """Checked without I/O: the one normaliser every call, probe and cache key goes through."""
    from reasoning_nb.providers.address import base_url_for
    from reasoning_nb.providers.catalog import PROVIDERS

    monkeypatch.setenv("OLLAMA_HOST", form)
    assert base_url_for(PROVIDERS["ollama"]) == address


@settings(deadline=None)
@given(
    scheme=st.sampled_from(["", "http://", "https://"]),
    host=st.sampled_from(["", "0.0.0.0", "[::]", "[::1]", "127.0.0.1", "LocalHost", "gw.lan"]),
    port=st.one_of(st.none(), st.integers(1, 65535)),
    path=st.sampled_from(["", "/", "/v1", "/a/v1/", "/models/x/v1"]),
    provider=st.sampled_from(["ollama", "llamacpp", "openai-compatible", "anthropic"]),
)
def test_a_normalised_base_url_reads_the_same_again(scheme, host, port, path, provider):
    """The request URL, the cache key and --list start from one reading: reading its result
    again changes nothing, and no bind address or trailing slash survives it."""
    from reasoning_nb.errors import ConfigError
    from reasoning_nb.providers.address import normalise
    from reasoning_nb.providers.catalog import PROVIDERS

    info = PROVIDERS[provider]
    url = f"{scheme}{host}{'' if port is None else f':{port}'}{path}"
    if not host and provider != "ollama":  # only Ollama reads no host as this machine
        with pytest.raises(ConfigError, match="names no host"):
            normalise(url, info)
        return
    once = normalise(url, info)
    assert normalise(once, info) == once
    assert once.startswith(("http://", "https://")) and not once.endswith("/")
    assert "0.0.0.0" not in once and "[::]" not in once and once == once.lower()
    if port is not None and port not in (80, 443):
        assert f":{port}" in once


def test_ollama_key_goes_only_to_ollama_own_address(wire_server, elsewhere, monkeypatch):
    """OLLAMA_API_KEY (an ollama.com key) is not sent to a base_url on another machine that is
    not Ollama's own; OLLAMA_HOST is the user's own choice."""
    key = "ollama-key-0123456789"
    monkeypatch.setenv("OLLAMA_API_KEY", key)
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    think(PROMPT, model="ollama:qwen3", base_url=elsewhere)
    assert wire_server.last.headers["host"] == "colleague.example:8080"
    assert "authorization" not in wire_server.last.headers
    monkeypatch.setenv("OLLAMA_HOST", elsewhere)
    think(PROMPT, model="ollama:qwen3")
    assert wire_server.last.headers["authorization"] == f"Bearer {key}"


# -- request bodies (spec/presets.md, ollama row) --------------------------------------------------

# (model, preset, budget) -> (think sent or None for absent, a warning is expected)
BODIES = {
    ("qwen3", "auto", None): (None, False),
    ("qwen3", "off", None): (False, False),
    ("qwen3", "low", None): ("low", False),
    ("qwen3", "medium", None): ("medium", False),
    ("qwen3", "high", None): ("high", False),
    ("qwen3", "max", None): ("max", False),
    ("qwen3", "auto", 1000): ("low", True),  # a budget is bucketed to a level
    ("qwen3", "auto", 3000): ("medium", True),
    ("qwen3", "auto", 9000): ("high", True),
    ("qwen3", "auto", 20000): ("max", True),
    ("gpt-oss:20b", "off", None): ("low", True),  # gpt-oss cannot switch off
    ("gpt-oss:20b", "max", None): ("high", True),  # gpt-oss takes low/medium/high only
    ("gpt-oss:20b", "high", None): ("high", False),
}


@pytest.mark.parametrize("model,preset,budget", list(BODIES), ids=lambda v: str(v))
def test_request_body_matches_the_preset_table(wire_server, model, preset, budget):
    think_sent, warned = BODIES[(model, preset, budget)]
    wire_server.route("POST", "/api/show", wf.ollama_show(("completion", "thinking")))
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = run(wire_server, f"ollama:{model}", preset=preset, budget_tokens=budget)
    (body,) = wire_server.bodies(PATH)
    expected = {} if think_sent is None else {"think": think_sent}
    assert {k: v for k, v in body.items() if k == "think"} == expected
    assert trace.request == expected
    assert set(body) <= {"model", "messages", "stream", "think"}
    assert body["model"] == model and body["stream"] is True
    assert body["messages"] == [{"role": "user", "content": PROMPT}]
    assert bool(trace.warnings) == warned
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)  # shown whatever the preset


def test_show_without_thinking_capability_sends_no_think(wire_server):
    """/api/show says the model cannot think: no `think` (it would be a 400), and a warning."""
    wire_server.route("POST", "/api/show", wf.ollama_show(("completion",)))
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat("", ANSWER)))
    trace = run(wire_server, "ollama:llama3.2", preset="high")
    assert wire_server.bodies("/api/show") == [{"model": "llama3.2"}]
    assert "think" not in wire_server.last.json and trace.request == {}
    assert len(trace.warnings) == 1 and "'high'" in trace.warnings[0]
    assert trace.answer == ANSWER and trace.reasoning == ""


def test_options_system_and_history_order(wire_server):
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    run(wire_server, system="Be brief.", max_tokens=128, temperature=0.6)
    body = wire_server.last.json
    assert body["options"] == {"num_predict": 128, "temperature": 0.6}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": PROMPT},
    ]
    assert wire_server.last.headers["content-type"] == "application/json"


def test_api_key_is_never_saved(wire_server):
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = run(wire_server, api_key="sk-ollama-x")
    assert "sk-ollama-x" not in json.dumps(trace.to_dict())


@pytest.mark.parametrize(
    "answer",
    [
        "Wrap it as <think>notes</think> before the reply.",  # case 1: quoted tags
        "The closer is </think> and then the reply.",  # case 2: a lone closer
    ],
)
def test_tags_quoted_in_an_answer_after_native_thinking_stay_in_it(wire_server, answer):
    wire_server.route(
        "POST", "/api/chat", Reply.ndjson(wf.ollama_chat("Think first.", answer), chunking="random")
    )
    trace = think("How do I mark reasoning?", model="ollama:qwen3", base_url=wire_server.url)
    assert (trace.reasoning, trace.answer) == ("Think first.", answer)


@pytest.mark.parametrize(
    "odd",
    ["12", 1e308, 10**400, True, -3, 2.5],
    ids=["str", "1e308", "10**400", "bool", "-3", "2.5"],
)
def test_odd_token_counts_are_dropped_and_the_run_keeps_its_text(wire_server, odd):
    """A count that is not a sane whole number (``"12"``, ``1e308``, ``10**400``, which JSON
    allows) is left out with a warning; the views that do arithmetic on counts still render."""
    from reasoning_nb.views import render
    from reasoning_nb.views.stats import row

    frames = wf.ollama_chat(REASONING, ANSWER, usage={"eval_count": odd, "prompt_eval_count": 7})
    wire_server.route("POST", PATH, Reply.ndjson(frames, chunking="random", seed=5))
    trace = run(wire_server)
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")
    assert trace.usage == {"input_tokens": 7, "output_tokens": None, "reasoning_tokens": None}
    [warning] = trace.warnings
    assert "eval_count" in warning and "leaves them out" in warning
    for mode in render.MODES:
        assert ANSWER.split()[0] in render.bundle(trace, mode)["text/plain"]
    assert row(trace)["reasoning_tokens"] > 0  # estimated from the text instead


def test_a_whole_float_count_is_read_as_its_integer(wire_server):
    frames = wf.ollama_chat(REASONING, ANSWER, usage={"eval_count": 12.0})
    wire_server.route("POST", PATH, Reply.ndjson(frames))
    trace = run(wire_server)
    assert trace.usage["output_tokens"] == 12 and type(trace.usage["output_tokens"]) is int
    assert trace.warnings == []


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=5,
)


@settings(max_examples=200, deadline=None)
@given(prompt=JSON_VALUES, output=JSON_VALUES | st.integers(min_value=10**11, max_value=10**400))
def test_any_count_the_parser_reads_is_a_sane_integer_or_none(prompt, output):
    """Whatever JSON a server puts in the counts, the Usage holds ints in range or None, and
    a Notice names what was left out."""
    from reasoning_nb.core.events import Notice, Usage
    from reasoning_nb.core.tokens import MAX_COUNT
    from reasoning_nb.providers import ollama

    line = json.dumps({"done": True, "prompt_eval_count": prompt, "eval_count": output})
    events = ollama.Parser(None).feed(line)
    [usage] = [e for e in events if isinstance(e, Usage)]
    for sent, got in ((prompt, usage.input_tokens), (output, usage.output_tokens)):
        assert got is None or (type(got) is int and 0 <= got < MAX_COUNT and got == sent)
        if sent is not None and got is None:
            assert any(isinstance(e, Notice) for e in events)
