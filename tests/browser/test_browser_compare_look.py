"""What ``--compare`` puts on screen once it ended (issue 24.6), in a real JupyterLab: the
columns start level however long a title is, a fold's label does not repeat its column's title,
and each column keeps a preset that runs that column alone again. Shares ``test_browser``'s Lab
fixture and helpers; screenshots (Light and Dark) land in ``test-artifacts/browser/``."""

from __future__ import annotations

import threading

from playwright.sync_api import expect
from test_browser import (
    BROWSER,
    CHAT,
    by_effort,
    cell,
    open_notebook,
    run_all,
    shot,
    stream,
    wait_cell_done,
    write_notebook,
)
from test_browser_round2 import both_themes

pytestmark = BROWSER

LONG_MODEL = "llamacpp:" + "a-model-name-long-enough-to-wrap-in-a-column-" * 2 + "q4"
LEVEL = 3  # px: "level" for tops that a wrapped line would set ~20 px apart


def compared(page, lab, wire, name: str, flags: str, reply=by_effort):
    """Run a ``--compare`` cell (``flags``) against the wire server; its static output."""
    wire.route("POST", CHAT, reply)
    line = f"--model llamacpp:m --base-url {wire.url} {flags}"
    write_notebook(lab, name, "%load_ext reasoning_nb", f"%%think {line}\nWhy?")
    open_notebook(page, name)
    run_all(page)
    wait_cell_done(page)
    return cell(page, 1).locator(".reasoning-nb-compare")


def tops(locator) -> list[float]:
    return [locator.nth(i).bounding_box()["y"] for i in range(locator.count())]


def test_columns_start_level_and_labels_do_not_repeat_titles(page, lab, wire):
    """Three models side by side, one with a name far wider than its column: every title and
    fold label keeps to one line (the title whole in its tooltip), so the answers start level;
    no fold label names the model or preset its title says."""
    models = f"llamacpp:m,{LONG_MODEL},llamacpp:qwen3"
    out = compared(page, lab, wire, "compare-look.ipynb", f"--preset high --compare {models}")
    columns = out.locator(".reasoning-nb-compare-columns > div")
    expect(columns).to_have_count(3)
    titles = columns.locator("h4")
    expect(titles.nth(1)).to_have_attribute("title", f"high · {LONG_MODEL}")
    labels = columns.locator("details.reasoning-nb-reasoning > summary")
    answers = columns.locator(".reasoning-nb-answer")
    expect(answers).to_have_count(3)
    for part in (titles, labels, answers):
        got = tops(part)
        assert max(got) - min(got) <= LEVEL, (part, got)
    heights = [titles.nth(i).bounding_box()["height"] for i in range(3)]
    assert max(heights) - min(heights) <= 1, heights  # one line each
    for i, model in enumerate(("llamacpp:m", LONG_MODEL, "llamacpp:qwen3")):
        text = labels.nth(i).inner_text()
        assert text.startswith("Thought for") and "tokens" in text, text
        assert model not in text and "preset" not in text and "high" not in text, text
    # Above the static output, each column's title and preset: a long title ends before it.
    heads = cell(page, 1).locator(".reasoning-nb-compare-live")
    for i in range(3):
        title = heads.locator("b[title]").nth(i).bounding_box()
        select = heads.locator("select").nth(i).bounding_box()
        assert title["x"] + title["width"] <= select["x"] + 1, (i, title, select)
        assert abs(title["y"] - tops(heads.locator("b[title]"))[0]) <= LEVEL
    both_themes(page, "24-6-compare-level", cell(page, 1))
    assert not page.errors, page.errors


def test_a_columns_preset_runs_that_column_alone_again(page, lab, wire):
    """Once the compare ended, each column keeps its title and preset above the static output;
    another preset for the second column asks the server once more, with that preset's knob,
    and the static output shows the new run there, the first column kept."""

    looked = threading.Event()  # (the re-run is held until it was seen live)

    def slow_medium(rec):
        if rec.json.get("reasoning_effort") == "medium":
            return stream("Step at medium. " * 60, "Blue, at medium.", pause=0.005,
                          stall_after=20, stall=60, resume=looked)  # fmt: skip
        return by_effort(rec)

    out = compared(page, lab, wire, "compare-rerun.ipynb", "--compare low,high", slow_medium)
    heads = cell(page, 1).locator(".reasoning-nb-compare-live")
    selects = heads.locator("select")
    expect(selects).to_have_count(2)
    expect(selects.nth(0)).to_have_value("low")
    expect(selects.nth(1)).to_be_enabled()
    expect(heads.locator(".reasoning-nb-thoughts")).to_have_count(0)  # the text is below, once
    both_themes(page, "24-6-compare-presets", cell(page, 1))
    assert len(wire.requests_to(CHAT)) == 2

    at = selects.nth(1).bounding_box()
    selects.nth(1).select_option("medium")
    # it streams live in its column, above the static output, which still shows the others
    thoughts = heads.locator(".reasoning-nb-thoughts")
    expect(thoughts).to_have_count(1)
    expect(thoughts).to_contain_text("Step at medium.")
    assert thoughts.bounding_box()["x"] > selects.nth(0).bounding_box()["x"]  # column 2's
    expect(selects.nth(0)).to_be_disabled()  # (until it ended)
    expect(heads.locator("b[title]").nth(1)).to_have_text("medium · llamacpp:m")
    assert abs(selects.nth(1).bounding_box()["y"] - at["y"]) <= 1  # Stop kept its room
    shot(page, "24-6-compare-rerun-live-light", cell(page, 1))
    looked.set()
    titles = out.locator(".reasoning-nb-compare-columns > div h4")
    expect(titles.nth(1)).to_have_text("medium · llamacpp:m", timeout=30_000)
    expect(titles.nth(0)).to_have_text("low · llamacpp:m")
    columns = out.locator(".reasoning-nb-compare-columns > div")
    expect(columns.nth(1)).to_contain_text("Blue, at medium.")
    expect(columns.nth(0)).to_contain_text("Blue, at low.")
    sent = wire.bodies(CHAT)
    assert len(sent) == 3 and sent[-1]["reasoning_effort"] == "medium"  # that column alone
    expect(selects.nth(1)).to_be_enabled()  # (again, once it ended)
    expect(selects.nth(1)).to_have_value("medium")
    rows = out.locator(".reasoning-nb-compare-table tbody tr")
    expect(rows.nth(1)).to_contain_text("medium · llamacpp:m")
    both_themes(page, "24-6-compare-rerun", cell(page, 1))
    assert not page.errors, page.errors
