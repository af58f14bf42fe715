"""How a %%think cell ends, in a real IPython kernel: kernel interrupt, a re-run asked for while
the cell streams, a failed run, and what a cell leaves behind when it runs again."""

from __future__ import annotations

import json
import time
from queue import Empty

import nbformat
import pytest
import wire_fixtures as wf
from kernel_session import KernelSession
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from wire_server import Reply

CHAT = "/v1/chat/completions"
pytestmark = pytest.mark.kernel


def stalled(reasoning: str = "thinking slowly " * 5) -> Reply:
    """A stream that sends some reasoning, then waits 10 min: only a stop ends it in time."""
    frames = wf.chat_sse(reasoning, "never finished", done=False)
    return Reply.sse(frames, stall_after=8, stall=600)


def started_thinking(msg) -> bool:
    state = msg["content"].get("data", {}).get("state", {}) if msg["msg_type"] == "comm_msg" else {}
    return "thinking slowly" in json.dumps(state)


def saves(msgs) -> list[dict]:
    """The traces saved by these messages, in order (the static output, then its updates)."""
    return [
        m["content"]["metadata"]["reasoning_nb"]
        for m in msgs
        if m["msg_type"] in ("display_data", "update_display_data")
        and "reasoning_nb" in m["content"].get("metadata", {})
    ]


def errors(msgs) -> list[dict]:
    return [m["content"] for m in msgs if m["msg_type"] == "error"]


def wait_for(kernel: KernelSession, until, timeout: float = 20) -> dict:
    """Read iopub (any cell's, widget traffic included) until ``until(msg)``; on a timeout,
    say what came instead and which streams the kernel still counts as live."""
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        try:
            msg = kernel.kc.get_iopub_msg(timeout=max(0.05, deadline - time.monotonic()))
        except Empty:
            break
        kernel._track(msg)
        seen.append(msg["msg_type"])
        if until(msg):
            return msg
    streams = "__import__('reasoning_nb.notebook.interrupts').notebook.interrupts._streams"
    live = kernel.value(f"len({streams})")
    raise AssertionError(
        f"the kernel never sent what the test waits for; it sent {seen}; live streams: {live}"
    )


def cell(wire_server, flags: str = "") -> str:
    return f"%%think --model llamacpp:m --base-url {wire_server.url} {flags}\nQ"


# -- 12: kernel interrupt -------------------------------------------------------------------------


def test_interrupt_leaves_one_line_and_no_traceback(kernel, wire_server):
    wire_server.route("POST", CHAT, stalled())
    msg_id = kernel.execute(cell(wire_server))
    kernel.collect(msg_id, 30, until=started_thinking)
    kernel.km.interrupt_kernel()
    msgs = kernel.collect(msg_id, 20)  # the interrupt ended the stall
    [error] = errors(msgs)
    assert error["traceback"] == ["stopped: kernel interrupt"]  # not ~60 lines of CancelledError
    assert "CancelledError" not in str(error)
    trace = saves(msgs)[-1]
    assert trace["status"] == "cancelled" and trace["reasoning"].startswith("thinking slowly")
    assert kernel.value("_think.status") == "'cancelled'"
    assert kernel.value("1 + 1") == "2"  # the kernel goes on


def test_interrupt_stops_a_rerun_that_streams_after_its_cell_ended(kernel, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("quick", "first")), stalled())
    kernel.run(cell(wire_server, "--preset low"))
    dropdown = kernel.find("DropdownModel")
    kernel.set_state(dropdown, index=kernel.comms[dropdown]["_options_labels"].index("high"))
    wait_for(kernel, started_thinking)  # the re-run streams; no cell is running
    kernel.km.interrupt_kernel()
    msg = wait_for(kernel, lambda m: m["msg_type"] == "update_display_data")
    trace = msg["content"]["metadata"]["reasoning_nb"]
    assert trace["preset"] == "high" and trace["status"] == "cancelled"
    assert trace["reasoning"].startswith("thinking slowly")
    assert kernel.value("(_think.preset, _think.status)") == "('high', 'cancelled')"


