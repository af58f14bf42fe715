"""The live status line: what the model thinks about now (at most once a second), a replay's
mark and a Continue run's hint. Times are the ``now`` handed in (a fake clock), never the wall's."""

from __future__ import annotations

import itertools
import random

import wire_fixtures as wf
from test_subject import OPENAI_PARTS
from test_widget import feed, idle, make_widget, new_trace, wire  # noqa: F401  (wire: a fixture)

from reasoning_nb.core.events import ReasoningDelta, TextDelta
from reasoning_nb.core.trace import Trace
from reasoning_nb.notebook.run_view import RunView

TITLES = ["Evaluating the request", "Computing the product", "Double-checking the result"]


def view(hide: bool = False, **trace_fields) -> RunView:
    trace = Trace(model="openai:gpt-5.1", preset="high", clock=lambda: 0.0, **trace_fields)
    return RunView(trace.start(), 1, 0.0, hide_reasoning=hide)


def show(run: RunView, event, now: float) -> None:
    """One event as the runner hands it on: folded into the trace, then noted by the view."""
    run.trace.fold(event)
    run.apply(event, now, fold=True)


def subject_line(html: str) -> str | None:
    """The subject the status line shows (None: none, or only its line kept, blank)."""
    lines = [line for line in html.split("<br>") if line.startswith("<i>")]
    subject = lines[0].removeprefix("<i>").removesuffix("</i>") if lines else None
    return None if subject == "&nbsp;" else subject


def test_the_subject_follows_the_titles_and_goes_once_the_answer_starts():
    run = view()
    assert subject_line(run.status_html(0.0)) is None  # connecting: nothing to say yet
    for i, part in enumerate(OPENAI_PARTS):
        show(run, ReasoningDelta(("\n\n" if i else "") + part), 2.0 * i)
        assert subject_line(run.status_html(2.0 * i + 0.5)) == TITLES[i]
    show(run, TextDelta("391."), 7.0)
    assert subject_line(run.status_html(7.0)) is None
    # ...but its line stays while the run lasts, so the header keeps its height
    assert run.status_html(7.0).count("<br>") == run.status_html(0.0).count("<br>") == 1


def test_model_text_in_the_subject_is_escaped():
    run = view()
    show(run, ReasoningDelta("**Reading <img src=x onerror=alert(1)> & co**\n\n"), 0.0)
    line = subject_line(run.status_html(0.1))
    assert line == "Reading &lt;img src=x onerror=alert(1)&gt; &amp; co"


def test_the_subject_changes_at_most_once_a_second():
    """Titles arrive faster than a second apart: the line holds each one a full second and then
    shows the newest, however often it is asked."""
    rng = random.Random(7)
    run, now, shown = view(), 0.0, []
    for i in range(60):
        show(run, ReasoningDelta(f"**Step {i} of the plan**\n\nWorking on it.\n\n"), now)
        for _ in range(rng.randint(0, 3)):
            now += rng.uniform(0.0, 0.4)
            line = subject_line(run.status_html(now))
            if not shown or shown[-1][1] != line:
                shown.append((now, line))
        now += rng.uniform(0.0, 0.3)
    times = [t for t, _ in shown]
    assert len(shown) > 5
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(times))
    assert shown[-1][1] != "Step 0 of the plan"  # it moves on


def test_hidden_reasoning_has_no_subject():
    run = view(hide=True)
    show(run, ReasoningDelta("**A secret plan**\n\nDo not show this."), 0.0)
    assert "secret" not in run.status_html(1.0)


def test_a_replay_says_so_while_it_streams_and_after():
    replay = {"recorded_at": "2026-11-25T05:10:42.5+00:00", "pace": "instant"}
    run = view(replay=replay)
    mark = "↻ replay of a run recorded 2026-11-25 05:10 UTC"
    assert mark in run.status_html(0.0)
    show(run, ReasoningDelta("Thinking."), 0.1)
    assert mark in run.status_html(0.2)
    run.end(run.trace.finish(), 0.3)
    assert mark in run.status_html(0.4)
    # an offset is turned into UTC; a time no one can read is not shown (the static view agrees)
    assert "2026-11-25 03:10 UTC" in view(
        replay={"recorded_at": "2026-11-25T05:10:00+02:00"}
    ).status_html(0)
    odd = view(replay={"recorded_at": "<b>yesterday</b>"}).status_html(0)
    assert "↻ replay of a recorded run" in odd and "yesterday" not in odd


def test_a_continue_run_shows_its_hint_from_the_start():
    continued = {"run": 1, "hint": "think about the <ocean>", "reasoning_chars": 120}
    run = view(continued=continued)
    assert "continues run 1 · hint: think about the &lt;ocean&gt;" in run.status_html(0.0)
    show(run, TextDelta("Done."), 0.5)
    run.end(run.trace.finish(), 0.6)
    assert "continues run 1 · hint:" in run.status_html(0.7)
    long = view(continued={"run": 2, "hint": "look " * 40}).status_html(0)
    assert "hint: look look" in long and "look …" not in long and len(long) < 400
    assert "continues a stopped run" in view(continued={"hint": ""}).status_html(0)


def test_the_widget_sends_the_subject_with_the_status_line(wire):  # noqa: F811
    """Summary parts streamed token by token at a model's pace: each title reaches the front
    end in turn, riding along with the text, never sooner than a second after the last one."""
    w = make_widget(wire)
    trace = new_trace(wire)
    trace.replay = {"recorded_at": "2026-11-25T05:10:00Z", "pace": "recorded"}
    w.start_run(trace)
    body = " More careful work on this step, one token at a time." * 30
    text = "\n\n".join(part + body for part in OPENAI_PARTS)
    events = [ReasoningDelta(t) for t in wf.tokens(text)]
    feed(w, trace, events, wire.clock, 0.01, tick_every=1)
    sent = [(t, s["value"]) for t, cid, s in wire.updates() if cid == w.status.model_id]
    subjects = [(t, subject_line(v)) for t, v in sent if subject_line(v)]
    changes = [subjects[0]] + [b for a, b in itertools.pairwise(subjects) if a[1] != b[1]]
    assert [s for _, s in changes] == TITLES
    assert all(b[0] - a[0] >= 1.0 for a, b in itertools.pairwise(changes))
    assert all("replay of a run recorded 2026-11-25 05:10 UTC" in v for _, v in sent)
    feed(w, trace, [TextDelta("391.")], wire.clock, 0.5)
    trace.finish()
    w.finish(trace)
    assert subject_line(w.status.value) is None
    assert "replay of a run recorded 2026-11-25 05:10 UTC" in w.status.value


def test_a_new_subject_goes_out_while_the_summary_pauses(wire):  # noqa: F811
    """Summaries come in bursts: the next title shows about a second later even when no more
    text follows it for a while (it does not wait for the next text to ride along)."""
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    first, second = OPENAI_PARTS[0], "\n\n" + OPENAI_PARTS[1]
    feed(w, trace, [ReasoningDelta(first)], wire.clock, 0.1, tick_every=1)
    idle(w, wire.clock, seconds=1.5)
    feed(w, trace, [ReasoningDelta(second)], wire.clock, 0.1, tick_every=1)
    sent_at = wire.clock.t
    idle(w, wire.clock, seconds=3.0)  # nothing more arrives
    status = w.status.model_id
    sent = [(t, subject_line(s["value"])) for t, cid, s in wire.updates() if cid == status]
    shown = [(t, line) for t, line in sent if line == TITLES[1]]
    assert shown, f"the second title never went out: {sent}"
    assert shown[0][0] - sent_at <= 1.1
