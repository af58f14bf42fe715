r"""An exported notebook read offline: its math typeset, with every network request refused.

A real kernel runs a ``%%think`` cell against the wire server (reasoning and an answer full of
LaTeX), beside a markdown cell and an IPython ``Math`` output; the real ``jupyter nbconvert
--to reasoning-html`` exports it, light and dark (``--HTMLExporter.theme``). Chromium then opens
each file with every request that is not ``file://`` aborted (nbconvert's page asks a CDN for
MathJax and require.js): the math is drawn by the browser from MathML, and no TeX delimiter is
left to read. Screenshots, the reasoning unfolded by a click as a reader would:
``test-artifacts/browser/export-offline-{light,dark}.png``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import wire_fixtures as wf
from nbclient import NotebookClient
from test_browser import ARTIFACTS, BROWSER, CHAT, CHROMIUM, CHROMIUM_ARGS, MATH_ANSWER
from test_browser import MATH_REASONING as REASONING
from wire_server import Reply, WireServer

pytestmark = [*BROWSER, pytest.mark.kernel]

MARKDOWN = (
    "# Why is the sky blue?\n\n"
    "Rayleigh scattering goes as $I(\\lambda) \\propto \\lambda^{-4}$, so for blue and red\n\n"
    "$$\\frac{I_{450}}{I_{700}} = \\left(\\frac{700}{450}\\right)^4 \\approx 5.9$$"
)
MATH_CELL = 'from IPython.display import Math\nMath(r"\\int_0^1 x^2\\,dx = \\frac{1}{3}")'
SPANS = 2 + 6 + 5 + 1  # the markdown cell's, the reasoning's, the answer's, Math()'s
VISIBLE_MATH = """() => [...document.querySelectorAll('main math')].map(m => {
  const r = m.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
})"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("offline")
    with WireServer() as server:
        server.route("POST", CHAT, Reply.sse(wf.chat_sse(REASONING, MATH_ANSWER, usage=True)))
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_markdown_cell(MARKDOWN),
            nbformat.v4.new_code_cell("%load_ext reasoning_nb"),
            nbformat.v4.new_code_cell(
                f"%%think --model llamacpp:m --base-url {server.url} --preset high\n"
                "Why is the sky blue?"
            ),
            nbformat.v4.new_code_cell(MATH_CELL),
        ]
        NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()
    nbformat.write(nb, root / "sky.ipynb")
    pages = {}
    for theme in ("light", "dark"):
        done = subprocess.run(
            [
                *(sys.executable, "-m", "jupyter", "nbconvert", "--to=reasoning-html"),
                *(str(root / "sky.ipynb"), f"--HTMLExporter.theme={theme}"),
                *(f"--output-dir={root}", f"--output=sky-{theme}"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        pages[theme] = root / f"sky-{theme}.html"
    return pages


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_an_export_opened_offline_shows_its_math_typeset(exported, theme):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1100, "height": 900})
            refused: list[str] = []

            def offline(route):
                if route.request.url.startswith("file://"):
                    return route.continue_()
                refused.append(route.request.url)
                return route.abort()

            context.route("**/*", offline)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(exported[theme].as_uri())
            page.wait_for_load_state("load")
            page.locator("details.reasoning-nb-reasoning > summary").click()  # as a reader
            drawn = page.evaluate(VISIBLE_MATH)
            assert len(drawn) == SPANS and all(drawn), drawn
            shown = page.locator(".jp-OutputArea-output, .jp-RenderedMarkdown").all_inner_texts()
            text = "\n".join(shown)  # (the cells' code may hold TeX: it is code)
            for delimiter in ("\\(", "\\[", "$$", "\\frac", "\\lambda"):
                assert delimiter not in text, delimiter  # no raw TeX left to read
            assert "price = '$5 and $10'" in text  # code keeps its dollars
            assert any("mathjax" in url for url in refused)  # the page asked, and got nothing
            assert not errors, errors
            page.screenshot(path=str(ARTIFACTS / f"export-offline-{theme}.png"), full_page=True)
            context.close()
        finally:
            browser.close()
