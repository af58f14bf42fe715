"""views.diverge_view: the "Where the reasoning parts" fold, its escaping and its look, and where
the static views put it (a --compare output, a cell's run history)."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from reasoning_nb.core.trace import Trace
from reasoning_nb.views import compare, render
from reasoning_nb.views.cell_runs import CellRuns
from reasoning_nb.views.diverge_view import (
    ELSEWHERE,
    MAX_FORKS,
    SAVED,
    SAVED_ALWAYS,
    SHOWN,
    TITLE,
    diverge,
    headline,
    parting_html,
    parting_markdown,
    parting_plain,
    saved_html,
)
from reasoning_nb.views.theme import ADDED, DIFF_BOX, REMOVED

EVIL = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
A = f"We read the sum. We add two. It is four. {EVIL} Then we check. Done."
B = "We read the sum. We add three. It is four. Then we check twice. Done."


def trace(reasoning: str, preset: str = "low", answer: str = "4") -> Trace:
    t = Trace(model="ollama:qwen3", preset=preset, prompt="Q")
    t.reasoning, t.answer = reasoning, answer
    t.finish()
    return t


def test_the_fold_says_where_they_part_and_meet():
    parting = diverge(trace(A), trace(B, "high"))
    assert parting.names == ("low · ollama:qwen3", "high · ollama:qwen3")
    assert headline(parting) == (
        "shared start: 1 sentence (17 characters) · parts at sentence 2 · meets again twice"
    )
    page = parting_html(parting)
    assert page.startswith('<details class="reasoning-nb-parting ') and " open" not in page[:60]
    assert f"{TITLE}: low · ollama:qwen3 vs high · ollama:qwen3" in page
    assert "Shared start: 1 sentence, 17 characters" in page
    assert page.count("They part here") == 1 and page.count("They part again") == 1
    assert re.findall(r"They meet again \(([^)]*)\)", page) == ["1 sentence", "1 sentence"]


def test_model_text_is_escaped_everywhere():
    parting = diverge(trace(A), trace(B))
    for view in (parting_html(parting), parting_markdown(parting)):
        assert "<img" not in view and "<script" not in view
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in view
    names = diverge("x. <b>y</b>.", "x. z.", names=("<i>A</i>", "B"))
    assert "<i>" not in parting_html(names) and "&lt;i&gt;A&lt;/i&gt;" in parting_html(names)
    assert EVIL in parting_plain(parting)  # (plain text is text: nothing renders it)


def test_markdown_renders_inert_and_keeps_math_and_line_ends_literal():
    a = "Same start.\nLet $x = 1$ and \\(y\\).\n\n```\ncode\n\nmore\n```\n"
    b = "Same start.\nLet $x = 2$.\n"
    md = parting_markdown(diverge(a, b))
    assert "$" not in md and "\\" not in md  # (a markdown renderer reads math before HTML)
    body = md.split("</summary>", 1)[1]
    assert "\n\n" not in body.strip().removesuffix("</details>").strip()  # one HTML block
    rendered = MarkdownIt("commonmark", {"html": True}).render(md)
    assert "&amp;#36;" not in rendered and "&#36;x = 1&#36;" in rendered


def test_the_answer_diffs_look():
    page = parting_html(diverge(A, B))
    assert f"background:{REMOVED}" in page and f"background:{ADDED}" in page
    assert re.search(rf'<del style="[^"]*background:{re.escape(REMOVED)}">We add two\.</del>', page)
    assert re.search(rf'<ins style="[^"]*background:{re.escape(ADDED)}">We add three\.</ins>', page)
    assert DIFF_BOX in page
    assert "text-decoration:none" in page  # tinted blocks, not underlined or struck


def test_long_parts_are_cut_and_forks_counted():
    a = "Start. " + "".join(f"Left {i} long {'x' * 30}. Mid {i}. " for i in range(40)) + "\n"
    b = "Start. " + "".join(f"Right {i}. Mid {i}. " for i in range(40)) + "\n"
    b = b.replace("Right 0.", "R" * (SHOWN * 3) + ".")
    page = parting_html(diverge(a, b))
    assert "R" * SHOWN + "…" in page and "R" * (SHOWN + 1) not in page
    assert page.count("They part again") == MAX_FORKS
    assert f"… and {40 - MAX_FORKS - 1} more forks" in page


@pytest.mark.parametrize(
    ("a", "b", "said"),
    [
        ("Same. Text.", "Same.  Text.\n", "the same reasoning (whitespace aside)"),
        ("One. Two.", "Three. Four.", "different from the first sentence · never meets again"),
        ("", "", "no reasoning on either side"),
    ],
)
def test_headlines(a, b, said):
    assert headline(diverge(a, b)) == said


def test_repr_is_the_fold_open():
    parting = diverge(A, B)
    assert parting._repr_html_() == parting_html(parting, opened=True)
    assert parting._repr_markdown_().startswith("<details open>")
    assert str(parting).startswith(f"== {TITLE.lower()}: A vs B ==")
    assert repr(parting) == (
        "<Parting 'A' vs 'B': shared start: 1 sentence (17 characters) · parts at sentence 2 · "
        "meets again twice>"
    )


# -- where the static views put it ---------------------------------------------------------------


def test_compare_output_has_the_fold_after_the_answer_diff_in_each_mode():
    traces = [trace(A, "low"), trace(B, "high", answer="5"), trace("", "none")]
    for mode in ("collapsible", "inline"):
        views = compare.bundle(traces, mode)
        page = views["text/html"]
        assert page.count('class="reasoning-nb-parting ') == 1  # (the one without reasoning: none)
        assert page.index("Answer diff") < page.index(TITLE)
        assert (" open>" in page.split('class="reasoning-nb-parting ', 1)[1][:60]) == (
            mode == "inline"
        )
        assert TITLE in views["text/markdown"] and TITLE.lower() in views["text/plain"]
    cell = compare.cell_bundle(traces)["text/html"]
    assert cell.count('class="reasoning-nb-parting ') == 1
    stripped = compare.bundle(traces, "strip")
    assert not any(TITLE.lower() in v.lower() for v in stripped.values())


def test_a_cell_run_twice_shows_the_fold_between_its_latest_run_and_the_one_before():
    earlier, latest = trace(A, "low"), trace(B, "high")
    runs = CellRuns("%%think --preset low", (trace("Old. Thought.", "low"), earlier))
    page = render.to_html(latest, runs=runs)
    fold = page.index('class="reasoning-nb-parting ')
    assert page.index('class="reasoning-nb-answer') < fold < page.index("Earlier runs")
    assert f"{TITLE}: Run 2 · preset low vs Run 3 · preset high" in page
    assert page.count(TITLE) == 1  # only the latest against the one before
    assert TITLE in render.cell_bundle(latest, runs)["text/html"]
    assert TITLE in render.to_markdown(latest, runs=runs)
    assert TITLE.lower() in render.to_plain(latest, runs=runs)
    assert TITLE not in render.to_html(latest, "strip", runs=runs)
    assert TITLE not in render.to_html(latest)  # a cell run once


def test_no_fold_when_one_run_has_no_reasoning():
    runs = CellRuns("", (trace(""),))
    assert TITLE not in render.to_html(trace(B), runs=runs)
    assert TITLE not in compare.bundle([trace(A), trace("  ")])["text/html"]


def test_a_saved_cell_quotes_the_first_fork_where_there_is_room_else_says_where():
    a = "Start here. " + "".join(f"Left {i} {'x' * 400}. Mid {i}. " for i in range(9))
    b = "Start here. " + "".join(f"Right {i}. Mid {i}. " for i in range(9))
    [fold] = saved_html([diverge(a, b)], text=len(a) + len(b))
    assert fold.count("They part") == 1 and "Left 0 " + "x" * (SAVED.shown - 7) + "…" in fold
    assert "… and 8 more forks (every one: an export, or reasoning_nb.diverge)" in fold
    assert len(fold.encode()) <= SAVED_ALWAYS
    [brief] = saved_html([diverge(a, b)], text=len(a) + len(b), used=2_000)  # the diff took it
    assert "They part" not in brief and "Left 0" not in brief
    assert html.escape(ELSEWHERE) in brief and headline(diverge(a, b)) in brief
    assert "<style>" not in brief and len(brief.encode()) < 600
    big = a * 60, b  # 5% of a long text is room enough
    [fold] = saved_html([diverge(*big)], text=len(big[0]) + len(big[1]), used=2_000)
    assert "They part here" in fold
