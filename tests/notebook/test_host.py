"""Each private part of IPython, ipykernel and ipywidgets that ``notebook.host`` reaches, tested
by itself on the versions installed (a real kernel where only one can show it), and Linux's
parent-death signal of the demo server."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import ipywidgets as W
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from reasoning_nb.notebook import host


def test_await_cell_magic_rewrites_the_call_ipython_writes_for_a_cell_magic():
    [line] = TransformerManager().transform_cell("%%think -p high\nWhy?\n").splitlines(True)
    [out] = host.await_cell_magic([line], "think", "entry")
    assert out == "await entry('-p high', 'Why?\\n')\n"
    other = TransformerManager().transform_cell("%%timeit\nx\n").splitlines(True)
    assert host.await_cell_magic(other, "think", "entry") == other
    assert host.await_cell_magic(["x = 1\n"], "think", "entry") == ["x = 1\n"]


def test_sent_keys_are_what_an_update_carries():
    dropdown = W.Dropdown(options=["low", "high"], value="low")
    with dropdown.hold_sync():
        dropdown.value = "high"
        keys = host.sent_keys(dropdown, {"value": "high"})
    assert "index" in keys and "value" not in keys  # (a Dropdown's value travels as its index)
    dropdown.close()


def test_widget_only_is_the_widget_view_and_no_text():
    box = W.VBox()
    bundle = host.widget_only(box)
    assert bundle == {host.WIDGET_VIEW: box._repr_mimebundle_()[host.WIDGET_VIEW], "text/plain": ""}
    assert bundle[host.WIDGET_VIEW]["model_id"] == box.model_id
    box.close()


@pytest.fixture(scope="module")
def plain_kernel(request):
    """A real kernel without the extension: its hooks are the test's."""
    from kernel_session import KernelSession

    session = KernelSession()
    request.addfinalizer(session.close)
    session.run("from reasoning_nb.notebook import host; shell = get_ipython(); seen = []")
    return session


@pytest.mark.kernel
def test_follow_status_sees_each_status_with_its_request_and_can_add_one(plain_kernel):
    msg_id = plain_kernel.execute(
        "once = [1]\n"
        "def follow(status, header, again):\n"
        "    seen.append((status, header.get('msg_type')))\n"
        "    if status == 'idle' and once:\n"
        "        once.pop()\n"
        "        again('busy')\n"
        "publish = host.follow_status(shell, follow)\n"
        "second = host.follow_status(shell, follow)"
    )
    statuses = [m for m in plain_kernel.collect(msg_id, 30) if m["msg_type"] == "status"]
    assert statuses[-1]["content"]["execution_state"] == "idle"
    [again] = plain_kernel.collect(msg_id, 30, until=lambda m: m["msg_type"] == "status")
    assert again["content"]["execution_state"] == "busy"  # (about the same request)
    assert plain_kernel.value("(callable(publish), second)") == "(True, None)"
    assert plain_kernel.value("seen[:2]") == (
        "[('idle', 'execute_request'), ('busy', 'execute_request')]"
    )  # (the first cell's idle, then this one's busy)


@pytest.mark.kernel
def test_on_idle_sigint_runs_the_handler_on_an_interrupt_of_an_idle_kernel(plain_kernel):
    plain_kernel.run("stops = []; hooked = host.on_idle_sigint(shell, lambda: stops.append(1))")
    plain_kernel.km.interrupt_kernel()
    time.sleep(0.5)  # (a signal that lands during the next request is that request's)
    assert plain_kernel.value("(hooked, len(stops))") == "(True, 1)"


@pytest.mark.kernel
def test_the_executing_cell_is_the_request_the_kernel_handles(plain_kernel):
    plain_kernel.run(
        "from IPython.core.magic import register_cell_magic\n"
        "register_cell_magic('think')("
        "lambda line, cell: print(host.executing_cell_id(), host.executing_cell_line()))"
    )
    msgs = plain_kernel.run("%%think -p high\nWhy?", cell_id="cell-7")
    printed = "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream")
    assert printed == "cell-7 %%think -p high\n"
    assert plain_kernel.value("host.executing_cell_id()") == "''"  # (jupyter_client sends none)


def test_a_demo_server_dies_with_the_thread_that_started_it():
    """The demo server is started with ``prctl(PR_SET_PDEATHSIG)`` (Linux 6.18, glibc 2.36):
    it ends when the thread that started it ends, even if the kernel is killed."""
    if not sys.platform.startswith("linux"):
        pytest.skip("a Linux signal")
    from reasoning_nb.providers import local

    started: list[subprocess.Popen] = []
    starter = threading.Thread(
        target=lambda: started.append(
            subprocess.Popen(["sleep", "600"], preexec_fn=local._die_with_parent)
        )
    )
    starter.start()
    starter.join()
    assert started[0].wait(timeout=30) == -15  # SIGTERM, not the end of the 600 s
