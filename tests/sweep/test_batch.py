"""Batch sweeps over real sockets, against local servers that speak OpenAI's Batch API and
Anthropic's Message Batches (``batch_services``): the requests a preset makes, polling on a
fake clock, results into rows, resume after a restart, and the key kept out of everything."""

from __future__ import annotations

import json
import sqlite3

import pytest
import wire_fixtures as wf
from batch_services import MessageBatches, OpenAIBatches, message_body, multipart, responses_body
from wire_server import Reply

from reasoning_nb.core.cost import estimate
from reasoning_nb.errors import ConfigError, ProviderError
from reasoning_nb.options import RunOptions
from reasoning_nb.providers import catalog
from reasoning_nb.run import Run
from reasoning_nb.store import batches as records
from reasoning_nb.store import db as store
from reasoning_nb.sweep.batch import POLL_S, aresume, run_batch
from reasoning_nb.sweep.progress import Tally
from reasoning_nb.sweep.prompts import Prompt

pytestmark = pytest.mark.anyio

KEY = "sk-batch-SECRET-0042"
GPT, CLAUDE = "openai:gpt-5", "anthropic:claude-sonnet-4-5"
PROMPTS = [Prompt("Q1", expected="A1"), Prompt("Q2", expected="A9", extra={"topic": "x"})]
TOKENS = {"low": 40, "high": 400}


def openai_answer(body):
    prompt, effort = body["input"][-1]["content"], body["reasoning"]["effort"]
    return responses_body(
        prompt.replace("Q", "A"), f"{effort} thoughts on {prompt}", TOKENS[effort]
    )


