"""The tour as a newcomer first sees it: notebooks/quickstart.ipynb and notebooks/gallery.ipynb
with their saved outputs, untrusted (a fresh clone), opened in Lab without running, and through
nbconvert's HTML exporter (a stand-in for GitHub's view), in Light and Dark.

Screenshots: test-artifacts/browser/tour-*.png (look at them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import nbformat
import pytest
from playwright.sync_api import expect
from test_browser import (
    ARTIFACTS,
    BROWSER,
    NOTEBOOKS,
    cell,
    open_notebook,
    set_theme,
    shot,
)

pytestmark = BROWSER
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
TOUR = ["quickstart", "gallery"]


def think_cells(nb) -> list[tuple[int, dict]]:
    """Each ``%%think`` cell's index and its saved trace (a compare: its first variant)."""
    found = []
    for i, c in enumerate(nb.cells):
        traces = [o.metadata["reasoning_nb"] for o in c.get("outputs", []) if _traced(o)]
        if c.source.startswith("%%think") and traces:
            found.append((i, traces[0]))
    return found


def opening(trace: dict) -> str:
    """The first words of the answer as rendered (its markdown marks and list number left
    out)."""
    line = re.sub(r"^\s*(\d+[.)]|[-+])\s+", "", trace["answer"].strip().splitlines()[0])
    return re.sub(r"[*_`#>]", "", line).strip()[:30]


def _traced(output) -> bool:
    return "reasoning_nb" in output.get("metadata", {})


def copy_tour(lab, name: str):
    shutil.copy(NOTEBOOKS / f"{name}.ipynb", lab.root / f"{name}.ipynb")
    shutil.copytree(NOTEBOOKS / "gallery", lab.root / "gallery", dirs_exist_ok=True)
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("name", TOUR)
def test_saved_tour_reads_untrusted_in_lab(page, lab, name, theme):
    """Opened as a clone opens it (not trusted, not run): every %%think cell shows its saved
    answer as rendered text, and the reasoning's fold."""
    nb = copy_tour(lab, name)
    try:
        set_theme(page, THEMES[theme])
        open_notebook(page, f"{name}.ipynb")
        trusted = page.evaluate(
            "() => window.__rn.panel().content.widgets.some(w => w.model.trusted)"
        )
        assert not trusted, "a fresh clone's notebook is not trusted"
        shot(page, f"tour-{name}-lab-{theme}-top")
        for index, trace in think_cells(nb):
            view = cell(page, index)
            view.scroll_into_view_if_needed()
            expect(view.get_by_text(opening(trace)).locator("visible=true").first).to_be_visible()
            shot(page, f"tour-{name}-lab-{theme}-cell{index}", view)
        for index, c in enumerate(nb.cells):
            if c.source.startswith(("%think --stats", "%think --list")):
                cell(page, index).scroll_into_view_if_needed()
                shot(page, f"tour-{name}-lab-{theme}-cell{index}", cell(page, index))
    finally:
        set_theme(page, THEMES["light"])


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("name", TOUR)
def test_saved_tour_through_nbconvert_html(browser_page, tmp_path, name, theme):
    """nbconvert's plain HTML exporter, as GitHub would show the saved outputs: each %%think
    cell's answer reads as text. The whole page is pictured."""
    source = NOTEBOOKS / f"{name}.ipynb"
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", f"--theme={theme}",
         "--output-dir", str(tmp_path), str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    view = browser_page.context.new_page()
    try:
        view.goto((tmp_path / f"{name}.html").as_uri())
        nb = nbformat.read(source, as_version=4)
        for _, trace in think_cells(nb):
            expect(view.get_by_text(opening(trace)).locator("visible=true").first).to_be_visible()
        view.screenshot(path=str(ARTIFACTS / f"tour-{name}-html-{theme}.png"), full_page=True)
    finally:
        view.close()
