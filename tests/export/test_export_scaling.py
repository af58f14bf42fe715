"""What an export costs grows linearly with the notebook (issue 22, items 21, 25, 26): math that
never closes, and answers a ``--compare`` diff cannot line up, are where it grew quadratically;
and ``strip`` needs a few times the memory of the other modes, not 500 bytes a byte (item 27).

Each check runs the real markdown exporter in this process (the one ``jupyter nbconvert --to
reasoning-markdown`` runs), so its CPU time and memory are measured: CPU time on a notebook and
on one 8x as big (``tests/scaling.py``), memory against another mode on the same notebook."""

from __future__ import annotations

import re
import tracemalloc

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scaling import assert_linear
from traitlets.config import Config

from reasoning_nb.core.trace import Trace
from reasoning_nb.export.exporters import ReasoningMarkdownExporter
from reasoning_nb.views import compare as compare_view
from reasoning_nb.views import render


def _notebook(meta: dict) -> nbformat.NotebookNode:
    output = nbformat.v4.new_output("display_data", data={"text/plain": ""}, metadata=meta)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%think\nQ", outputs=[output])]
    return nb


def _export(meta: dict, mode: str = "collapsible") -> str:
    config = Config({"ReasoningPreprocessor": {"mode": mode}})
    body, _ = ReasoningMarkdownExporter(config=config).from_notebook_node(_notebook(meta))
    return body


# -- math that never closes (items 21 and 25) -----------------------------------------------------

UNCLOSED = {
    "display-lines": "$$x\n",  # each line opens display math that no later line closes
    "bracket-lines": "\\[x\n",
    "paren-run": "\\(",  # the static view of a run of \( (item 21)
}


@pytest.mark.parametrize("unit", UNCLOSED.values(), ids=UNCLOSED.keys())
def test_unclosed_math_exports_in_linear_time(unit):
    def export(n: int) -> None:
        text = unit * (n // len(unit))
        trace = Trace(model="m", preset="p", reasoning=text, answer=text, status="complete")
        _export({"reasoning_nb": trace.to_dict()})

    assert_linear(export, 2_000)


def test_the_static_view_of_unclosed_math_renders_in_linear_time():
    assert_linear(lambda n: render.markdown_html("\\(" * n, breaks=True), 8_000)
    inline = render.markdown_tokens("\\(a \\(b\\)")[1].children  # the first opener still closes
    assert [(t.type, t.content) for t in inline] == [("math_inline", "a \\(b")]


# -- the --compare answer diff (item 26) ----------------------------------------------------------


def _pair(first: str, other: str) -> list[Trace]:
    return [
        Trace(model="m", preset=p, answer=a, status="complete")
        for p, a in (("low", first), ("high", other))
    ]


def _interleaved(n: int, shift: int) -> str:
    """Half the lines one popular line, the rest all different: difflib's worst case."""
    return "".join("same\n" if k % 2 else f"{k + shift}\n" for k in range(n))


def test_the_answer_diff_of_a_compare_export_is_linear():
    def export(n: int) -> None:
        traces = _pair(_interleaved(n, 0), _interleaved(n, 1))
        _export(
            {
                "reasoning_nb": traces[0].to_dict(),
                "reasoning_nb_compare": [t.to_dict() for t in traces],
            }
        )

    assert_linear(export, 100)
    assert_linear(lambda n: compare_view.answer_diff(_pair("x\n" * n, "x\n" * n + "y")), 400)
    long = compare_view.answer_diff(_pair(_interleaved(1_000, 0), _interleaved(1_000, 1)))
    assert long == (
        "(the answers of low · m and high · m differ over more than 300 lines: "
        "too many for a line diff, read them side by side)"
    )


def test_a_compare_export_computes_the_diff_once(monkeypatch):
    calls = []
    real = compare_view.answer_diff
    monkeypatch.setattr(compare_view, "answer_diff", lambda t: calls.append(1) or real(t))
    traces = _pair("a\nb\nc\nd", "a\nb\nc\nD")
    page = compare_view.bundle(traces)
    assert len(calls) == 1 and "<ins>+D\n</ins>" in page["text/html"]


def _patched(lines: list[str], diff: str) -> list[str]:
    """``lines`` with a unified diff applied, hunk by hunk at the line its header names."""
    out, at = [], 0
    for hunk in re.split(r"^(?=@@ )", diff, flags=re.M)[1:]:
        header, *body = hunk.rstrip("\n").split("\n")
        start, length = re.match(r"@@ -(\d+)(?:,(\d+))?", header).groups()
        start = int(start) - (1 if length != "0" else 0)
        out += lines[at:start]
        out += [line[1:] for line in body if line[:1] in " +"]
        at = start + sum(1 for line in body if line[:1] in " -")
    return out + lines[at:]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "", "d"]), max_size=40),
    st.lists(st.sampled_from(["a", "b", "c", "", "e"]), max_size=40),
)
def test_the_bounded_diff_is_a_true_diff(first, other):
    """Set aside the shared first and last lines, the diff still turns one answer into the
    other, its hunks at the lines their headers name."""
    diff = compare_view._pair_diff(first, "A", other, "B")
    if diff.startswith("--- A\n+++ B\n"):
        assert _patched(first, diff) == other


# -- strip's memory (item 27) ----------------------------------------------------------------------


def _peak(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_strip_needs_a_few_times_the_memory_of_collapsible():
    """Strip looks for the reasoning elsewhere in the notebook; finding it must not cost a
    pattern compiled from all of it (2 MB of reasoning took 1.1 GB)."""
    line = "Step {}: the value of $x_{{k}}$ grows, and **so does** the rest, \\(y < 3\\).\n"
    reasoning = "".join(line.format(k) + "\n" * (k % 4 == 0) for k in range(400))
    trace = Trace(model="m", preset="p", reasoning=reasoning, answer="Done.", status="complete")
    meta = {"reasoning_nb": trace.to_dict()}
    warm = Trace(model="m", preset="p", reasoning="warm up " * 9, answer="a").to_dict()
    for mode in ("collapsible", "strip"):  # what a first export loads (templates) is not counted
        _export({"reasoning_nb": warm}, mode)
    collapsible = _peak(lambda: _export(meta, "collapsible"))
    strip = _peak(lambda: _export(meta, "strip"))
    assert strip < 3 * collapsible, (
        f"strip {strip / 1e6:.0f} MB, collapsible {collapsible / 1e6:.0f} MB"
    )
