"""The sweep's plot: what it shows (points, the front filled and joined, the recommendation
ringed), labels from a notebook kept inert in the SVG and in matplotlib, and the one form it is
shown in (an <img> of a data: URL, which Lab keeps in an untrusted notebook)."""

from __future__ import annotations

import base64
import re
import sys
import xml.etree.ElementTree as ET
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st
from made_rows import sweep_rows

from reasoning_nb.sweep import plot

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '$x^2$ a$b <script>alert(1)</script> & " \x1b[31m \u202eevil'


def three_presets(model: str = "m", cost: float | None = None):
    grades = {
        (model, "low"): [1, 0, 1, 0],
        (model, "medium"): [1, 1, 1, 0],
        (model, "high"): [1] * 4,
    }
    return sweep_rows(grades, cost_per_token=cost)


def test_layout_marks_the_front_and_the_recommendation():
    shown = plot.layout(three_presets(), margin=0.3)
    assert [p.preset for p in shown.points] == ["low", "medium", "high"]
    assert [p.preset for p in shown.front] == ["low", "medium", "high"]
    assert [p.preset for p in shown.chosen] == ["medium"]  # 0.75 is within 0.3 of 1
    assert shown.measure == "tokens" and shown.title == "mean grade against output tokens per run"
    lines = plot.lines(shown)
    assert lines[0] == shown.title
    assert re.search(r"medium\s+1,265\s+0\.75\s+front · recommended", "\n".join(lines))


def test_the_svg_draws_a_point_per_model_and_preset_and_fills_the_front_only():
    rows = three_presets() + [r for r in three_presets("other") if r.preset == "high"]
    rows = [r if r.model != "other" else r.graded(0.0) for r in rows]
    drawn = ET.fromstring(plot.svg(plot.layout(rows)))
    dots = [g.find(f"{SVG}circle") for g in drawn.iter(f"{SVG}g")]
    assert len(dots) == 4
    hollow = [d for d in dots if d.get("fill") == plot.GROUND]
    assert len(hollow) == 1  # other · high: as costly as m · high, graded 0
    (line,) = drawn.iter(f"{SVG}polyline")
    assert len(line.get("points").split()) == 3
    rings = [c for c in drawn.iter(f"{SVG}circle") if c.get("r") == "10"]
    assert len(rings) == 1  # m's own choice is also the one across both models: one ring
    texts = [t.text for t in drawn.iter(f"{SVG}text")]
    assert {"low", "medium", "high", "m", "other"} <= set(texts)


def test_labels_from_a_notebook_stay_text_in_the_svg():
    rows = three_presets(HOSTILE)
    source = plot.svg(plot.layout(rows))
    drawn = ET.fromstring(source)  # a control character would make it no XML at all
    assert "<script" not in source and "\x1b" not in source and "\u202e" not in source
    assert not [el for el in drawn.iter() if el.tag.split("}")[1] not in ALLOWED_SVG]
    assert "$x^2$ a$b <script>ale…" in [t.text for t in drawn.iter(f"{SVG}text")]


ALLOWED_SVG = {"svg", "title", "rect", "text", "line", "polyline", "g", "circle"}


def test_matplotlib_draws_labels_as_written_into_a_png():
    pytest.importorskip("matplotlib", reason="the [test] extra installs matplotlib")
    shown = plot.layout(three_presets(HOSTILE, cost=1e-6))
    data = plot.png(shown)  # "$x^2$ a$b" would be mathtext, and "a$b" an error, unescaped
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    fig = plot.figure(shown)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[0] == "\\$x^2\\$ a\\$b <script>ale…"  # clipped, each $ escaped
    assert labels[1:] == ["on the Pareto front", "beaten by one", "recommended", "Pareto front"]


def test_the_plot_is_shown_as_an_img_of_a_data_url():
    rows = three_presets(cost=1e-6)
    for engine, kind, magic in (
        ("svg", "image/svg+xml", b"<svg"),
        ("matplotlib", "image/png", b"\x89PNG"),
    ):
        if engine == "matplotlib" and plot.engine_of() != "matplotlib":
            pytest.fail("the [test] extra installs matplotlib: its path must be tested")
        shown = plot.bundle(rows, engine=engine)
        match = re.fullmatch(
            r'<img class="[^"]+" src="data:([^;]+);base64,([^"]+)" alt="([^"]+)"[^>]*>',
            shown["text/html"],
        )
        assert match is not None, shown["text/html"][:200]
        assert match.group(1) == kind
        assert base64.b64decode(match.group(2)).startswith(magic)
        assert (
            match.group(3)
            == "mean grade against cost per run (USD, estimate): 3 model x preset points"
        )
        assert shown["text/plain"].startswith("mean grade against cost per run")


def test_without_matplotlib_the_svg_is_drawn(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    assert plot.engine_of() == "svg"
    assert "data:image/svg+xml;base64," in plot.bundle(three_presets())["text/html"]
    with pytest.raises(ValueError, match="engine must be"):
        plot.engine_of("png")  # type: ignore[arg-type]


def test_nothing_to_plot_says_so():
    ungraded = [r.graded(None) for r in three_presets()]
    assert plot.bundle(ungraded) == {
        "text/html": "nothing to plot: no model x preset has a grade",
        "text/plain": "nothing to plot: no model x preset has a grade",
    }


@given(st.floats(-1000, 1000), st.floats(1e-3, 1e6))  # grades, and costs or tokens from 0
def test_ticks_are_round_evenly_spaced_and_inside_the_range(low, span):
    high = low + span
    found = plot.ticks(low, high)
    assert 1 <= len(found) <= 7
    assert all(low - 1e-6 * span <= t <= high + 1e-6 * span for t in found)
    steps = {round(b - a, 9) for a, b in pairwise(found)}
    assert len({round(s / span, 6) for s in steps}) <= 1
