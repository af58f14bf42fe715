"""``%think --search`` in a real JupyterLab, Light and Dark: the table of hits after two real
runs (logged), and a click on a hit's link that takes Lab to the cell that ran it
(``NB.ipynb#cell-id=ID``: Lab's link handler opens the notebook and calls its setFragment).
Shares ``test_browser``'s Lab fixture and helpers; screenshots land in ``test-artifacts/browser/``.
"""

from __future__ import annotations

import nbformat
from playwright.sync_api import expect
from test_browser import (
    BROWSER,
    KERNELSPEC,
    cell,
    open_notebook,
    run_all,
    set_theme,
    shot,
    stream,
    wait_cell_done,
)

pytestmark = BROWSER
CHAT = "/v1/chat/completions"


def test_search_table_links_each_hit_to_its_cell(page, lab, wire, tmp_path):
    wire.route(
        "POST",
        CHAT,
        stream(
            "Sunlight holds every colour. Air molecules scatter short waves far more: Rayleigh "
            "scattering, which goes as one over the fourth power of the wavelength. <b>So</b> "
            "blue wins.",
            "**Rayleigh scattering** of sunlight by the air.",
        ),
        stream(
            "At sunset the light crosses far more air, so the blue is scattered away before it "
            "reaches us and the reds and oranges are left.",
            "The long path through the air at sunset.",
        ),
    )
    log = tmp_path / "log.sqlite3"
    flags = f"--model llamacpp:m --base-url {wire.url} --preset low"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"import os\nos.environ['REASONING_NB_DB'] = {str(log)!r}\n"
            "%load_ext reasoning_nb\n%config ThinkMagics.log = True"
        ),
        nbformat.v4.new_code_cell(f"%%think {flags}\nWhy is the sky blue?"),
        nbformat.v4.new_code_cell(f"%%think {flags}\nWhy are sunsets red?"),
        *(
            nbformat.v4.new_markdown_cell(f"Notes, part {n}.\n\n" + "More notes.\n\n" * 12)
            for n in range(1, 9)
        ),
        nbformat.v4.new_code_cell('%think --search rayleigh OR "sunset"'),
    ]
    nbformat.write(nb, lab.root / "search.ipynb")
    cell_ids = [c.id for c in nb.cells]
    last = len(nb.cells) - 1

    open_notebook(page, "search.ipynb")
    run_all(page)
    wait_cell_done(page, last)
    table = cell(page, last).locator(".reasoning-nb-search")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("mark").first).to_be_visible()
    assert table.locator("b").count() == 0  # the reasoning's <b> is text, not markup
    links = table.locator("a")
    hrefs = sorted(links.nth(i).get_attribute("href") or "" for i in range(links.count()))
    assert [h.split("#")[-1] for h in hrefs] == sorted(f"cell-id={cell_ids[i]}" for i in (1, 2))
    cell(page, last).scroll_into_view_if_needed()
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        shot(page, f"search-table-{theme.split()[-1].lower()}", cell(page, last))
    set_theme(page, "JupyterLab Light")

    # a click takes Lab to the cell that ran the run: it scrolls there (Notebook.setFragment;
    # Lab 4.6 scrolls a cell into view, and selects it only when its windowing had it unmounted)
    row = table.locator("tbody tr", has_text="Why are sunsets red?")
    row.locator("a").scroll_into_view_if_needed()
    expect(cell(page, 2)).not_to_be_in_viewport()
    row.locator("a").click()
    expect(cell(page, 2)).to_be_in_viewport()
    assert "/files/" not in page.url  # Lab handled the link: the page did not leave it
    shot(page, "search-link-followed")
