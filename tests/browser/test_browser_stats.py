"""``%think --stats`` and ``%think --list`` as a newcomer sees them, in a real JupyterLab, Light
and Dark.

The stats are saved outputs in an unsigned notebook (a clone: untrusted), so Lab sanitizes their
HTML: the chart must still read as a chart (Lab drops inline SVG and leaves its labels as run-on
text), the table must fit the output area, and a warning every run shares must show once. The
same notebook goes through ``jupyter nbconvert --to html`` (a stand-in for GitHub's static view).
Shares ``test_browser``'s Lab fixture and helpers; screenshots land in ``test-artifacts/browser/``.
"""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest
from playwright.sync_api import expect
from test_browser import (
    ARTIFACTS,
    BROWSER,
    KERNELSPEC,
    cell,
    close_all,
    open_notebook,
    set_theme,
    shot,
)

from reasoning_nb import Trace, stats
from reasoning_nb.core.capabilities import snapshot_as_of
from reasoning_nb.views.stats_chart import TITLE

pytestmark = BROWSER

DEMO_WARNING = (
    "local: is a demo (SmolLM2-135M): its thinking is shaped by the server, not real reasoning."
)
DEMO = [
    ("auto", 48),
    ("high", 193),
    ("off", 0),
    ("low", 14),
    ("low", 16),
    ("low", 21),
    ("high", 265),
]
WIDE = [  # (model, preset, reasoning tokens, warnings, cost): long names, costs, own warnings
    ("anthropic:claude-sonnet-4-5-20250929", "low", 1_024, [], 0.0123),
    ("anthropic:claude-sonnet-4-5-20250929", "high", 8_412, [], 0.1377),
    ("ollama:deepseek-r1:14b-qwen-distill-q4_K_M", "off", 0,
     ["ollama cannot switch reasoning off; sent effort 'low' instead."], None),
    ("ollama:deepseek-r1:14b-qwen-distill-q4_K_M", "high", 3_870, [], None),
    ("gemini:gemini-2.5-pro", "medium", 2_210,
     ["budget_tokens=2048 overrides preset 'off', so reasoning stays on.",
      "gemini has no effort 'max'; sent 'high' instead."], 0.0241),
]  # fmt: skip
COST = {"estimate": True, "prices_as_of": "2026-11-01", "source": "genai-prices 0.2.3"}
USUAL = {"width": 1400, "height": 900}
"""A window whose notebook output area is the issue's usual 968 px."""
PROMPT = "Why is the sky blue on a clear day, and why are sunsets red instead of blue?"


def trace(model: str, preset: str, tokens: int, **kw) -> Trace:
    return Trace(
        model=model, provider=model.split(":")[0], preset=preset, prompt=kw.pop("prompt", PROMPT),
        reasoning="r" * (4 * tokens), answer="The sky is blue.", status="complete",
        usage={"reasoning_tokens": tokens, "output_tokens": tokens + 40},
        timing={"first_token_ms": 420.0, "reasoning_ms": 9_730.0 + tokens, "total_ms": 16_820.0},
        **kw,
    )  # fmt: skip


def bundle(s) -> dict:
    return {
        "text/plain": str(s),
        "text/html": s._repr_html_(),
        "text/markdown": s._repr_markdown_(),
    }


