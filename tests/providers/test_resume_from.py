"""Going on from a point in the reasoning (``think(resume_from=..., at=..., edit=...)``), over a
real socket: the requests each provider gets, and the trace that results (the prefix, then the
model's continuation; an answer without the prefix). A provider that takes no prefilled
reasoning says so in one sentence, before any request."""

from __future__ import annotations

import json

import anyio
import pytest
import wire_fixtures as wf
from wire_server import Reply

from reasoning_nb import ConfigError, Done, ReasoningDelta, Trace, astream, think
from reasoning_nb.core.trace import read_trace
from reasoning_nb.providers import resume

PROMPT = "How many r's are in strawberry?"
EARLIER = Trace(
    model="llamacpp:qwen3",
    provider="llamacpp",
    prompt=PROMPT,
    reasoning="Spell it: s-t-r-a-w-b-e-r-r-y. I count the r's: one in 'str', two in 'rry'.",
    answer="There are 3.",
    status="complete",
    started_at="2026-11-28T00:10:00Z",
)
RENDERED = f"<|im_start|>user\n{PROMPT}<|im_end|>\n<|im_start|>assistant\n<think>\n"
EDIT = "Spell it: s-t-r-a-w-b-e-r-r-y. Careful: the r's are"


def completion_frames(*pieces: str, stop_type: str = "eos") -> list[str]:
    """llama-server's raw ``/completion`` stream: content pieces, then the stop frame."""
    frames = [wf.sse({"content": p, "stop": False}) for p in pieces]
    last = {"content": "", "stop": True, "stop_type": stop_type}
    return [*frames, wf.sse(last | {"tokens_evaluated": 31, "tokens_predicted": 12})]


def serve_llamacpp(server, *pieces: str, rendered: str = RENDERED) -> None:
    server.route("POST", "/apply-template", Reply.json({"prompt": rendered}))
    server.route("POST", "/completion", Reply.sse(completion_frames(*pieces)))


def test_llamacpp_renders_the_prompt_then_completes_it_from_the_edited_prefix(wire_server):
    serve_llamacpp(wire_server, " in 'str' and two in 'rry'", ": three.</think>\n\n", "3 r's.")
    trace = think(
        PROMPT, resume_from=EARLIER, at=31, edit=EDIT, base_url=wire_server.url, max_tokens=99
    )
    template = wire_server.bodies("/apply-template")
    assert template == [{"model": "qwen3", "messages": [{"role": "user", "content": PROMPT}]}]
    (sent,) = wire_server.bodies("/completion")
    assert sent["prompt"] == RENDERED + EDIT  # the template opened <think> already
    assert (sent["stream"], sent["n_predict"], sent["model"]) == (True, 99, "qwen3")
    assert not wire_server.requests_to("/v1/chat/completions")
    assert trace.reasoning == EDIT + " in 'str' and two in 'rry': three."
    assert trace.answer == "3 r's."
    assert (trace.status, trace.finish_reason, trace.model) == ("complete", "stop", EARLIER.model)
    assert trace.usage["input_tokens"] == 31 and trace.usage["output_tokens"] == 12
    expected = {"run": None, "hint": "", "reasoning_chars": len(EDIT), "action": "resume"}
    origin = {"at": 31, "edited": True, "from_started_at": EARLIER.started_at}
    assert trace.continued == expected | origin


def test_the_continued_trace_is_saved_and_read_back_with_its_origin(wire_server):
    serve_llamacpp(wire_server, " and more.</think>", "Three.")
    trace = think(PROMPT, resume_from=EARLIER, at=20, base_url=wire_server.url)
    prefix = EARLIER.reasoning[:20]
    assert trace.reasoning == prefix + " and more." and trace.answer == "Three."
    saved = json.loads(json.dumps(trace.to_dict()))
    assert saved["continued"] == {
        "run": None,
        "hint": "",
        "reasoning_chars": 20,
        "action": "resume",
        "at": 20,
        "edited": False,
        "from_started_at": "2026-11-28T00:10:00Z",
    }
    again, warnings = read_trace(saved)
    assert warnings == [] and again.continued == saved["continued"]
    assert Trace.from_dict(saved).continued == saved["continued"]
    old = {k: v for k, v in saved.items() if k != "continued"}  # a trace from before: loads
    assert Trace.from_dict(old).continued is None


