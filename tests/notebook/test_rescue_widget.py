"""Answer now and More room in the live view (recording comm, fake clock; see test_widget.py)."""

# ruff: noqa: F811  (test_widget's ``wire`` fixture is imported, then named by each test)

from __future__ import annotations

import pytest
from test_widget import feed, make_widget, new_trace, wire  # noqa: F401

from reasoning_nb.core import capabilities, rescue
from reasoning_nb.core.continuation import Continuation
from reasoning_nb.core.events import Finish, Notice, ReasoningDelta, TextDelta, Usage
from reasoning_nb.core.loops import LOOP_NOTICE
from reasoning_nb.notebook.run_view import LOST_DETAIL
from reasoning_nb.notebook.widget import Actions
from reasoning_nb.providers.catalog import output_limit


def ignore(*_args) -> None:
    """An action offered, and ignored."""


@pytest.fixture(autouse=True)
def no_overrides():
    yield
    capabilities.clear_overrides()


def steer(wire, w) -> list[str]:
    """The descriptions (or model names) of the steer row's parts, as the front end has them
    (not Pin while it is idle: hidden, it is there to bring the page its assets)."""
    models = wire.front_end()
    parts = [models[c.removeprefix("IPY_MODEL_")] for c in wire.state(w.action_row.box)["children"]]
    shown = [p for p in parts if p.get("part") != "pin" or p.get("offered")]
    return [p.get("description") or p["_model_name"] for p in shown]


def lost_run(wire, w, answer: str = ""):
    trace = new_trace(wire)
    w.start_run(trace)
    events = [ReasoningDelta("Canberra, surely."), TextDelta(answer), Usage(output_tokens=256)]
    feed(w, trace, [*events, Finish("length")], wire.clock, 0.25)
    trace.finish()
    rescue.warn_if_lost(trace, output_limit(trace.model))  # (as a run does at its end)
    w.finish(trace)
    return trace


def test_a_run_that_lost_its_answer_offers_answer_now_and_more_room(wire):
    calls = []
    w = make_widget(wire, actions=Actions(continue_run=ignore, rescue=lambda *a: calls.append(a)))
    trace = lost_run(wire, w)
    assert steer(wire, w) == ["Answer now", "More room", "Continue", "TextModel", "AnyModel"]
    status = wire.state(w.status)["value"]
    assert LOST_DETAIL in status and "truncated" not in status
    assert "spent all 256 tokens thinking and gave no answer" in status
    w.action_row.answer_button.click()
    w.action_row.room_button.click()
    assert calls == [(trace, "answer_now", 1), (trace, "more_room", 1)]


def test_at_the_output_limit_only_answer_now_is_offered(wire):
    capabilities.override("ollama:qwen3", max_output=256)
    w = make_widget(wire, actions=Actions(rescue=lambda *a: None))
    lost_run(wire, w)
    assert steer(wire, w) == ["Answer now", "AnyModel"]


def test_a_run_cut_off_in_its_answer_offers_no_rescue(wire):
    w = make_widget(wire, actions=Actions(rescue=lambda *a: None))
    lost_run(wire, w, answer="Canberra is the capital of Australia, as it has been since 1913.")
    assert steer(wire, w) == ["AnyModel"]
    assert w.action_row.answer_button is None  # never made: nothing more in the saved widget state


def test_a_looping_live_run_offers_answer_now_which_goes_to_the_live_trace(wire):
    calls = []
    w = make_widget(wire, actions=Actions(rescue=lambda *a: calls.append(a)))
    trace = new_trace(wire)
    w.start_run(trace)
    feed(w, trace, [ReasoningDelta("round and round ")], wire.clock, 0.25)
    assert steer(wire, w) == []
    notice = f"{LOOP_NOTICE} (its last 300 characters repeat what it wrote before): press Stop."
    feed(w, trace, [Notice(notice)], wire.clock, 0.25)
    assert steer(wire, w) == ["Answer now"]
    assert "its last 300 characters repeat" in wire.state(w.status)["value"]  # the status line
    w.action_row.room_button.click()  # (not offered while it runs)
    w.action_row.answer_button.click()
    assert calls == [(trace, "answer_now", 1)]


def test_the_rescuing_run_is_an_ordinary_run_that_links_to_the_one_it_rescues(wire):
    w = make_widget(wire, actions=Actions(rescue=lambda *a: None))
    first = lost_run(wire, w)
    second = new_trace(wire, preset="off")
    second.continued = Continuation(first.reasoning, "", 1, action="answer_now").saved()
    w.start_run(second)
    feed(w, second, [TextDelta("Canberra.")], wire.clock, 0.5)
    w.finish(second.finish())
    labels = [label for label, _ in w.selector.options]
    assert labels[1] == "Run 2 · off · 0.5 s · continues run 1"
    assert "continues run 1 · answer now" in wire.state(w.status)["value"]
    assert steer(wire, w) == ["AnyModel"]  # it answered: nothing to rescue
