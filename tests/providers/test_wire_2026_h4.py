"""Issue 25, items 4 (Anthropic) and 7 (DeepSeek V4): the wire formats of 2026, over a real socket.

Anthropic sources: anthropics/anthropic-sdk-python@009b035 ``src/anthropic/types/
thinking_config_{adaptive,enabled}_param.py`` (``display: summarized | omitted``) and
``model_param.py`` (the model names); the AWS Bedrock "Adaptive thinking" page
(docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html: Mythos
Preview, Mythos 5, Fable 5 take adaptive only and reject ``enabled`` and ``disabled``; Opus 4.7
rejects ``enabled``); anthropics/claude-code#49268 (Opus 4.7 and Mythos Preview default to
``display: "omitted"``, 4.6 and older to a summary); docker/docker-agent#3415 (Opus 4.7+ and
Fable 5 hide thinking by default); wire-formats.md §6 (block order, tool-use turns).

DeepSeek source: api-docs.deepseek.com/guides/thinking_mode (2026: thinking on by default;
``reasoning_effort: low | high | max``, minimal -> low, medium -> high, xhigh -> high; between two
user turns without tool calls ``reasoning_content`` need not go back, after tool calls it must);
wire-formats.md §9.
"""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from provider_harness import PROMPT, Provider
from wire_server import Reply

from reasoning_nb import ReasoningDelta, TextDelta
from reasoning_nb.core.history import Conversation
from reasoning_nb.providers.catalog import PROVIDERS

pytestmark = pytest.mark.usefixtures("no_provider_env")

# -- item 4: Anthropic -----------------------------------------------------------------------------

MESSAGES = "/v1/messages"
CLAUDE = Provider("anthropic:claude-opus-4-7", MESSAGES, "sk-ant-test-0123456789")
SUMMARY = {"type": "adaptive", "display": "summarized"}
ADAPTIVE = {"type": "adaptive"}


def _manual(budget: int) -> dict:
    return {"thinking": {"type": "enabled", "budget_tokens": budget}}


def _effort(thinking: dict, effort: str) -> dict:
    return {"thinking": thinking, "output_config": {"effort": effort}}


# model, preset, budget -> (thinking fields sent, a warning names this, or None)
CLAUDE_BODIES = {
    # manual budgets (4.5 and older): never sent `display`, which they default to anyway
    ("claude-sonnet-4-5", "high", None): (_manual(16000), None),
    ("claude-sonnet-4-5", "auto", 5000): (_manual(5000), None),
    ("claude-3-7-sonnet-20250219", "low", None): (_manual(2048), None),
    # 4.6: adaptive, summarized by default, so no `display`; a budget becomes an effort
    ("claude-opus-4-6", "high", None): (_effort(ADAPTIVE, "high"), None),
    ("claude-sonnet-4-6", "auto", 5000): (_effort(ADAPTIVE, "medium"), "budget_tokens=5000"),
    # hidden by default: every effort, and a budget override, asks for the summary
    ("claude-opus-4-7", "low", None): (_effort(SUMMARY, "low"), None),
    ("claude-opus-4-7", "auto", 20000): (_effort(SUMMARY, "max"), "budget_tokens=20000"),
    ("claude-opus-4-8", "medium", None): (_effort(SUMMARY, "medium"), None),
    ("claude-sonnet-5", "high", None): (_effort(SUMMARY, "high"), None),
    ("claude-opus-5", "max", None): (_effort(SUMMARY, "max"), None),
    # Opus 4.7 / Claude 5 think only when asked: auto and off send nothing
    ("claude-opus-4-7", "auto", None): ({}, None),
    ("claude-sonnet-5", "off", None): ({}, None),
    # Mythos and Fable think when `thinking` is unset: auto asks to see it, off cannot be
    ("claude-mythos-preview", "auto", None): ({"thinking": SUMMARY}, None),
    ("claude-mythos-5", "auto", None): ({"thinking": SUMMARY}, None),
    ("claude-fable-5", "auto", None): ({"thinking": SUMMARY}, None),
    ("claude-fable-5", "off", None): (_effort(SUMMARY, "low"), "cannot switch reasoning off"),
    ("claude-mythos-preview", "high", None): (_effort(SUMMARY, "high"), None),
    ("claude-mythos-5", "auto", 3000): (_effort(SUMMARY, "medium"), "budget_tokens=3000"),
}


