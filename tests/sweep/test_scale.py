"""Scale and safety over real sockets: runs at once per server, the back-off every run to a
server shares, retries that never ask a completed run again, resume from the replay cache, the
spend cap. Time is a fake clock that concurrent sleepers share (``SharedClock``)."""

from __future__ import annotations

import anyio
import httpx
import pytest
import wire_fixtures as wf
from wire_server import Reply

from reasoning_nb.providers import transport
from reasoning_nb.store import db as store
from reasoning_nb.sweep.engine import ATTEMPTS, asweep

pytestmark = pytest.mark.anyio
KEY = "sk-test-0123456789"


def questions(n: int) -> list[str]:
    return [f"Q{i}" for i in range(n)]


def on(server, clock) -> dict:
    """One model on the test server, waiting on the shared fake clock."""
    return {"models": "llamacpp:m", "presets": "low", "base_url": server.url} | {
        "clock": clock.now,
        "sleep": clock.sleep,
    }


async def test_runs_at_once_stay_within_the_limit_per_server(wire_server, answers):
    answers.hold(2)  # each request waits for a second one: the limit is reached, not passed
    result = await asweep(
        questions(8), models="llamacpp:m", presets="low", base_url=wire_server.url, concurrency=2
    )
    assert answers.most == 2
    assert [r.answer for r in result.rows] == [f"A{i}" for i in range(8)]


async def test_each_provider_and_server_has_its_own_limit(wire_server, answers):
    answers.hold(4)  # 2 + 2 at once: a single limit of 2 for both would never reach 4
    result = await asweep(
        questions(4),
        models=["llamacpp:a", "vllm:b"],
        presets="low",
        base_url=wire_server.url,
        concurrency={"llamacpp": 2, "vllm": 2},
    )
    assert answers.most == 4
    assert {r.status for r in result.rows} == {"complete"} and len(result.rows) == 8


async def test_a_429_holds_every_run_to_that_server_once(wire_server, answers, shared_clock):
    answers.refuse(429, retry_after=7)
    result = await asweep(questions(6), concurrency=2, **on(wire_server, shared_clock))
    refused, _ = answers.asked[0]
    later = [when for _, when in answers.asked[2:]]  # the two first went at once
    assert later and min(later) >= 1007  # no request went during the wait the server asked
    assert shared_clock.t == 1007  # the runs waited it together, not one after another
    assert answers.prompts().count(refused) == 2
    assert [r.answer for r in result.rows] == [f"A{i}" for i in range(6)]


async def test_a_long_retry_after_is_waited_by_the_sweep(wire_server, answers, shared_clock):
    answers.refuse(429, retry_after=120)  # past what one run sleeps through (30 s)
    result = await asweep(questions(3), concurrency=1, **on(wire_server, shared_clock))
    assert shared_clock.t == 1120
    assert answers.prompts() == ["Q0", "Q0", "Q1", "Q2"]
    assert [r.status for r in result.rows] == ["complete"] * 3
    assert result.progress.failed == 0 and result.progress.running == 0


async def test_a_server_that_keeps_refusing_gives_a_row_with_its_word(
    wire_server, answers, shared_clock
):
    answers.refuse(503, times=100)
    result = await asweep(["Q0"], **on(wire_server, shared_clock))
    (row,) = result.rows
    assert row.status == "error" and "slow down" in row.error
    assert len(answers.asked) == ATTEMPTS * 4  # each attempt: one request and 3 transport retries
    assert result.progress.failed == 1


async def test_a_run_that_failed_after_its_answer_began_is_not_asked_again(wire_server):
    frames = wf.llamacpp_sse("Let me think about this at some length.", "A0")
    cut = len("".join(frames).encode()) * 2 // 3  # into the answer: reasoning has arrived
    wire_server.route("POST", "/v1/chat/completions", Reply.sse(frames, drop_after=cut))
    result = await asweep(["Q0"], models="llamacpp:m", presets="low", base_url=wire_server.url)
    (row,) = result.rows
    assert row.status == "error" and row.reasoning  # what arrived is kept
    assert len(wire_server.requests_to("/v1/chat/completions")) == 1


async def test_a_sweep_run_again_asks_nothing_and_logs_both(wire_server, answers):
    kw = {"models": "llamacpp:m", "presets": ["low", "high"], "base_url": wire_server.url}
    first = await asweep(questions(3), **kw)
    asked = len(answers.asked)
    again = await asweep(questions(3), **kw)
    assert len(answers.asked) == asked == 6
    assert all(r.cached for r in again.rows) and not any(r.cached for r in first.rows)
    assert again.progress.cached == 6 and again.progress.usd == 0
    assert [r.answer for r in again.rows] == [r.answer for r in first.rows]
    assert len(store.sweep_runs(first.sweep_id)) == len(store.sweep_runs(again.sweep_id)) == 6


