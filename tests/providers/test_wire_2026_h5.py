"""The wire formats of 2026 (issue 25), items 5 and 6, over a real socket: OpenAI's Responses API
and Gemini 3. Each test names the source of the shape it serves or the rule it holds.

The package makes no tool calls (no tools option), so the tool-call rules are held where they can
bite: what the saved ``provider_state`` keeps, in order, and what a ``--chat`` turn sends back.
"""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from provider_harness import Provider
from wire_server import Reply

from reasoning_nb.core import capabilities, schema
from reasoning_nb.core.history import Conversation, assistant_turn
from reasoning_nb.providers.catalog import PROVIDERS

pytestmark = pytest.mark.usefixtures("no_provider_env")

RESPONSES = "/v1/responses"
OPENAI = Provider("openai:gpt-5.1", RESPONSES, "sk-proj-secret-0123456789")
REASONING = "**Planning** 17 × 23 = 391, café ☕."
ANSWER = "The answer is **391** 😀."
ENCRYPTED = "gAAAAABo-opaque-reasoning"
INCLUDE = ["reasoning.encrypted_content"]


@pytest.fixture(autouse=True)
def _no_overrides():
    yield
    capabilities.clear_overrides()


def _final(frames: list[str], **response: object) -> list[str]:
    """The frames with the terminal event's ``response`` given more fields (what the API echoes
    of the request, such as the effective ``reasoning`` settings)."""
    _head, data = frames[-1].split("data: ", 1)
    obj = json.loads(data)
    obj["response"] |= response
    return [*frames[:-1], wf.sse(obj, obj["type"])]


# -- item 5: reasoning.context and reasoning.mode -------------------------------------------------


@pytest.mark.parametrize("preset", ["auto", "low", "high"])
def test_reasoning_context_and_mode_are_left_to_the_model(wire_server, preset):
    """openai/openai-python@e43b422 src/openai/types/shared/reasoning.py: ``context`` (auto |
    current_turn | all_turns; omitted = auto, the model decides: gpt-5.6 all_turns, earlier
    current_turn) and ``mode`` (standard | pro, an execution mode) are optional. A preset is an
    effort, so neither is sent; a response that echoes them is read as usual."""
    frames = _final(
        wf.responses_sse(REASONING, ANSWER),
        reasoning={"effort": "high", "summary": "detailed", "context": "all_turns", "mode": "pro"},
    )
    OPENAI.serve(wire_server, frames, seed=3)
    trace = OPENAI.run(wire_server, preset=preset)
    sent = wire_server.last.json["reasoning"]
    assert "context" not in sent and "mode" not in sent
    assert sent["summary"] == "auto"
    assert (trace.reasoning, trace.answer, trace.warnings) == (REASONING, ANSWER, [])


# -- item 5: summaries only with summary "auto"; an empty one is said, not shown -----------------


def test_an_empty_summary_is_said_in_a_notice(wire_server):
    """openai/openai-python@e43b422 types/responses/response_reasoning_item.py: a reasoning item's
    ``summary`` may be ``[]``; issues UKGovernmentBEIS/inspect_ai#1745, newo-ether/Agora#141: low
    efforts return reasoning items with empty summaries. The run says so once, with the count."""
    frames = wf.responses_sse("", ANSWER, reasoning_tokens=57, encrypted=ENCRYPTED)
    OPENAI.serve(wire_server, frames, seed=4)
    trace = OPENAI.run(wire_server, preset="low")
    assert wire_server.last.json["reasoning"] == {"effort": "low", "summary": "auto"}
    assert (trace.reasoning, trace.answer) == ("", ANSWER)
    assert trace.usage["reasoning_tokens"] == 57
    said = [w for w in trace.warnings if "no reasoning summary" in w]
    assert len(said) == 1 and "57 tokens" in said[0] and "--preset" in said[0]
    assert len(trace.warnings) == 1


