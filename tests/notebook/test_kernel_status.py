"""The kernel's status reads busy while any %%think stream runs (issue 13, item 5), as a front end
sees it: the IOPub ``status`` messages of a real kernel, in the order they arrive."""

from __future__ import annotations

import queue
import threading
import time

import pytest
import wire_fixtures as wf
from kernel_session import KernelSession
from wire_server import Reply

CHAT = "/v1/chat/completions"
pytestmark = pytest.mark.kernel


def cell(wire_server) -> str:
    return f"%%think --model llamacpp:m --base-url {wire_server.url} --preset low\nQ"


def held(release: threading.Event):
    """A reply the server keeps until ``release`` is set: the run streams until the test says."""

    def hook(_recorded) -> Reply:
        release.wait(60)
        return Reply.sse(wf.chat_sse("held back", "answered"))

    return hook


class IOPub:
    """Every IOPub message of the kernel, in order, read as the test needs them."""

    def __init__(self, kernel: KernelSession) -> None:
        self.kernel, self.seen = kernel, []

    def until(self, check, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kernel.kc.get_iopub_msg(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                break
            self.kernel._track(msg)
            self.seen.append(msg)
            if check(msg):
                return msg
        raise AssertionError("the kernel never sent what the test waits for")

    def statuses(self, start: int = 0, end: int | None = None) -> list[tuple[str, str]]:
        """``(state, parent msg_type)`` of the status messages in ``seen[start:end]``."""
        return [
            (m["content"]["execution_state"], m["parent_header"].get("msg_type"))
            for m in self.seen[start:end]
            if m["msg_type"] == "status"
        ]


def requests(wire_server, count: int, timeout: float = 30) -> None:
    """Wait until the server has ``count`` requests."""
    deadline = time.monotonic() + timeout
    while len(wire_server.requests_to(CHAT)) < count:
        assert time.monotonic() < deadline, f"the server never got {count} requests"
        time.sleep(0.02)


def status(state: str, msg_id: str | None = None):
    def check(msg) -> bool:
        return (
            msg["msg_type"] == "status"
            and msg["content"]["execution_state"] == state
            and (msg_id is None or msg["parent_header"].get("msg_id") == msg_id)
        )

    return check


def saved(preset: str):
    """The static output of a run of ``preset`` was saved: that run is over."""

    def check(msg) -> bool:
        meta = msg["content"].get("metadata", {}).get("reasoning_nb", {})
        return msg["msg_type"] == "update_display_data" and meta.get("preset") == preset

    return check


def rerun(kernel: KernelSession, preset: str, which: int = -1) -> str:
    """Choose ``preset`` in a dropdown (the newest), as the page does; the comm message's id."""
    dropdowns = [c for c, s in kernel.comms.items() if s.get("_model_name") == "DropdownModel"]
    dropdown = dropdowns[which]
    index = kernel.comms[dropdown]["_options_labels"].index(preset)
    data = {"method": "update", "state": {"index": index}, "buffer_paths": []}
    msg = kernel.kc.session.msg("comm_msg", {"comm_id": dropdown, "data": data})
    kernel.kc.shell_channel.send(msg)
    return msg["header"]["msg_id"]


def test_a_rerun_after_its_cell_reads_busy_until_it_ends_and_never_idle_under_a_cell(
    kernel, wire_server
):
    release = threading.Event()
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("quick", "first")), held(release))
    kernel.run(cell(wire_server))
    iopub = IOPub(kernel)

    # The dropdown asks for a re-run: ipykernel says idle once it handled that comm message,
    # but the re-run streams on from there.
    asked = rerun(kernel, "high")
    iopub.until(status("idle", asked))
    iopub.until(lambda m: m["msg_type"] == "comm_msg")  # the view shows the new run
    assert iopub.statuses()[-1] == ("busy", "comm_msg"), iopub.statuses()

    # A cell runs and ends meanwhile: its idle is followed by busy, as the re-run goes on.
    quick = kernel.execute("x = 1")
    iopub.until(status("idle", quick))
    after = len(iopub.seen)
    iopub.until(lambda m: m["msg_type"] == "status")
    assert iopub.statuses(after) == [("busy", "execute_request")]

    # The re-run ends while another cell executes: no idle until that cell's own.
    waiting = kernel.execute(
        "import asyncio\nwhile _think.preset != 'high':\n    await asyncio.sleep(0.02)"
    )
    iopub.until(lambda m: m["msg_type"] == "execute_input")
    start = len(iopub.seen)
    release.set()
    iopub.until(saved("high"))
    iopub.until(status("idle", waiting))
    assert iopub.statuses(start) == [("idle", "execute_request")], iopub.statuses(start)

    # Nothing streams now: the next cell's busy is the next status, no stray one before it.
    last = len(iopub.seen)
    then = kernel.execute("y = 2")
    iopub.until(status("idle", then))
    assert iopub.statuses(last) == [("busy", "execute_request"), ("idle", "execute_request")]


def test_a_rerun_reads_idle_when_it_ends(kernel, wire_server):
    release = threading.Event()
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("quick", "first")), held(release))
    kernel.run(cell(wire_server))
    iopub = IOPub(kernel)
    asked = rerun(kernel, "high")
    iopub.until(status("idle", asked))
    start = len(iopub.seen)
    release.set()
    end = iopub.seen.index(iopub.until(saved("high")))
    iopub.until(status("idle"))
    assert iopub.statuses(start, end) == [("busy", "comm_msg")]  # busy all along...
    assert iopub.statuses(end) == [("idle", "comm_msg")]  # ...and idle once it is over


def test_two_reruns_at_once_read_idle_when_the_last_one_ends(kernel, wire_server):
    first, second = threading.Event(), threading.Event()
    quick = Reply.sse(wf.chat_sse("quick", "first"))
    wire_server.route("POST", CHAT, quick, quick, held(first), held(second))
    kernel.run(cell(wire_server))
    kernel.run(cell(wire_server))
    iopub = IOPub(kernel)
    iopub.until(status("idle", rerun(kernel, "high", which=0)))
    requests(wire_server, 3)  # the first re-run's request is in
    iopub.until(status("idle", rerun(kernel, "medium", which=1)))
    start = len(iopub.seen)
    first.set()
    iopub.until(saved("high"))
    second.set()
    end = iopub.seen.index(iopub.until(saved("medium")))
    iopub.until(status("idle"))
    assert iopub.statuses(start, end) == [("busy", "comm_msg")]  # one ended, one streams
    assert iopub.statuses(end) == [("idle", "comm_msg")]


def test_an_idle_for_a_control_request_mid_stream_is_followed_by_busy(kernel, wire_server):
    # What JupyterLab does during the first %%think after a kernel start: the first widget's
    # comm makes it ask for a subshell, on the control channel, while the cell streams.
    release = threading.Event()
    wire_server.route("POST", CHAT, held(release))
    running = kernel.execute(cell(wire_server))
    iopub = IOPub(kernel)
    requests(wire_server, 1)
    request = kernel.kc.session.msg("create_subshell_request", {})
    kernel.kc.control_channel.send(request)
    iopub.until(status("idle", request["header"]["msg_id"]))
    after = len(iopub.seen)
    iopub.until(lambda m: m["msg_type"] == "status")
    assert iopub.statuses(after) == [("busy", "create_subshell_request")]
    release.set()
    iopub.until(status("idle", running))
    assert iopub.statuses()[-1] == ("idle", "execute_request")