@pytest.mark.parametrize("model,preset,budget", list(CLAUDE_BODIES), ids=str)
def test_claude_thinking_fields_per_model_family(wire_server, model, preset, budget):
    """Adaptive rows and `display` per family (sources: module docstring, item 4)."""
    fields, warning = CLAUDE_BODIES[(model, preset, budget)]
    trace, body = CLAUDE.sent(
        wire_server, wf.anthropic_sse("r", "a"), f"anthropic:{model}", preset, budget
    )
    assert {k: body[k] for k in ("thinking", "output_config") if k in body} == fields
    assert {k: v for k, v in trace.request.items() if k != "max_tokens"} == fields
    if warning is None:
        assert trace.warnings == []
    else:
        assert len(trace.warnings) == 1 and warning in trace.warnings[0]


def test_enabled_rejected_is_resent_adaptive_with_the_summary(wire_server):
    """A model newer than the snapshot rejects `enabled` (Opus 4.7+, Mythos, Fable: AWS Bedrock
    adaptive-thinking page); those models hide thinking, so the retry asks for the summary."""
    rejected = wf.anthropic_error_body(
        '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" '
        'and "output_config.effort" to control thinking behavior.'
    )
    wire_server.route(
        "POST", MESSAGES, Reply.json(rejected, 400), Reply.sse(wf.anthropic_sse("r", "a"))
    )
    trace = CLAUDE.run(wire_server, "anthropic:claude-sonnet-4-5", preset="medium")
    first, second = wire_server.bodies(MESSAGES)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert second["thinking"] == SUMMARY and second["output_config"] == {"effort": "high"}
    assert trace.reasoning == "r" and any("sent again" in w for w in trace.warnings)


R1, R2 = "I should look this up.", "The search says 391."
ANSWER = "It is **391**."
SERVER_TOOL = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}


def _text(index: int, text: str) -> list[str]:
    return wf.anthropic_block(
        index, {"type": "text", "text": ""}, [{"type": "text_delta", "text": text}]
    )


def _interleaved() -> list[str]:
    """Thinking, a server tool call and its result, thinking again, a text, a client tool call
    (with its input streamed) and the closing text: one turn of interleaved thinking."""
    args = [{"type": "input_json_delta", "partial_json": p} for p in ('{"q": ', '"17*23"}')]
    blocks = [
        wf.anthropic_thinking_block(0, R1, "sig-1"),
        wf.anthropic_block(1, SERVER_TOOL, args),
        wf.anthropic_block(2, RESULT, []),
        wf.anthropic_thinking_block(3, R2, "sig-2"),
        _text(4, "So"),
        wf.anthropic_block(5, TOOL, args),
        _text(6, ANSWER),
    ]
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 9}}}
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}}
    return [
        wf.sse(start, "message_start"),
        *[f for b in blocks for f in b],
        wf.sse(end, "message_delta"),
        wf.sse({"type": "message_stop"}, "message_stop"),
    ]


@pytest.mark.parametrize("seed", range(3))
def test_interleaved_thinking_keeps_its_order_in_the_stream_the_state_and_the_replay(
    wire_server, seed
):
    """Interleaved thinking between tool calls (wire-formats §6; adaptive mode interleaves on
    its own, AWS Bedrock adaptive-thinking page). The package sends no tools, so tool blocks can
    only come from a server that adds them: they are neither shown nor replayed, and the thinking
    and text around them keep their order, with their signatures, for the next `--chat` turn."""
    CLAUDE.serve(wire_server, _interleaved(), seed=seed, max_piece=9)
    events = CLAUDE.events(wire_server, preset="high")
    kinds = []
    for e in events:
        kind = {ReasoningDelta: "r", TextDelta: "a"}.get(type(e))
        if kind and (not kinds or kinds[-1] != kind):
            kinds.append(kind)
    assert kinds == ["r", "a"]  # R1, R2, then the texts: no tool block shows
    trace = events[-1].trace
    assert (trace.reasoning, trace.answer) == (f"{R1}\n\n{R2}", f"So\n\n{ANSWER}")
    blocks = [
        {"type": "thinking", "thinking": R1, "signature": "sig-1"},
        {"type": "thinking", "thinking": R2, "signature": "sig-2"},
        {"type": "text", "text": "So"},
        {"type": "text", "text": ANSWER},
    ]
    assert trace.provider_state == {"anthropic": {"model": "claude-opus-4-7", "content": blocks}}
    chat = Conversation("c")
    chat.add(trace)
    history = chat.messages(PROVIDERS["anthropic"])
    CLAUDE.serve(wire_server, wf.anthropic_sse("r", "a"))
    CLAUDE.run_with(wire_server, history=history, preset="high")
    sent = wire_server.last.json["messages"]
    assert sent[:2] == [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": blocks},
    ]
    assert "tool_use" not in json.dumps(sent)