def test_a_resume_replays_from_the_cache_only_for_the_same_prefix(
    wire_server, tmp_path, monkeypatch
):
    from reasoning_nb.store import db as store

    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))
    serve_llamacpp(wire_server, " more.</think>", "Three.")
    kw = {"resume_from": EARLIER, "base_url": wire_server.url, "cache": True}
    first = think(PROMPT, at=20, **kw)
    again = think(PROMPT, at=20, **kw)
    other = think(PROMPT, at=20, edit="Another start,", **kw)
    assert again.replay is not None and first.replay is None and other.replay is None
    assert (again.reasoning, again.answer) == (first.reasoning, first.answer)
    assert again.reasoning.startswith(EARLIER.reasoning[:20]) and again.continued == first.continued
    assert other.reasoning.startswith("Another start,")
    assert len(wire_server.requests_to("/completion")) == 2  # the same resume was not sent again
    wire_server.route("POST", "/v1/chat/completions", Reply.sse(wf.chat_sse("Hm.", "3")))
    plain = think(PROMPT, base_url=wire_server.url, cache=True, model=EARLIER.model)
    assert plain.replay is None and plain.answer == "3"  # a resume's answer is not a plain run's


def test_a_template_that_does_not_open_the_block_gets_it_opened(wire_server):
    plain = f"<|user|>{PROMPT}<|assistant|>"
    serve_llamacpp(wire_server, " go on</think>Yes.", rendered=plain)
    trace = think(PROMPT, resume_from=EARLIER, base_url=wire_server.url)
    (sent,) = wire_server.bodies("/completion")
    assert sent["prompt"] == plain + "<think>\n" + EARLIER.reasoning  # at: the end by default
    assert trace.reasoning == EARLIER.reasoning + " go on" and trace.answer == "Yes."
    assert trace.continued["edited"] is False and trace.continued["at"] == len(EARLIER.reasoning)


def test_the_prefix_streams_first_then_the_continuation(wire_server):
    serve_llamacpp(wire_server, " more", "</think>", "Done.")

    async def main() -> list:
        kw = {"resume_from": EARLIER, "at": 10, "base_url": wire_server.url}
        return [e async for e in astream(PROMPT, **kw)]

    events = anyio.run(main)
    reasoning = [e.text for e in events if isinstance(e, ReasoningDelta)]
    assert reasoning[0] == EARLIER.reasoning[:10] and "".join(reasoning[1:]) == " more"
    assert isinstance(events[-1], Done) and events[-1].trace.answer == "Done."


def test_a_stream_cut_at_its_limit_keeps_the_prefix_and_says_truncated(wire_server):
    server = wire_server
    server.route("POST", "/apply-template", Reply.json({"prompt": RENDERED}))
    server.route("POST", "/completion", Reply.sse(completion_frames(" and", stop_type="limit")))
    trace = think(PROMPT, resume_from=EARLIER, edit=EDIT, base_url=server.url)
    assert trace.reasoning == EDIT + " and" and trace.answer == ""
    assert trace.status == "truncated"


def test_vllm_continues_a_final_assistant_turn(wire_server):
    reply = wf.chat_sse(" then two more: three.", "There are 3.", field="reasoning")
    wire_server.route("POST", "/v1/chat/completions", Reply.sse(reply))
    trace = think(
        PROMPT, model="vllm:qwen3", resume_from=EARLIER, edit=EDIT, base_url=wire_server.url
    )
    (sent,) = wire_server.bodies("/v1/chat/completions")
    assert sent["messages"] == [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": "<think>\n" + EDIT},
    ]
    assert (sent["continue_final_message"], sent["add_generation_prompt"]) == (True, False)
    assert trace.reasoning == EDIT + " then two more: three."
    assert trace.answer == "There are 3."
    assert trace.continued["action"] == "resume" and trace.model == "vllm:qwen3"


def test_vllm_without_a_reasoning_parser_streams_the_reasoning_as_content(wire_server):
    """No parser: the continuation and ``</think>`` come in the content; the text up to the tag
    is reasoning (the stream starts inside the block), with no blank line after the prefix."""
    pieces = [" two more.", "</think>", "\n\nThree."]
    frames = [wf.sse({"choices": [{"index": 0, "delta": {"content": p}}]}) for p in pieces]
    done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    frames += [wf.sse(done), wf.SSE_DONE]
    wire_server.route("POST", "/v1/chat/completions", Reply.sse(frames))
    trace = think(PROMPT, model="vllm:qwen3", resume_from=EARLIER, base_url=wire_server.url)
    assert trace.reasoning == EARLIER.reasoning + " two more."
    assert trace.answer == "Three."


@pytest.mark.parametrize(
    "model", ["ollama:qwen3", "openai:o4-mini", "anthropic:claude-sonnet-4-5", "deepseek:chat"]
)
def test_a_provider_that_cannot_says_so_in_one_sentence_before_any_request(wire_server, model):
    with pytest.raises(ConfigError) as caught:
        think(PROMPT, model=model, resume_from=EARLIER, base_url=wire_server.url, api_key="k")
    message = str(caught.value)
    assert message == resume.cannot(_profile(model))
    assert "cannot continue from a point in the reasoning" in message
    assert "Continue with a hint" in message and message.count(". ") == 0
    assert wire_server.requests == []


