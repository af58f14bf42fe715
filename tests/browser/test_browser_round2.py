"""What issues 14 and 15 put on screen, in a real JupyterLab: the live subject and a cloud run's
cost in the status line, a replay's mark, and a run that lost its answer to thinking with Answer
now and More room under it. Shares ``test_browser``'s Lab fixture and helpers; screenshots
(Light and Dark) land in ``test-artifacts/browser/``."""

from __future__ import annotations

import re

import wire_fixtures as wf
from playwright.sync_api import expect
from test_browser import (
    BROWSER,
    CHAT,
    cell,
    live,
    open_notebook,
    run_all,
    set_theme,
    shot,
    stream,
    think_notebook,
    wait_cell_done,
    wait_state,
    write_notebook,
)
from test_subject import OPENAI_PARTS
from wire_server import Reply

pytestmark = BROWSER

THOUGHT = "Canberra was picked as a compromise between Sydney and Melbourne, so the capital is"


def both_themes(tab, name: str, target) -> None:
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(tab, theme)
            shot(tab, f"{name}-{'light' if theme.endswith('Light') else 'dark'}", target)
    finally:
        set_theme(tab, "JupyterLab Light")


def test_a_run_that_lost_its_answer_offers_answer_now_which_answers(
    page,
    lab,
    wire,
):
    usage = {"prompt_tokens": 9, "completion_tokens": 300}
    wire.route(
        "POST",
        CHAT,
        Reply.sse(wf.chat_sse(THOUGHT, "", finish_reason="length", usage=usage), pause=0.01),
        stream("", "**Canberra**, since 1913.", pause=0.01),
    )
    think_notebook(lab, wire, "lost-answer.ipynb", prompt="Capital of Australia?")
    open_notebook(page, "lost-answer.ipynb")
    run_all(page)
    wait_cell_done(page)
    s = wait_state(page, "s.status.startsWith('done')")
    assert "no answer, every token went to thinking" in s["status"]
    assert "The model spent all 300 tokens thinking and gave no answer" in s["status"]
    steer = live(page).locator(".reasoning-nb-steer")
    answer_now = steer.locator("button", has_text="Answer now")
    expect(answer_now).to_be_visible()
    expect(steer.locator("button", has_text="More room")).to_be_visible()
    both_themes(page, "round2-lost-answer", cell(page))

    answer_now.click()
    # (run 2's status says what it continues from its start: "done" with it is run 2's end)
    s = wait_state(
        page, "s.status.includes('continues run 1') && s.status.startsWith('done') && s.twin"
    )
    assert s["answer"] == "Canberra, since 1913."
    assert "continues run 1 · answer now (4096 tokens)" in s["status"]  # its own room (24.7)
    assert wire.bodies(CHAT)[-1]["max_tokens"] == 4096  # not what the thinking ate
    assert "Run 2 · off" in s["runs"][1]
    assert "hint" not in s["status"]  # (none was given)
    expect(answer_now).to_be_hidden()  # it answered: nothing to rescue
    expect(steer.locator("button", has_text="Pin answer")).to_be_visible()
    # no cell line asks for this run again (--preset off would not send the reasoning back)
    expect(steer.locator("button", has_text="Use these flags")).to_be_hidden()
    both_themes(page, "round2-answered-now", cell(page))
    assert not page.errors, page.errors


def test_subject_cost_and_replay_in_the_status_line(page, lab, wire):
    more = (
        " Tens first, then units, and the carry where there is one.",
        " A second route would be 23 × 17 = 230 + 161, the same total.",
        " Nothing here needs more than mental arithmetic.",
    )
    reasoning = [part + extra for part, extra in zip(OPENAI_PARTS, more, strict=True)]
    frames = wf.responses_sse("", "It is **391**.", parts=reasoning, reasoning_tokens=300)
    wire.route("POST", "/v1/responses", Reply.sse(frames, pause=0.05))  # (a token a frame)
    line = f"%%think --model openai:gpt-5.1 --base-url {wire.url} --preset high --cache"
    line += " --api-key-env OPENAI_API_KEY"  # the wire server is not OpenAI's address
    write_notebook(
        lab,
        "round2.ipynb",
        "%load_ext reasoning_nb\nimport os\nos.environ['OPENAI_API_KEY'] = 'sk-test'",
        f"{line}\nWhat is 17 × 23?",
    )
    open_notebook(page, "round2.ipynb")
    run_all(page)
    s = wait_state(page, "s.status.includes('Evaluating the request')")
    assert s["status"].startswith("thinking")
    later = "['Computing the product', 'Double-checking the result']"
    s = wait_state(page, f"{later}.some(t => s.status.includes(t))")  # it moves on
    assert "Evaluating the request" not in s["status"]
    shot(page, "round2-subject", cell(page))
    wait_cell_done(page)
    s = wait_state(page, "s.status.startsWith('done')")
    assert re.search(r"\$0\.\d+", s["status"]), s["status"]  # the estimate, once known
    assert "Computing the product" not in s["status"]  # the subject goes with the run
    both_themes(page, "round2-cost", cell(page))

    run_all(page)  # the same request again: replayed from the cache, no request sent
    s = wait_state(page, "s.status.includes('replay of a run recorded')")
    wait_cell_done(page)
    s = wait_state(page, "s.status.startsWith('done')")
    assert len(wire.requests_to("/v1/responses")) == 1
    assert s["answer"] == "It is 391."
    both_themes(page, "round2-replay", cell(page))
    assert not page.errors, page.errors
