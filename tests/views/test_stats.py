"""Trace analytics: rows from traces, trace dicts and saved notebooks (someone else's, so
hostile), the buffered rule, estimates, the views and their escaping, the plot, and
``%think --stats`` in an in-process IPython shell."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import nbformat
import pytest
import wire_fixtures as wf
from IPython.utils.capture import capture_output
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from wire_server import Reply

import reasoning_nb
from reasoning_nb import Trace, stats
from reasoning_nb.views.stats import TraceStats, is_buffered
from reasoning_nb.views.stats_chart import BAR_CHARS, TITLE, bar_text

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"
HOSTILE = "<script>alert(1)</script>"
LIVE_TAG = re.compile(r"<\s*(script|img|iframe|object|embed|b|a)\b", re.I)


def trace(model="ollama:qwen3", preset="high", reasoning="r" * 400, answer="a" * 40, **kw):
    usage = dict.fromkeys(("input_tokens", "output_tokens", "reasoning_tokens"))
    timing = {"first_token_ms": 1000.0, "reasoning_ms": 2000.0, "total_ms": 5000.0}
    usage.update(kw.pop("usage", {}))
    timing.update(kw.pop("timing", {}))
    return Trace(
        model=model,
        provider=model.split(":")[0],
        preset=preset,
        reasoning=reasoning,
        answer=answer,
        usage=usage,
        timing=timing,
        **{"status": "complete", **kw},
    )


def saved_output(data, history=None):
    meta = {"reasoning_nb": data}
    if history is not None:
        meta["reasoning_nb_history"] = history
    return new_output("display_data", data={"text/plain": "saved"}, metadata=meta)


# -- rows ---------------------------------------------------------------------------------------


def test_reported_counts_and_tokens_per_second():
    [row] = stats([trace(usage={"reasoning_tokens": 300, "output_tokens": 400})]).rows
    assert row["source"] == "#1" and row["model"] == "ollama:qwen3" and row["preset"] == "high"
    assert (row["reasoning_tokens"], row["reasoning_estimated"]) == (300, False)
    assert (row["answer_tokens"], row["answer_estimated"]) == (100, False)  # output - reasoning
    assert row["tokens_per_s"] == 100.0  # 400 tokens over 5000 - 1000 ms
    assert not row["tokens_per_s_estimated"] and not row["buffered"]


def test_dicts_give_the_same_rows_as_traces():
    traces = [trace(), trace(preset="low", usage={"output_tokens": 90}, warnings=["w"])]
    assert stats([t.to_dict() for t in traces]).rows == stats(traces).rows
    assert stats(traces[0]).rows == stats(traces[:1]).rows  # one trace on its own


def test_estimates_are_marked():
    s = stats([trace()])  # no usage at all: about 4 characters a token
    [row] = s.rows
    assert (row["reasoning_tokens"], row["reasoning_estimated"]) == (100, True)
    assert (row["answer_tokens"], row["answer_estimated"]) == (10, True)
    assert row["tokens_per_s"] == 27.5 and row["tokens_per_s_estimated"]
    [head, shown] = s.table()
    shown = dict(zip(head, shown, strict=True))
    assert (shown["reasoning tok"], shown["answer tok"], shown["tok/s"]) == ("≈100", "≈10", "≈27.5")
    # only the output total reported: split by characters, still an estimate
    [row] = stats([trace(usage={"output_tokens": 220})]).rows
    assert (row["reasoning_tokens"], row["answer_tokens"]) == (200, 20)
    assert row["reasoning_estimated"] and row["answer_estimated"]
    assert not row["tokens_per_s_estimated"]
    # no reasoning text and no count: 0, and the reported output is all answer
    [row] = stats([trace(preset="off", reasoning="", usage={"output_tokens": 50})]).rows
    assert (row["reasoning_tokens"], row["answer_tokens"]) == (0, 50)
    assert not row["reasoning_estimated"] and not row["answer_estimated"]


def test_tokens_per_second_needs_a_real_span():
    [row] = stats([trace(timing={"first_token_ms": 900.0, "total_ms": 920.0})]).rows
    assert row["tokens_per_s"] is None
    [row] = stats([trace(timing={"total_ms": None})]).rows
    assert row["tokens_per_s"] is None


@pytest.mark.parametrize(
    ("reasoning", "tokens", "ms", "buffered"),
    [
        ("r" * 400, 100, 3.0, True),  # all of it within 50 ms
        ("r" * 400, 100, 49.9, True),
        ("r" * 400, 100, 2000.0, False),  # 50 tokens/s: a stream
        ("r" * 400, 5000, 1000.0, True),  # 5,000 tokens/s: released by a buffer
        ("r" * 400, 100, None, True),  # 200+ characters never timed
        ("short", 2, None, False),  # too little to say
        ("", 0, 1.0, False),  # no reasoning, nothing to flag
    ],
)
def test_buffered_rule(reasoning, tokens, ms, buffered):
    assert is_buffered(reasoning, tokens, ms) is buffered


def test_buffered_shows_instead_of_a_time():
    s = stats([trace(timing={"reasoning_ms": 2.0})])
    assert s.rows[0]["buffered"] and s.rows[0]["reasoning_ms"] == 2.0
    [head, shown] = s.table()
    assert shown[head.index("thinking")] == "buffered"
    assert 'title="measured 0.00 s">buffered</td>' in s._repr_html_()
    assert "buffered" in str(s) and "buffered" in s._repr_markdown_()


# -- saved notebooks ----------------------------------------------------------------------------


def hostile_notebook():
    older = [trace(preset="low").to_dict(), trace(preset="medium").to_dict()]
    hostile = trace(model=HOSTILE, preset="max", warnings=['<img src=x onerror="alert(2)">'])
    bad_usage = trace(preset="off", reasoning="").to_dict()
    bad_usage["usage"]["output_tokens"] = "many"
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell("# title"),
        new_code_cell("%%think\nQ1", outputs=[saved_output(trace(preset="auto").to_dict())]),
        new_code_cell("%%think\nQ2", outputs=[saved_output(trace(preset="high").to_dict(), older)]),
        new_code_cell("%%think\nQ3", outputs=[saved_output("not a trace")]),
        new_code_cell("%%think\nQ4", outputs=[saved_output(hostile.to_dict(), history="nope")]),
        new_code_cell("%%think\nQ5", outputs=[saved_output(bad_usage)]),
        new_code_cell("print(1)", outputs=[new_output("stream", text="1\n")]),
    ]
    return nb


def test_notebook_rows_history_and_skipped_entries(tmp_path):
    path = tmp_path / "theirs.ipynb"
    nbformat.write(hostile_notebook(), path)
    s = stats(path)
    assert [r["source"] for r in s.rows] == [
        "cell 2",
        "cell 3 run 1/3",
        "cell 3 run 2/3",
        "cell 3 run 3/3",
        "cell 5",
        "cell 6",
    ]
    assert [r["preset"] for r in s.rows] == ["auto", "low", "medium", "high", "max", "off"]
    notes = "\n".join(s.notes)
    assert "cell 4: saved trace is str, not an object; it cannot be read; skipped" in notes
    assert "cell 5: reasoning_nb_history is str, not a list; skipped" in notes
    assert "cell 6: field usage.output_tokens is out of range or not a number (str)" in notes
    assert s.rows[-1]["answer_tokens"] == 10 and s.rows[-1]["answer_estimated"]
    # a path as str, the nbformat node and its plain-dict form read the same
    assert stats(str(path)).rows == s.rows == stats(nbformat.read(path, as_version=4)).rows
    for note in s.notes:
        assert html.escape(note) in s._repr_html_() and note in str(s)


def test_nothing_from_the_notebook_becomes_live_html(tmp_path):
    s = stats(hostile_notebook())
    page = s._repr_html_()
    assert "reasoning-nb-stats-chart" in page and "<svg" not in page
    assert not LIVE_TAG.search(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in page
    chart = page.split('class="reasoning-nb-stats-chart"')[1]
    assert not LIVE_TAG.search(chart) and "&lt;script&gt;" in chart
    markdown = s._repr_markdown_()
    [text, chart, rest] = markdown.split("```")  # the chart: a code block, shown as text
    assert not LIVE_TAG.search(text + rest) and "&lt;script&gt;" in text
    assert chart.startswith("\nreasoning tokens by preset\n")


def test_rows_with_hostile_numbers_do_not_break_anything():
    data = trace().to_dict()
    data["usage"] = {"reasoning_tokens": 10**40, "output_tokens": True}
    data["timing"] = {"first_token_ms": float("nan"), "total_ms": -5, "reasoning_ms": 10**30}
    data["model"] = "m\x1b[31m\u202eevil\nline"
    s = stats([data, {"schema": 99}, 17])
    assert len(s.rows) == 2
    row = s.rows[0]
    assert row["reasoning_estimated"]  # the absurd count is treated as not reported
    assert row["first_token_ms"] is None and row["total_ms"] is None
    assert "\x1b" not in str(s) and "\u202e" not in str(s) and "evil line" in str(s)
    assert any("#3: saved trace is int" in n for n in s.notes)
    s._repr_html_(), s._repr_markdown_(), s.to_csv()


def test_many_notes_are_capped():
    s = stats([{"model": 1, "preset": 2, "answer": 3}] * 40)
    assert len(s.notes) == 51 and s.notes[-1].startswith("… and 70 more")


BIG = 10**400
"""Valid JSON, and past any float: ``float(BIG)`` raises OverflowError."""


def test_a_number_past_a_float_is_skipped_with_a_note_and_every_run_counts(tmp_path):
    """In a trace, its history and a --compare output's variants: usage, timing and cost."""
    odd = trace(preset="low").to_dict()
    odd["usage"]["output_tokens"] = BIG
    odd["timing"]["total_ms"] = BIG
    odd["cost"] = {"usd": BIG, "estimate": True, "source": "genai-prices 1"}
    plain = trace(preset="high", usage={"output_tokens": 50}).to_dict()
    compared = saved_output(plain)
    compared.metadata["reasoning_nb_variants"] = [odd]
    nb = new_notebook()
    nb.cells = [
        new_code_cell("%%think\nQ", outputs=[saved_output(odd, history=[odd])]),
        new_code_cell("%%think --compare high,low\nQ", outputs=[compared]),
        new_code_cell("%%think\nQ", outputs=[saved_output(plain)]),
    ]
    path = tmp_path / "big.ipynb"
    path.write_text(json.dumps(nb))
    s = stats(path)
    assert [(r["source"], r["preset"]) for r in s.rows] == [
        ("cell 1 run 1/2", "low"),
        ("cell 1 run 2/2", "low"),
        ("cell 2 variant 1/2", "high"),
        ("cell 2 variant 2/2", "low"),
        ("cell 3", "high"),
    ]
    for r in s.rows:
        odd_run = r["preset"] == "low"
        assert (r["total_ms"] is None) == odd_run and (r["output_estimated"]) == odd_run
        assert r["cost_usd"] is None
    for field in ("usage.output_tokens", "timing.total_ms"):
        assert f"cell 1 run 1/2: field {field} is out of range or not a number (int); skipped" in (
            s.notes
        )
    assert "cell 2 variant 2/2: field 'cost' is not a valid cost estimate (dict); skipped" in (
        s.notes
    )
    str(s), s._repr_html_(), s._repr_markdown_(), s.to_csv(), s.chart()


