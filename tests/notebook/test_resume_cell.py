"""Edit & continue in a real IPython kernel: under a finished run, the text area holds its
reasoning; the user cuts and corrects it, and the model thinks on from its end in a new run of
the same widget, linked to the run and the point it came from."""

from __future__ import annotations

import pytest
import wire_fixtures as wf
from test_kernel_cells import saves, wait_for
from wire_server import Reply

pytestmark = pytest.mark.kernel

CHAT = "/v1/chat/completions"
REASONING = "Spell it: s-t-r-a-w-b-e-r-r-y. The r's: one in 'str', one in 'rry'."
RENDERED = "<|im_start|>user\nHow many r's?<|im_end|>\n<|im_start|>assistant\n<think>\n"


def test_edit_and_continue_goes_on_from_the_edited_text(kernel, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse(REASONING, "Two.")))
    wire_server.route("POST", "/apply-template", Reply.json({"prompt": RENDERED}))
    frames = [
        wf.sse({"content": " two in 'rry': three in all.</think>\n\n", "stop": False}),
        wf.sse({"content": "Three.", "stop": False}),
        wf.sse({"content": "", "stop": True, "stop_type": "eos"}),
    ]
    wire_server.route("POST", "/completion", Reply.sse(frames))
    msgs = kernel.run(f"%%think --model llamacpp:m --base-url {wire_server.url}\nHow many r's?")
    assert saves(msgs)[-1]["reasoning"] == REASONING

    steer = kernel.find("HBoxModel", _dom_classes=["reasoning-nb-steer"])
    edit = kernel.find("ButtonModel", description="Edit & continue")
    assert f"IPY_MODEL_{edit}" in kernel.comms[steer]["children"]
    kernel.click(edit)
    wait_for(kernel, lambda m: _sets(m, value=REASONING))  # the reasoning, to cut and correct
    area = kernel.find("TextareaModel", _dom_classes=["reasoning-nb-edit"])
    shown = lambda *_: f"IPY_MODEL_{area}" in kernel.comms[steer]["children"]  # noqa: E731
    if not shown():
        wait_for(kernel, shown)
    cut = REASONING.index("one in 'rry'")
    edited = REASONING[:cut] + "and"
    kernel.set_state(area, value=edited)
    kernel.click(kernel.find("ButtonModel", description="Continue from here"))

    msg = wait_for(
        kernel,
        lambda m: (
            m["msg_type"] == "update_display_data"
            and m["content"]["metadata"]["reasoning_nb"]["status"] == "complete"
        ),
    )
    meta = msg["content"]["metadata"]
    trace = meta["reasoning_nb"]
    assert trace["reasoning"] == edited + " two in 'rry': three in all."
    assert trace["answer"] == "Three."
    first = meta["reasoning_nb_history"][0]
    assert trace["continued"] == {
        "from_started_at": first["started_at"],  # which run of the cell: run 1
        "run": 1,
        "hint": "",
        "reasoning_chars": len(edited),
        "action": "resume",
        "at": cut,
        "edited": True,
    }
    assert [t["answer"] for t in meta["reasoning_nb_history"]] == ["Two."]  # run 1, kept
    (sent,) = wire_server.bodies("/completion")
    assert sent["prompt"] == RENDERED + edited
    html = msg["content"]["data"]["text/html"]
    assert f"continued from run 1 at char {cut}, edited" in html
    selector = kernel.find("ToggleButtonsModel")
    labels = kernel.comms[selector]["_options_labels"]
    assert len(labels) == 2 and labels[1].endswith(f"continued from run 1 at char {cut}, edited")


def _sets(msg, **state) -> bool:
    """``msg`` opens or updates a widget with this state."""
    if msg["msg_type"] not in ("comm_open", "comm_msg"):
        return False
    sent = msg["content"]["data"].get("state", {})
    return all(sent.get(k) == v for k, v in state.items())
