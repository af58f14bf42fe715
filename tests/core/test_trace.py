"""Trace: folding events, finishing, timing on a fake clock, and the saved schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasoning_nb.core.events import (
    Finish,
    Notice,
    ProviderState,
    ReasoningDelta,
    Reclassify,
    TextDelta,
    Usage,
)
from reasoning_nb.core.schema import SCHEMA
from reasoning_nb.core.trace import Trace
from reasoning_nb.views.trace_labels import reasoning_summary, tokens_label


class FakeClock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def fold(trace: Trace, *events, clock: FakeClock | None = None, step: float = 0.0) -> Trace:
    for event in events:
        trace.fold(event)
        if clock is not None:
            clock.t += step
    return trace


# -- folding -----------------------------------------------------------------------------------


def test_fold_keeps_reasoning_and_answer_apart_in_order():
    trace = fold(
        Trace(),
        ReasoningDelta("Let me "),
        ReasoningDelta("think."),
        TextDelta("\n\n  The answer"),  # the blank line after a closing tag is not the answer
        TextDelta(" is 42."),
    )
    assert trace.reasoning == "Let me think."
    assert trace.answer == "  The answer is 42."  # its indentation is
    assert trace.status == "running" and not trace.done


def test_reasoning_after_answer_starts_a_new_block():
    trace = fold(
        Trace(),
        ReasoningDelta("step one"),
        TextDelta("partial"),
        ReasoningDelta("step two"),
        ReasoningDelta(" continues"),
        TextDelta(" answer"),
    )
    assert trace.reasoning == "step one\n\nstep two continues"
    assert trace.answer == "partial answer"


def test_empty_deltas_change_nothing():
    trace = fold(Trace(), ReasoningDelta(""), TextDelta(""), TextDelta("\n\n"), TextDelta("x"))
    assert trace.reasoning == "" and trace.answer == "x"
    assert trace.timing["first_token_ms"] is not None


def test_reclassify_moves_the_answer_into_the_reasoning():
    trace = fold(Trace(), TextDelta("I should check."), Reclassify(), TextDelta("Done."))
    assert trace.reasoning == "I should check." and trace.answer == "Done."
    trace = fold(
        Trace(), ReasoningDelta("first"), TextDelta("second"), Reclassify(), TextDelta("third")
    )
    assert trace.reasoning == "first\n\nsecond" and trace.answer == "third"
    trace = fold(Trace(), ReasoningDelta("only reasoning"), Reclassify())
    assert trace.reasoning == "only reasoning" and trace.answer == ""


def test_usage_notice_finish_and_provider_state():
    trace = fold(
        Trace(),
        Usage(input_tokens=10, output_tokens=5),
        Usage(output_tokens=7, reasoning_tokens=3),  # None leaves a known count alone
        Notice("budget clamped"),
        Notice("budget clamped"),
        ProviderState({"signature": "abc"}),
        ProviderState({"id": 1}),
        Finish("stop"),
    )
    assert trace.usage == {"input_tokens": 10, "output_tokens": 7, "reasoning_tokens": 3}
    assert trace.warnings == ["budget clamped"]  # de-duplicated
    trace.warn("budget clamped")
    trace.warn("another")
    assert trace.warnings == ["budget clamped", "another"]
    assert trace.provider_state == {"signature": "abc", "id": 1}
    assert trace.finish_reason == "stop"


# -- finishing ---------------------------------------------------------------------------------


def test_finish_statuses():
    assert fold(Trace(), TextDelta("a"), Finish("stop")).finish().status == "complete"
    assert Trace().finish().status == "complete"  # no finish reason at all
    truncated = fold(Trace(), TextDelta("a"), Finish("length")).finish()
    assert truncated.status == "truncated" and truncated.done
    cancelled = fold(Trace(), TextDelta("a"), Finish("length")).finish("cancelled")
    assert cancelled.status == "cancelled"  # an explicit status wins
    failed = Trace().finish("error", error="dropped mid-stream")
    assert failed.status == "error" and failed.error == "dropped mid-stream"


def test_finish_strips_surrounding_newlines_only():
    trace = fold(Trace(), ReasoningDelta("\n\n  indented\n\n"), TextDelta("answer\n\n"))
    trace.finish()
    assert trace.reasoning == "  indented" and trace.answer == "answer"
    assert str(trace) == "answer"


# -- timing on a fake clock starting at 0.0 (0.0 is a time, not "unset") ------------------------


def test_timing_from_a_clock_at_zero():
    clock = FakeClock(0.0)
    trace = Trace(clock=clock).start()  # _t0 == 0.0
    clock.t = 0.25
    fold(trace, ReasoningDelta("hm"))
    clock.t = 1.0
    fold(trace, ReasoningDelta(" more"))
    clock.t = 2.0
    fold(trace, TextDelta("answer"))
    clock.t = 3.5
    trace.finish()
    assert trace.timing == {"first_token_ms": 250.0, "reasoning_ms": 1750.0, "total_ms": 3500.0}


def test_first_reasoning_at_zero_is_kept():
    clock = FakeClock(0.0)
    trace = Trace(clock=clock).start()
    fold(trace, ReasoningDelta("a"), ReasoningDelta("b"), clock=clock, step=1.0)  # t = 0, 1
    clock.t = 2.0
    fold(trace, TextDelta("answer"))
    trace.finish()
    assert trace.timing["first_token_ms"] == 0.0
    assert trace.timing["reasoning_ms"] == 2000.0  # from t=0, not from the second delta


def test_reasoning_only_ends_at_its_last_delta():
    clock = FakeClock(0.0)
    trace = Trace(clock=clock).start()
    fold(trace, ReasoningDelta("thinking"))  # t = 0: the first and last reasoning
    clock.t = 5.0
    trace.finish()
    assert trace.timing["reasoning_ms"] == 0.0  # ends at t=0, not at finish
    assert trace.timing["total_ms"] == 5000.0


def test_no_start_means_the_clock_starts_at_the_first_token():
    clock = FakeClock(0.0)
    trace = Trace(clock=clock)
    clock.t = 3.0
    fold(trace, TextDelta("x"))
    clock.t = 4.0
    trace.finish()
    assert trace.timing["first_token_ms"] == 0.0 and trace.timing["total_ms"] == 1000.0
    assert trace.timing["reasoning_ms"] is None


def test_reclassified_answer_times_the_reasoning_from_its_start():
    clock = FakeClock(0.0)
    trace = Trace(clock=clock).start()
    fold(trace, TextDelta("actually reasoning"), Reclassify(), clock=clock, step=1.0)
    clock.t = 3.0
    fold(trace, TextDelta("answer"))
    trace.finish()
    assert trace.timing["reasoning_ms"] == 3000.0


# -- the saved schema --------------------------------------------------------------------------


def full_trace() -> Trace:
    clock = FakeClock(0.0)
    trace = Trace(
        model="ollama:qwen3:0.6b",
        provider="ollama",
        preset="high",
        budget_tokens=4096,
        prompt="Why?",
        request={"think": True, "options": {"num_predict": 4096}, "path": Path("/tmp/x")},
        clock=clock,
    ).start()
    fold(
        trace,
        ReasoningDelta("Because"),
        TextDelta("Yes."),
        Usage(1, 2, 3),
        Notice("clamped"),
        ProviderState({"sig": b"\x00".hex(), "tags": ("a", "b"), "obj": object}),
        Finish("stop"),
        clock=clock,
        step=0.5,
    )
    return trace.finish()


def test_to_dict_is_json_safe_and_round_trips():
    trace = full_trace()
    saved = trace.to_dict()
    assert saved["schema"] == SCHEMA == 1
    text = json.dumps(saved, allow_nan=False)  # JSON-safe: no live objects left
    assert saved["request"]["path"] == "/tmp/x" and saved["provider_state"]["tags"] == ["a", "b"]
    back = Trace.from_dict(json.loads(text))
    assert back.to_dict() == saved
    assert back == Trace.from_dict(saved)  # equal as dataclasses too (the clock is not compared)
    assert (back.reasoning, back.answer, back.status) == ("Because", "Yes.", "complete")
    assert back.timing == trace.timing and back.usage == trace.usage


def test_from_dict_ignores_unknown_keys_and_fills_defaults():
    saved = full_trace().to_dict()
    newer = {
        **saved,
        "future_field": {"x": 1},
        "usage": {**saved["usage"], "cached_tokens": 9},
        "timing": {**saved["timing"], "queue_ms": 1.0},
    }
    back = Trace.from_dict(newer)
    assert back.to_dict() == saved
    minimal = Trace.from_dict({"answer": "hi"})  # no schema key: read as schema 1
    assert minimal.answer == "hi" and minimal.status == "complete" and minimal.preset == "auto"
    assert minimal.usage == {"input_tokens": None, "output_tokens": None, "reasoning_tokens": None}


@pytest.mark.parametrize("bad", [{"schema": 2}, {"schema": "1"}, {"schema": None}])
def test_from_dict_rejects_other_schemas(bad):
    with pytest.raises(ValueError, match="schema"):
        Trace.from_dict({**full_trace().to_dict(), **bad})


def test_from_dict_rejects_non_dicts():
    with pytest.raises(TypeError):
        Trace.from_dict([("answer", "x")])  # type: ignore[arg-type]


# -- labels ------------------------------------------------------------------------------------


def test_tokens_label_singular_and_plural():
    assert tokens_label(1, 0) == "1 token"
    assert tokens_label(2_310, 0) == "2,310 tokens"
    assert tokens_label(0, 0) == "0 tokens"
    assert tokens_label(None, 3) == "≈1 token"  # about 4 chars a token, at least 1
    assert tokens_label(None, 4_000) == "≈1,000 tokens"
    assert tokens_label(None, 0) == ""
    trace = Trace(reasoning="hm", usage={"reasoning_tokens": 1})
    assert reasoning_summary(trace) == "Reasoning · 1 token"


def test_the_pane_title_and_the_stats_table_count_reasoning_tokens_alike():
    from reasoning_nb.views.stats import row

    trace = Trace(reasoning="r" * 300, answer="a" * 100)
    trace.usage["output_tokens"] = 200  # the server's total only: split 3:1 by characters
    assert reasoning_summary(trace) == "Reasoning · ≈150 tokens"
    assert (row(trace)["reasoning_tokens"], row(trace)["reasoning_estimated"]) == (150, True)
    trace.usage["reasoning_tokens"] = 90
    assert reasoning_summary(trace) == "Reasoning · 90 tokens"
    assert row(trace)["reasoning_tokens"] == 90


def test_the_answer_keeps_its_indentation_and_loses_only_blank_lines():
    code = "    x = 1\n    y = 2"
    assert fold(Trace(), TextDelta(code)).answer == code
    # whitespace waits for visible text: a chunk of spaces may be a blank line or an indent
    split = fold(Trace(), TextDelta("\n  \n"), TextDelta("  "), TextDelta("  x = 1\n    y = 2"))
    assert split.answer == code
    assert fold(Trace(), TextDelta(" \t\n"), TextDelta("\r\n"), TextDelta("Hi")).answer == "Hi"