def test_interrupt_during_another_cell_stops_a_detached_rerun(kernel, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("quick", "first")), stalled())
    kernel.run(cell(wire_server, "--preset low"))
    dropdown = kernel.find("DropdownModel")
    kernel.set_state(dropdown, index=kernel.comms[dropdown]["_options_labels"].index("high"))
    wait_for(kernel, started_thinking)
    kernel.execute(  # (how each cell ended, for the message should this fail)
        "_ends = []\nget_ipython().events.register('post_run_cell', "
        "lambda r: _ends.append(repr(r.error_in_exec)))"
    )
    msg_id = kernel.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(600)")
    kernel.collect(msg_id, 10, until=lambda m: m["msg_type"] == "stream")  # it runs: interrupt
    kernel.km.interrupt_kernel()
    # The sleeping cell ends with its KeyboardInterrupt, and the run with it, in either order.
    seen: list[dict] = []

    def both(msg: dict) -> bool:
        seen.append(msg)
        idle = [m for m in seen if m["parent_header"].get("msg_id") == msg_id
                and m["content"].get("execution_state") == "idle"]  # fmt: skip
        return bool(idle and saves(seen))

    try:
        wait_for(kernel, both)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the cells ended with {kernel.value('_ends')}") from None
    assert saves(seen)[-1]["status"] == "cancelled"


# -- 13: a re-run asked for while the cell streams -----------------------------------------------


def test_a_rerun_asked_for_mid_stream_runs_inside_the_cell(kernel, wire_server):
    wire_server.route("POST", CHAT, stalled(), Reply.sse(wf.chat_sse("deeper", "second")))
    msg_id = kernel.execute(cell(wire_server, "--preset low"))
    kernel.collect(msg_id, 30, until=started_thinking)
    dropdown = kernel.find("DropdownModel")
    kernel.set_state(dropdown, index=kernel.comms[dropdown]["_options_labels"].index("high"))
    msgs = kernel.collect(msg_id, 20)  # the cell is idle only once the re-run is done
    assert [(t["preset"], t["status"]) for t in saves(msgs)] == [
        ("low", "cancelled"),
        ("high", "complete"),
    ]
    assert not errors(msgs)  # a stop for a re-run is no failure
    assert [b.get("reasoning_effort") for b in wire_server.bodies(CHAT)] == ["low", "high"]
    assert kernel.value("(_think.preset, _think.answer)") == "('high', 'second')"


# -- 14: a failed run fails the cell ---------------------------------------------------------------


def test_a_failed_run_fails_the_cell_with_one_line(kernel, wire_server):
    wire_server.route("POST", CHAT, Reply.json({"error": {"message": "model 'm' not found"}}, 404))
    msgs = kernel.run(cell(wire_server))
    [error] = errors(msgs)
    [line] = error["traceback"]
    assert line.startswith("%%think failed: ") and "model 'm' not found" in line
    trace = saves(msgs)[-1]
    assert trace["status"] == "error" and "model 'm' not found" in trace["error"]
    steer = kernel.find("HBoxModel", _dom_classes=["reasoning-nb-steer"])
    # No Continue after a 404 (it would fail again), nor Pin (no text): only Pin idle, hidden.
    pin = kernel.find("AnyModel", part="pin")
    assert kernel.comms[steer]["children"] == [f"IPY_MODEL_{pin}"]
    assert not kernel.comms[pin]["offered"]


def shown_in(kernel: KernelSession, comm_id: str) -> bool:
    """Is the widget a child of another (the front end shows it)?"""
    return any(f"IPY_MODEL_{comm_id}" in s.get("children", ()) for s in kernel.comms.values())


def test_a_failed_run_says_its_error_once(kernel, wire_server):
    """The cell's error line says why its run failed: the widget does not say it again, nor
    does its static twin where Lab shows that (its error line is marked, for the stylesheet
    that hides it). A re-run that fails after the cell ended has no error line of the cell:
    the twin says it (the widget shows no text of a run the twin shows)."""
    not_found = [Reply.json({"error": {"message": f"model '{m}' not found"}}, 404) for m in "mx"]
    wire_server.route("POST", CHAT, *not_found)
    msgs = kernel.run(cell(wire_server, "--preset low"))
    [error] = errors(msgs)
    [line] = error["traceback"]
    assert line.startswith("%%think failed: ") and "model 'm' not found" in line
    with pytest.raises(KeyError):  # the widget makes no error line of its own
        kernel.find("HTMLModel", _dom_classes=["reasoning-nb-error"])
    [static] = [m["content"]["data"]["text/html"] for m in msgs if m["msg_type"] == "display_data"
                and "reasoning_nb" in m["content"]["metadata"]]  # fmt: skip
    assert 'class="reasoning-nb-static reasoning-nb-error-in-cell"' in static

    dropdown = kernel.find("DropdownModel")
    kernel.set_state(dropdown, index=kernel.comms[dropdown]["_options_labels"].index("high"))
    msg = wait_for(kernel, lambda m: m["msg_type"] == "update_display_data")
    assert msg["content"]["metadata"]["reasoning_nb"]["status"] == "error"
    twin = msg["content"]["data"]["text/html"]
    assert 'class="reasoning-nb-static"' in twin and "model &#x27;x&#x27; not found" in twin
    with pytest.raises(KeyError):
        kernel.find("HTMLModel", _dom_classes=["reasoning-nb-error"])


