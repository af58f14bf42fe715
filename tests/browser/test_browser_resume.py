"""Edit & continue in a real JupyterLab: the text area under a finished run holds its reasoning;
the user cuts and corrects it, and the model thinks on from its end in run 2 of the cell, which
says where it came from. Screenshots in Light and Dark land in ``test-artifacts/browser/``."""

from __future__ import annotations

import test_browser as lab_ui
import wire_fixtures as wf
from playwright.sync_api import expect
from test_browser import BROWSER, CHAT, TWO_RUNS
from wire_server import Reply

pytestmark = BROWSER

REASONING = (
    "The sky scatters sunlight. Short wavelengths scatter most, so red light fills the sky "
    "from every direction. That is why it looks red."
)
RENDERED = "<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n<think>\n"


def test_edit_and_continue_in_light_and_dark(page, lab, wire):
    wire.route("POST", CHAT, lab_ui.stream(REASONING, "It is red."))
    wire.route("POST", "/apply-template", Reply.json({"prompt": RENDERED}))
    rest = [" light fills the sky from every direction.</think>\n\n", "It is **blue**."]
    frames = [wf.sse({"content": text, "stop": False}) for text in rest]
    frames.append(wf.sse({"content": "", "stop": True, "stop_type": "eos"}))
    wire.route("POST", "/completion", Reply.sse(frames, pause=0.05))
    lab_ui.think_notebook(lab, wire, "resume.ipynb")
    lab_ui.open_notebook(page, "resume.ipynb")
    lab_ui.run_all(page)
    lab_ui.wait_state(page, "s.status.startsWith('done') && s.twin")
    lab_ui.wait_cell_done(page)

    steer = lab_ui.live(page).locator(".reasoning-nb-steer")
    steer.locator("button", has_text="Edit & continue").click()
    area = steer.locator(".reasoning-nb-edit textarea")
    expect(area).to_have_value(REASONING)
    cut = REASONING.index("red light")
    edited = REASONING[:cut] + "blue"
    area.fill(edited)
    lab_ui.set_theme(page, "JupyterLab Light")
    lab_ui.shot(page, "resume-1-edit-light", lab_ui.cell(page))
    lab_ui.set_theme(page, "JupyterLab Dark")
    lab_ui.shot(page, "resume-1-edit-dark", lab_ui.cell(page))

    steer.locator("button", has_text="Continue from here").click()
    final = lab_ui.wait_state(page, f"{TWO_RUNS} && s.status.startsWith('done')")
    assert final["answer"] == "It is blue."
    assert final["runs"][1].endswith(f"continued from run 1 at char {cut}, edited")
    (sent,) = wire.bodies("/completion")
    assert sent["prompt"] == RENDERED + edited
    expect(area).to_be_hidden()  # the text area closes with the run it came from
    run = lab_ui.ended(page)
    lab_ui.pane_title(run).click()  # the reasoning: the user's text, then the model's
    expect(run).to_contain_text(edited + " light fills the sky from every direction.")
    lab_ui.shot(page, "resume-2-continued-dark", lab_ui.cell(page))
    lab_ui.set_theme(page, "JupyterLab Light")
    lab_ui.shot(page, "resume-2-continued-light", lab_ui.cell(page))
    assert not page.errors, page.errors