def saved_notebook(path) -> None:
    """Two stats outputs as ``%think --stats`` saves them; unsigned, as a clone is."""
    demo = stats(
        [trace("local:smollm2", p, n, prompt="What is 17 × 23?", warnings=[DEMO_WARNING])
         for p, n in DEMO]
    )  # fmt: skip
    wide = stats(
        [trace(m, p, n, warnings=w, cost=c and COST | {"usd": c}) for m, p, n, w, c in WIDE]
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.cells = []
    for s in (demo, wide):
        code = nbformat.v4.new_code_cell("%think --stats", execution_count=1)
        code.outputs = [nbformat.v4.new_output("display_data", data=bundle(s))]
        nb.cells.append(code)
    nbformat.write(nb, path)


@pytest.fixture
def page(browser_page, lab):
    """The shared page with no notebook open; after the test, no kernel left running either
    (each notebook opened here starts one)."""
    close_all(browser_page)
    browser_page.errors.clear()
    yield browser_page
    close_all(browser_page)
    lab.shutdown_all_kernels()


# In-page measurement of one stats output: what a reader sees of its layout.
LAYOUT = r"""(node) => {
  const out = node.querySelector('.jp-OutputArea-output');
  const stats = out.querySelector('.reasoning-nb-stats');
  const table = stats.querySelector(':scope > table');
  const inked = (e) => {  // the width of a cell's text, not of its column
    const range = document.createRange();
    range.selectNodeContents(e);
    return range.getBoundingClientRect().width;
  };
  const cells = (row) => [...row.children].map((c) => getComputedStyle(c).textAlign);
  const ths = [...table.querySelectorAll('thead th')];
  const head = ths.map((c) => c.textContent);
  return {
    area: out.clientWidth, scroll: out.scrollWidth, table: table.getBoundingClientRect().width,
    head, widths: ths.map((c) => Math.round(c.getBoundingClientRect().width)),
    align: cells(table.querySelector('tbody tr')),
    rows: [...table.querySelectorAll('tbody tr')].map((r) => r.getBoundingClientRect().height),
    line: parseFloat(getComputedStyle(table.querySelector('tbody td')).fontSize),
    svg: out.querySelectorAll('svg').length,
    chartTitle: stats.querySelector('.reasoning-nb-stats-chart > div').textContent,
    bars: [...stats.querySelectorAll('.reasoning-nb-bar')].map(inked),
    text: out.innerText,
  };
}"""


def layout(page, index: int) -> dict:
    return page.evaluate(LAYOUT, cell(page, index).element_handle())


def test_saved_stats_read_in_an_untrusted_notebook(page, lab):
    """Item 2 and 3: the chart is a table of block bars that the sanitizer keeps; the table fits
    the output area, says the shared warning once, each row one line, text left, numbers right."""
    saved_notebook(lab.root / "stats-clone.ipynb")
    open_notebook(page, "stats-clone.ipynb")
    assert not page.evaluate("() => window.__rn.panel().content.widgets[0].model.trusted")
    expect(cell(page, 1).locator(".reasoning-nb-stats-chart")).to_be_visible()
    narrow = layout(page, 0)  # the shared page's 1280 px window: an 848 px output area
    page.set_viewport_size(USUAL)
    try:
        page.wait_for_function(
            "() => window.__rn.cellNode(0).querySelector("
            "'.jp-OutputArea-output').clientWidth >= 960"
        )
        found = {i: layout(page, i) for i in (0, 1)}
        check(page, narrow, found)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def check(page, narrow: dict, found: dict) -> None:
    (ARTIFACTS / "stats-layout.json").write_text(__import__("json").dumps(found, indent=1))
    demo, wide = found[0], found[1]
    assert 960 <= demo["area"] <= 976, demo["area"]  # the "usual" 968 px
    for seen in [*found.values(), narrow]:
        assert seen["svg"] == 0
        assert seen["chartTitle"] == TITLE  # its own line: not run into the axis labels
        assert TITLE + "0" not in seen["text"]
        assert seen["table"] <= seen["area"] and seen["scroll"] <= seen["area"], seen
    # The demo: the warning once, above; no warnings column; every row one line.
    assert demo["text"].count(DEMO_WARNING) == 1
    assert demo["text"].index(DEMO_WARNING) < demo["text"].index("reasoning tok")
    assert "warnings" not in demo["head"] and "prompt" in demo["head"]
    for seen in (demo, narrow):
        assert max(seen["rows"]) < 2 * seen["line"] + 6, seen["rows"]  # one line of text
    assert len(demo["bars"]) == 4  # auto, off, low, high of one model
    assert demo["bars"][3] > demo["bars"][0] > demo["bars"][2] >= 0  # high > auto > off
    # Text left, numbers right: run, prompt, model, preset | counts and times (every run is
    # complete: no status column).
    assert "status" not in demo["head"]
    assert demo["align"][:4] == ["left"] * 4 and set(demo["align"][4:]) == {"right"}, demo
    # The wide one: own warnings and costs kept, and still inside the output area.
    assert "warnings" in wide["head"] and "cost" in wide["head"]
    assert "(+1)" in wide["text"]  # a second warning: counted, whole in the tooltip
    assert len(wide["bars"]) == 5
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        slug = theme.split()[-1].lower()
        for i, name in ((0, "demo"), (1, "wide")):
            shot(page, f"30-stats-untrusted-{name}-{slug}", cell(page, i))
    set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors


def test_saved_stats_in_the_nbconvert_html(page, lab, tmp_path):
    """The static HTML export (what GitHub-like viewers show): the same chart, no drawing, and
    it still reads with every inline style gone."""
    saved_notebook(tmp_path / "stats.ipynb")
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html",
         str(tmp_path / "stats.ipynb"), "--output-dir", str(lab.root)],
        check=True, capture_output=True,
    )  # fmt: skip
    export = page.context.new_page()  # a page of its own: Lab's page stays as it is
    try:
        export.goto(lab.url("files/stats.html"))
        chart = export.locator(".reasoning-nb-stats-chart").first
        expect(chart).to_be_visible()
        assert export.locator(".reasoning-nb-stats svg").count() == 0
        assert chart.locator(":scope > div").first.inner_text() == TITLE
        assert chart.locator(".reasoning-nb-bar").count() == 4
        assert export.locator(".reasoning-nb-stats").first.inner_text().count(DEMO_WARNING) == 1
        shot(export, "31-stats-nbconvert-html")
        # GitHub's viewer drops inline styles: the bars are characters, so they stay
        export.evaluate("() => document.querySelectorAll('.reasoning-nb-stats [style]')"
                        ".forEach((e) => e.removeAttribute('style'))")  # fmt: skip
        bars = chart.locator(".reasoning-nb-bar").all_inner_texts()
        assert len(bars[3]) > len(bars[0]) > len(bars[2]) > len(bars[1]) == 0, (
            bars
        )  # high, auto, low, off
        assert set(bars[3]) == {"█"}
        shot(export, "31-stats-nbconvert-html-no-styles", chart)
    finally:
        export.close()