def test_continue_is_offered_after_a_dropped_stream(kernel, wire_server):
    frames = wf.chat_sse("step one, step two", "The answer is", done=False)
    wire_server.route("POST", CHAT, Reply.sse(frames, drop_after=len("".join(frames[:-2]))))
    msgs = kernel.run(cell(wire_server))
    assert errors(msgs) and saves(msgs)[-1]["status"] == "error"
    steer = kernel.find("HBoxModel", _dom_classes=["reasoning-nb-steer"])
    button = kernel.find("ButtonModel", description="Continue")
    assert f"IPY_MODEL_{button}" in kernel.comms[steer]["children"]


def test_run_all_stops_at_a_failed_cell(wire_server):
    wire_server.route("POST", CHAT, Reply.json({"error": {"message": "no such model"}}, 404))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(s)
        for s in ("%load_ext reasoning_nb", cell(wire_server), "print('ran on')")
    ]
    with pytest.raises(CellExecutionError, match="no such model"):
        NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    assert nb.cells[2].outputs == []  # Run All stopped at the failed cell
    failed = nb.cells[1].outputs
    assert [o.output_type for o in failed] == ["display_data", "display_data", "error"]
    assert failed[1].metadata["reasoning_nb"]["status"] == "error"  # the trace is kept


# -- 15: what a cell leaves behind ---------------------------------------------------------------

COUNT = (
    "import gc, ipywidgets.widgets.widget as _w\nfrom reasoning_nb import Trace\n"
    "gc.collect(); print(len(_w._instances), sum(isinstance(o, Trace) for o in gc.get_objects()))"
)


def counts(kernel: KernelSession) -> tuple[int, int]:
    msgs = kernel.run(COUNT)
    text = "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream")
    widgets, traces = text.split()
    return int(widgets), int(traces)


def test_running_a_cell_again_closes_its_old_widgets_and_keeps_no_old_traces(kernel, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("some reasoning", "an answer")))
    kernel.run(cell(wire_server), cell_id="cell-a")
    first = counts(kernel)
    closed = []
    for _ in range(4):
        msgs = kernel.run(cell(wire_server), cell_id="cell-a")
        closed += [m for m in msgs if m["msg_type"] == "comm_close"]
    assert counts(kernel) == first  # the same cell, run 5 times: what one run leaves
    assert len(closed) >= 4 * 20  # the front end was told to drop the old models (~29 each)
    kernel.run(cell(wire_server), cell_id="cell-b")  # another cell keeps its own
    assert counts(kernel)[0] > first[0]
    assert kernel.value("len(get_ipython().magics_manager.registry['ThinkMagics'].stats_rows)") == (
        "6"
    )  # %think --stats still counts every run


# -- odd token counts -----------------------------------------------------------------------------


def test_a_run_with_odd_token_counts_saves_its_trace(kernel, wire_server):
    """A count the views cannot do arithmetic on (``"12"``, ``1e308``) used to fail the cell
    after the answer arrived, and no output kept the trace."""
    counts = {"prompt_tokens": 3, "completion_tokens": "12"}
    counts["completion_tokens_details"] = {"reasoning_tokens": 1e308}
    frames = wf.chat_sse("thinking it over", "The answer.", usage=counts, usage_chunk=True)
    wire_server.route("POST", CHAT, Reply.sse(frames))
    msgs = kernel.run(cell(wire_server))
    assert errors(msgs) == []
    trace = saves(msgs)[-1]
    assert (trace["answer"], trace["status"]) == ("The answer.", "complete")
    assert trace["usage"] == {"input_tokens": 3, "output_tokens": None, "reasoning_tokens": None}
    assert any("completion_tokens '12'" in w for w in trace["warnings"])