def claude_answer(params):
    prompt = params["messages"][-1]["content"]
    budget = params["thinking"].get("budget_tokens", 0)
    return message_body(prompt.replace("Q", "A"), f"thinking in {budget}", 100 + budget // 100)


def options(model, presets=("low", "high"), **more):
    return {(model, p): RunOptions(model=model, preset=p, **more) for p in presets}


@pytest.fixture
def openai_env(monkeypatch, no_provider_env, wire_server):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{wire_server.url}/v1")


@pytest.fixture
def anthropic_env(monkeypatch, no_provider_env):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


async def sweep_openai(fake_clock, seen, presets=("low", "high")):
    tally = Tally(len(PROMPTS) * len(presets), fake_clock.now, seen.append)
    return await run_batch(
        PROMPTS,
        models=[GPT],
        presets=list(presets),
        options=options(GPT, presets),
        sweep_id="sweep-1",
        tally=tally,
        sleep=fake_clock.sleep,
    )


async def test_openai_batch_goes_up_as_jsonl_is_polled_and_comes_back_as_rows(
    wire_server, openai_env, fake_clock
):
    service = OpenAIBatches(wire_server, openai_answer)
    seen = []
    rows = await sweep_openai(fake_clock, seen)

    assert service.purpose == "batch"
    assert [line["custom_id"] for line in service.lines] == ["r0", "r1", "r2", "r3"]
    assert {(line["method"], line["url"]) for line in service.lines} == {("POST", "/v1/responses")}
    bodies = [line["body"] for line in service.lines]
    assert [b["reasoning"]["effort"] for b in bodies] == ["low", "high", "low", "high"]
    assert {b["stream"] for b in bodies} == {False}
    created = wire_server.bodies("/v1/batches", "POST")[0]
    assert created == {
        "input_file_id": "file-in",
        "endpoint": "/v1/responses",
        "completion_window": "24h",
        "metadata": {"sweep_id": "sweep-1"},
    }
    # validating, in_progress, finalizing, completed: a poll each, POLL_S apart on the fake clock
    assert service.polls == 4 and fake_clock.slept == [POLL_S] * 3
    states = [p.batch_state for p in seen if p.batch_state]
    assert list(dict.fromkeys(states)) == [
        "validating",
        "in_progress: 1 of 4 done",
        "finalizing",
        "completed",
    ]
    assert max(p.running for p in seen) == 4 and seen[-1].done == 4 and seen[-1].running == 0

    assert [(r.prompt_id, r.preset, r.answer) for r in rows] == [
        (0, "low", "A1"),
        (0, "high", "A1"),
        (1, "low", "A2"),
        (1, "high", "A2"),
    ]
    assert [r.reasoning_tokens for r in rows] == [40, 400, 40, 400]
    assert rows[1].reasoning == "high thoughts on Q1"
    assert rows[0].sent == {
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }
    assert [r.grade for r in rows] == [1.0, 1.0, 0.0, 0.0]
    assert rows[2].extra == {"topic": "x"} and {r.sweep_id for r in rows} == {"sweep-1"}
    assert {r.status for r in rows} == {"complete"}
    assert {(r.first_token_ms, r.total_ms) for r in rows} == {(None, None)}  # no batch timing
    assert seen[-1].reasoning_tokens == 880


async def test_a_batch_request_is_the_live_request_not_streamed(
    wire_server, openai_env, fake_clock
):
    """The preset means the same: the live run's body and the batch line's differ in stream."""
    service = OpenAIBatches(wire_server, openai_answer)
    wire_server.route("POST", "/v1/responses", Reply.sse(wf.responses_sse("r", "A1")))
    await sweep_openai(fake_clock, [])
    live = Run("Q1", RunOptions(model=GPT, preset="high"))
    async for _ in live.events():
        pass
    sent = wire_server.bodies("/v1/responses", "POST")[0]
    line = next(ln for ln in service.lines if ln["custom_id"] == "r1")
    assert sent["stream"] is True and line["body"]["stream"] is False
    assert {**sent, "stream": False} == line["body"]


async def test_batch_cost_is_half_the_live_estimate(wire_server, openai_env, fake_clock):
    OpenAIBatches(wire_server, openai_answer)
    rows = await sweep_openai(fake_clock, [], presets=("high",))
    row = rows[0]
    live = Run("Q1", RunOptions(model=GPT)).trace
    live.model, live.usage = GPT, {"input_tokens": 20, "output_tokens": 405}
    full = estimate(live, catalog.PROVIDERS["openai"].cost)
    assert full is not None and row.cost_usd == pytest.approx(full["usd"] / 2)


async def test_refused_and_expired_requests_are_rows_with_their_reason(
    wire_server, openai_env, fake_clock
):
    def answer(body):
        prompt, effort = body["input"][-1]["content"], body["reasoning"]["effort"]
        if prompt == "Q2" and effort == "low":
            return 400, wf.openai_error_body("Invalid value for 'reasoning.effort'.")
        if prompt == "Q2":
            return "batch_expired"
        return openai_answer(body)

    OpenAIBatches(wire_server, answer)
    seen = []
    rows = await sweep_openai(fake_clock, seen)
    assert [r.status for r in rows] == ["complete", "complete", "error", "error"]
    assert "HTTP 400" in rows[2].error and "reasoning.effort" in rows[2].error
    assert "expired" in rows[3].error and rows[3].grade is None
    assert seen[-1].failed == 2


async def test_a_refused_batch_file_fails_every_row_with_the_services_words(
    wire_server, openai_env, fake_clock
):
    errors = [{"code": "invalid_json", "line": 2, "message": "The line is not valid JSON."}]
    OpenAIBatches(wire_server, openai_answer, states=("validating", "failed"), errors=errors)
    rows = await sweep_openai(fake_clock, [])
    assert {r.status for r in rows} == {"error"}
    assert "The line is not valid JSON. (line 2)" in rows[0].error


async def test_anthropic_message_batch(wire_server, anthropic_env, fake_clock):
    def answer(params):
        if params["messages"][-1]["content"] == "Q2" and "budget_tokens" in params["thinking"]:
            big = params["thinking"]["budget_tokens"] > 5000
            if big:
                return {
                    "type": "errored",
                    "error": wf.anthropic_error_body("Overloaded", type="overloaded_error"),
                }
            return {"type": "canceled"}
        return claude_answer(params)

    service = MessageBatches(wire_server, answer, results_url="https://elsewhere.example/results")
    seen = []
    tally = Tally(4, fake_clock.now, seen.append)
    rows = await run_batch(
        PROMPTS,
        models=[CLAUDE],
        presets=["low", "high"],
        options=options(CLAUDE, base_url=wire_server.url),
        sweep_id="sweep-a",
        tally=tally,
        sleep=fake_clock.sleep,
    )
    params = [r["params"] for r in service.requests]
    assert [r["custom_id"] for r in service.requests] == ["r0", "r1", "r2", "r3"]
    assert {p["stream"] for p in params} == {False}
    assert params[0]["thinking"]["type"] == "enabled" and "max_tokens" in params[0]
    assert fake_clock.slept == [POLL_S] * 2
    assert [p.batch_state for p in seen if p.batch_state][-1] == "ended"
    assert [r.status for r in rows] == ["complete", "complete", "cancelled", "error"]
    assert rows[0].answer == "A1" and rows[0].reasoning.startswith("thinking in")
    assert rows[0].sent["thinking"] == params[0]["thinking"]
    assert "overloaded_error" in rows[3].error and "cancelled" in rows[2].error
    # the results URL named another host: the key went only to the base URL's documented path
    fetched = wire_server.requests_to(f"/v1/messages/batches/{MessageBatches.BATCH}/results")
    assert len(fetched) == 1
    assert {r.headers.get("x-api-key") for r in wire_server.requests} == {KEY}
    assert {r.headers.get("anthropic-version") for r in wire_server.requests} == {"2023-06-01"}


async def test_resume_collects_a_batch_after_a_restart_by_batch_or_sweep_id(
    wire_server, openai_env, fake_clock, monkeypatch
):
    service = OpenAIBatches(wire_server, openai_answer, states=("in_progress",))
    low = options(GPT, ("low",), cache=True, pace="instant")

    class Restart(Exception):
        pass

    async def killed(seconds):  # the kernel goes while the batch runs
        raise Restart

    async def sweep(sleep):
        return await run_batch(
            PROMPTS,
            models=[GPT],
            presets=["low"],
            options=low,
            sweep_id="sweep-r",
            tally=Tally(2, fake_clock.now),
            sleep=sleep,
        )

    with pytest.raises(Restart):
        await sweep(killed)
    (record,) = records.find("sweep-r")
    assert record.id == OpenAIBatches.BATCH and record.collected_at is None
    assert record.state == "in_progress" and record.jobs["r1"]["prompt"] == "Q2"

    service.states = ["completed"]  # it ran on while no kernel was there
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # a new kernel reads the key again
    seen = []
    result = await aresume("sweep-r", on_progress=seen.append, sleep=fake_clock.sleep)
    assert result.sweep_id == "sweep-r"
    assert [(r.prompt_id, r.preset, r.answer, r.grade) for r in result.rows] == [
        (0, "low", "A1", 1.0),
        (1, "low", "A2", 0.0),
    ]
    assert result.progress.done == 2 and seen[-1].batch_state == "completed"
    assert len(store.sweep_runs("sweep-r")) == 2  # logged when first collected
    again = await aresume(OpenAIBatches.BATCH, sleep=fake_clock.sleep)
    assert [r.answer for r in again.rows] == ["A1", "A2"]
    assert len(store.sweep_runs("sweep-r")) == 2  # and not twice
    assert records.find("sweep-r")[0].collected_at is not None
    # what resume collected is in the replay cache: the sweep run again sends nothing
    rows = await sweep(fake_clock.sleep)
    assert all(r.cached for r in rows) and len(wire_server.requests_to("/v1/files")) == 1


async def test_resume_of_an_unknown_id_says_what_to_check():
    with pytest.raises(ConfigError, match="No batch or batch sweep 'nope'"):
        await aresume("nope")


async def test_models_without_a_batch_service_are_refused_before_any_request():
    with pytest.raises(ConfigError, match="'ollama:qwen3' goes to neither"):
        await run_batch(
            PROMPTS,
            models=["ollama:qwen3"],
            presets=["low"],
            options=options("ollama:qwen3", ("low",)),
            sweep_id="s",
            tally=Tally(2, lambda: 0),
        )


async def test_the_key_is_in_no_row_record_log_or_error(
    wire_server, openai_env, fake_clock, monkeypatch
):
    monkeypatch.setenv("REASONING_NB_LOG", "1")
    OpenAIBatches(wire_server, openai_answer)
    rows = await sweep_openai(fake_clock, [])
    assert {r.headers.get("authorization") for r in wire_server.requests} == {f"Bearer {KEY}"}
    assert KEY not in repr([r.to_dict() for r in rows])
    with sqlite3.connect(store.path()) as conn:
        dumped = "\n".join(conn.iterdump())
    assert "batch_abc123" in dumped and "sweep-1" in dumped and KEY not in dumped
    assert len(store.sweep_runs("sweep-1")) == 4  # logged, with the sweep id

    wire_server.reset()  # the service now refuses the key and quotes it back
    wire_server.route(
        "POST", "/v1/files", Reply.json({"error": {"message": f"Incorrect API key {KEY}"}}, 401)
    )
    with pytest.raises(ProviderError) as refused:
        await sweep_openai(fake_clock, [])
    assert KEY not in str(refused.value) and "[redacted]" in str(refused.value)
    assert refused.value.status == 401


async def test_results_lines_are_read_one_at_a_time_whatever_their_order(
    wire_server, openai_env, fake_clock
):
    """The fake writes its results reversed; rows still come in prompt, model, preset order."""
    service = OpenAIBatches(wire_server, openai_answer)
    rows = await sweep_openai(fake_clock, [])
    out = wire_server.requests_to("/v1/files/file-out/content")[0]
    assert out.wait() == "complete"
    assert [r.answer for r in rows] == ["A1", "A1", "A2", "A2"] and len(service.lines) == 4


def test_upload_is_a_multipart_jsonl_file(wire_server):
    """(the fake's own parsing, checked against a form httpx writes)"""
    import httpx

    wire_server.route("POST", "/f", {"ok": True})
    httpx.post(
        f"{wire_server.url}/f",
        data={"purpose": "batch"},
        files={"file": ("a.jsonl", b'{"x": 1}\n', "application/jsonl")},
        trust_env=False,
    )
    form = multipart(wire_server.last)
    assert form["purpose"] == (None, b"batch") and form["file"] == ("a.jsonl", b'{"x": 1}\n')
    assert json.loads(form["file"][1]) == {"x": 1}


async def test_collected_results_replay_in_a_batch_or_live_sweep_never_billed_twice(
    wire_server, openai_env, fake_clock
):
    from reasoning_nb.sweep.engine import asweep

    service = OpenAIBatches(wire_server, openai_answer)
    cached = options(GPT, cache=True, pace="instant")

    async def again(seen):
        return await run_batch(
            PROMPTS,
            models=[GPT],
            presets=["low", "high"],
            options=cached,
            sweep_id="sweep-2",
            tally=Tally(4, fake_clock.now, seen.append),
            sleep=fake_clock.sleep,
        )

    first = await again([])
    assert len(wire_server.requests_to("/v1/files")) == 1 and not any(r.cached for r in first)
    seen = []
    second = await again(seen)
    assert len(wire_server.requests_to("/v1/files")) == 1 and service.polls == 4  # nothing sent
    assert all(r.cached for r in second) and seen[-1].cached == 4 and seen[-1].usd == 0
    assert [r.answer for r in second] == [r.answer for r in first]
    assert [r.reasoning_tokens for r in second] == [40, 400, 40, 400]
    # a live sweep of the same runs sends the very request the batch sent: it replays too
    live = await asweep(["Q1", "Q2"], models=[GPT], presets=["low", "high"])
    assert wire_server.requests_to("/v1/responses") == []
    assert all(r.cached for r in live.rows)
    assert [r.answer for r in live.rows] == [r.answer for r in first]
    assert [r.cost_usd for r in live.rows] == [r.cost_usd for r in first]  # the batch price


async def test_polling_waits_out_a_429_and_a_failed_poll_says_how_to_resume(
    wire_server, openai_env, fake_clock
):
    service = OpenAIBatches(wire_server, openai_answer)
    status = f"/v1/batches/{OpenAIBatches.BATCH}"
    busy = Reply.json({"error": {"message": "Too many requests"}}, 429, retry_after=7)
    wire_server.route("GET", status, busy, service._status)
    rows = await sweep_openai(fake_clock, [])
    assert fake_clock.slept[0] == 7 and [r.answer for r in rows] == ["A1", "A1", "A2", "A2"]

    wire_server.route("GET", status, Reply.json({"error": {"message": "The server broke"}}, 500))
    with pytest.raises(ProviderError) as failed:
        await sweep_openai(fake_clock, [])
    message = str(failed.value)
    assert message.startswith("The server broke")
    assert message.endswith("reasoning_nb.sweep.resume('sweep-1') collects them.")


async def test_a_results_url_on_the_apis_own_address_is_followed(
    wire_server, anthropic_env, fake_clock
):
    service = MessageBatches(wire_server, claude_answer, results_url=wire_server.url_for("/dl/1"))
    wire_server.route("GET", "/dl/1", service._results)
    rows = await run_batch(
        PROMPTS,
        models=[CLAUDE],
        presets=["high"],
        options=options(CLAUDE, ("high",), base_url=wire_server.url),
        sweep_id="sweep-u",
        tally=Tally(2, fake_clock.now),
        sleep=fake_clock.sleep,
    )
    assert len(wire_server.requests_to("/dl/1")) == 1
    assert wire_server.requests_to("/dl/1")[0].headers["x-api-key"] == KEY
    assert [r.answer for r in rows] == ["A1", "A2"]


async def test_a_batch_is_never_created_twice_by_a_retry(wire_server, openai_env, fake_clock):
    """A 502 may come from a gateway after the service created the batch: no second POST."""
    OpenAIBatches(wire_server, openai_answer)
    wire_server.route("POST", "/v1/batches", Reply.nginx_error(502))
    with pytest.raises(ProviderError, match="may have been created all the same") as failed:
        await sweep_openai(fake_clock, [])
    assert len(wire_server.requests_to("/v1/batches", "POST")) == 1 and failed.value.status == 502
    busy = Reply.json({"error": {"message": "Rate limit"}}, 429, retry_after=3)
    wire_server.route("POST", "/v1/batches", busy, {"id": OpenAIBatches.BATCH})
    rows = await sweep_openai(fake_clock, [])  # a refusal is asked again, after its wait
    assert len(wire_server.requests_to("/v1/batches", "POST")) == 3
    assert 3 in fake_clock.slept and [r.answer for r in rows] == ["A1", "A1", "A2", "A2"]


async def test_asweep_with_batch_goes_through_the_service_and_refuses_a_spend_cap(
    wire_server, openai_env, fake_clock
):
    """The public face: ``asweep(..., batch=True)`` sends the sweep as one batch (no streamed
    request), and a spend cap, which cannot stop a batch partway, is refused before any I/O."""
    from reasoning_nb.sweep.engine import asweep

    service = OpenAIBatches(wire_server, openai_answer)
    done = await asweep(
        ["Q1", "Q2"], models=[GPT], presets="low,high", batch=True, sleep=fake_clock.sleep
    )
    assert [(r.prompt_id, r.preset, r.answer) for r in done.rows] == [
        (0, "low", "A1"),
        (0, "high", "A1"),
        (1, "low", "A2"),
        (1, "high", "A2"),
    ]
    assert len(service.lines) == 4 and not wire_server.bodies("/v1/responses", "POST")
    assert done.progress.done == 4 and done.progress.batch_state == "completed"
    with pytest.raises(ConfigError, match="max_usd cannot stop a batch"):
        await asweep(["Q1"], models=[GPT], presets="low", batch=True, max_usd=1.0)
    assert len(wire_server.bodies("/v1/batches", "POST")) == 1
