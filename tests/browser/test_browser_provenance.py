"""Run provenance in a real JupyterLab (issue 14, item 3): after a dropdown re-run the saved
output says which run it shows, with the cell line for it, and keeps the earlier run reachable;
"Use these flags" puts that line in the cell. Shares ``test_browser``'s Lab fixture and helpers;
screenshots (Light and Dark) land in ``test-artifacts/browser/``."""

from __future__ import annotations

import nbformat
from nbformat.sign import NotebookNotary
from playwright.sync_api import expect
from test_browser import (
    BROWSER,
    CHAT,
    LONG,
    cell,
    live,
    open_notebook,
    run_all,
    save,
    set_theme,
    shot,
    static,
    stream,
    think_notebook,
    wait_cell_done,
    wait_state,
)

pytestmark = BROWSER

SOURCE = (
    "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells[1].getSource()"
)


def _twin(path) -> dict:
    """The saved static twin of the %%think cell: the output with the trace."""
    outputs = nbformat.read(path, as_version=4).cells[1].outputs
    return next(o for o in outputs if "reasoning_nb" in o.get("metadata", {}))


def test_use_these_flags_rewrites_the_cell_line_and_the_twin_keeps_every_run(
    page,
    lab,
    wire,
):
    wire.route(
        "POST",
        CHAT,
        stream("A quick look: Rayleigh.", "First answer: **scattering**.", pause=0.01),
        stream("A longer look at wavelengths.", "Second answer: **blue scatters**.", pause=0.01),
    )
    path = think_notebook(lab, wire, "provenance.ipynb")
    open_notebook(page, "provenance.ipynb")
    run_all(page)
    wait_cell_done(page)
    flags = live(page).locator(".reasoning-nb-steer button", has_text="Use these flags")
    wait_state(page, "s.status.startsWith('done')")
    expect(flags).to_be_hidden()  # the run is what the line asks for
    live(page).locator(".reasoning-nb-header select").select_option("high")
    wait_state(page, "s.runs.length === 2 && !s.running && s.status.startsWith('done') && s.twin")
    expect(flags).to_be_visible()
    shot(page, "provenance-use-these-flags", cell(page))

    save(page)
    twin = _twin(path)
    line = f"%%think --model llamacpp:m --base-url {wire.url} --preset high"
    assert "Run 2 of 2 · preset high" in twin["data"]["text/html"]
    assert f'<code class="reasoning-nb-line">{line}</code>' in twin["data"]["text/html"]
    assert "Earlier runs (1)" in twin["data"]["text/html"]
    assert "First answer" in twin["data"]["text/html"]  # the earlier run, reachable
    assert len(twin["metadata"]["reasoning_nb_history"]) == 1

    # The same notebook as Lab saves it by default (no widget state), to reopen below.
    reopened = nbformat.read(path, as_version=4)
    reopened.metadata.pop("widgets", None)
    NotebookNotary().sign(reopened)  # what Lab does on save: trusted
    nbformat.write(reopened, lab.root / "provenance-reopened.ipynb")

    flags.click()
    expect(live(page).locator(".reasoning-nb-pin-note")).to_have_text("cell line updated")
    assert page.evaluate(SOURCE) == f"{line}\nWhy is the sky blue?"
    expect(flags).to_be_hidden()  # the kernel heard: the line is the cell's now
    save(page)
    twin = _twin(path)
    assert "Run 2 of 2 · preset high" in twin["data"]["text/html"]
    assert "cell line for this run" not in twin["data"]["text/html"]

    # Reopened where the widget cannot render: the static twin says which run, gives the line,
    # and the earlier run opens from it.
    open_notebook(page, "provenance-reopened.ipynb")
    expect(static(page)).to_be_visible(timeout=LONG)
    expect(static(page).locator("code.reasoning-nb-line")).to_have_text(line)
    earlier = static(page).locator("details.reasoning-nb-earlier")
    expect(earlier).not_to_contain_text("First answer", use_inner_text=True)  # (closed)
    earlier.locator("summary").first.click()
    expect(earlier).to_contain_text("First answer", use_inner_text=True)
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(page, theme)
            slug = "light" if theme.endswith("Light") else "dark"
            shot(page, f"provenance-reopened-{slug}", cell(page))
    finally:
        set_theme(page, "JupyterLab Light")

    assert not page.errors, page.errors
