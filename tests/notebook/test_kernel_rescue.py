"""Answer now in a real IPython kernel: a ``%%think`` run that spent its tokens thinking, the
widget's Answer now clicked, and the second run's answer saved (issue 15.1)."""

from __future__ import annotations

import time

import pytest
import wire_fixtures as wf
from wire_server import Reply

CHAT = "/v1/chat/completions"
THOUGHT = "Canberra was chosen as a compromise between Sydney and Melbourne, so: Canberra."
pytestmark = pytest.mark.kernel


def saved(kernel, msg) -> dict:
    kernel._track(msg)
    if msg["msg_type"] not in ("display_data", "update_display_data"):
        return {}
    return msg["content"].get("metadata", {})


def continued_run(kernel, what: str) -> dict:
    """The saved metadata of the run a button asked for (it continues the cell's first)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        meta = saved(kernel, kernel.kc.get_iopub_msg(timeout=20))
        if meta.get("reasoning_nb", {}).get("continued"):
            return meta
    raise AssertionError(f"the {what} run never saved its trace")


def lost_run(kernel, wire_server, spent: int, then: Reply, flags: str = "") -> dict:
    """Run a cell whose model spends all ``spent`` tokens thinking (the server answers the
    next request with ``then``); its saved trace, checked to have lost its answer."""
    usage = {"prompt_tokens": 9, "completion_tokens": spent}
    lost = Reply.sse(wf.chat_sse(THOUGHT, "", finish_reason="length", usage=usage))
    wire_server.route("POST", CHAT, lost, then)
    line = f"--model llamacpp:m --base-url {wire_server.url} --preset high {flags}"
    first = [saved(kernel, m) for m in kernel.run(f"%%think {line}\nCapital?")]
    trace = [m["reasoning_nb"] for m in first if "reasoning_nb" in m][-1]
    assert trace["status"] == "truncated" and trace["answer"] == ""
    return trace


def test_answer_now_after_a_run_that_spent_its_tokens_thinking(kernel, wire_server):
    trace = lost_run(kernel, wire_server, 300, Reply.sse(wf.chat_sse("", "Canberra.")))
    assert trace["warnings"] == [
        "The model spent all 300 tokens thinking and gave no answer: try Answer now or More room."
    ]
    kernel.find("ButtonModel", description="More room")  # offered beside it
    kernel.click(kernel.find("ButtonModel", description="Answer now"))

    final = continued_run(kernel, "Answer now")
    sent = wire_server.bodies(CHAT)[-1]
    assert THOUGHT in sent["messages"][-1]["content"] and sent["reasoning_effort"] == "none"
    second = final["reasoning_nb"]
    assert second["answer"] == "Canberra." and second["preset"] == "off"
    assert second["continued"] == {
        "run": 1,
        "hint": "",
        "reasoning_chars": len(THOUGHT),
        "action": "answer_now",
        "max_tokens": 4096,  # room of its own for the answer (core.rescue.ANSWER_ROOM)
    }
    assert [t["status"] for t in final["reasoning_nb_history"]] == ["truncated"]


def test_more_room_asks_again_with_twice_the_tokens(kernel, wire_server):
    then = Reply.sse(wf.chat_sse(THOUGHT, "Canberra."))
    lost_run(kernel, wire_server, 256, then, flags="--max-tokens 256")
    kernel.click(kernel.find("ButtonModel", description="More room"))

    final = continued_run(kernel, "More room")
    first_body, second_body = wire_server.bodies(CHAT)[-2:]
    assert first_body["max_tokens"] == 256 and second_body["max_tokens"] == 512
    assert second_body["messages"] == first_body["messages"]  # the same question, no reasoning
    assert second_body["reasoning_effort"] == first_body["reasoning_effort"] == "high"
    second = final["reasoning_nb"]
    assert (second["answer"], second["preset"], second["status"]) == ("Canberra.", "high",
                                                                     "complete")  # fmt: skip
    assert second["continued"]["action"] == "more_room" and second["continued"]["run"] == 1
    assert [t["status"] for t in final["reasoning_nb_history"]] == ["truncated"]


def test_answer_now_gets_room_of_its_own_not_the_cells_max_tokens(kernel, wire_server):
    """Issue 24.7: an Ollama cell cut off at ``--max-tokens 20`` while thinking; Answer now
    sends ``num_predict`` 4096 with thinking off, and a server that honours it answers whole."""
    from test_answer_room import ANSWER, honouring

    wire_server.route("POST", "/api/chat", honouring(ollama=True))
    line = f"--model ollama:qwen3 --base-url {wire_server.url} --preset high --max-tokens 20"
    first = [saved(kernel, m) for m in kernel.run(f"%%think {line}\nA word counter?")]
    assert [m["reasoning_nb"] for m in first if "reasoning_nb" in m][-1]["status"] == "truncated"
    kernel.click(kernel.find("ButtonModel", description="Answer now"))

    second = continued_run(kernel, "Answer now")["reasoning_nb"]
    sent = wire_server.bodies("/api/chat")
    assert sent[0]["options"]["num_predict"] == 20
    assert sent[-1]["options"]["num_predict"] == 4096 and sent[-1]["think"] is False
    assert (second["status"], second["answer"]) == ("complete", ANSWER)  # its code block whole
    assert second["continued"]["max_tokens"] == 4096
