"""Continuing a stopped run: what goes over the wire, what the trace records."""

from __future__ import annotations

import wire_fixtures as wf
from wire_server import Reply

import reasoning_nb
from reasoning_nb.core.continuation import CLOSE, OPEN, Continuation
from reasoning_nb.core.trace import Trace, read_trace
from reasoning_nb.run import Run
from reasoning_nb.views import render

CHAT = "/v1/chat/completions"


def stopped(reasoning: str) -> Trace:
    trace = Trace(model="llamacpp:m", preset="high", prompt="Q?", reasoning=reasoning)
    return trace.finish("cancelled")


def test_the_user_turn_carries_the_prompt_the_reasoning_and_a_one_line_hint():
    turn = Continuation.of(
        stopped("first step\nsecond step"), "  look at\n the   units "
    ).user_turn("Q?")
    assert turn.startswith("Q?\n")
    assert f"{OPEN}\nfirst step\nsecond step\n{CLOSE}" in turn
    assert turn.endswith("A hint from the user: look at the units")


def test_no_reasoning_yet_asks_to_start_again_and_no_hint_adds_no_line():
    turn = Continuation.of(stopped("")).user_turn("Q?")
    assert OPEN not in turn and "hint" not in turn and "start again" in turn


def test_run_sends_the_continuation_but_the_trace_keeps_the_prompt_as_written():
    run = Run("Q?", model="llamacpp:m", continuation=Continuation.of(stopped("abc"), "h", run=2))
    assert (
        run.messages()[-1]["content"].startswith("Q?\n") and "abc" in run.messages()[-1]["content"]
    )
    assert run.trace.prompt == "Q?"
    assert run.trace.continued == {"run": 2, "hint": "h", "reasoning_chars": 3}


def test_continued_round_trips_and_is_absent_from_plain_traces():
    trace = Trace(prompt="Q?", continued={"run": 1, "hint": "h", "reasoning_chars": 3})
    assert Trace.from_dict(trace.to_dict()).continued == trace.continued
    assert "continued" not in Trace(prompt="Q?").to_dict()


def test_think_continue_from_over_a_real_socket(wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("so: 7 letters", "7")))
    before = stopped("Count the letters of 'reasons'")
    trace = reasoning_nb.think(
        "How many letters?",
        model="llamacpp:m",
        base_url=wire_server.url,
        continue_from=before,
        hint="count twice",
    )
    sent = wire_server.bodies(CHAT)[0]["messages"][-1]["content"]
    assert "Count the letters of 'reasons'" in sent and "count twice" in sent
    assert trace.answer == "7" and trace.reasoning == "so: 7 letters"
    assert trace.continued == {"run": None, "hint": "count twice", "reasoning_chars": 30}


def test_the_static_views_say_a_run_continues_another_with_the_hint_escaped():
    trace = Trace(prompt="Q?", answer="A", status="complete")
    trace.continued = {"run": 1, "hint": "<b>units</b>", "reasoning_chars": 3}
    views = render.bundle(trace)
    assert "continues run 1 · hint: &lt;b&gt;units&lt;/b&gt;" in views["text/html"]
    assert "<b>units" not in views["text/html"]
    assert "continues run 1 · hint: <b>units</b>" in views["text/plain"]
    assert "continues" not in render.bundle(Trace(prompt="Q?", answer="A"))["text/plain"]


def test_a_saved_continuation_is_validated_like_the_rest_of_the_trace():
    good = Trace(prompt="Q?", continued={"run": 2, "hint": "a\nb", "reasoning_chars": 5})
    trace, problems = read_trace(good.to_dict())
    assert problems == [] and trace.continued == {"run": 2, "hint": "a b", "reasoning_chars": 5}
    for bad in ("text", {"run": -1, "hint": "", "reasoning_chars": 1}, {"hint": 3}, [1]):
        data = {**good.to_dict(), "continued": bad}
        trace, problems = read_trace(data)
        assert trace.continued is None
        assert problems == [f"field 'continued' is not a valid continuation "
                            f"({type(bad).__name__}); skipped"]  # fmt: skip


def test_stats_mark_a_continued_run():
    from reasoning_nb.views.stats import stats

    first = stopped("abc")
    second = Trace(prompt="Q?", answer="A", continued={"run": 1, "hint": "", "reasoning_chars": 3})
    second.finish()
    table = stats([first, second])
    assert [r["continued"] for r in table.rows] == [False, True]
    [head, *lines] = table.table()
    status = head.index("status")
    assert [line[status] for line in lines] == ["cancelled", "complete, continued"]