@pytest.mark.parametrize(
    "echo,tokens",
    [
        ({"effort": "high", "summary": None}, 57),  # the summary was not sent (after a fallback)
        ({"effort": "none", "summary": "detailed"}, 0),  # no reasoning at all: nothing to say
    ],
)
def test_no_notice_where_no_summary_was_due(wire_server, echo, tokens):
    """The same source: the response echoes the effective ``reasoning`` settings; no summary asked
    for, or no reasoning done, is no missing summary."""
    frames = _final(wf.responses_sse("", ANSWER, reasoning_tokens=tokens), reasoning=echo)
    OPENAI.serve(wire_server, frames, seed=5)
    trace = OPENAI.run(wire_server)
    assert (trace.reasoning, trace.answer, trace.warnings) == ("", ANSWER, [])


# -- item 5: raw reasoning_text beside the summary -------------------------------------------------


def _raw_then_summary(raw: str, summary: str) -> list[str]:
    """One reasoning item that streams its raw ``reasoning_text`` and then a summary of it, and
    whose ``output_item.done`` carries both (openai-python@e43b422
    types/responses/response_reasoning_text_delta_event.py, ..._summary_text_delta_event.py,
    response_reasoning_item.py: ``content`` of ``reasoning_text`` beside ``summary``)."""
    out = []
    for frame in wf.responses_sse(raw, ANSWER, raw=True, model="openai/gpt-oss-120b"):
        obj = json.loads(frame.split("data: ", 1)[1])
        if obj["type"] == "response.output_item.done" and obj["item"]["type"] == "reasoning":
            where = {"item_id": "rs_1", "output_index": 0, "summary_index": 0}
            for piece in wf.tokens(summary):
                delta = {"type": "response.reasoning_summary_text.delta", **where, "delta": piece}
                out.append(wf.sse(delta, delta["type"]))
            obj["item"]["summary"] = [{"type": "summary_text", "text": summary}]
            frame = wf.sse(obj, obj["type"])
        out.append(frame)
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_raw_reasoning_and_its_summary_show_one_text(wire_server, seed):
    """Raw ``response.reasoning_text.delta`` and ``response.reasoning_summary_text.delta`` for
    the same item: the first kind to speak is shown, once; the other is read and dropped."""
    summary = "**Summary** multiplied and checked."
    OPENAI.serve(wire_server, _raw_then_summary(REASONING, summary), seed=seed, max_piece=11)
    events = OPENAI.events(wire_server)
    trace = events[-1].trace
    assert trace.reasoning == REASONING
    assert "Summary" not in trace.reasoning and trace.answer == ANSWER
    assert trace.warnings == []


# -- item 5: store false / encrypted content and --chat --------------------------------------------


def _chat_after(wire_server, first_frames, model="openai:gpt-5.1", send="reasoning"):
    """One run, then a second turn of the same chat; the second request's body."""
    OPENAI.serve(wire_server, first_frames, seed=6, max_piece=17)
    first = OPENAI.run(wire_server, preset="high")
    chat = Conversation("c", send=send)
    chat.add(first)
    OPENAI.serve(wire_server, wf.responses_sse("More.", "Yes."))
    history = chat.messages(PROVIDERS["openai"])
    Provider(model, RESPONSES, OPENAI.key, "And 18 × 23?").run_with(wire_server, history=history)
    return first, wire_server.last.json


def test_chat_sends_the_encrypted_reasoning_items_back_to_the_same_model(wire_server):
    """openai-python@e43b422 types/responses/response_create_params.py (``include``:
    ``reasoning.encrypted_content`` "enables reasoning items to be used in multi-turn
    conversations when using the Responses API statelessly (like when the store parameter is
    set to false...)") and response_reasoning_item.py (take the item from
    ``response.output_item.done``; replay it in ``input``); Agora#141: ``summary`` must stay,
    ``[]`` included. No ``previous_response_id``: nothing depends on a stored response."""
    first, body = _chat_after(wire_server, wf.responses_sse("", ANSWER, encrypted=ENCRYPTED))
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": ENCRYPTED}
    assert first.provider_state["openai"] == {"model": "gpt-5.1", "reasoning_items": [item]}
    assert body["input"] == [
        {"role": "user", "content": OPENAI.prompt},
        item,
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": "And 18 × 23?"},
    ]
    assert body["include"] == INCLUDE and wire_server.bodies(RESPONSES)[0]["include"] == INCLUDE
    assert "previous_response_id" not in body and "store" not in body
    # the saved trace keeps it for the next session; `strip` removes it with the reasoning
    assert ENCRYPTED in json.dumps(first.to_dict())
    assert ENCRYPTED not in json.dumps(schema.stripped(first))


