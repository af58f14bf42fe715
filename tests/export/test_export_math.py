r"""TeX through the real ``jupyter nbconvert --to reasoning-html|reasoning-markdown``.

The decision (README, "Math"): an exported page does not typeset offline. nbconvert's page loads
MathJax 2 from a CDN; no MathJax the page could embed ships with Python packages (JupyterLab's is
split into webpack chunks; ``jupyter-server-mathjax`` is MathJax 2 in 608 files), and MathJax 3's
one-file build (``tex-svg.js``) is 2.1 MB, 7.6 times this 280 KB export. So offline the TeX reads,
whole, between ``\(…\)`` and ``\[…\]``; online MathJax 2 typesets exactly the marked spans. Both
are checked in chromium: offline with every request refused, online with the CDN's MathJax 2
served from ``jupyter-server-mathjax`` (a test dependency) under the same URL.
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

from reasoning_nb.core.trace import Trace
from reasoning_nb.views import render

CHROMIUM = "/usr/bin/chromium"
REASONING = (
    "Let \\(x<y\\) be real; then $x^2 \\ge 0$.\n\n"
    "\\[\n\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}\n\\]\n\n"
    "The tickets cost $5 and $10."
)
ANSWER = "So $a*b*c = \\{1, 2\\}$, and `$code$` stays code."
TEX = [r"x<y", r"x^2 \ge 0", r"\sum_{i=1}^{n} i = \frac{n(n+1)}{2}", r"a*b*c = \{1, 2\}"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    """A notebook with one saved ``%%think`` output holding math, exported to HTML (inline mode,
    so the reasoning shows) and markdown by the real command."""
    root = tmp_path_factory.mktemp("math")
    trace = Trace(model="llamacpp:m", preset="high", prompt="Q")
    trace.reasoning, trace.answer = REASONING, ANSWER
    trace.finish()
    output = nbformat.v4.new_output(
        "display_data", data=render.bundle(trace), metadata={"reasoning_nb": trace.to_dict()}
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%think\nQ", outputs=[output])]
    nbformat.write(nb, root / "math.ipynb")
    out = {}
    local = ""  # the README's recipe for reading exports offline
    if mathjax := _local_mathjax():
        local = f"{mathjax.as_uri()}?config=TeX-AMS-MML_HTMLorMML-full,Safe"
    for name, fmt, ext, more in (
        ("html", "html", ".html", []),
        ("markdown", "markdown", ".md", []),
        ("local", "html", ".html", [f"--HTMLExporter.mathjax_url={local}"] if local else None),
    ):
        if more is None:
            continue
        done = subprocess.run(
            [
                *(sys.executable, "-m", "jupyter", "nbconvert", f"--to=reasoning-{fmt}"),
                *(str(root / "math.ipynb"), "--ReasoningPreprocessor.mode=inline"),
                f"--output-dir={root / name}",
                *more,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        out[name] = root / name / f"math{ext}"
    return out


def _local_mathjax() -> Path | None:
    try:
        import jupyter_server_mathjax
    except ImportError:
        return None
    return Path(jupyter_server_mathjax.__file__).parent / "static" / "MathJax.js"


def test_exported_html_holds_the_tex_marked_for_mathjax(exported):
    page = exported["html"].read_text()
    assert math_in(page) == TEX  # (what MathJax reads: the prices and the code are not math)
    assert 'reasoning-nb-inline mathjax_ignore tex2jax_ignore"' in page
    assert "The tickets cost $5 and $10." in prose_in(page) and "<code>$code$</code>" in page
    assert re.search(r'<script src="https://cdnjs[^"]+/mathjax/2\.[^"]+"', page)  # nbconvert's


def test_exported_markdown_holds_the_tex(exported):
    text = exported["markdown"].read_text()
    # A price in the reasoning: as HTML, every "$" and backslash a character reference.
    assert "&#92;(x&lt;y&#92;)" in text and "The tickets cost $5 and $10." in prose_in(text)
    assert "So $a*b*c = \\{1, 2\\}$, and `$code$` stays code." in text  # the answer: markdown


LATEST = """(function () {
  var script = document.createElement("script");
  script.src = document.currentScript.src.replace("/latest.js", "/MathJax.js");
  document.head.appendChild(script);
})();"""


def _open(page, path: Path) -> None:
    page.goto(path.as_uri())
    page.wait_for_load_state("load")


@pytest.mark.browser
@requires(os.path.exists(CHROMIUM), f"{CHROMIUM} is missing")
def test_exported_html_in_a_browser_offline_and_online(exported):
    """Offline: nothing loads, the TeX reads as written. Online (the CDN's MathJax 2, served
    locally): MathJax finds exactly the four marked spans, not the prices, not the code."""
    from playwright.sync_api import sync_playwright

    if _local_mathjax() is None:
        pytest.fail("jupyter-server-mathjax is missing (pip install -e '.[test]')")
    static = _local_mathjax().parent
    shots = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
    shots.mkdir(parents=True, exist_ok=True)

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
            page.wait_for_timeout(1500)
            body = page.locator(".reasoning-nb").inner_text()
            for tex in TEX:
                assert tex in body, tex
            assert "\\(x<y\\)" in body and "\\[\\sum" in body
            assert page.locator(".MathJax, mjx-container, script[type^='math/tex']").count() == 0
            assert any("mathjax" in url for url in requested)  # it tried, and nothing came
            page.screenshot(path=str(shots / "21-export-offline.png"), full_page=True)
            context.close()

            context = browser.new_context()
            context.route(re.compile(r"^https://cdnjs\.cloudflare\.com/.*/mathjax/"), serve_cdn)
            elsewhere = re.compile(r"^https?://(?!cdnjs\.cloudflare\.com/.*/mathjax/)")
            context.route(elsewhere, lambda route: route.abort())
            page = context.new_page()
            _open(page, exported["html"])
            found = page.locator("script[type^='math/tex']")
            page.wait_for_function(
                "() => document.querySelectorAll('.MathJax').length >= 4"
                " && !document.querySelector('.MathJax_Processing')",
                timeout=30_000,
            )
            assert [s.text_content() for s in found.all()] == TEX
            assert "The tickets cost $5 and $10." in page.locator(".reasoning-nb").inner_text()
            page.screenshot(path=str(shots / "21-export-online.png"), full_page=True)
            context.close()

            # The README's recipe: a local MathJax 2 by --HTMLExporter.mathjax_url, offline.
            context = browser.new_context()
            context.route(re.compile(r"^https?://"), lambda route: route.abort())
            page = context.new_page()
            _open(page, exported["local"])
            page.wait_for_function(
                "() => document.querySelectorAll('.MathJax').length >= 4", timeout=30_000
            )
            found = page.locator("script[type^='math/tex']")
            assert [s.text_content() for s in found.all()] == TEX
        finally:
            browser.close()
