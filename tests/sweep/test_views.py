"""The static views of a sweep: the summary table, the recommendation and the No effect flags as
HTML, markdown and text; labels from a notebook stay text; the HTML holds only what the notebook
sanitizer keeps, so an untrusted notebook shows it whole."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser

from made_rows import sweep_rows

from reasoning_nb.sweep import views

EVIL = '<img src=x onerror="alert(1)">*bold* [a](javascript:x) $5'


def sweep(model: str = "qwen3:8b"):
    rows = sweep_rows(
        {(model, "low"): [1, 0, 1, 0], (model, "medium"): [1, 1, 1, 0], (model, "high"): [1] * 4},
        cost_per_token=1e-6,
    )
    # high became the same request as medium (a provider that clamps), and one low run failed
    rows = [
        replace(r, sent={"reasoning_effort": "medium"}) if r.preset == "high" else r for r in rows
    ]
    rows[3] = replace(rows[3], status="error", grade=None, error="HTTP 500", cost_usd=None)
    return rows


def test_text_has_the_table_the_recommendation_the_flags_and_the_points():
    shown = views.text(sweep(), margin=0.4)
    lines = shown.splitlines()
    assert lines[0].split() == [
        "model",
        "preset",
        "runs",
        "mean",
        "grade",
        "reasoning",
        "tok",
        "output",
        "tok",
        "cost",
        "time",
        "no",
        "effect",
    ]
    assert lines[2].split()[:5] == ["qwen3:8b", "low", "4", "(1)", "0.667"]
    assert lines[4].split()[-2:] == ["=", "medium"]
    assert (
        "Recommended: the cheapest within 0.4 of the best grade, by cost per run (USD, estimate)"
        in lines
    )
    assert (
        "  qwen3:8b: low — grade 0.667, within 0.4 of the best (medium, 1), at $0.0005 against "
        "$0.0013 (3 presets compared on 3 prompts)" in lines
    )
    assert any(
        line.startswith(
            "No effect: qwen3:8b · high — the effort was ignored: sent the same request as 'medium'"
        )
        for line in lines
    )
    title = lines.index("mean grade against cost per run (USD, estimate)")
    assert lines[title : title + 2] == [
        "mean grade against cost per run (USD, estimate)",
        "grades over the 3 of 4 prompts graded under every preset",
    ]  # low failed on one: the grades the recommendation compares


def test_without_grades_or_rows_the_views_say_what_to_do():
    ungraded = [r.graded(None) for r in sweep()]
    said = "No recommendation: no run has a grade. Sweep a prompt set with an expected column"
    assert said in views.text(ungraded)
    assert views.text([]).startswith("No sweep rows")
    assert views.html_view([]).startswith("<p>No sweep rows")


class Tags(HTMLParser):
    """Every tag and attribute, and the text, of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


# what JupyterLab's sanitizer keeps (its allowedTags / allowedAttributes, checked on 4.6)
KEPT = {"div", "table", "thead", "tbody", "tr", "th", "td", "img"}
KEPT_ATTRIBUTES = {"style", "class", "title", "align", "src", "alt", "width"}


def test_html_is_text_for_every_label_and_only_what_the_sanitizer_keeps():
    page = Tags()
    page.feed(views.html_view(sweep(EVIL), engine="svg"))
    assert {tag for tag, _ in page.tags} <= KEPT
    assert {a for _, attrs in page.tags for a in attrs} <= KEPT_ATTRIBUTES
    (image,) = [attrs for tag, attrs in page.tags if tag == "img"]
    assert image["src"].startswith("data:image/svg+xml;base64,")
    assert sum(EVIL[:30] in t for t in page.text) >= 3  # the table's three rows, as text


def test_markdown_escapes_labels_and_fences_the_points():
    shown = views.markdown(sweep(EVIL))
    assert "<img" not in shown.split("```text")[0]
    assert '| &lt;img src=x onerror="alert(1)"&gt;\\*bold\\* \\[a… | low |' in shown
    assert shown.rstrip().endswith("```")


def test_the_bundle_and_the_shown_object():
    rows = sweep()
    bundle = views.bundle(rows, engine="svg")
    assert set(bundle) == {"text/html", "text/markdown", "text/plain"}
    shown = views.Shown(rows, engine="svg")
    assert shown._repr_mimebundle_() == bundle
    assert repr(shown) == bundle["text/plain"]


def test_a_column_no_row_fills_is_left_out():
    local = sweep_rows({("m", "low"): [1, 0], ("m", "high"): [1, 1]})  # no price, an effect
    head = views.text(local).splitlines()[0]
    assert "cost" not in head and "no effect" not in head
    assert views.text(local).splitlines()[4] == (
        "means over complete and truncated runs; runs: failed ones in brackets; "
        "time: request to the end"
    )
    assert views.html_view(local, engine="svg").count("<th ") == len(views.HEAD) - 2


def test_an_html_export_keeps_the_plot_and_the_labels_as_text():
    """nbconvert's HTML (a static page, GitHub-like): the plot's <img> and escaped labels."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("%think --sweep questions.csv")
    code.outputs = [
        nbformat.v4.new_output("display_data", data=views.bundle(sweep(EVIL), engine="svg"))
    ]
    nb.cells = [code]
    page, _ = HTMLExporter().from_notebook_node(nb)
    page_tags = Tags()
    page_tags.feed(page)
    images = [a for tag, a in page_tags.tags if tag == "img"]
    assert [a["src"][:26] for a in images] == ["data:image/svg+xml;base64,"]
    assert "onerror" not in "".join(str(a) for tag, a in page_tags.tags)
