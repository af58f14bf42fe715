"""An answer lost to thinking (issue 15.1): the warning at finish, Answer now and More room over
a real socket, and what a saved trace keeps of them."""

from __future__ import annotations

import pytest
import wire_fixtures as wf
from wire_server import Reply

import reasoning_nb
from reasoning_nb.core import capabilities, rescue
from reasoning_nb.core.continuation import ANSWER_NOW, CLOSE, OPEN
from reasoning_nb.core.trace import Trace, read_trace
from reasoning_nb.errors import ConfigError
from reasoning_nb.providers.catalog import output_limit
from reasoning_nb.views import render

CHAT = "/v1/chat/completions"
THOUGHT = "The capital of Australia is Canberra, not Sydney. So the answer is Canberra."


@pytest.fixture(autouse=True)
def no_overrides():
    yield
    capabilities.clear_overrides()


def lost(wire_server, answer: str = "", output_tokens: int | None = 512) -> Trace:
    """A run over the wire that hits finish_reason "length" while it still reasons."""
    usage = {"prompt_tokens": 9, "completion_tokens": output_tokens} if output_tokens else None
    frames = wf.chat_sse(THOUGHT, answer, finish_reason="length", usage=usage)
    wire_server.route("POST", CHAT, Reply.sse(frames))
    return reasoning_nb.think(
        "Capital of Australia?", model="llamacpp:m", base_url=wire_server.url, max_tokens=512
    )


def test_a_run_cut_off_while_thinking_says_so_with_the_tokens_spent(wire_server):
    trace = lost(wire_server)
    assert trace.status == "truncated" and trace.answer == ""
    assert trace.warnings == [
        "The model spent all 512 tokens thinking and gave no answer: try Answer now or More room."
    ]
    assert trace.warnings[0] in render.bundle(trace)["text/plain"]  # every view shows warnings


def test_without_counts_the_tokens_are_an_estimate_and_nearly_no_answer_counts_as_none(
    wire_server,
):
    trace = lost(wire_server, answer="The", output_tokens=None)
    estimate = round(len(THOUGHT + "The") / 4)  # (core.tokens: about 4 characters a token)
    assert trace.warnings[0].startswith(f"The model spent all ≈{estimate} tokens thinking")


def test_a_real_answer_or_a_complete_run_gets_no_warning():
    answer = "Canberra is the capital of Australia."
    cut = Trace(reasoning="r", answer=answer, finish_reason="length")
    assert cut.finish().warnings == []
    done = Trace(reasoning="r", answer="")
    assert done.finish().status == "complete" and done.warnings == []


def test_at_the_output_limit_more_room_is_not_offered(wire_server):
    capabilities.override("llamacpp:m", max_output=512)
    trace = lost(wire_server)
    assert rescue.room(trace, output_limit(trace.model)) is None
    assert trace.warnings == [
        "The model spent all 512 tokens thinking and gave no answer, at its output limit: "
        "try Answer now."
    ]
    with pytest.raises(ConfigError, match="use Answer now instead"):
        reasoning_nb.think(trace.prompt, continue_from=trace, more_room=True)


def test_answer_now_sends_the_reasoning_an_instruction_and_thinking_off(wire_server):
    before = lost(wire_server)
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("", "Canberra.")))
    after = reasoning_nb.think(
        before.prompt, base_url=wire_server.url, continue_from=before, answer_now=True
    )
    sent = wire_server.bodies(CHAT)[-1]
    user = sent["messages"][-1]["content"]
    assert user.startswith("Capital of Australia?\n")
    assert f"{OPEN}\n{THOUGHT}\n{CLOSE}" in user and user.endswith(ANSWER_NOW)
    assert sent["reasoning_effort"] == "none"  # preset off on llama.cpp
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}
    assert after.answer == "Canberra." and after.preset == "off" and after.model == "llamacpp:m"
    assert after.continued == {
        "run": None,
        "hint": "",
        "reasoning_chars": len(THOUGHT),
        "action": "answer_now",
        "max_tokens": rescue.ANSWER_ROOM,  # room of its own (test_answer_room.py)
    }


def test_answer_now_asks_the_lowest_level_where_thinking_cannot_be_switched_off(wire_server):
    before = Trace(model="llamacpp:gpt-oss-20b", prompt="Q?", reasoning="r", finish_reason="length")
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("", "A.")))
    after = reasoning_nb.think(
        "Q?", base_url=wire_server.url, continue_from=before.finish(), answer_now=True
    )
    assert wire_server.bodies(CHAT)[-1]["reasoning_effort"] == "low"
    assert any("cannot switch reasoning off" in w for w in after.warnings)


def test_more_room_doubles_max_tokens_within_the_model_limit(wire_server):
    capabilities.override("llamacpp:m", max_output=800)
    before = lost(wire_server)
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse(THOUGHT, "Canberra.")))
    after = reasoning_nb.think(
        before.prompt, base_url=wire_server.url, continue_from=before, more_room=True
    )
    sent = wire_server.bodies(CHAT)[-1]
    assert sent["max_tokens"] == 800  # 2 x 512, capped at the limit
    assert sent["messages"][-1]["content"] == "Capital of Australia?"  # the same question
    assert after.answer == "Canberra." and after.warnings == []
    assert after.continued["action"] == "more_room" and after.continued["max_tokens"] == 800


def test_more_room_doubles_when_the_limit_is_unknown(wire_server):
    before = lost(wire_server)
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse(THOUGHT, "Canberra.")))
    url = wire_server.url
    reasoning_nb.think(before.prompt, base_url=url, continue_from=before, more_room=True)
    assert wire_server.bodies(CHAT)[-1]["max_tokens"] == 1024


def test_the_rescue_arguments_need_one_trace_to_rescue():
    with pytest.raises(ConfigError, match="with continue_from="):
        reasoning_nb.think("Q?", answer_now=True)
    with pytest.raises(ConfigError, match="one of them"):
        reasoning_nb.think("Q?", continue_from=Trace(), answer_now=True, more_room=True)


def test_the_action_is_saved_validated_and_shown():
    trace = Trace(prompt="Q?", answer="A", status="complete")
    trace.continued = {"run": 1, "hint": "", "reasoning_chars": 3, "action": "more_room"}
    trace.continued["max_tokens"] = 1024
    read, problems = read_trace(trace.to_dict())
    assert problems == [] and read.continued == trace.continued
    bad = {**trace.continued, "action": "<b>x</b>", "max_tokens": "many"}
    read, _ = read_trace({**trace.to_dict(), "continued": bad})
    assert read.continued == {"run": 1, "hint": "", "reasoning_chars": 3}
    assert "continues run 1 · more room (1024 tokens)" in render.bundle(trace)["text/plain"]


def test_a_stream_dropped_while_thinking_is_not_an_answer_lost_to_thinking(wire_server):
    frames = wf.chat_sse(THOUGHT, "", finish_reason=None, done=False)
    wire_server.route("POST", CHAT, Reply.sse(frames))
    trace = reasoning_nb.think("Q?", model="llamacpp:m", base_url=wire_server.url)
    assert trace.status == "truncated" and not rescue.lost_answer(trace)
    assert not any("tokens thinking" in w for w in trace.warnings)
