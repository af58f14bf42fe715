r"""TeX through the real ``jupyter nbconvert --to reasoning-html|reasoning-markdown``.

The decision (issue 24): an exported page typesets its math when it is exported, as MathML,
which browsers draw natively, so it reads offline (``export.mathml``). That holds for the
``%%think`` views (the spans ``views.math_text`` marks), the notebook's markdown cells and
``text/markdown`` outputs (nbconvert's parser decides there, as before) and a ``text/latex``
output that is one formula. nbconvert's page still loads MathJax 2 from its CDN: online it
reads as TeX only what could not be converted (here an ``\href``), and each formula shows once.
(The CDN's configuration reads TeX only; the local copy's, served in its place, reads MathML too
and draws those formulas itself, still once.) Both are checked in chromium: offline with every
request refused, online with the CDN's MathJax 2 served from ``jupyter-server-mathjax`` (a test
dependency) under the same URL.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from needs import requires
from test_math_text import math_in, prose_in
from test_mathml import assert_safe

from reasoning_nb.core.trace import Trace
from reasoning_nb.views import render

CHROMIUM = "/usr/bin/chromium"
HREF = r"\href{javascript:window.__pwned=1}{here}"
REASONING = (
    "Let \\(x<y\\) be real; then $x^2 \\ge 0$.\n\n"
    "\\[\n\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}\n\\]\n\n"
    f"The tickets cost $5 and $10; see ${HREF}$."
)
ANSWER = "So $a*b*c = \\{1, 2\\}$, and `$code$` stays code."
TEX = [r"x<y", r"x^2 \ge 0", r"\sum_{i=1}^{n} i = \frac{n(n+1)}{2}", r"a*b*c = \{1, 2\}"]
MARKDOWN_CELL = (
    "The intensity $I(\\lambda) \\propto \\lambda^{-4}$, so\n\n$$\\frac{I_b}{I_r} = 5.9$$"
)
LATEX = "$\\displaystyle \\int_0^1 x^2\\,dx = \\frac{1}{3}$"  # what IPython's Math() saves
MATH_ELEMENTS = len(TEX) + 2 + 1  # the view's, the markdown cell's two, the text/latex one


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    """A notebook with a markdown cell, one saved ``%%think`` output and a ``text/latex``
    output, all holding math, exported to HTML (inline mode, so the reasoning shows) and
    markdown by the real command."""
    root = tmp_path_factory.mktemp("math")
    trace = Trace(model="llamacpp:m", preset="high", prompt="Q")
    trace.reasoning, trace.answer = REASONING, ANSWER
    trace.finish()
    output = nbformat.v4.new_output(
        "display_data", data=render.bundle(trace), metadata={"reasoning_nb": trace.to_dict()}
    )
    latex = nbformat.v4.new_output("display_data", data={"text/latex": LATEX, "text/plain": "I"})
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(MARKDOWN_CELL),
        nbformat.v4.new_code_cell("%%think\nQ", outputs=[output]),
        nbformat.v4.new_code_cell("Math(...)", outputs=[latex]),
    ]
    nbformat.write(nb, root / "math.ipynb")
    out = {}
    for fmt, ext in (("html", ".html"), ("markdown", ".md")):
        done = subprocess.run(
            [
                *(sys.executable, "-m", "jupyter", "nbconvert", f"--to=reasoning-{fmt}"),
                *(str(root / "math.ipynb"), "--ReasoningPreprocessor.mode=inline"),
                f"--output-dir={root / fmt}",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        out[fmt] = root / fmt / f"math{ext}"
    return out


def _main(page: str) -> str:
    return page[page.index("<main>") : page.index("</main>")]


def test_exported_html_holds_the_math_as_mathml(exported):
    page = exported["html"].read_text()
    main = _main(page)
    spans = re.findall(r"<math.*?</math>", main, re.S)
    assert len(spans) == MATH_ELEMENTS
    for span in spans:
        assert_safe(span)
    assert math_in(main) == [HREF]  # only what did not convert is left for MathJax, as TeX
    assert "The tickets cost $5 and $10" in prose_in(main) and "<code>$code$</code>" in page
    assert 'class="jp-RenderedLatex"><math' in main
    assert re.search(r'<script src="https://cdnjs[^"]+/mathjax/2\.[^"]+"', page)  # nbconvert's


def test_exported_markdown_holds_the_tex(exported):
    text = exported["markdown"].read_text()
    assert "<math" not in text  # a markdown file's renderer typesets its own math
    # A price in the reasoning: as HTML, every "$" and backslash a character reference.
    assert "&#92;(x&lt;y&#92;)" in text and "The tickets cost $5 and $10" in prose_in(text)
    assert "So $a*b*c = \\{1, 2\\}$, and `$code$` stays code." in text  # the answer: markdown


LATEST = """(function () {
  var script = document.createElement("script");
  script.src = document.currentScript.src.replace("/latest.js", "/MathJax.js");
  document.head.appendChild(script);
})();"""
NATIVE = (
    "[...document.querySelectorAll('main math')]"
    ".filter(m => !m.closest('.MathJax, .MJX_Assistive_MathML'))"
    ".map(m => { const r = m.getBoundingClientRect(); return [r.width, r.height] })"
)
"""The size of each ``<math>`` the browser draws itself (not MathJax's hidden copies)."""


def _local_mathjax() -> Path | None:
    try:
        import jupyter_server_mathjax
    except ImportError:
        return None
    return Path(jupyter_server_mathjax.__file__).parent / "static" / "MathJax.js"


def _open(page, path: Path) -> None:
    page.goto(path.as_uri())
    page.wait_for_load_state("load")


@pytest.mark.browser
@requires(os.path.exists(CHROMIUM), f"{CHROMIUM} is missing")
def test_exported_html_in_a_browser_offline_and_online(exported):
    """Offline: nothing loads and the math is typeset, natively. Online (the CDN's MathJax 2,
    served locally): MathJax reads the one span left as TeX, and every formula shows once."""
    from playwright.sync_api import sync_playwright

    if _local_mathjax() is None:
        pytest.fail("jupyter-server-mathjax is missing (pip install -e '.[test]')")
    static = _local_mathjax().parent

    def serve_cdn(route):
        """The CDN's MathJax 2.7 from the local copy: ``latest.js`` loads ``MathJax.js`` beside
        it, as the CDN's does, and the combined config is the copy's (HTML-CSS, not CHTML)."""
        name = route.request.url.split("/mathjax/2.7.7/", 1)[1].split("?", 1)[0]
        if name == "latest.js":
            return route.fulfill(body=LATEST, content_type="text/javascript")
        if name == "config/TeX-AMS_CHTML-full.js":
            body = (static / "config/TeX-AMS-MML_HTMLorMML-full.js").read_text()
            body = body.replace("TeX-AMS-MML_HTMLorMML-full.js", "TeX-AMS_CHTML-full.js")
            return route.fulfill(body=body, content_type="text/javascript")
        path = static / name
        if not path.is_file():
            return route.abort()
        return route.fulfill(path=str(path))

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            context = browser.new_context()
            requested: list[str] = []
            context.route(
                re.compile(r"^https?://"),
                lambda route: (requested.append(route.request.url), route.abort()),
            )
            page = context.new_page()
            _open(page, exported["html"])
            sizes = page.evaluate(NATIVE)
            assert len(sizes) == MATH_ELEMENTS and all(w > 0 and h > 0 for w, h in sizes), sizes
            body = page.locator("main").inner_text()
            assert "\\(" not in body.replace(f"\\({HREF}\\)", "") and "$$" not in body
            assert HREF in body  # not convertible: its TeX reads whole
            assert any("mathjax" in url for url in requested)  # it tried, and nothing came
            context.close()

            context = browser.new_context()
            context.route(re.compile(r"^https://cdnjs\.cloudflare\.com/.*/mathjax/"), serve_cdn)
            elsewhere = re.compile(r"^https?://(?!cdnjs\.cloudflare\.com/.*/mathjax/)")
            context.route(elsewhere, lambda route: route.abort())
            page = context.new_page()
            _open(page, exported["html"])
            page.wait_for_function(
                "() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.running === 0"
                " && MathJax.Hub.queue.pending === 0"
                " && document.querySelectorAll('main .MathJax').length >= 1",
                timeout=30_000,
            )
            found = page.locator("script[type^='math/tex']")
            assert [s.text_content() for s in found.all()] == [HREF]  # no TeX read twice
            drawn = len(page.evaluate(NATIVE)) + page.locator("main .MathJax").count()
            assert drawn == MATH_ELEMENTS + 1  # each formula once, by the browser or MathJax
            assert page.evaluate("window.__pwned") is None
            context.close()
        finally:
            browser.close()


def test_a_sanitised_export_keeps_its_tex(exported):
    """``--HTMLExporter.sanitize_html`` would escape MathML to text: the math stays TeX there."""
    from reasoning_nb.export.exporters import ReasoningHTMLExporter

    nb = nbformat.read(exported["html"].parent.parent / "math.ipynb", as_version=4)
    page, _ = ReasoningHTMLExporter(sanitize_html=True).from_notebook_node(nb)
    assert "<math" not in page and "&lt;math" not in page
    assert "\\lambda^{-4}" in page and "\\frac{n(n+1)}{2}" in page
