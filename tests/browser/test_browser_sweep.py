"""A finished sweep as a reader sees it in a real JupyterLab, Light and Dark: the summary table,
the plot (our own SVG and matplotlib's PNG), the recommendation and the No effect flags.

Saved outputs in an unsigned notebook (a clone: untrusted), where Lab sanitizes HTML, drops
inline SVG and skips ``image/svg+xml``: the plot is an ``<img>`` of a ``data:`` URL and must
still be drawn. Then the same view shown from a live kernel (a trusted output). Shares
``test_browser``'s Lab fixture and helpers; screenshots land in ``test-artifacts/browser/``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import nbformat
import test_browser as tb
from playwright.sync_api import expect
from test_browser import BROWSER, KERNELSPEC
from test_browser_stats import page  # noqa: F401 - no notebook open, no kernel left after

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from made_rows import sweep_rows  # the sweep tests' rows

from reasoning_nb.core.text import clip
from reasoning_nb.sweep import views

pytestmark = BROWSER

EVIL = '<img src=x onerror="document.title=1">'
ROWS_CODE = """\
from dataclasses import replace
from reasoning_nb.sweep.rows import Row
from reasoning_nb.sweep.views import Shown
def row(k, model, preset, grade, tokens, usd):
    return Row(sweep_id="s", prompt_id=k, prompt=f"q{k}", model=model, preset=preset,
               sent={"reasoning_effort": preset}, status="complete", answer="42", reasoning="r",
               input_tokens=20, output_tokens=tokens + 50, reasoning_tokens=tokens,
               cost_usd=usd * (tokens + 50), first_token_ms=300.0, total_ms=1000.0 + tokens,
               grade=grade)
marks = {"low": [1, 0, 1, 1], "medium": [1, 1, 1, 1], "high": [1, 1, 1, 1]}
rows = [row(k, "openai:gpt-5-mini", p, g, {"low": 400, "medium": 1200, "high": 3000}[p] + 10 * k,
            2e-6) for p, gs in marks.items() for k, g in enumerate(gs)]
Shown(rows, engine="svg")
"""


def sweep():
    """Two models, three presets: one clamped onto another, one run failed, a hostile name."""
    grades = {
        ("ollama:qwen3:8b", "low"): [1, 0, 1, 0, 1, 1],
        ("ollama:qwen3:8b", "medium"): [1, 1, 1, 0, 1, 1],
        ("ollama:qwen3:8b", "high"): [1, 1, 1, 1, 1, 1],
        (f"llamacpp:{EVIL}", "low"): [0, 0, 1, 0, 1, 0],
        (f"llamacpp:{EVIL}", "high"): [1, 0, 1, 0, 1, 1],
    }
    rows = sweep_rows(grades)
    clamped = {"think": "high"}
    rows = [replace(r, sent=clamped) if r.preset in ("medium", "high") else r for r in rows]
    rows[2] = replace(rows[2], status="error", grade=None, error="HTTP 500")
    return rows


def saved_notebook(path: Path) -> None:
    """The sweep's view as s3's magic saves it, once per engine; unsigned, as a clone is."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.cells = []
    for engine in ("svg", "matplotlib"):
        code = nbformat.v4.new_code_cell("%think --sweep questions.csv", execution_count=1)
        data = views.bundle(sweep(), engine=engine)
        code.outputs = [nbformat.v4.new_output("display_data", data=data)]
        nb.cells.append(code)
    nbformat.write(nb, path)


LOOK = r"""(node) => {
  const out = node.querySelector('.jp-OutputArea-output');
  const img = out.querySelector('img.reasoning-nb-sweep-plot');
  const table = out.querySelector('.reasoning-nb-sweep table');
  return {
    area: out.clientWidth, scroll: out.scrollWidth,
    table: table.getBoundingClientRect().width,
    imgs: out.querySelectorAll('img').length, svg: out.querySelectorAll('svg').length,
    src: img.getAttribute('src').slice(0, 40), drawn: img.complete && img.naturalWidth,
    width: img.getBoundingClientRect().width, text: out.innerText,
  };
}"""


DRAWN = """(n) => {
  const i = window.__rn.cellNode(n).querySelector('img.reasoning-nb-sweep-plot');
  return i && i.complete && i.naturalWidth > 0;
}"""


def look(view, index: int) -> dict:
    return view.evaluate(LOOK, tb.cell(view, index).element_handle())


def test_a_saved_sweep_reads_in_an_untrusted_notebook(page, lab):  # noqa: F811
    saved_notebook(lab.root / "sweep-clone.ipynb")
    tb.open_notebook(page, "sweep-clone.ipynb")
    assert not page.evaluate("() => window.__rn.panel().content.widgets[0].model.trusted")
    for index, kind in ((0, "data:image/svg+xml;base64,"), (1, "data:image/png;base64,")):
        image = tb.cell(page, index).locator("img.reasoning-nb-sweep-plot")
        expect(image).to_be_visible()
        page.wait_for_function(DRAWN, arg=index)
        seen = look(page, index)
        assert seen["src"].startswith(kind)
        assert seen["drawn"] > 0 and seen["width"] >= 600, seen
        assert seen["imgs"] == 1 and seen["svg"] == 0  # the hostile name made no image
        assert seen["table"] <= seen["area"] and seen["scroll"] <= seen["area"], seen
        assert clip(f"llamacpp:{EVIL}", 40) in seen["text"]  # as text (cut to 40 characters)
        assert "No effect: ollama:qwen3:8b · high — the effort was ignored" in seen["text"]
        assert "Recommended: the cheapest within 0.05 of the best grade" in seen["text"]
    assert page.title() != "1"
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        tb.set_theme(page, theme)
        slug = theme.split()[-1].lower()
        for index, engine in ((0, "svg"), (1, "matplotlib")):
            tb.shot(page, f"40-sweep-untrusted-{engine}-{slug}", tb.cell(page, index))
    tb.set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors


def test_the_sweep_view_from_a_live_kernel(page, lab):  # noqa: F811
    """The same view displayed by a kernel (a trusted output): the object Jupyter shows."""
    tb.write_notebook(lab, "sweep-live.ipynb", ROWS_CODE)
    tb.open_notebook(page, "sweep-live.ipynb")
    tb.run_all(page)
    tb.wait_cell_done(page, 0, timeout=120_000)
    image = tb.cell(page, 0).locator("img.reasoning-nb-sweep-plot")
    expect(image).to_be_visible()
    seen = look(page, 0)
    assert seen["src"].startswith("data:image/svg+xml;base64,") and seen["drawn"] > 0, seen
    assert "openai:gpt-5-mini: medium" in seen["text"]  # the best grade, and the cheapest of it
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        tb.set_theme(page, theme)
        output = tb.cell(page, 0).locator(".jp-OutputArea")
        tb.shot(page, f"41-sweep-kernel-{theme.split()[-1].lower()}", output)
    tb.set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors
