"""A batch sweep survives a kernel restart: one real kernel sends it and dies while it waits;
a new kernel collects it with ``reasoning_nb.sweep.resume(sweep_id)`` from the id in the log."""

from __future__ import annotations

import json
import os
import time

import pytest
from batch_services import OpenAIBatches, responses_body
from kernel_session import KernelSession

pytestmark = pytest.mark.kernel

KEY = "sk-kernel-SECRET-77"
SEND = """
import time
from reasoning_nb.api import call_blocking
from reasoning_nb.options import RunOptions
from reasoning_nb.sweep.batch import run_batch
from reasoning_nb.sweep.progress import Tally
from reasoning_nb.sweep.prompts import Prompt

options = {("openai:gpt-5", "low"): RunOptions(model="openai:gpt-5", preset="low", cache=True)}
call_blocking(lambda: run_batch(
    [Prompt("Q1", expected="A1"), Prompt("Q2", expected="A2")], models=["openai:gpt-5"],
    presets=["low"], options=options, sweep_id="sweep-k", tally=Tally(2, time.monotonic),
    poll_s=0.05,
))
"""
COLLECT = """
import reasoning_nb
frame = reasoning_nb.sweep.resume("sweep-k", poll_s=0.05)
print(frame[["prompt_id", "preset", "answer", "grade", "status"]].to_json(orient="records"))
"""


def answer(body):
    prompt = body["input"][-1]["content"]
    return responses_body(prompt.replace("Q", "A"), f"thoughts on {prompt}", 30)


def printed(msgs):
    return "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream")


def test_a_new_kernel_collects_the_batch_the_old_one_sent(wire_server, tmp_path):
    service = OpenAIBatches(wire_server, answer, states=("in_progress",))
    env = {
        **os.environ,
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": f"{wire_server.url}/v1",
        "REASONING_NB_DB": str(tmp_path / "cache.sqlite3"),
    }
    first = KernelSession(env=env)
    try:
        first.execute(SEND)  # it submits, then polls a batch that stays in progress
        deadline = time.monotonic() + 60
        while service.polls < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert service.polls >= 2, "the first kernel never polled its batch"
    finally:
        first.close()  # the kernel dies mid-wait

    service.states = ["completed"]  # the batch ran on at the provider
    second = KernelSession(env=env)
    try:
        out = printed(second.run(COLLECT, timeout=120))
    finally:
        second.close()
    rows = json.loads(out.strip().splitlines()[-1])
    assert rows == [
        {"prompt_id": 0, "preset": "low", "answer": "A1", "grade": 1.0, "status": "complete"},
        {"prompt_id": 1, "preset": "low", "answer": "A2", "grade": 1.0, "status": "complete"},
    ]
    assert len(wire_server.requests_to("/v1/files", "POST")) == 1  # sent once, by the first
    assert KEY not in out
