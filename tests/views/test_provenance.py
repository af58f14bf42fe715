"""Run provenance (issue 14, item 3): the saved output says which of the cell's runs it shows and
gives the cell line for it; the earlier runs fold under it (stripped with the rest); a replay
and a Continue hint are said plainly; "Use these flags" offers the line in the live widget."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest
from test_widget import make_widget, new_trace, wire  # noqa: F401 - the fixture is used by name

from reasoning_nb.core.events import ReasoningDelta, TextDelta
from reasoning_nb.core.trace import Trace, read_trace
from reasoning_nb.notebook.widget import Actions
from reasoning_nb.views import render
from reasoning_nb.views.cell_runs import (
    CellRuns,
    continued_line,
    first_line,
    line_for,
    line_preset,
    matching_line,
    recorded_at,
    with_preset,
)

LINE = "%%think --model llamacpp:m --preset low"


def run(preset: str, reasoning: str = "r", answer: str = "a", **kw) -> Trace:
    trace = Trace(model="llamacpp:m", provider="llamacpp", preset=preset, prompt="Q", **kw)
    trace.reasoning, trace.answer, trace.status = reasoning, answer, "complete"
    return trace


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%%think --preset low -m x", "%%think --preset medium -m x"),
        ("%%think --preset=low", "%%think --preset=medium"),
        ("%%think -p low --budget 9", "%%think -p medium --budget 9"),
        ("%%think -plow", "%%think -pmedium"),
        ("%%think -p low --preset high", "%%think -p medium --preset medium"),  # (argparse: last)
        ("%%think -m x ", "%%think -m x --preset medium"),
    ],
)
def test_the_line_for_a_run_replaces_the_preset_flag_or_adds_one(line, expected):
    assert with_preset(line, "medium") == expected
    assert line_preset(expected) == "medium"


def test_a_line_is_offered_only_when_it_asks_for_another_preset():
    assert matching_line(LINE, "low", "low") == ""
    assert matching_line(LINE, "medium", "low") == "%%think --model llamacpp:m --preset medium"
    # No flag on the line: it asked for what its first run used (the session default).
    assert matching_line("%%think -m x", "high", "high") == ""
    assert matching_line("%%think -m x", "low", "high") == "%%think -m x --preset low"
    # A saved trace's preset is attacker text: no line is made of it; no line known: none.
    assert matching_line(LINE, "x; rm -rf /", "low") == ""
    assert matching_line("", "medium", "low") == ""


def test_no_line_is_offered_for_a_run_that_continued_another():
    """Answer now runs with thinking off, but ``--preset off`` on the cell would not ask for
    it again (it sends the earlier reasoning back): no line is offered, live or saved."""
    answered = run("off", continued={"run": 1, "hint": "", "action": "answer_now"})
    assert line_for(LINE, run("off"), "low") == "%%think --model llamacpp:m --preset off"
    assert line_for(LINE, answered, "low") == ""
    assert CellRuns(LINE, (run("low"),)).matching_line(answered) == ""


def test_an_empty_hint_is_not_shown():
    note = continued_line({"run": 1, "hint": "", "action": "answer_now"}, short=True)
    assert note == "continues run 1 · answer now"
    assert continued_line({"run": 1, "hint": "  "}, short=True) == "continues run 1"


def test_only_a_think_line_on_its_own_is_taken_from_a_cell():
    assert first_line(f"{LINE}\nWhy?") == LINE
    assert first_line("print(1)\n%%think") == ""
    assert first_line("%%think " + "x" * 500) == ""
    assert first_line("%%think -m x\x1b[31m\nWhy?") == ""  # (a control character)


def test_the_static_views_say_which_run_they_show_and_fold_the_earlier_runs():
    hostile_line = "%%think --model <img src=x onerror=alert(1)> --preset low"
    earlier = run("low", "EARLIER-REASONING <script>x</script>", "EARLIER-ANSWER")
    views = render.bundle(run("medium"), runs=CellRuns(hostile_line, (earlier,)))
    page = views["text/html"]
    assert "Run 2 of 2 · preset medium" in page
    assert "--model &lt;img src=x onerror=alert(1)&gt; --preset medium</code>" in page
    assert "<img" not in page and "<script" not in page
    assert "Earlier runs (1)</summary>" in page and "Run 1 · preset low" in page
    assert "EARLIER-REASONING &lt;script&gt;" in page and "EARLIER-ANSWER" in page
    assert page.index("Earlier runs") > page.index("reasoning-nb-answer")  # under the run
    for kind in ("text/markdown", "text/plain"):
        assert "Run 2 of 2 · preset medium" in views[kind]
        assert "EARLIER-ANSWER" in views[kind]
    assert "--preset medium" in views["text/plain"]
    # A cell run once, as its line asks: nothing said.
    alone = render.bundle(run("low"), runs=CellRuns(LINE))
    assert alone == render.bundle(run("low"))


def test_the_saved_outline_says_which_run_and_how_many_came_before():
    outline = render.cell_bundle(run("medium"), CellRuns(LINE, (run("low"),)))["text/plain"]
    assert outline.startswith("Run 2 of 2 · preset medium\ncell line for this run: ")
    assert "Earlier runs: 1" in outline


def test_a_continue_run_says_what_it_continues_and_its_hint_escaped():
    hint = "<b>check the units</b>"
    then = run("high", continued={"run": 1, "hint": hint, "reasoning_chars": 1})
    views = render.bundle(then, runs=CellRuns("%%think --preset high", (run("high"),)))
    assert "Run 2 of 2 · preset high · continues run 1" in views["text/html"]
    assert "hint: &lt;b&gt;check the units&lt;/b&gt;" in views["text/html"]
    assert "cell line" not in views["text/html"]  # same flags: no line to offer


def test_a_replay_says_so_and_when_its_run_was_recorded():
    replay = {"recorded_at": "2026-11-25T05:10:42Z", "pace": "recorded"}
    views = render.bundle(run("low", replay=replay))
    note = "replay of a run recorded 2026-11-25 05:10 UTC, played back at its recorded pace"
    assert all(note in view for view in views.values())
    fast = render.bundle(run("low", replay={**replay, "pace": "instant"}))["text/plain"]
    assert "played back instantly" in fast
    assert "replay" not in render.bundle(run("low"))["text/plain"]


def test_a_saved_replay_is_read_as_untrusted_input():
    good = {"recorded_at": "2026-11-25T05:10:42Z", "pace": "instant"}
    trace, problems = read_trace({**run("low").to_dict(), "replay": good})
    assert trace.replay == good and problems == []
    for bad in (
        "yes",
        {"recorded_at": "<script>", "pace": "instant"},
        {"recorded_at": "2026-11-25T05:10:42Z", "pace": "fast"},
        {"recorded_at": 5, "pace": "instant"},
    ):
        trace, problems = read_trace({**run("low").to_dict(), "replay": bad})
        assert trace.replay is None
        assert problems == [f"field 'replay' is not a valid replay ({type(bad).__name__}); skipped"]
    assert recorded_at("2026-11-25T06:10:00+01:00") == "2026-11-25 05:10 UTC"


def _exported(tmp_path, fmt: str, mode: str) -> str:
    """A cell as Lab saves it after a dropdown re-run, through the real ``jupyter nbconvert``."""
    shown, earlier = run("medium", "SHOWN-R", "SHOWN-A"), run("low", "EARLIER-R", "EARLIER-A")
    meta = {"reasoning_nb": shown.to_dict(), "reasoning_nb_history": [earlier.to_dict()]}
    data = render.cell_bundle(shown, CellRuns(LINE, (earlier,)))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"{LINE}\nWhy?",
            outputs=[nbformat.v4.new_output("display_data", data=data, metadata=meta)],
        )
    ]
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "rerun.ipynb"
    nbformat.write(nb, path)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", f"--to=reasoning-{fmt}",
         f"--ReasoningPreprocessor.mode={mode}", "--output-dir", str(tmp_path / mode), str(path)],
        check=True, capture_output=True,
    )  # fmt: skip
    out = next((tmp_path / mode).iterdir())
    return out.read_text(encoding="utf-8")


def test_exports_show_the_earlier_runs_and_strip_them_too(tmp_path):
    page = _exported(tmp_path, "html", "collapsible")
    assert "Run 2 of 2 · preset medium" in page
    assert "%%think --model llamacpp:m --preset medium" in page
    assert "Earlier runs (1)" in page and "EARLIER-R" in page and "EARLIER-A" in page
    for fmt in ("html", "markdown", "notebook"):
        stripped = _exported(tmp_path / fmt, fmt, "strip")
        assert "EARLIER-A" in stripped and "Earlier runs" in stripped
        assert "EARLIER-R" not in stripped and "SHOWN-R" not in stripped


def _finish(widget, trace: Trace) -> None:
    widget.start_run(trace)
    for event in (ReasoningDelta("thinking"), TextDelta("ok")):
        trace.fold(event)
        widget.on_event(event)
    trace.finish("complete")
    widget.finish(trace)


def test_use_these_flags_shows_for_a_run_the_line_does_not_ask_for(wire):  # noqa: F811
    written = []
    widget = make_widget(wire, line=LINE, actions=Actions(line_written=written.append))
    _finish(widget, new_trace(wire, "low"))
    row = widget.action_row
    assert row.pin.line == "" and row.pin in row.box.children
    _finish(widget, new_trace(wire, "high"))
    assert widget.action_row.pin.line == "%%think --model llamacpp:m --preset high"
    assert widget.action_row.pin in widget.action_row.box.children
    # The page could not edit the cell: nothing changes. Once it did, the kernel takes the
    # line it offered (not text from the page), and offers none.
    widget.action_row.pin._on_msg(widget.action_row.pin, {"type": "placed", "how": "unchanged"}, [])
    assert written == [] and widget.action_row.pin.line
    widget.action_row.pin._on_msg(widget.action_row.pin, {"type": "placed", "how": "rewritten"}, [])
    assert written == ["%%think --model llamacpp:m --preset high"]
    assert widget.line == written[0] and widget.action_row.pin.line == ""
    # Picking run 1 (what the line asks for now: high) offers the line that asks for low.
    widget.selector.value = 0
    assert widget.action_row.pin.line == "%%think --model llamacpp:m --preset low"


def test_a_run_without_reasoning_offers_pin_answer_and_use_these_flags(wire):  # noqa: F811
    """``--preset off`` after a dropdown re-run: no reasoning, still the line and a Pin (of the
    answer, with nothing selected)."""
    widget = make_widget(wire, line=LINE)
    _finish(widget, new_trace(wire, "low"))
    trace = new_trace(wire, "off")
    widget.start_run(trace)
    trace.fold(TextDelta("Just **blue**."))
    widget.on_event(TextDelta("Just **blue**."))
    trace.finish("complete")
    widget.finish(trace)
    assert widget.action_row.pin in widget.action_row.box.children
    assert widget.action_row.pin.line == "%%think --model llamacpp:m --preset off"
    sent = []
    widget.action_row.pin.send = sent.append
    widget.action_row.pin._on_msg(widget.action_row.pin, {"type": "pin", "parts": []}, [])
    [cell] = sent[0]["cells"]
    assert cell["markdown"].startswith("> **Answer of") and "Just **blue**." in cell["markdown"]
    assert cell["metadata"]["reasoning_nb_pin"]["part"] == "answer"
