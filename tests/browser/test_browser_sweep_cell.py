"""A ``%%think --sweep`` cell as a user sees it in a real JupyterLab, Light and Dark: the live
progress (the widget kit's bar, done/total, running, tokens, spend, ETA, Stop) while it runs,
then the static result in its place, which a save and a reopen keep. Shares
``test_browser``'s Lab fixture and helpers; screenshots land in ``test-artifacts/browser/``."""

from __future__ import annotations

import itertools
import json
import re
import threading

from playwright.sync_api import expect
from test_browser import (
    BROWSER,
    CHAT,
    LONG,
    cell,
    close_all,
    open_notebook,
    run_all,
    save,
    set_theme,
    shot,
    stream,
    wait_cell_done,
    write_notebook,
)
from test_browser_round2 import both_themes

from reasoning_nb.notebook.sweep_result import SWEEP_KEY

pytestmark = BROWSER

PROMPTS = ["Is 391 prime?", "What is 17 × 23?", "Why is the sky blue?", "Name a <b>bold</b> idea."]
LIVE = ".reasoning-nb-sweep-live"


GRADED = [f"Q{i}: is {n} prime?" for i, n in enumerate((391, 97, 221, 7919))]


def replies(looked: threading.Event):
    """The cell's prompts: the first two runs at once, the others held after a few frames
    until the live view was seen (and shot in both themes). The file's: at once, right from
    `medium` on, and `high` thinks no more than it."""
    asked = itertools.count()

    def reply(rec):
        effort, prompt = rec.json.get("reasoning_effort"), rec.json["messages"][-1]["content"]
        if not prompt.startswith("Q"):
            held = next(asked) >= 2
            hold = {"stall_after": 3, "stall": LONG / 1000, "resume": looked} if held else {}
            return stream(f"Thinking at {effort}. " * 40, f"Answer at {effort}.", **hold)
        steps = {"low": 30, "medium": 300, "high": 300}[effort]
        return stream("Let me check each factor. " * steps, "No" if effort == "low" else "Yes")

    return reply


def test_a_sweep_shows_its_progress_live_then_its_result_which_a_reopen_keeps(page, lab, wire):
    looked = threading.Event()
    wire.route("POST", CHAT, replies(looked))
    flags = f"--model llamacpp:m --base-url {wire.url} --refresh"
    cell_form = f"%%think --sweep {flags} --presets low,high --concurrency 2"
    (lab.root / "graded.jsonl").write_text(
        "".join(json.dumps({"prompt": q, "expected": "Yes"}) + "\n" for q in GRADED)
    )
    line_form = f"%think --sweep graded.jsonl {flags} --presets low,medium,high"
    write_notebook(
        lab, "sweep.ipynb", "%load_ext reasoning_nb", "\n".join([cell_form, *PROMPTS]), line_form
    )
    open_notebook(page, "sweep.ipynb")
    run_all(page)
    view = cell(page, 1).locator(LIVE)
    figures = view.locator(".widget-html-content")
    expect(figures).to_contain_text(re.compile(r"[1-5]/8 done"), timeout=30_000)
    expect(view.locator(".widget-hprogress")).to_be_visible()
    expect(view.get_by_role("button", name="Stop")).to_be_visible()
    shown = figures.inner_text()
    assert "running" in shown and "tokens" in shown and "ETA" in shown, shown
    shot(page, "26-sweep-live-light", cell(page, 1))
    set_theme(page, "JupyterLab Dark")
    try:
        expect(figures).to_contain_text("running")
        shot(page, "26-sweep-live-dark", cell(page, 1))
    finally:
        set_theme(page, "JupyterLab Light")
        looked.set()
    wait_cell_done(page)

    result = cell(page, 1).locator(".reasoning-nb-sweep-result")
    expect(result).to_contain_text("8/8 done")
    expect(cell(page, 1).locator(LIVE)).to_have_count(0)  # the result took its place
    expect(cell(page, 1).locator(".jp-OutputArea-child")).to_have_count(1)
    expect(result).to_contain_text("Name a <b>bold</b> idea.")  # shown as text, never markup
    expect(result.locator("b", has_text="bold")).to_have_count(0)
    both_themes(page, "26-sweep-result", cell(page, 1))

    wait_cell_done(page, 2)  # the line form: a file with expected answers, graded
    graded = cell(page, 2).locator(".reasoning-nb-sweep-result")
    expect(graded).to_contain_text("12/12 done")
    expect(graded.locator("img.reasoning-nb-sweep-plot")).to_be_visible()
    assert graded.locator("img.reasoning-nb-sweep-plot").evaluate("i => i.naturalWidth") > 0
    expect(graded).to_contain_text("Recommended")
    expect(graded).to_contain_text("No effect: llamacpp:m · high")
    both_themes(page, "26-sweep-graded", cell(page, 2))

    save(page)
    saved = json.loads((lab.root / "sweep.ipynb").read_text())
    for index, runs in ((1, 8), (2, 12)):
        [output] = saved["cells"][index]["outputs"]
        assert output["metadata"][SWEEP_KEY]["progress"]["done"] == runs
    close_all(page)
    lab.shutdown_all_kernels()
    open_notebook(page, "sweep.ipynb")  # reopened, no kernel run: the result is still there
    expect(cell(page, 1).locator(".reasoning-nb-sweep-result")).to_contain_text("8/8 done")
    expect(cell(page, 2).locator("img.reasoning-nb-sweep-plot")).to_be_visible()
    assert len(wire.requests_to(CHAT)) == 8 + 12
    assert not page.errors, page.errors
