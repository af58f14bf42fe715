"""Answer now under a looping llama.cpp run, in a real JupyterLab: the server's control endpoint
(llama.cpp PR #23971) ends the reasoning, and the answer follows in the same run. Shares
``test_browser``'s Lab fixture and helpers; screenshots (Light and Dark) land in
``test-artifacts/browser/``."""

from __future__ import annotations

import threading

import test_browser as tb
import wire_fixtures as wf
from playwright.sync_api import expect
from test_browser import BROWSER
from test_browser_round2 import both_themes
from wire_server import Reply

from reasoning_nb.providers import control

pytestmark = BROWSER

CONTROL = "/v1/chat/completions/control"
STREAM_ID = "chatcmpl-h3Browser"
LOOP = "Paris is the capital of France, so the answer is Paris. " * 10


def test_answer_now_under_a_looping_run_ends_its_reasoning_in_place(page, lab, wire):
    resume = threading.Event()
    frames = wf.llamacpp_sse(LOOP, "The capital of France is **Paris**.", id=STREAM_ID)
    held = 1 + len(wf.tokens(LOOP))  # the role chunk, then each piece of reasoning
    stream = Reply.sse(frames, pause=0.01, stall_after=held, stall=120, resume=resume)
    wire.route("POST", tb.CHAT, stream)

    def controlled(recorded) -> Reply:
        resume.set()  # the server ends the reasoning: the answer streams on
        ok = recorded.json.get("id") == STREAM_ID
        return Reply.json({"success": ok})

    wire.route("POST", CONTROL, controlled)
    tb.think_notebook(lab, wire, "answer-now-live.ipynb", prompt="Capital of France?")
    tb.open_notebook(page, "answer-now-live.ipynb")
    tb.run_all(page)
    steer = tb.live(page).locator(".reasoning-nb-steer")
    answer_now = steer.locator("button", has_text="Answer now")
    expect(answer_now).to_be_visible(timeout=60_000)
    s = tb.wait_state(page, "s.status.includes('repeats itself')")
    assert not s["answer"]
    both_themes(page, "h3-looping-answer-now", tb.cell(page))

    answer_now.click()
    s = tb.wait_state(page, "s.status.startsWith('done')")
    tb.wait_cell_done(page)
    assert s["answer"] == "The capital of France is Paris."
    assert "continues run 1" not in s["status"] and len(s.get("runs") or []) <= 1
    assert control.NOTICE in s["status"]  # the run says what happened
    assert len(wire.requests_to(tb.CHAT)) == 1
    assert [r.json["id"] for r in wire.requests_to(CONTROL)] == [STREAM_ID]
    both_themes(page, "h3-answered-in-place", tb.cell(page))
    assert not page.errors, page.errors
