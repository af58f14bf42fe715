"""Issue 25, items 2 (Ollama) and 9 (gpt-oss / harmony history), over real sockets.

Sources:
- Ollama ``/api/show`` ``thinking: {"values": [...], "default": ...}``: ollama/ollama PR #18473
  ("api: expose model thinking levels and defaults", merged 2026-09-15): values are booleans
  and/or named levels, and a level a model does not list falls back to its default unnoticed.
  Before it (ollama@fb307609, 2026-08, ``api/types.go`` ``ShowResponse``) there is no such
  field, and ``ThinkValue.UnmarshalJSON`` answers 400 "invalid think value" to a string outside
  low/medium/high/max.
- Ollama's OpenAI endpoint: ollama@fb307609 ``openai/openai.go``: ``ChatCompletionRequest``
  has ``reasoning_effort`` / ``reasoning.effort`` (mapped to ``think`` by
  ``thinkFromReasoningEffort``) and no ``think``, ``chat_template_kwargs`` or budget field;
  replies carry ``delta.reasoning``.
- Harmony: OpenAI's harmony guide (cookbook.openai.com/articles/openai-harmony, "Handling
  reasoning output in subsequent sampling"): drop earlier reasoning once a turn ended in a
  ``final`` message, keep it across tool calls. gpt-oss's own ``chat_template.jinja``
  (huggingface.co/openai/gpt-oss-120b, the one llama.cpp ships as
  models/templates/openai-gpt-oss-120b.jinja): "CoT is dropped during all previous turns", the
  analysis rendered only on tool-call turns.
"""

from __future__ import annotations

import dataclasses

import pytest
import wire_fixtures as wf
from provider_harness import CHAT, PROMPT, Provider
from wire_server import Reply

from reasoning_nb.core.history import Conversation, assistant_turn
from reasoning_nb.providers.catalog import PROVIDERS

PATH = "/api/chat"
REASONING = "17 × 23 = 340 + 51 = 391. Café ☕."
ANSWER = "The answer is **391** 😀."
LEVELS = {"values": ["low", "medium", "high"], "default": "medium"}
TOGGLE = {"values": [False, True], "default": True}

OLLAMA = Provider("ollama:nova:8b", PATH, framing="ndjson")  # a name no family rule knows
pytestmark = pytest.mark.usefixtures("no_provider_env", "fresh_discovery")


def ollama_run(server, thinking: dict | None, **kw):
    """One ``ollama:nova:8b`` run whose ``/api/show`` lists ``thinking``: the trace and the
    ``think`` value sent (None: none)."""
    extra = {} if thinking is None else {"thinking": thinking}
    server.route("POST", "/api/show", wf.ollama_show(("completion", "thinking"), **extra))
    server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = OLLAMA.run(server, **kw)
    (body,) = server.bodies(PATH)
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    return trace, body.get("think")


# -- item 2a: the think values /api/show lists ---------------------------------------------------

CLAMPS = {
    # (listed, preset, budget): (think sent, words of the one warning; None: no warning)
    ("levels", "high", None): ("high", None),
    ("levels", "low", None): ("low", None),
    ("levels", "max", None): ("high", "does not accept effort 'max'"),
    ("levels", "off", None): ("low", "cannot switch reasoning off"),
    ("toggle", "high", None): (
        True,
        "only on or off, so thinking was switched on instead of effort 'high'",
    ),
    ("toggle", "off", None): (False, None),
    ("none", "max", None): ("max", None),  # a server before PR #18473: as before
}


@pytest.mark.parametrize("listed,preset,budget", list(CLAMPS), ids=str)
def test_show_thinking_values_clamp_the_preset(wire_server, listed, preset, budget):
    thinking = {"levels": LEVELS, "toggle": TOGGLE, "none": None}[listed]
    sent, words = CLAMPS[(listed, preset, budget)]
    trace, think = ollama_run(wire_server, thinking, preset=preset, budget_tokens=budget)
    assert think == sent and trace.request == {"think": sent}
    assert wire_server.bodies("/api/show") == [{"model": "nova:8b"}]
    if words is None:
        assert trace.warnings == []
    else:
        assert len(trace.warnings) == 1 and words in trace.warnings[0]


def test_a_budget_alone_asks_show_too_and_is_clamped(wire_server):
    """A budget with preset ``auto`` is a control sent, so the listed values hold it too."""
    trace, think = ollama_run(wire_server, LEVELS, budget_tokens=20_000)  # buckets to 'max'
    assert think == "high"
    assert len(wire_server.bodies("/api/show")) == 1
    assert [w for w in trace.warnings if "'max'" in w and "'high'" in w]


def test_auto_sends_nothing_and_asks_nothing(wire_server):
    wire_server.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = OLLAMA.run(wire_server)
    assert "think" not in wire_server.last.json and trace.warnings == []
    assert wire_server.requests_to("/api/show") == []


# -- item 2b: a Chat Completions provider pointed at Ollama's /v1 --------------------------------


@pytest.fixture
def ollama_here(wire_server, monkeypatch):
    """The wire server stands at Ollama's default address (its port is what the hint knows)."""
    moved = dataclasses.replace(PROVIDERS["ollama"], base_url=wire_server.url)
    monkeypatch.setitem(PROVIDERS, "ollama", moved)
    # Ollama's /v1 streams `delta.reasoning` (openai/openai.go toChunk)
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse(REASONING, ANSWER, field="reasoning")))
    return wire_server


@pytest.mark.parametrize("provider", ["openai-compatible", "llamacpp", "lmstudio", "vllm"])
def test_chat_provider_at_ollamas_v1_is_told_of_the_native_provider(ollama_here, provider):
    trace = Provider(f"{provider}:gpt-oss:20b", CHAT).run(
        ollama_here, base_url=f"{ollama_here.url}/v1", preset="high"
    )
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)  # delta.reasoning is read
    assert ollama_here.last.json["reasoning_effort"] == "high"  # what Ollama's /v1 does take
    (hint,) = [w for w in trace.warnings if "OpenAI-compatible" in w]
    assert "`ollama:MODEL`" in hint and "without /v1" in hint and "\n" not in hint


def test_no_hint_without_a_control_or_away_from_ollamas_port(ollama_here, wire_server):
    chat = Provider("openai-compatible:gpt-oss:20b", CHAT)
    assert chat.run(ollama_here, base_url=f"{ollama_here.url}/v1").warnings == []  # auto
    # the same server, but not at Ollama's address: another port
    PROVIDERS["ollama"] = dataclasses.replace(PROVIDERS["ollama"], base_url="http://h:11434")
    assert chat.run(ollama_here, base_url=f"{ollama_here.url}/v1", preset="high").warnings == []


def test_native_ollama_gets_no_hint(ollama_here):
    ollama_here.route("POST", PATH, Reply.ndjson(wf.ollama_chat(REASONING, ANSWER)))
    trace = OLLAMA.run(ollama_here, preset="high")
    assert not [w for w in trace.warnings if "OpenAI-compatible" in w]


# -- item 9: gpt-oss history drops reasoning after a final answer ---------------------------------

GPT_OSS = "openai/gpt-oss-120b"
CLAUDE = "anthropic/claude-sonnet-4.5"


def two_turns(server, provider: Provider, model: str, first_frames, second_frames) -> dict:
    """Turn 1, then turn 2 with turn 1 as ``--chat`` history: the earlier assistant message as
    the second request carried it."""
    provider.serve(server, first_frames)
    chat = Conversation("c")
    chat.add(provider.run(server, model))
    provider.serve(server, second_frames)
    provider.run_with(server, model, history=chat.messages(PROVIDERS[model.split(":")[0]]))
    messages = server.last.json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    return messages[1]


def test_openrouter_gpt_oss_history_drops_reasoning_claude_keeps_it(wire_server):
    """OpenRouter replays ``reasoning_details`` to the same model; not for gpt-oss, whose turns
    each ended in a final answer."""
    router = Provider(f"openrouter:{GPT_OSS}", CHAT, key="sk-or-v1-test")
    frames = wf.openrouter_sse(REASONING, ANSWER, provider="Groq", model=GPT_OSS, signature=None)
    turn = two_turns(wire_server, router, f"openrouter:{GPT_OSS}", frames, frames)
    assert turn == {"role": "assistant", "content": ANSWER}
    assert wire_server.last.json["messages"][0] == {"role": "user", "content": PROMPT}

    claude = wf.openrouter_sse(REASONING, ANSWER)
    turn = two_turns(wire_server, router, f"openrouter:{CLAUDE}", claude, claude)
    assert turn["content"] == ANSWER and turn["reasoning_details"][0]["text"] == REASONING


def test_gpt_oss_history_sends_answers_only_on_local_servers(wire_server):
    """Ollama (``message.thinking``) and Chat Completions servers (``reasoning``) take the answer
    only: gpt-oss's template would drop the rest anyway, and it costs upload and context."""
    ollama = Provider("ollama:gpt-oss:20b", PATH, framing="ndjson")
    frames = wf.ollama_chat(REASONING, ANSWER, model="gpt-oss:20b")
    turn = two_turns(wire_server, ollama, "ollama:gpt-oss:20b", frames, frames)
    assert turn == {"role": "assistant", "content": ANSWER}

    frames = wf.chat_sse(REASONING, ANSWER, field="reasoning")
    for name in ("vllm", "llamacpp", "lmstudio", "openai-compatible"):
        server_side = Provider(f"{name}:gpt-oss-20b", CHAT)
        turn = two_turns(wire_server, server_side, f"{name}:gpt-oss-20b", frames, frames)
        assert turn == {"role": "assistant", "content": ANSWER}, name


def test_assistant_turn_keeps_reasoning_for_other_families_only():
    """The rule is the model family's, not the provider's: the saved state decides."""
    from reasoning_nb.core.trace import Trace

    detail = {"type": "reasoning.text", "text": REASONING, "index": 0}
    for model, kept in ((GPT_OSS, False), ("gpt-oss:120b", False), (CLAUDE, True)):
        trace = Trace(model=f"openrouter:{model}", provider="openrouter", answer=ANSWER)
        trace.provider_state = {"openrouter": {"model": model, "reasoning_details": [detail]}}
        turn = assistant_turn(trace, PROVIDERS["openrouter"])
        assert ("reasoning_details" in turn) is kept, model
