"""Dead controls (``test_browser_dead_controls``) in Notebook 7, the other front end built from
Lab's parts: after a shutdown its controls are dead and say why, and a saved notebook reopens
with no error in the console. (Its own module: one Playwright per module.)
"""

from __future__ import annotations

import json

import nbformat
import test_browser as tb
from playwright.sync_api import expect
from test_browser_dead_controls import go, listen, note, unlisten
from test_browser_notebook7 import browser, notebook7, open_in_notebook7, wire  # noqa: F401

from reasoning_nb.core.schema import WIDGET_VIEW
from reasoning_nb.notebook.assets import DEAD

pytestmark = tb.BROWSER


def test_dead_controls_and_a_clean_reopen(browser, notebook7, wire):  # noqa: F811
    """Notebook 7 (Lab's parts): after a shutdown the controls are dead and say why; the saved
    notebook has no live view, and reopens (its default: no widget state) with no error."""
    wire.route(
        "POST", tb.CHAT, tb.stream("A quick look: Rayleigh scattering.", "Blue **scatters**.")
    )
    name = "dead-nb7.ipynb"
    path = tb.think_notebook(notebook7, wire, name)
    tab = open_in_notebook7(browser, notebook7, name)
    try:
        tb.run_all(tab)
        tb.wait_cell_done(tab)
        tb.wait_state(tab, "s.status.startsWith('done') && s.twin")
        tb.save(tab)
        go(tab, "shutdown")
        expect(tb.live(tab)).to_be_hidden()
        assert note(tb.static(tab), "::before") == DEAD
        expect(tb.live(tab).locator(".reasoning-nb-header select")).to_be_disabled()
    finally:
        tab.close()
    saved = nbformat.read(path, as_version=4)
    assert not [o for o in saved.cells[1].outputs if WIDGET_VIEW in o.get("data", {})]
    messages = listen(browser)  # (the whole load of the page)
    try:
        tab = open_in_notebook7(browser, notebook7, name)
        expect(tb.static(tab).locator(".reasoning-nb-answer strong")).to_be_visible()
        tab.wait_for_timeout(3000)  # (a missing widget model is given up on after 2 s)
        tb.shot(tab, "dead-nb7-reopened", tb.cell(tab))
        tab.close()
    finally:
        unlisten(browser)
    errors = [m for m in messages if m["type"] == "error"]
    assert not errors, json.dumps(errors, indent=1)
