r"""The static views in a real JupyterLab, Light and Dark: math typeset by Lab's MathJax (and
prose dollars left alone), and the contrast of code tokens, diff lines and chart labels as the
browser paints them (WCAG ratio, the text colour at its opacity over the composited background).

The views are displayed by a plain code cell (``display(bundle, raw=True)``), as a ``%%think``
output or an exporter shows them; no model is needed. Shares ``test_browser``'s Lab fixture and
helpers; screenshots and the measured figures land in ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect
from test_browser import (
    ARTIFACTS,
    BROWSER,
    cell,
    close_all,
    open_notebook,
    run_all,
    set_theme,
    shot,
    wait_cell_done,
    write_notebook,
)

pytestmark = BROWSER  # (a real Lab and chromium, as test_browser)

SETUP = r"""
from IPython.display import display
from reasoning_nb.views import compare as compare_view, render, stats as analytics
from reasoning_nb.core.trace import Trace

def trace(reasoning, answer, preset="high", model="llamacpp:m", tokens=None):
    t = Trace(model=model, provider="llamacpp", preset=preset, prompt="Q",
              reasoning=reasoning, answer=answer, status="complete",
              usage={"reasoning_tokens": tokens}, timing={"reasoning_ms": 2000.0})
    return t
"""
REASONING = (
    "Let \\(x\\) be real; then $x^2 \\ge 0$, and summing,\n"
    "\\[\n\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}\n\\]\n"
    "The tickets cost $5 and $10, a 50\\% rise."
)
ANSWER = (
    "So $a*b*c = \\{1, 2\\}$ holds, and `$code$` stays code; "
    "see $\\href{javascript:window.__pwned=1}{here}$.\n\n"
    "```python\n"
    "import math\n\n"
    "@cache\n"
    "def area(r: float) -> float:\n"
    '    """A circle."""\n'
    "    return math.pi * r ** 2  # 3.14 r^2\n\n"
    "class Shape(object):\n"
    "    name = 'circle' if True else None\n"
    "print(len([1, 2.5, 0x1F]), area(2))\n"
    "```\n\n"
    "```diff\n--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n```"
)
MATH_IN_ANSWER = 2  # the reasoning holds 3 more
CELLS = [
    SETUP,
    f"display(render.bundle(trace({REASONING!r}, {ANSWER!r})), raw=True)",
    "a = trace('r', 'The same line.\\nBlue at low.\\nEnd.', preset='low')\n"
    "b = trace('r', 'The same line.\\nBlue, at high.\\nEnd.', preset='high')\n"
    "display(compare_view.bundle([a, b]), raw=True)",
    "analytics.stats([trace('r' * 40, 'a', p, m, n) for p, m, n in [\n"
    "    ('low', 'llamacpp:m', 120), ('high', 'llamacpp:m', 900),\n"
    "    ('low', 'ollama:q', 300), ('high', 'ollama:q', 700)]])",
    # markdown outputs: inert text (dollar delimiters) and text with "<" (an HTML block)
    f"display({{'text/markdown': render.safe_markdown({REASONING!r})}}, raw=True)\n"
    "display({'text/markdown': render.safe_markdown("
    "'Since $a < b$ and \\\\(b \\\\le c\\\\), $5 < $6.')}, raw=True)",
]

# In-page measurement: (WCAG ratio, colour, background) of each element a selector matches.
MEASURE = r"""
([root, selector]) => {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3]));
  const lum = (rgb) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]);
  };
  const chain = (el) => {
    const out = [];
    for (let e = el; e; e = e.parentElement) out.push(e);
    return out;
  };
  const hex = (rgb) => '#' + rgb.map(c => Math.round(c).toString(16).padStart(2, '0')).join('');
  const host = document.querySelector(root);
  return [...host.querySelectorAll(selector)].filter(e => e.textContent.trim()).map((el) => {
    let bg = [255, 255, 255];
    for (const e of chain(el).reverse()) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) bg = over(c, bg);
    }
    const style = getComputedStyle(el);
    const fg = parse(el instanceof SVGElement ? style.fill : style.color);
    const opacity = chain(el).reduce((o, e) => o * parseFloat(getComputedStyle(e).opacity), 1);
    const seen = over([fg[0], fg[1], fg[2], fg[3] * opacity], bg);
    const [a, b] = [lum(seen), lum(bg)].sort((x, y) => y - x);
    return {ratio: (a + 0.05) / (b + 0.05), text: el.textContent.trim().slice(0, 30),
            color: hex(seen), background: hex(bg), cls: el.getAttribute('class') || el.tagName};
  });
}
"""
GROUPS = {  # name -> (cell, selector)
    "code tokens": (1, "pre code span[class^='rnb-hl-']"),
    "diff lines": (2, ".reasoning-nb-compare-diff pre > :is(ins, del)"),
    "chart labels": (3, ".reasoning-nb-stats-chart td:not(.reasoning-nb-bar)"),
}


@pytest.fixture
def page(browser_page, lab):
    close_all(browser_page)
    browser_page.errors.clear()
    yield browser_page
    close_all(browser_page)


def measure(page, index: int, selector: str) -> list[dict]:
    marker = f"rnb-measure-{index}"
    page.evaluate(
        "([i, m]) => window.__rn.cellNode(i).setAttribute('data-measure', m)", [index, marker]
    )
    return page.evaluate(MEASURE, [f"[data-measure='{marker}']", selector])


def test_static_views_typeset_math_and_read_in_light_and_dark(page, lab):
    write_notebook(lab, "static.ipynb", *CELLS)
    open_notebook(page, "static.ipynb")
    run_all(page)
    wait_cell_done(page, len(CELLS) - 1)
    out = cell(page, 1).locator(".jp-OutputArea-output")
    out.locator("details summary").click()  # the reasoning, shown
    expected = {1: 3 + MATH_IN_ANSWER, 4: 3 + 2}  # cell -> typeset spans
    for index, count in expected.items():
        expect(cell(page, index).locator("mjx-container")).to_have_count(count, timeout=30_000)
    counts = {i: cell(page, i).locator("mjx-container").count() for i in expected}
    typeset = {  # what MathJax read, as its assistive MathML says it
        i: [m.text_content() for m in cell(page, i).locator("mjx-container").all()]
        for i in expected
    }
    assert typeset[1] == ["x", "x2≥0", "∑i=1ni=n(n+1)2", "a∗b∗c={1,2}", "here"], typeset
    assert typeset[4] == ["x", "x2≥0", "∑i=1ni=n(n+1)2", "a<b", "b≤c"], typeset

    # Prose dollars are text, code is code, TeX arrives whole (no corruption to typeset).
    text = out.inner_text()
    assert "The tickets cost $5 and $10, a 50% rise." in text
    assert out.locator("code", has_text="$code$").count() == 1
    assert "$5 < $6" in cell(page, 4).inner_text()
    assert page.evaluate("() => window.__pwned") is None
    assert cell(page, 1).locator('a[href^="javascript:"]').count() == 0

    report = {"mjx-container": counts, "typeset": typeset}
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(page, theme)
            figures = {}
            for name, (index, selector) in GROUPS.items():
                found = measure(page, index, selector)
                assert found, f"no {name} found"
                worst = min(found, key=lambda f: f["ratio"])
                figures[name] = {"min": round(worst["ratio"], 2), "worst": worst, "n": len(found)}
            report[theme] = figures
            slug = "light" if theme.endswith("Light") else "dark"
            for i in range(1, len(CELLS)):
                shot(page, f"20-static-{i}-{slug}", cell(page, i))
    finally:
        set_theme(page, "JupyterLab Light")
        (ARTIFACTS / "static-contrast.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        for name, figure in report[theme].items():
            assert figure["min"] >= 4.5, (theme, name, figure["worst"])
    assert not page.errors, page.errors


TABLE = "| colour | nm | scattering |\n|---|---:|:-:|\n" + "".join(
    f"| {c} | {nm} | {(700 / nm) ** 4:.2f} |\n" for c, nm in [("red", 700), ("green", 530)] * 2
)
FAILED = (
    f"t = trace('r', {'Here it is:' + chr(10) * 2 + TABLE!r})\n"
    "t.status, t.error = 'error', 'HTTP 500 from llamacpp: the model crashed'\n"
    "display(render.bundle(t), raw=True)"
)
TABLE_LOOK = """(table) => {
  const look = (e, ps) => { const c = getComputedStyle(e); return ps.map((p) => c[p]).join(' '); };
  return {
    head: look(table.querySelector('thead'), ['borderBottomWidth', 'borderBottomStyle',
                                              'borderBottomColor']),
    cells: [...table.querySelectorAll('th, td')].map((e) => look(e, ['padding', 'textAlign'])
      .replace('-webkit-', '').replace('start', 'left')),  // (marked writes align="…")
    rows: [...table.querySelectorAll('tbody tr')].map((e) => look(e, ['backgroundColor'])),
  };
}"""


ERROR_BACKGROUND = """() => {  // Jupyter's error background in the theme, as a computed colour
  const probe = document.body.appendChild(document.createElement('div'));
  probe.style.background = 'var(--jp-rendermime-error-background)';
  const colour = getComputedStyle(probe).backgroundColor;
  probe.remove();
  return colour;
}"""


def test_static_tables_and_errors_read_as_lab_draws_them(page, lab):
    """The static view's table looks like the same table in a markdown cell (the rule under the
    head, the stripes, each column aligned as the markdown says), in Lab Light and Dark and on a
    bare page, light or dark; a failed run's error is a line of its own on Jupyter's error
    background, readable at 4.5:1 or better (not the small grey note it was)."""
    write_notebook(lab, "static-table.ipynb", SETUP, FAILED, "")
    path = lab.root / "static-table.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][2] = {"cell_type": "markdown", "metadata": {}, "source": TABLE}
    path.write_text(json.dumps(nb))
    open_notebook(page, "static-table.ipynb")
    run_all(page)
    wait_cell_done(page, 1)
    static, markdown_cell = cell(page, 1), cell(page, 2)
    error = static.locator(".reasoning-nb-error")
    report = {}
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(page, theme)
            slug = "light" if theme.endswith("Light") else "dark"
            ours = static.locator("table").evaluate(TABLE_LOOK)
            lab_s = markdown_cell.locator("table").evaluate(TABLE_LOOK)
            [line] = measure(page, 1, ".reasoning-nb-error")
            report[theme] = {"table": ours, "error": line}
            shot(page, f"21-static-table-error-{slug}", page.locator(".jp-Notebook"))
            assert ours == lab_s, (theme, ours, lab_s)
            assert line["ratio"] >= 4.5, (theme, line)
            assert error.evaluate("(e) => getComputedStyle(e).backgroundColor") == page.evaluate(
                ERROR_BACKGROUND
            ), theme
    finally:
        set_theme(page, "JupyterLab Light")
    assert "crashed" not in static.locator(".reasoning-nb-meta").inner_text()  # said once

    html = page.evaluate(
        "() => [...window.__rn.cellNode(1).querySelectorAll('.jp-RenderedHTMLCommon')]"
        ".map((e) => e.innerHTML).join('')"
    )
    bare = page.context.new_page()
    try:
        for slug, colours in (("light", "#fff;color:#24292f"), ("dark", "#0d1117;color:#e6edf3")):
            bare.set_content(f"<body style='background:{colours}'>{html}</body>")
            look = bare.locator("table").evaluate(TABLE_LOOK)
            cells = bare.evaluate(MEASURE, ["body", "td, th, .reasoning-nb-error"])
            report[f"bare {slug}"] = {"table": look, "worst": min(c["ratio"] for c in cells)}
            bare.locator(".reasoning-nb").screenshot(path=str(ARTIFACTS / f"22-bare-{slug}.png"))
            assert look["head"].startswith("1px solid"), look
            assert len(set(look["rows"])) == 2 and look["rows"][0] != look["rows"][1], look
            assert [c.split()[-1] for c in look["cells"][3:6]] == ["left", "right", "center"]
            assert min(c["ratio"] for c in cells) >= 4.5, cells
    finally:
        bare.close()
        (ARTIFACTS / "static-table-error.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    assert not page.errors, page.errors