# -- item 7: DeepSeek V4 ---------------------------------------------------------------------------

CHAT = "/v1/chat/completions"
DEEPSEEK = Provider("deepseek:deepseek-v4-pro", CHAT, "sk-deepseek-test-0123456789")
ON = {"thinking": {"type": "enabled"}}
REASONING, REPLY = "17 × 23: 340 + 51.", "391."

# preset, budget -> (fields sent, a warning names this, or None)
DEEPSEEK_BODIES = {
    ("auto", None): ({}, None),  # thinking is on by default: nothing to send
    ("low", None): (ON | {"reasoning_effort": "low"}, None),
    ("medium", None): (ON | {"reasoning_effort": "high"}, "no effort 'medium'; sent 'high'"),
    ("high", None): (ON | {"reasoning_effort": "high"}, None),
    ("max", None): (ON | {"reasoning_effort": "max"}, None),
    ("off", None): ({"thinking": {"type": "disabled"}}, None),
    ("auto", 1000): (ON | {"reasoning_effort": "low"}, "budget_tokens=1000"),
}


@pytest.mark.parametrize("preset,budget", list(DEEPSEEK_BODIES), ids=str)
def test_deepseek_v4_efforts_low_high_max_and_the_medium_clamp_warns(wire_server, preset, budget):
    """api-docs.deepseek.com/guides/thinking_mode: `reasoning_effort` low/high/max (the
    snapshot's high/max is older); medium is sent as high with a warning in trace.warnings."""
    fields, warning = DEEPSEEK_BODIES[(preset, budget)]
    frames = wf.deepseek_sse(REASONING, REPLY)
    trace, body = DEEPSEEK.sent(wire_server, frames, "deepseek:deepseek-v4-pro", preset, budget)
    sent = {k: body[k] for k in body if k not in ("model", "messages", "stream", "stream_options")}
    assert sent == fields and trace.request == fields
    assert (trace.reasoning, trace.answer) == (REASONING, REPLY)  # read with nothing asked
    if warning is None:
        assert trace.warnings == []
    else:
        assert any(warning in w for w in trace.warnings), trace.warnings


def test_deepseek_medium_budget_warns_twice_and_a_user_override_still_wins(wire_server):
    """A budget of 5000 buckets to medium, which DeepSeek has not: both changes are said."""
    from reasoning_nb.core.capabilities import clear_overrides, override

    frames = wf.deepseek_sse(REASONING, REPLY)
    trace, body = DEEPSEEK.sent(wire_server, frames, "deepseek:deepseek-v4-pro", "auto", 5000)
    assert body["reasoning_effort"] == "high" and len(trace.warnings) == 2
    override("deepseek:deepseek-v4-pro", efforts=("high", "max"))
    try:
        trace, body = DEEPSEEK.sent(wire_server, frames, "deepseek:deepseek-v4-pro", "low", None)
    finally:
        clear_overrides()
    assert body["reasoning_effort"] == "high" and "takes high, max" in trace.warnings[0]


def test_deepseek_history_keeps_reasoning_content_of_tool_call_turns(wire_server):
    """api-docs.deepseek.com/guides/thinking_mode: after a tool call, `reasoning_content` must
    go back in every later request (else 400). The package makes no tool calls, so its own
    `--chat` turns are plain answers (the docs: ignored if sent, so not sent); a history a caller
    passes with tool-call turns goes out exactly as given."""
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    history = [
        {"role": "user", "content": "What is 17 × 23?"},
        {"role": "assistant", "content": "", "reasoning_content": "Use f.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "391"},
        {"role": "assistant", "content": "391.", "reasoning_content": "f said 391."},
    ]
    DEEPSEEK.serve(wire_server, wf.deepseek_sse(REASONING, REPLY))
    DEEPSEEK.run_with(wire_server, history=history, preset="high")
    assert wire_server.last.json["messages"] == [*history, {"role": "user", "content": PROMPT}]
    # the package's own turn: the answer only
    first = DEEPSEEK.run(wire_server)
    chat = Conversation("d")
    chat.add(first)
    assert chat.messages(PROVIDERS["deepseek"])[1] == {"role": "assistant", "content": REPLY}
