"""Answer now gets room of its own for the answer (issue 24.7): not the ``max_tokens`` its
thinking ate. Over a real socket, for Ollama (``num_predict``) and an OpenAI-compatible server
(``max_tokens``), with a server that honours the budget it is sent, as real ones do."""

from __future__ import annotations

import pytest
import wire_fixtures as wf
from test_rescue import no_overrides  # noqa: F401  (autouse: capability overrides cleared)
from wire_server import Recorded, Reply

import reasoning_nb
from reasoning_nb.core import capabilities, rescue
from reasoning_nb.core.trace import Trace
from reasoning_nb.views import render

THOUGHT = "They want a script that counts words. Read the file, split, count, print. " * 3
ANSWER = "Here it is:\n\n```python\nimport sys\n\nprint(len(open(sys.argv[1]).read().split()))\n```"
PROMPT = "A Python script that counts the words in a file?"


def budget_of(rec: Recorded) -> int | None:
    """The output budget a request sent: Ollama's ``options.num_predict`` or ``max_tokens``."""
    body = rec.json
    return (body.get("options") or {}).get("num_predict") or body.get("max_tokens")


def honouring(ollama: bool):
    """A server that stops after as many tokens as it was sent (``wf.tokens`` pieces): reasoning
    while thinking is on, the answer after it, ``length`` when that cut it short."""

    def reply(rec: Recorded) -> Reply:
        body = rec.json
        thinking = (
            body.get("think") is not False if ollama else body.get("reasoning_effort") != "none"
        )
        pieces = [*wf.tokens(THOUGHT), *wf.tokens(ANSWER)] if thinking else wf.tokens(ANSWER)
        limit = budget_of(rec) or len(pieces)
        kept, cut = pieces[:limit], len(pieces) > limit
        reasoning = kept[: len(wf.tokens(THOUGHT))] if thinking else []
        answer = kept[len(reasoning) :]
        if ollama:
            frames = wf.ollama_chat(reasoning, answer, done_reason="length" if cut else "stop")
            return Reply.ndjson(frames)
        usage = {"prompt_tokens": 20, "completion_tokens": len(kept)}
        frames = wf.chat_sse(reasoning, answer, finish_reason="length" if cut else "stop",
                             usage=usage)  # fmt: skip
        return Reply.sse(frames)

    return reply


SERVERS = [  # (model, path the server answers on, base URL suffix, Ollama?)
    ("ollama:qwen3", "/api/chat", "", True),
    ("openai-compatible:qwen3", "/v1/chat/completions", "/v1", False),
]


@pytest.mark.parametrize(("model", "path", "suffix", "ollama"), SERVERS)
def test_answer_now_sends_room_of_its_own_and_the_answer_is_whole(
    wire_server, model, path, suffix, ollama
):
    wire_server.route("POST", path, honouring(ollama))
    base = wire_server.url + suffix
    lost = reasoning_nb.think(PROMPT, model=model, base_url=base, max_tokens=20, preset="high")
    assert lost.status == "truncated" and lost.answer == ""  # the thinking ate all 20
    assert rescue.lost_answer(lost)

    after = reasoning_nb.think(PROMPT, base_url=base, continue_from=lost, answer_now=True)
    first, second = wire_server.requests_to(path)
    assert budget_of(first) == 20
    assert budget_of(second) == rescue.ANSWER_ROOM  # not the 20 the thinking ate
    if ollama:
        assert second.json["think"] is False
    else:
        assert second.json["reasoning_effort"] == "none"
    assert after.status == "complete" and after.answer == ANSWER  # the code block ends whole
    assert after.continued["action"] == "answer_now"
    assert after.continued["max_tokens"] == rescue.ANSWER_ROOM
    # what it sent is said where the run is shown
    note = f"continues a stopped run · answer now ({rescue.ANSWER_ROOM} tokens)"
    assert note in render.bundle(after)["text/plain"]


def test_the_room_is_capped_at_the_model_output_limit(wire_server):
    capabilities.override("openai-compatible:small", max_output=1_000)
    wire_server.route("POST", "/v1/chat/completions", honouring(False))
    base = wire_server.url + "/v1"
    lost = reasoning_nb.think(PROMPT, model="openai-compatible:small", base_url=base, max_tokens=20)
    reasoning_nb.think(PROMPT, base_url=base, continue_from=lost, answer_now=True)
    assert wire_server.bodies("/v1/chat/completions")[-1]["max_tokens"] == 1_000


def test_a_max_tokens_given_for_the_answer_is_the_one_sent(wire_server):
    wire_server.route("POST", "/api/chat", honouring(True))
    lost = reasoning_nb.think(PROMPT, model="ollama:qwen3", base_url=wire_server.url, max_tokens=20)
    url = wire_server.url
    reasoning_nb.think(PROMPT, base_url=url, continue_from=lost, answer_now=True, max_tokens=300)
    assert wire_server.bodies("/api/chat")[-1]["options"]["num_predict"] == 300


def test_answer_room_keeps_a_larger_budget_and_never_passes_the_limit():
    lost = Trace(reasoning="r" * 40, finish_reason="length").finish()
    assert rescue.answer_room(lost, None) == rescue.ANSWER_ROOM  # it spent ≈10
    assert rescue.answer_room(lost, None, 200) == rescue.ANSWER_ROOM  # the cell's cut-off 200
    big = 3 * rescue.ANSWER_ROOM
    assert rescue.answer_room(lost, None, big) == big  # what the run had, if more
    assert rescue.answer_room(lost, 1_000, big) == 1_000
