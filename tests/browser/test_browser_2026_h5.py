"""Issue 25, item 5 as a user sees it in a real JupyterLab: an OpenAI run whose reasoning summary
came back empty (low effort) shows no empty reasoning pane, and its status says why there is no
reasoning text. Screenshots in Light and Dark land in ``test-artifacts/browser/``."""

from __future__ import annotations

import test_browser as tb
import wire_fixtures as wf
from playwright.sync_api import expect
from wire_server import Reply

pytestmark = tb.BROWSER


def test_an_empty_openai_summary_is_said_not_shown_as_an_empty_pane(
    page,
    lab,
    wire,
):
    frames = wf.responses_sse("", "It is **391**.", reasoning_tokens=57, encrypted="gAAAAopaque")
    wire.route("POST", "/v1/responses", Reply.sse(frames, pause=0.02))
    key = "%load_ext reasoning_nb\nimport os\nos.environ['OPENAI_API_KEY'] = 'sk-test'"
    # --api-key-env: the wire server is not OpenAI's address
    cell_line = f"%%think --model openai:gpt-5.1 --base-url {wire.url} --preset low"
    tb.write_notebook(
        lab, "empty-summary.ipynb", key, f"{cell_line} --api-key-env OPENAI_API_KEY\n17 × 23?"
    )
    tb.open_notebook(page, "empty-summary.ipynb")
    tb.run_all(page)
    tb.wait_cell_done(page)
    s = tb.wait_state(page, "s.status.startsWith('done')")
    assert s["answer"] == "It is 391." and not s["reasoning"], s
    view = tb.cell(page)
    expect(view.get_by_text("OpenAI sent no reasoning summary this time").first).to_be_visible()
    expect(view.get_by_text("57 tokens", exact=False).first).to_be_visible()
    for pane in (".reasoning-nb-pane", ".reasoning-nb-reasoning"):  # live, and its twin
        expect(view.locator(f"{pane}:visible")).to_have_count(0)
    assert "gAAAA" not in view.inner_text()
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            tb.set_theme(page, theme)
            tb.shot(page, f"h5-empty-summary-{theme.split()[-1].lower()}", view)
    finally:
        tb.set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors
