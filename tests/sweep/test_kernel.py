"""The blocking ``reasoning_nb.sweep`` in a real IPython kernel (its own event loop runs): the
frame comes back, and an interrupt stops the sweep and keeps what finished."""

from __future__ import annotations

import time

import pytest
from kernel_session import KernelSession
from wire_server import Reply

pytestmark = pytest.mark.kernel
CHAT = "/v1/chat/completions"


def printed(messages: list[dict], name: str = "stdout") -> str:
    out = [
        m["content"]["text"]
        for m in messages
        if m["msg_type"] == "stream" and m["content"]["name"] == name
    ]
    errors = [m["content"]["evalue"] for m in messages if m["msg_type"] == "error"]
    assert not errors, errors
    return "".join(out)


@pytest.fixture
def kernel_session():
    session = KernelSession()  # it inherits this process's environment: the test's database
    yield session
    session.close()


def test_sweep_in_a_kernel_gives_the_frame(wire_server, answers, kernel_session):
    messages = kernel_session.run(
        "import reasoning_nb\n"
        f"frame = reasoning_nb.sweep(['Q1', 'Q2'], models='llamacpp:m', presets='low,high',"
        f" base_url={wire_server.url!r})\n"
        "print(type(frame).__name__, list(frame['answer']), list(frame['preset']))"
    )
    out = printed(messages)
    assert out.strip() == "DataFrame ['A1', 'A1', 'A2', 'A2'] ['low', 'high', 'low', 'high']"
    # stderr is no terminal here: the bar prints a line per tenth done, the last one whole
    bar = printed(messages, "stderr").splitlines()
    assert bar[-1].startswith("[########################] 4/4 done"), bar
    assert "\r" not in "".join(bar)


def test_an_interrupt_stops_the_sweep_and_keeps_what_finished(wire_server, kernel_session):
    def reply(rec):
        prompt = rec.json["messages"][-1]["content"]
        from wire_fixtures import llamacpp_sse

        delay = 0 if prompt == "Q1" else 30  # the second run hangs until the interrupt
        return Reply.sse(llamacpp_sse("Hmm.", prompt.replace("Q", "A")), delay_before_headers=delay)

    wire_server.route("POST", CHAT, reply)
    msg_id = kernel_session.execute(
        "import reasoning_nb\n"
        "try:\n"
        f"    reasoning_nb.sweep(['Q1', 'Q2', 'Q3'], models='llamacpp:m', presets='low',"
        f" base_url={wire_server.url!r}, concurrency=1)\n"
        "except KeyboardInterrupt as stop:\n"
        "    print(stop.sweep.progress.stopped, [r.answer for r in stop.sweep.rows])\n"
    )
    deadline = time.monotonic() + 60
    while len(wire_server.requests_to(CHAT)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    kernel_session.km.interrupt_kernel()
    out = printed(kernel_session.collect(msg_id, timeout=60))
    assert out.strip() == "cancelled ['A1']"
    assert wire_server.requests_to(CHAT)[1].wait(10) == "client_closed"  # the run was closed