@pytest.mark.parametrize(
    "model,send",
    [
        ("openai:gpt-5.2", "reasoning"),
        ("openai:gpt-5.1", "answer"),
        ("openai-chat:gpt-5.1", "reasoning"),
    ],
)
def test_chat_sends_answers_only_elsewhere(wire_server, model, send):
    """The same sources: encrypted reasoning is the model's own, so another model (or another
    provider id, or ``--history answer``) gets the earlier answer only."""
    frames = wf.responses_sse(REASONING, ANSWER, encrypted=ENCRYPTED)
    if model.startswith("openai-chat"):
        OPENAI.serve(wire_server, frames)
        first = OPENAI.run(wire_server)
        turn = assistant_turn(first, PROVIDERS["openai-chat"])
        assert turn == {"role": "assistant", "content": ANSWER}
        return
    _first, body = _chat_after(wire_server, frames, model=model, send=send)
    assert ENCRYPTED not in json.dumps(body)
    assert body["input"][1] == {"role": "assistant", "content": ANSWER}


def test_an_item_without_encrypted_content_is_not_kept(wire_server):
    """response_reasoning_item.py: an item's id alone refers to a stored response; where nothing
    is stored (``store: false``, zero retention, a gpt-oss server) it cannot be replayed, so a
    turn without encrypted content goes back as its answer."""
    first, body = _chat_after(wire_server, wf.responses_sse(REASONING, ANSWER))
    assert first.provider_state == {}
    assert [m.get("type") for m in body["input"]] == [None, None, None]


def test_include_rejected_is_sent_again_without_it(wire_server):
    """A server that does not take ``include`` (a relay, or a model without reasoning items)
    answers 400; the run is retried once without it and says what that means for --chat."""
    error = wf.openai_error_body(
        "Encrypted content is not supported with this model.", param="include"
    )
    frames = wf.responses_sse(REASONING, ANSWER)
    wire_server.route("POST", RESPONSES, Reply.json(error, 400), Reply.sse(frames))
    trace = OPENAI.run(wire_server)
    first, second = wire_server.bodies(RESPONSES)
    assert first["include"] == INCLUDE and "include" not in second
    assert second["reasoning"] == first["reasoning"]
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert "include" not in trace.request
    said = [w for w in trace.warnings if "include" in w]
    assert len(said) == 1 and "--chat" in said[0]


# -- item 6: Gemini 3 ------------------------------------------------------------------------------

GKEY = "AIzaSyD-SECRET-gemini-key-0123456789"
SIG = "CiQBVKhc7sig-first-call"


def gpath(model: str) -> str:
    return f"/v1beta/models/{model}:streamGenerateContent"


def gemini(model: str, prompt: str = "Where does Alice live?") -> Provider:
    return Provider(f"gemini:{model}", gpath(model), GKEY, prompt)