def test_a_long_junk_history_gives_a_bounded_number_of_notes():
    nb = new_notebook()
    output = saved_output(trace().to_dict(), history=["junk"] * 100_000)
    nb.cells = [new_code_cell("%%think\nQ", outputs=[output])]
    s = stats(nb)
    assert len(s.rows) == 1 and len(s.notes) == 51
    assert s.notes[-1] == "… and 99950 more notes"


def test_json_nested_too_deep_is_not_a_notebook(tmp_path):
    """50,000 levels: past the JSON parser's recursion limit (a RecursionError before)."""
    path = tmp_path / "deep.ipynb"
    path.write_text('{"cells": ' + "[" * 50_000 + "]" * 50_000 + "}")
    with pytest.raises(ValueError, match=r"deep\.ipynb is not a notebook"):
        stats(path)


def test_not_a_notebook(tmp_path):
    (tmp_path / "x.ipynb").write_text("not json")
    with pytest.raises(ValueError, match="not a notebook"):
        stats(tmp_path / "x.ipynb")
    with pytest.raises(TypeError):
        stats(42)
    s = stats({"cells": "no"})
    assert not s.rows and "not an nbformat 4 notebook" in s.notes[0]
    assert "No traces." in str(s) and "No traces." in s._repr_html_()


# -- the chart ----------------------------------------------------------------------------------