async def test_an_interrupted_sweep_resumes_where_it_stopped(wire_server, answers):
    kw = {"models": "llamacpp:m", "presets": "low", "base_url": wire_server.url}
    seen = []
    with anyio.CancelScope() as scope:

        def note(progress):
            seen.append(progress)
            if progress.done == 3:
                scope.cancel()

        await asweep(questions(6), concurrency=1, sweep_id="first", on_progress=note, **kw)
    assert seen[-1].stopped == "cancelled" and seen[-1].done == 3
    assert [t["answer"] for t in store.sweep_runs("first")] == ["A0", "A1", "A2"]
    asked = answers.prompts()
    resumed = await asweep(questions(6), **kw)
    assert [r.answer for r in resumed.rows] == [f"A{i}" for i in range(6)]
    assert [r.cached for r in resumed.rows] == [True] * 3 + [False] * 3
    new = answers.prompts()[len(asked) :]
    assert sorted(new) == ["Q3", "Q4", "Q5"]  # what completed was not asked again


def priced(reasoning: str, answer: str) -> list[str]:
    usage = wf.default_usage(completion_tokens=900, prompt_tokens=300, reasoning_tokens=700)
    return wf.chat_sse([], answer, usage=usage, usage_chunk=True)


async def test_max_usd_stops_before_the_next_request_would_pass_it(wire_server, answers):
    answers.frames = priced
    kw = {"models": "openai-chat:o3", "presets": "high", "base_url": wire_server.url}
    kw |= {"api_key": KEY, "cache": False}
    (probe,) = (await asweep(["Q9"], **kw)).rows
    cost = probe.cost_usd
    assert cost and cost > 0
    asked = len(answers.asked)
    seen = []
    result = await asweep(
        questions(6), max_usd=2.5 * cost, concurrency=4, on_progress=seen.append, **kw
    )
    assert len(answers.asked) - asked == 2  # a third would take the spend to 3 x cost
    assert result.progress.stopped == "max_usd"
    assert result.progress.usd == pytest.approx(2 * cost) and result.progress.usd <= 2.5 * cost
    assert max(p.running for p in seen) == 1  # before its price is known, one run at a time
    assert len(result.rows) == 2 and result.progress.total == 6


async def test_a_model_without_a_price_is_said_to_escape_the_cap(wire_server):
    frames = wf.responses_sse("Hmm.", "A", reasoning_tokens=4)
    wire_server.route("POST", "/v1/responses", Reply.sse(frames))
    model = "openai:no-such-model-xyz"
    result = await asweep(
        ["Q0", "Q1"], models=model, presets="low", base_url=wire_server.url, api_key=KEY,
        max_usd=0.01,
    )  # fmt: skip
    assert [r.cost_usd for r in result.rows] == [None, None]
    assert result.warnings == [f"max_usd cannot hold for {model}: its price is not published, "
                               "so its runs count as $0; set a smaller sweep, or watch the "
                               "provider's own usage page."]  # fmt: skip


async def test_a_sweeps_runs_share_one_http_client(wire_server, answers, monkeypatch):
    made = []

    class Counted(httpx.AsyncClient):
        def __init__(self, **kw):
            made.append(self)
            super().__init__(**kw)

    monkeypatch.setattr(transport.httpx, "AsyncClient", Counted)
    result = await asweep(
        questions(6), models="llamacpp:m", presets="low", base_url=wire_server.url
    )
    assert len(result.rows) == 6 and len(made) == 1  # not one client (and pool) per run
    assert made[0].is_closed  # closed with the sweep


async def test_a_cap_of_nothing_asks_a_billed_model_nothing_and_a_local_one_all(
    wire_server, answers
):
    billed = {"models": "openai-chat:o3", "presets": "high", "base_url": wire_server.url}
    result = await asweep(["Q1"], max_usd=0, api_key=KEY, **billed)
    assert answers.asked == [] and result.rows == [] and result.progress.stopped == "max_usd"
    local = {"models": "llamacpp:m", "presets": "low", "base_url": wire_server.url}
    answers.hold(2)  # not one at a time: a local model's price (none) is known
    result = await asweep(questions(4), max_usd=0, concurrency=2, **local)
    assert len(result.rows) == 4 and result.progress.stopped is None and answers.most == 2
