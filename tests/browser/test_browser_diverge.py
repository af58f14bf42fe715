"""Where two runs part, as users see it in a real JupyterLab (issue 27.2): after a ``--compare``
and after a preset re-run of one cell, one click opens "Where the reasoning parts" below the
output, with the shared start folded, the fork side by side in the answer diff's tints, and where
the runs meet again. Shares ``test_browser``'s Lab fixture and helpers; screenshots (Light and
Dark) land in ``test-artifacts/browser/``."""

from __future__ import annotations

import test_browser as lab_ui
from playwright.sync_api import expect
from test_browser import BROWSER, CHAT, cell, live, stream
from test_browser_compare_look import compared
from test_browser_round2 import both_themes

pytestmark = BROWSER

START = (
    "The question asks why the sky is blue. Sunlight holds every visible colour.\n\n"
    "- Air molecules are much smaller than the light's wavelength.\n"
)
FORKS = {
    "low": "So short waves scatter more, and blue wins. ",
    "high": (
        "Rayleigh's law: scattering goes as 1/λ⁴, so 450 nm scatters about 4.4 times more "
        "than 700 nm. Violet scatters even more, <b>but</b> the sun sends less of it. "
    ),
}
MEET = "Our eyes are most sensitive to green and blue.\n\n"
ENDS = {"low": "Blue it is.", "high": "Together these give a sky-blue sky, not violet."}


def reasoning(effort: str) -> str:
    return START + FORKS[effort] + MEET + ENDS[effort]


def parted(rec):
    effort = rec.json.get("reasoning_effort", "auto")
    return stream(reasoning(effort), f"Blue, at **{effort}**.", pause=0.005)


def tinted(locator) -> str:
    return locator.evaluate("e => getComputedStyle(e).backgroundColor")


def check_fold(fold, names: tuple[str, str]) -> None:
    """Closed at first; one click opens it: the shared start folded with its length, the fork
    side by side (the first run's part red, the other's green), where they meet again."""
    summary = fold.locator(":scope > summary")
    expect(summary).to_contain_text(f"{names[0]} vs {names[1]}")
    expect(summary).to_contain_text("shared start: 3 sentences")
    assert fold.evaluate("e => e.open") is False
    expect(fold.locator(".reasoning-nb-parting-sides").first).to_be_hidden()
    summary.click()  # the one click
    sides = fold.locator(".reasoning-nb-parting-sides").first
    expect(sides).to_be_visible()
    left, right = sides.locator("del"), sides.locator("ins")
    expect(left).to_have_text(FORKS["low"].strip())
    expect(right).to_contain_text("<b>but</b>")  # model text, shown as text
    assert tinted(left) == "rgba(248, 81, 73, 0.22)" and tinted(right) == "rgba(46, 160, 67, 0.22)"
    a, b = left.bounding_box(), right.bounding_box()
    assert abs(a["y"] - b["y"]) <= 2 and a["x"] + a["width"] <= b["x"], (a, b)  # side by side
    expect(fold.locator(".reasoning-nb-parting-meet").first).to_have_text(
        "They meet again (1 sentence):"
    )
    start = fold.locator(".reasoning-nb-parting-start")
    expect(start.locator("summary")).to_have_text(
        f"Shared start: 3 sentences, {len(START):,} characters"
    )
    start.locator("summary").click()
    expect(start.locator("pre")).to_contain_text("Air molecules are much smaller")


def test_compare_shows_where_the_reasoning_parts(page, lab, wire):
    out = compared(page, lab, wire, "parted-compare.ipynb", "--compare low,high", parted)
    fold = out.locator("details.reasoning-nb-parting")
    expect(fold).to_have_count(1)
    fold.scroll_into_view_if_needed()
    lab_ui.shot(
        page, "27-2-compare-parting-closed-light", out
    )  # where it sits: below the answer diff
    check_fold(fold, ("low · llamacpp:m", "high · llamacpp:m"))
    fold.scroll_into_view_if_needed()
    both_themes(page, "27-2-compare-parting", fold)
    assert page.title() != "pwned" and not page.errors, page.errors


def test_a_rerun_shows_where_it_parts_from_the_run_before(page, lab, wire):
    wire.route(
        "POST",
        CHAT,
        stream(reasoning("low"), "Blue, at **low**.", pause=0.005),
        stream(reasoning("high"), "Blue, at **high**.", pause=0.005),
    )
    lab_ui.think_notebook(lab, wire, "parted-rerun.ipynb")
    lab_ui.open_notebook(page, "parted-rerun.ipynb")
    lab_ui.run_all(page)
    lab_ui.wait_cell_done(page)
    live(page).locator(".reasoning-nb-header select").select_option("high")
    lab_ui.wait_until(lambda: len(wire.requests_to(CHAT)) == 2, what="the re-run request")
    lab_ui.wait_state(page, "s.answer.includes('at high') && s.status.startsWith('done')")
    fold = cell(page, 1).locator("details.reasoning-nb-parting")
    expect(fold).to_have_count(1)
    check_fold(fold, ("Run 1 · preset low", "Run 2 · preset high"))
    fold.scroll_into_view_if_needed()
    both_themes(page, "27-2-rerun-parting", fold)
    assert not page.errors, page.errors
