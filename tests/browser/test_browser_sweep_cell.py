# ruff: noqa: F811  (test_browser's fixtures are imported, then named by each test)

"""A ``%%think --sweep`` cell as a user sees it in a real JupyterLab, Light and Dark: the live
progress (the widget kit's bar, done/total, running, tokens, spend, ETA, Stop) while it runs,
then the static result in its place, which a save and a reopen keep. Shares
``test_browser``'s Lab fixture and helpers; screenshots land in ``test-artifacts/browser/``."""

from __future__ import annotations

import json

from playwright.sync_api import expect
from test_browser import (  # noqa: F401 - the fixtures are used by name
    BROWSER,
    CHAT,
    browser_page,
    cell,
    close_all,
    lab,
    open_notebook,
    page,
    run_all,
    save,
    set_theme,
    shot,
    stream,
    wait_cell_done,
    wire,
    write_notebook,
)
from test_browser_round2 import both_themes

from reasoning_nb.notebook.sweep_result import SWEEP_KEY

pytestmark = BROWSER

PROMPTS = ["Is 391 prime?", "What is 17 × 23?", "Why is the sky blue?", "Name a <b>bold</b> idea."]
LIVE = ".reasoning-nb-sweep-live"


def slow(rec):
    """About 2 s a run: the live view can be seen (and shot in both themes) while it runs."""
    effort = rec.json.get("reasoning_effort")
    return stream(f"Thinking at {effort}. " * 40, f"Answer at {effort}.", pause=0.05)


def test_a_sweep_shows_its_progress_live_then_its_result_which_a_reopen_keeps(page, lab, wire):
    wire.route("POST", CHAT, slow)
    line = (
        f"%%think --sweep --model llamacpp:m --base-url {wire.url} --presets low,high "
        "--concurrency 2 --refresh"
    )
    write_notebook(lab, "sweep.ipynb", "%load_ext reasoning_nb", "\n".join([line, *PROMPTS]))
    open_notebook(page, "sweep.ipynb")
    run_all(page)
    view = cell(page, 1).locator(LIVE)
    expect(view.locator(".widget-html-content")).to_contain_text("running")
    expect(view.locator(".progress-bar")).to_be_visible()
    expect(view.get_by_role("button", name="Stop")).to_be_visible()
    figures = view.locator(".widget-html-content").inner_text()
    assert "/8 done" in figures and "tokens" in figures and "$" in figures, figures
    shot(page, "26-sweep-live-light", cell(page, 1))
    set_theme(page, "JupyterLab Dark")
    try:
        expect(view.locator(".widget-html-content")).to_contain_text("running")
        shot(page, "26-sweep-live-dark", cell(page, 1))
    finally:
        set_theme(page, "JupyterLab Light")
    wait_cell_done(page)

    result = cell(page, 1).locator(".reasoning-nb-sweep")
    expect(result).to_contain_text("8/8 done")
    expect(cell(page, 1).locator(LIVE)).to_have_count(0)  # the result took its place
    expect(cell(page, 1).locator(".jp-OutputArea-child")).to_have_count(1)
    expect(result).to_contain_text("Name a <b>bold</b> idea.")  # shown as text, never markup
    expect(result.locator("b", has_text="bold")).to_have_count(0)
    both_themes(page, "26-sweep-result", cell(page, 1))

    save(page)
    saved = json.loads((lab.root / "sweep.ipynb").read_text())
    [output] = saved["cells"][1]["outputs"]
    assert output["metadata"][SWEEP_KEY]["progress"]["done"] == 8
    close_all(page)
    lab.shutdown_all_kernels()
    open_notebook(page, "sweep.ipynb")  # reopened, no kernel run: the result is still there
    expect(cell(page, 1).locator(".reasoning-nb-sweep")).to_contain_text("8/8 done")
    assert len(wire.requests_to(CHAT)) == 8
    assert not page.errors, page.errors