@pytest.mark.parametrize(
    "model,preset,budget,level,warned",
    [
        ("gemini-3-flash-preview", "high", None, "high", False),
        ("gemini-3-flash-preview", "auto", 4096, "medium", True),  # a budget becomes a level
        ("gemini-3-pro-preview", "auto", 20000, "high", True),
        # a Gemini 3 the snapshot knows by a budget range still gets a level
        ("gemini-3.9-flash", "low", None, "low", False),
    ],
)
def test_gemini_3_gets_thinking_level_never_a_budget(
    wire_server, model, preset, budget, level, warned
):
    """googleapis/python-genai@6680718 google/genai/types.py ``ThinkingConfig.thinking_level``
    and (tuning) "Starting from Gemini 3.5 models, the old thinking_budget will no longer be
    supported"; wire-formats §7 (Gemini 3 ``thinkingLevel``; budget and level together -> 400)."""
    capabilities.override("gemini:gemini-3.9-flash", budget_min=0, budget_max=24576)
    g = gemini(model)
    wire_server.route("POST", g.path, Reply.sse(wf.gemini_sse("r", "a", model=model)))
    trace = g.run(wire_server, preset=preset, budget_tokens=budget)
    config = wire_server.last.json["generationConfig"]["thinkingConfig"]
    assert config == {"includeThoughts": True, "thinkingLevel": level}
    assert bool(trace.warnings) is warned
    assert "thinkingBudget" not in json.dumps(trace.request)


def _function_calls(model: str) -> list[str]:
    """A Gemini 3 step with parallel function calls: a thought, then two ``functionCall`` parts,
    the signature on the first only (ai.google.dev/gemini-api/docs/thought-signatures: "If the
    model generates parallel function calls in a response, the thought_signature is attached
    only to the first functionCall part"; return it "in the exact part where it was received")."""
    parts = [
        {"text": "**Looking up** both cities.", "thought": True},
        {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": SIG},
        {"functionCall": {"name": "weather", "args": {"city": "Tokyo"}}},
    ]
    frames = []
    for i, part in enumerate(parts):
        cand = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if i == len(parts) - 1:
            cand["finishReason"] = "STOP"
        meta = {"promptTokenCount": 9, "thoughtsTokenCount": 5, "totalTokenCount": 14 + i}
        frames.append(wf.sse({"candidates": [cand], "usageMetadata": meta, "modelVersion": model}))
    return frames


def test_parallel_function_calls_keep_their_one_signature_in_place(wire_server):
    """thought-signatures doc (above): the parts are kept in order, the signature on the part
    that carried it and on no other. We make no tool calls, so a turn of calls only has no answer
    and is not added to a --chat (nothing would answer its calls): only the saved state holds it."""
    model = "gemini-3-flash-preview"
    g = gemini(model)
    wire_server.route("POST", g.path, Reply.sse(_function_calls(model), chunking="random", seed=2))
    trace = g.run(wire_server)
    parts = trace.provider_state["gemini"]["parts"]
    assert [bool(p.get("thoughtSignature")) for p in parts] == [False, True, False]
    assert parts[1] == {
        "functionCall": {"name": "weather", "args": {"city": "Paris"}},
        "thoughtSignature": SIG,
    }
    assert parts[2] == {"functionCall": {"name": "weather", "args": {"city": "Tokyo"}}}
    chat = Conversation("c")
    chat.add(trace)
    assert chat.turns == []


def test_signed_parts_go_back_exactly_and_only_to_their_model(wire_server):
    """thought-signatures doc: "pass it back exactly as received"; signatures are the model's
    own (wire-formats §7, Anthropic's rule alike): a turn of gemini-3-pro-preview is sent to
    gemini-3-flash-preview as its text, never with a signature the other model cannot check."""
    pro, flash = "gemini-3-pro-preview", "gemini-3-flash-preview"
    frames = wf.gemini_sse("Paris, from the note.", "Alice lives in Paris.", model=pro)
    wire_server.route("POST", gpath(pro), Reply.sse(frames, chunking="random", seed=7))
    first = gemini(pro).run(wire_server, preset="high")
    parts = first.provider_state["gemini"]["parts"]
    assert any(p.get("thoughtSignature") == "CiQBVKhc7test" for p in parts)
    chat = Conversation("c")
    chat.add(first)
    history = chat.messages(PROVIDERS["gemini"])
    for model, expected in ((pro, parts), (flash, [{"text": "Alice lives in Paris."}])):
        wire_server.route("POST", gpath(model), Reply.sse(wf.gemini_sse("r", "Yes.", model=model)))
        gemini(model, "And Bob?").run_with(wire_server, history=history)
        assert wire_server.last.json["contents"][1] == {"role": "model", "parts": expected}