def _profile(model: str):
    from reasoning_nb.providers.catalog import parse_model

    return parse_model(model).provider


@pytest.mark.parametrize(
    ("kw", "says"),
    [
        ({"at": 10_000}, "at must be a character position in the reasoning, 0 to"),
        ({"at": -1}, "at must be a character position"),
        ({"at": 0}, "no reasoning before that point"),
        ({"edit": 3}, "edit must be text"),
        ({"preset": "off"}, "cannot run with preset='off'"),
        ({"continue_from": EARLIER}, "not both"),
    ],
)
def test_what_cannot_be_resumed_is_refused_before_any_request(wire_server, kw, says):
    with pytest.raises(ConfigError, match=None) as caught:
        think(PROMPT, resume_from=EARLIER, base_url=wire_server.url, **kw)
    assert says in str(caught.value)
    assert wire_server.requests == []


def test_at_and_edit_need_resume_from():
    with pytest.raises(ConfigError, match="need resume_from="):
        think(PROMPT, model="llamacpp:x", at=3)


def test_a_server_without_apply_template_says_what_to_do(wire_server):
    wire_server.route("POST", "/apply-template", Reply.json({"error": "not found"}, status=404))
    with_password = wire_server.url.replace("://", "://me:s3cret-pass@")
    with pytest.raises(Exception) as caught:
        think(PROMPT, resume_from=EARLIER, base_url=with_password)
    message = str(caught.value)
    assert "could not render the chat prompt" in message and "answered 404" in message
    assert "continue_from" in message and "s3cret-pass" not in message  # (never the password)
    assert not wire_server.requests_to("/completion")


# -- against the real llama-server (SmolLM2 and the thinking template) ---------------------------

REAL_EDIT = "The capital of France: I recall it is a city on the Seine, and"


def _real_resume(model: str, **kw) -> Trace:
    first = think("What is the capital of France?", model=model, temperature=0, **kw)
    assert first.reasoning.strip(), "the first run should reason"
    at = min(12, len(first.reasoning))
    again = think(first.prompt, resume_from=first, at=at, edit=REAL_EDIT, temperature=0, **kw)
    return again


@pytest.mark.real_server
def test_real_llama_server_goes_on_from_the_edited_prefix(real_llama_server):
    """Raw completion works the same whatever the server's ``--reasoning-format``: the text is
    read by our splitter. SmolLM2 may not close the block within the cap, so only the prefix
    and what follows it are asserted."""
    again = _real_resume("llamacpp:smollm2", base_url=real_llama_server.url, max_tokens=48)
    assert again.reasoning.startswith(REAL_EDIT)
    assert len(again.reasoning) > len(REAL_EDIT), "the model should think on"
    assert REAL_EDIT not in again.answer
    assert "<think>" not in again.reasoning and "</think>" not in again.answer
    assert again.continued["edited"] is True and again.continued["reasoning_chars"] == len(
        REAL_EDIT
    )


@pytest.mark.real_server
def test_the_embedded_demo_goes_on_thinking_then_answers():
    """``local:``'s grammar closes the think block and asks for an answer: the whole shape."""
    again = _real_resume("local:smollm2", preset="low")
    assert again.reasoning.startswith(REAL_EDIT) and len(again.reasoning) > len(REAL_EDIT)
    assert again.answer.strip(), "the grammar makes the model answer"
    assert REAL_EDIT not in again.answer and not again.answer.startswith(REAL_EDIT[:20])
    assert again.status == "complete" and again.continued["action"] == "resume"
    assert again.request.get("grammar"), "the demo's grammar shapes the continuation too"


def test_the_text_area_s_text_says_the_point_and_whether_it_was_edited():
    """Edit & continue hands over the text as the user left it: a cut only is the model's own
    words up to that point; a change is an edit, from where it stops following the original."""
    from reasoning_nb.core.continuation import Continuation

    cut = Continuation.edited_to(EARLIER, EARLIER.reasoning[:25], run=2)
    assert (cut.prefix, cut.at, cut.edited, cut.run) == (EARLIER.reasoning[:25], 25, False, 2)
    changed = Continuation.edited_to(EARLIER, EARLIER.reasoning[:10] + "X and so", run=2)
    assert (changed.at, changed.edited) == (10, True)
    assert changed.prefix == EARLIER.reasoning[:10] + "X and so"
    assert changed.saved()["reasoning_chars"] == len(changed.prefix)
