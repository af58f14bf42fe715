"""What issue 25's item 1 puts on screen, in a real JupyterLab: a vLLM run its server stopped
with ``finish_reason: "repetition"`` (vllm-project/vllm PR #35451) before any answer reads as
the loop it is, with Answer now under it, which answers. Shares ``test_browser``'s Lab fixture
and helpers; screenshots (Light and Dark) land in ``test-artifacts/browser/``."""

from __future__ import annotations

import test_browser as tb
import wire_fixtures as wf
from playwright.sync_api import expect
from test_browser_round2 import both_themes
from wire_server import Reply

from reasoning_nb.core.loops import LOOP_NOTICE

pytestmark = tb.BROWSER

LOOP = "Wait, 17 × 3 is 51. Let me check 17 × 3 again. " * 4


def test_a_run_vllm_stopped_at_a_loop_offers_answer_now(page, lab, wire):
    frames = wf.vllm_sse(LOOP, "", finish_reason="repetition", usage=True)
    wire.route(
        "POST",
        tb.CHAT,
        Reply.sse(frames, pause=0.01),
        tb.stream("", "It is **391**.", pause=0.01),
    )
    line = f"%%think --model vllm:Qwen/Qwen3.6-27B --base-url {wire.url} --preset high"
    tb.write_notebook(
        lab, "repetition.ipynb", "%load_ext reasoning_nb", f"{line}\nWhat is 17 × 23?"
    )
    tb.open_notebook(page, "repetition.ipynb")
    tb.run_all(page)
    tb.wait_cell_done(page)
    s = tb.wait_state(page, "s.status.startsWith('done')")
    assert f"{LOOP_NOTICE}: the server stopped it (finish reason 'repetition')" in s["status"]
    assert s["status"].startswith("done: no answer, the server stopped a loop · ")
    steer = tb.live(page).locator(".reasoning-nb-steer")
    answer_now = steer.locator("button", has_text="Answer now")
    expect(answer_now).to_be_visible()
    both_themes(page, "h1-repetition-stopped", tb.cell(page))

    answer_now.click()
    s = tb.wait_state(
        page, "s.status.includes('continues run 1') && s.status.startsWith('done') && s.twin"
    )
    assert s["answer"] == "It is 391."
    assert wire.bodies(tb.CHAT)[-1]["messages"][-1]["content"].count("Let me check 17 × 3") == 4
    both_themes(page, "h1-repetition-answered", tb.cell(page))
    assert not page.errors, page.errors
