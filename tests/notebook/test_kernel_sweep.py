"""``%%think --sweep`` in a real IPython kernel against the wire server: the live progress view
while it runs (a few updates a second, however many tokens stream), the static result in its
place once it ends (the one output a saved notebook keeps), and Stop."""

from __future__ import annotations

import nbformat
import pytest
import wire_fixtures as wf
from kernel_session import KernelSession, max_per_window, updates
from nbclient import NotebookClient
from wire_server import Reply

from reasoning_nb.notebook.sweep_result import SWEEP_KEY
from reasoning_nb.notebook.sweep_view import MAX_RATE
from reasoning_nb.store import db as store

CHAT = "/v1/chat/completions"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
pytestmark = pytest.mark.kernel


@pytest.fixture
def fresh_db(monkeypatch, tmp_path):
    """The kernel (started after this) gets a cache and log of its own."""
    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))
    monkeypatch.delenv("REASONING_NB_LOG", raising=False)


@pytest.fixture
def kernel(fresh_db):
    session = KernelSession()
    session.run("%load_ext reasoning_nb")
    yield session
    session.close()


def streamed(pause: float = 0.0, pieces: int = 40):
    """A hook: a long answer in many small frames, ``pause`` s apart (many tokens to count)."""

    def hook(rec):
        effort = rec.json.get("reasoning_effort")
        reasoning = [f"step {i} at {effort}. " for i in range(pieces)]
        frames = wf.chat_sse(reasoning, ["The answer", " is <b>42</b>."], usage=True)
        return Reply.sse(frames, pause=pause)

    return hook


def test_a_saved_sweep_cell_keeps_the_static_result_alone(wire_server, fresh_db):
    wire_server.route("POST", CHAT, streamed())
    nb = nbformat.v4.new_notebook()
    line = f"%%think --sweep --model llamacpp:m --base-url {wire_server.url} --presets low,high"
    sources = ("%load_ext reasoning_nb", f"{line}\nq1\nq2\nq3", "print(len(_sweep.rows))")
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()
    [output] = nb.cells[1].outputs  # the live view was replaced by the result: one output
    assert output.output_type == "display_data" and WIDGET_VIEW not in output.data
    assert {"text/html", "text/plain"} <= set(output.data)
    saved = output.metadata[SWEEP_KEY]
    assert saved["progress"]["done"] == saved["progress"]["total"] == 6
    assert saved["progress"]["failed"] == 0
    assert "6/6 done" in output.data["text/html"]
    assert nb.cells[2].outputs[0]["text"] == "6\n"
    assert len(wire_server.requests_to(CHAT)) == 6


def test_the_live_view_is_paced_then_replaced_by_the_result(kernel, wire_server):
    wire_server.route("POST", CHAT, streamed(pause=0.01))  # 6 runs of ~40 tokens, ~0.5 s each
    line = f"--model llamacpp:m --base-url {wire_server.url} --presets low,high --concurrency 2"
    msgs = kernel.run(f"%%think --sweep {line}\nq1\nq2\nq3", timeout=60)
    shown = [m for m in msgs if m["msg_type"] == "display_data"]
    assert len(shown) == 1 and WIDGET_VIEW in shown[0]["content"]["data"]
    display_id = shown[0]["content"]["transient"]["display_id"]
    [result] = [m for m in msgs if m["msg_type"] == "update_display_data"]
    assert result["content"]["transient"]["display_id"] == display_id  # in the view's place
    assert SWEEP_KEY in result["content"]["metadata"]
    assert WIDGET_VIEW not in result["content"]["data"]
    sent = updates(msgs)
    bar = kernel.find("IntProgressModel")
    states = [m["content"]["data"]["state"] for m in sent if m["content"]["comm_id"] == bar]
    values = [state["value"] for state in states if "value" in state]
    assert values == sorted(values) and values[-1] == 6 and len(values) >= 2
    # every token was a change told to the view; the page heard a few a second
    assert len(sent) < 6 * 40 / 4
    assert max_per_window([m["received"] for m in sent]) <= MAX_RATE + 2
    assert kernel.value("len(_sweep.rows)") == "6"


def test_stop_ends_the_sweep_and_shows_the_runs_that_ended(kernel, wire_server):
    wire_server.route("POST", CHAT, streamed(pause=0.05))  # ~2 s a run, one at a time
    line = f"--model llamacpp:m --base-url {wire_server.url} --concurrency 1"
    msg_id = kernel.execute(f"%%think --sweep {line}\nq1\nq2\nq3\nq4")

    def one_done(msg) -> bool:
        state = msg["content"].get("data", {}).get("state", {})
        return msg["msg_type"] == "comm_msg" and state.get("value") == 1

    kernel.collect(msg_id, until=one_done)
    kernel.click(kernel.find("ButtonModel", description="Stop"))
    msgs = kernel.collect(msg_id)
    assert not [m for m in msgs if m["msg_type"] == "error"]  # Stop is not a failure
    [result] = [m for m in msgs if m["msg_type"] == "update_display_data"]
    progress = result["content"]["metadata"][SWEEP_KEY]["progress"]
    assert progress["stopped"] == "cancelled" and 1 <= progress["done"] < 4
    assert "stopped" in result["content"]["data"]["text/plain"]
    assert len(wire_server.requests_to(CHAT)) < 4