def test_chart_only_when_it_compares():
    assert stats([trace()]).chart() == []
    one_reasoned = [trace(), trace(reasoning="")]
    assert stats(one_reasoned).chart() == []
    assert "reasoning-nb-stats-chart" not in stats(one_reasoned)._repr_html_()
    assert stats([trace(), trace()]).chart()  # two runs that reasoned
    assert stats([trace(preset="off", reasoning=""), trace(reasoning="")]).chart()


def test_bars_are_block_characters_in_eighths():
    assert bar_text(0, 100) == "" and bar_text(100, 100) == "█" * BAR_CHARS
    assert bar_text(50, 100) == "█" * (BAR_CHARS // 2)
    assert bar_text(1, 10_000) == "▏"  # too small to see: a sliver, not nothing
    assert bar_text(7, 192) == "▉"  # 7/192 of 24 characters: 7 eighths of one
    assert bar_text(10, 192) == "█▎"  # 10 eighths: one and a quarter


def test_chart_bars_per_model_and_preset_with_escaped_labels():
    rows = [trace(model=f"p:model-{i}", preset=p) for i in range(10) for p in ("high", "low")]
    rows.append(trace(model='x:"quoted" & <b>', preset="auto"))
    rows.insert(0, trace(model='x:"quoted" & <b>', preset="low", reasoning="r" * 4000))
    s = stats(rows)
    lines = s.chart()
    assert lines[0] == TITLE and lines[-1] == "+3 more models not shown"
    assert lines[1].startswith('x:"quoted" & <b>  auto') and lines[2].startswith(" " * 18 + "low")
    assert lines[3].startswith("p:model-0") and "high" in lines[4]  # presets weakest first
    assert len(lines) == 2 + 2 + 7 * 2  # the first model's two bars, then seven models' two
    assert lines[2].count("█") == BAR_CHARS  # the longest bar is the whole width
    page = s._repr_html_()
    chart = page.split('class="reasoning-nb-stats-chart"')[1]
    assert chart.count('class="reasoning-nb-bar"') == 16 and not LIVE_TAG.search(chart)
    assert "x:&quot;quoted&quot; &amp; &lt;b&gt;" in chart and "+3 more models not shown" in chart
    assert s._repr_markdown_().count("```") == 2  # the chart as a code block


def test_chart_draws_complete_runs_and_lists_the_rest():
    complete = [trace(preset="low"), trace(preset="high")]
    stopped = [
        trace(preset="medium", status="cancelled"),
        trace(preset="max", status="error"),
        trace(preset="high", status="truncated"),
    ]
    s = stats(complete + stopped)
    assert len(s.rows) == 5 and [r["status"] for r in s.rows][2:] == [
        "cancelled",
        "error",
        "truncated",
    ]
    assert [line.split()[-3:-1] for line in s.chart()[1:]] == [
        ["low", "█" * 24],
        ["high", "█" * 24],
    ]
    page = s._repr_html_()
    assert page.count("<tr") == 6 + 2  # the header and every run; the chart's two bars
    assert page.count('<tr style="opacity:0.6" title="not in the chart') == 3
    for view in (str(s), s._repr_markdown_(), page):
        assert "the chart shows complete runs only" in view
    assert "the chart shows complete runs only" not in str(stats(complete))
    # stopped runs do not make a chart on their own: one complete run compares nothing
    assert stats([complete[0], *stopped]).chart() == []


def test_session_rows_chart_complete_runs_only():
    from reasoning_nb.views.stats import row, session_stats

    rows = [row(trace(preset="low")), row(trace(preset="high", status="cancelled"))]
    assert session_stats(rows).chart() == []
    rows.append(row(trace(preset="high")))
    assert len(session_stats(rows).chart()) == 1 + 2


# -- the table ----------------------------------------------------------------------------------

DEMO = "local: is a demo (SmolLM2-135M): its thinking is shaped by the server."


def test_a_warning_every_run_shares_is_said_once_above_the_table():
    s = stats([trace(preset=p, warnings=[DEMO]) for p in ("low", "high", "low")])
    assert s.shared_warnings() == [DEMO]
    assert "warnings" not in s.table()[0]
    for view in (str(s), s._repr_html_(), s._repr_markdown_()):
        assert view.count("every run: local: is a demo") == 1
    assert str(s).startswith("⚠ every run: " + DEMO)
    # a warning of one run's own stays on its row, the shared one is not repeated
    s = stats([trace(warnings=[DEMO, "sent effort 'low' instead."]), trace(warnings=[DEMO])])
    [head, first, second] = s.table()
    assert first[head.index("warnings")] == "sent effort 'low' instead." and not second[-1]
    assert s._repr_html_().count(DEMO) == 1
    assert stats([trace(warnings=["w"]), trace()]).shared_warnings() == []


def test_columns_nobody_fills_are_left_out_and_text_reads_left():
    s = stats([trace(), trace(preset="low")])
    head = s.table()[0]
    assert "status" not in head and "cost" not in head and "warnings" not in head
    assert "every run complete" in s.legend()[0]
    assert "status" in stats([trace(), trace(status="cancelled")]).table()[0]
    page = s._repr_html_()
    cells = re.findall(r'<td style="[^"]*text-align:(\w+)[^"]*"[^>]*>([^<]*)</td>', page)
    aligned = dict((text, align) for align, text in cells)
    assert aligned["#1"] == aligned["ollama:qwen3"] == aligned["high"] == "left"
    assert aligned["≈100"] == aligned["2.00 s"] == "right"
    assert "text-align:right" not in page.split("<th")[1]  # "run": a text column


def test_long_prompts_and_models_are_cut_in_the_html_whole_in_the_tooltip():
    long = "Why is the sky blue on a clear day, and why are sunsets red?"
    s = stats([trace(prompt=long, model="anthropic:claude-sonnet-4-5-20250929")])
    page = s._repr_html_()
    assert 'title="Why is the sky blue on a clear day, and…">Why is the sky bl…</td>' in page
    assert ">anthropic:claude-sonnet-4-5-20250929</td>" in page  # ids whole (they may wrap)


def test_prompt_column_is_short_one_line_and_escaped(tmp_path):
    long = "Why is the sky blue\non a clear day, and why are sunsets red instead?"
    s = stats([trace(prompt=long), trace(prompt=HOSTILE), trace(prompt="=cmd|' /c calc'!A0")])
    shown = [r["prompt"] for r in s.rows]
    assert shown[0] == "Why is the sky blue on a clear day, and…" and len(shown[0]) == 40
    assert shown[1] == HOSTILE
    [head, *lines] = s.table()
    assert head[:2] == ["run", "prompt"] and lines[0][1] == shown[0]
    assert "Why is the sky blue on a clear day" in str(s)
    page, markdown = s._repr_html_(), s._repr_markdown_()
    assert not LIVE_TAG.search(page) and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not LIVE_TAG.search(markdown) and "&lt;script&gt;" in markdown
    rows = list(csv.DictReader(io.StringIO(s.to_csv())))
    assert [r["prompt"] for r in rows] == [shown[0], HOSTILE, "'=cmd|' /c calc'!A0"]


# -- other views --------------------------------------------------------------------------------


def test_csv_has_every_key_and_defuses_formulas(tmp_path):
    s = stats([trace(model="=HYPERLINK(1)", warnings=["-1+1", "ok"])])
    text = s.to_csv(tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text() == text
    [row] = list(csv.DictReader(io.StringIO(text)))
    assert set(row) == set(s.rows[0])
    assert row["model"] == "'=HYPERLINK(1)" and row["warnings"] == "'-1+1 | ok"


def test_plain_and_markdown_tables_line_up():
    s = stats([trace(), trace(preset="low", model="o:m|x")])
    lines = str(s).splitlines()
    assert set(lines[1]) == {"-", " "}
    column = lines[0].index("preset")
    assert [line[column:].split()[0] for line in lines[2:4]] == ["high", "low"]
    assert "o:m\\|x" in s._repr_markdown_()
    assert repr(s) == "<TraceStats: 2 traces>" and len(s) == 2


def test_quickstart_notebook():
    s = stats(QUICKSTART)
    assert len(s.rows) >= 5 and not s.notes
    assert {r["model"] for r in s.rows} == {"local:smollm2"}
    assert {"off", "low", "high"} <= {r["preset"] for r in s.rows}
    assert s.chart()


def test_no_session_outside_ipython(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    s = stats()
    assert not s.rows and "no %think session" in s.notes[0]


# -- %think --stats -----------------------------------------------------------------------------


def test_think_stats_shows_the_session(ip, wire_server, monkeypatch):
    # a terminal shell formats text/plain only; a kernel formats all three
    kinds = ["text/plain", "text/html", "text/markdown"]
    monkeypatch.setattr(ip.display_formatter, "active_types", kinds)
    chat = "/v1/chat/completions"
    wire_server.route(
        "POST",
        chat,
        Reply.sse(wf.chat_sse("Rayleigh scattering.", "Blue light.", usage=True)),
        Reply.sse(wf.chat_sse("Short.", "Yes.")),
    )
    with capture_output() as cap:
        ip.run_line_magic("think", "--stats")
    assert "No traces." in cap.outputs[0].data["text/plain"]
    with capture_output():
        ip.run_cell_magic("think", f"--model llamacpp:m --base-url {wire_server.url} -p high", "Q")
        ip.run_cell_magic("think", f"--model llamacpp:m --base-url {wire_server.url} -p low", "Q")
    with capture_output() as cap:
        ip.run_line_magic("think", "--stats")
    [out] = cap.outputs
    page = out.data["text/html"]
    assert page.count("llamacpp:m") >= 2 and ">high<" in page and ">low<" in page
    assert "reasoning-nb-stats-chart" in page  # two presets
    assert "#1" in out.data["text/plain"] and "#2" in out.data["text/plain"]
    assert "text/markdown" in out.data
    session = reasoning_nb.stats()  # stats(None): the same session's traces
    assert [r["preset"] for r in session.rows] == ["high", "low"]
    assert [r["prompt"] for r in session.rows] == ["Q", "Q"]
    assert isinstance(session, TraceStats)


def test_a_compare_output_counts_every_variant_once(tmp_path):
    low, high = trace(preset="low").to_dict(), trace(preset="high").to_dict()
    good = saved_output(low)
    good.metadata["reasoning_nb_compare"] = [low, high]
    broken = saved_output(low)
    broken.metadata["reasoning_nb_compare"] = "nope"
    nb = new_notebook()
    nb.cells = [
        new_code_cell("%%think --compare low,high\nQ", outputs=[good]),
        new_code_cell("%%think --compare low,high\nQ", outputs=[broken]),
    ]
    s = stats(nb)
    assert [(r["source"], r["preset"]) for r in s.rows] == [
        ("cell 1 variant 1/2", "low"),
        ("cell 1 variant 2/2", "high"),
        ("cell 2", "low"),  # an unreadable list: the output's own trace still counts
    ]
    assert s.notes == ["cell 2: reasoning_nb_compare is str, not a list; skipped"]
