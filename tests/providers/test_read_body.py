"""A whole, non-streamed response (what a batch service returns) read by the protocol's own
stream parser: the same trace a stream of it would give."""

from __future__ import annotations

import pytest
import wire_fixtures as wf
from batch_services import message_body, responses_body

from reasoning_nb.core.trace import Trace
from reasoning_nb.errors import ProviderError
from reasoning_nb.providers import anthropic, openai_responses
from reasoning_nb.sweep.batch.jobs import Job, context

GPT, CLAUDE = "openai:gpt-5", "anthropic:claude-sonnet-4-5"


def folded(module, model, body, preset="high"):
    job = Job(custom_id="r0", prompt_id=0, prompt="Q", model=model, preset=preset)
    trace = Trace(model=model)
    for event in module.read_body(context(job, "https://api.example/v1"), body):
        trace.fold(event)
    return trace.finish()


def test_openai_response_reads_as_its_stream_does():
    body = responses_body("391", "Multiply 17 by 23.", 120)
    body["output"][0]["encrypted_content"] = "gAAAA-enc"
    trace = folded(openai_responses, GPT, body)
    assert (trace.reasoning, trace.answer, trace.status) == (
        "Multiply 17 by 23.",
        "391",
        "complete",
    )
    assert trace.usage["reasoning_tokens"] == 120 and trace.usage["output_tokens"] == 125
    items = trace.provider_state["openai"]["reasoning_items"]
    assert items[0]["encrypted_content"] == "gAAAA-enc"


def test_openai_refusal_part_is_the_answer():
    trace = folded(
        openai_responses, GPT, responses_body("I can't help with that.", "x", 5, refusal=True)
    )
    assert trace.answer == "I can't help with that."


def test_openai_incomplete_is_truncated_and_failed_or_unfinished_raise():
    body = responses_body("partial", "x", 5) | {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
    }
    assert folded(openai_responses, GPT, body).status == "truncated"
    failed = responses_body("", "", 0) | {
        "status": "failed",
        "error": {"code": "server_error", "message": "boom"},
    }
    with pytest.raises(ProviderError, match="boom"):
        folded(openai_responses, GPT, failed)
    with pytest.raises(ProviderError, match="unfinished"):
        folded(openai_responses, GPT, responses_body("", "", 0) | {"status": "cancelled"})


def test_openai_empty_summary_gets_the_streams_notice():
    body = responses_body("391", "", 300)
    body["output"][0]["summary"] = []
    trace = folded(openai_responses, GPT, body)
    assert trace.reasoning == "" and any("no reasoning summary" in w for w in trace.warnings)


def test_anthropic_message_reads_as_its_stream_does():
    trace = folded(anthropic, CLAUDE, message_body("391", "17 x 23 is 391.", 77, redacted=True))
    assert trace.reasoning == "17 x 23 is 391.\n\n[redacted thinking]"
    assert (trace.answer, trace.status) == ("391", "complete")
    assert (trace.usage["input_tokens"], trace.usage["output_tokens"]) == (30, 77)
    blocks = trace.provider_state["anthropic"]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "redacted_thinking", "text"]
    assert blocks[0]["signature"] == "sig-1"


def test_anthropic_stop_reasons_carry_over():
    cut = message_body("partial", "t", 9) | {"stop_reason": "max_tokens"}
    assert folded(anthropic, CLAUDE, cut).status == "truncated"
    refused = message_body("", "t", 9) | {"stop_reason": "refusal"}
    assert any("declined" in w for w in folded(anthropic, CLAUDE, refused).warnings)


def test_a_stream_and_its_whole_body_fold_to_the_same_trace():
    """The stream fixture's texts, sent whole: the same reasoning, answer and usage."""
    frames = wf.anthropic_sse("Step one. Step two.", "Done.", input_tokens=30)
    stream = Trace(model=CLAUDE)
    job = Job(custom_id="r0", prompt_id=0, prompt="Q", model=CLAUDE, preset="high")
    parser = anthropic.Parser(context(job, "https://api.example/v1"))
    for frame in frames:
        data = frame.split("data: ", 1)[1].strip()
        for event in parser.feed(data):
            stream.fold(event)
    whole = folded(anthropic, CLAUDE, message_body("Done.", "Step one. Step two.", 0))
    assert (whole.reasoning, whole.answer) == (stream.finish().reasoning, stream.answer)