# Each word of an element's text: how many line boxes it takes (2 or more: cut mid-word).
WORD_BOXES = r"""(el) => {
  const out = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.data.matchAll(/\S+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      out.push([m[0], tops.size]);
    }
  }
  return out;
}"""


def test_list_is_a_table_that_fits_the_output(page, lab):
    """Item 9: ``%think --list`` in a real kernel shows a table (its key column aligned) that
    fits the output area; the demo's long line wraps between words, never inside one. Issue 25:
    it ends with the day of the shipped capability data."""
    from test_browser import run_all, wait_cell_done, write_notebook

    write_notebook(lab, "list.ipynb", "%load_ext reasoning_nb", "%think --list")
    open_notebook(page, "list.ipynb")
    run_all(page)
    wait_cell_done(page, 1, timeout=180_000)
    out = cell(page, 1).locator(".jp-OutputArea-output")
    listed = out.locator(".reasoning-nb-list")
    expect(listed).to_be_visible()
    table = listed.locator("table").first
    area = out.evaluate("(e) => [e.clientWidth, e.scrollWidth]")
    assert table.bounding_box()["width"] <= area[0] and area[1] <= area[0], area
    rows = table.locator("tbody tr")
    assert rows.count() >= 10  # every provider we know
    keys = rows.locator("td:nth-child(3)")
    lefts = {round(k.bounding_box()["x"]) for k in keys.all()}
    assert len(lefts) == 1, lefts  # the key column: one left edge
    assert {k.evaluate("(e) => getComputedStyle(e).textAlign") for k in keys.all()} == {"left"}
    ids = rows.locator("td:first-child")
    heights = {round(i.bounding_box()["height"]) for i in ids.all()}
    assert max(heights) < 30, heights  # provider ids one line each
    facts = listed.locator(":scope > div").filter(has=page.locator("b", has_text="Model facts"))
    said = f"Model facts: efforts and budgets from models.dev as of {snapshot_as_of()}"
    expect(facts).to_have_text(said)
    demo = listed.locator(":scope > div").filter(has=page.locator("b", has_text="Embedded demo"))
    for width in (1280, 900):  # the shared window, and a narrow one that makes it wrap
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(300)
        cut = [w for w, boxes in demo.evaluate(WORD_BOXES) if boxes > 1]
        assert not cut, f"words cut across lines at {width} px: {cut}"
    page.set_viewport_size({"width": 1280, "height": 900})
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        shot(page, f"32-list-{theme.split()[-1].lower()}", cell(page, 1))
    set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors
