"""The sweep engine over real sockets: rows, order, grades, the run log with the sweep id."""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing

import pytest
import wire_fixtures as wf
from wire_server import Reply

import reasoning_nb
from reasoning_nb.errors import ConfigError
from reasoning_nb.store import db as store
from reasoning_nb.sweep.engine import asweep
from reasoning_nb.sweep.progress import Tally
from reasoning_nb.sweep.result import Rows
from reasoning_nb.sweep.rows import COLUMNS

pytestmark = pytest.mark.anyio


async def test_every_prompt_model_and_preset_is_one_row_in_order(wire_server, answers):
    seen = []
    result = await asweep(
        ["Q1", "Q2", "Q3"],
        models=["llamacpp:a", "llamacpp:b"],
        presets=["low", "high"],
        base_url=wire_server.url,
        on_progress=seen.append,
    )
    rows = result.rows
    assert [(r.prompt_id, r.model, r.preset) for r in rows] == [
        (p, f"llamacpp:{m}", preset) for p in range(3) for m in "ab" for preset in ("low", "high")
    ]
    assert [r.answer for r in rows] == [f"A{p}" for p in (1, 2, 3) for _ in range(4)]
    assert {r.status for r in rows} == {"complete"} and {r.sweep_id for r in rows} == {
        result.sweep_id
    }
    assert all(r.reasoning == "Let me think." for r in rows)
    assert len(answers.asked) == 12
    final = result.progress
    assert (final.total, final.done, final.running, final.failed) == (12, 12, 0, 0)
    assert final.stopped is None and final.eta_s == 0.0
    assert seen[-1] == final and len(seen) == 24  # a start and an end per run
    assert max(p.running for p in seen) >= 1

    frame = result.frame()
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 12
    assert frame.attrs["sweep_id"] == result.sweep_id

    logged = store.sweep_runs(result.sweep_id)
    assert sorted(t["answer"] for t in logged) == sorted(r.answer for r in rows)


async def test_runs_one_after_another_share_one_connection(wire_server, answers):
    """A finished stream is read to its end, so its connection goes back to the pool: six runs
    at concurrency 1 take one connection (no new connection, nor TLS handshake, per run)."""
    result = await asweep(
        ["Q1", "Q2", "Q3"],
        models="llamacpp:m",
        presets=["low", "high"],
        concurrency=1,
        base_url=wire_server.url,
    )
    assert [r.status for r in result.rows] == ["complete"] * 6
    assert len(answers.asked) == 6 and wire_server.connections == 1


async def test_a_repeated_prompt_is_a_sample_of_its_own_and_resumes_as_one(wire_server):
    """The same prompt twice in a set is asked twice (two samples, two answers), not replayed
    from the first; a sweep run again replays each sample its own answer."""
    asked = []

    def numbered(rec) -> Reply:  # each request gets an answer of its own
        asked.append(rec.json["messages"][-1]["content"])
        return Reply.sse(wf.llamacpp_sse("Thinking.", f"answer {len(asked)}"))

    wire_server.route("POST", "/v1/chat/completions", numbered)
    kw = {"models": "llamacpp:m", "presets": "low", "concurrency": 1, "base_url": wire_server.url}
    first = await asweep(["Q", "R", "Q", "Q"], **kw)
    assert [r.answer for r in first.rows] == ["answer 1", "answer 2", "answer 3", "answer 4"]
    again = await asweep(["Q", "R", "Q", "Q"], **kw)
    assert len(asked) == 4  # nothing asked twice
    assert [r.answer for r in again.rows] == [r.answer for r in first.rows]
    assert {r.cached for r in again.rows} == {True}
    more = await asweep(["Q"] * 4, **kw)  # a fourth sample of Q: asked
    assert len(asked) == 5 and more.rows[-1].answer == "answer 5"
    assert [r.answer for r in more.rows[:3]] == ["answer 1", "answer 3", "answer 4"]


async def test_expected_answers_are_graded_and_a_grader_sees_the_row(wire_server, answers):
    table = [{"prompt": "Q1", "expected": "a1", "weight": 2}, {"prompt": "Q2", "expected": "A3"}]
    kw = {"models": "llamacpp:m", "presets": "low", "base_url": wire_server.url}
    by_default = await asweep(table, **kw)
    assert [r.grade for r in by_default.rows] == [1.0, 0.0]
    assert by_default.rows[0].extra == {"weight": 2}
    named = [{"prompt": "Q1", "gold": "A1"}]
    assert [r.grade for r in (await asweep(named, grader="gold", **kw)).rows] == [1.0]

    def weighted(answer, row):
        return len(answer) * row.extra.get("weight", 1)

    assert [r.grade for r in (await asweep(table, grader=weighted, **kw)).rows] == [4.0, 2.0]


async def test_reasoning_can_stay_in_the_log_only(wire_server, answers):
    result = await asweep(
        ["Q1"],
        models="llamacpp:m",
        presets="low",
        base_url=wire_server.url,
        reasoning_in_frame=False,
    )
    assert result.rows[0].reasoning is None and result.rows[0].answer == "A1"
    (logged,) = store.sweep_runs(result.sweep_id)
    assert logged["reasoning"] == "Let me think."


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"presets": "loud"}, "preset"),
        ({"presets": []}, "presets must be a list"),
        ({"models": ["nosuch:x"]}, "nosuch"),
        ({"max_usd": -1}, "max_usd must be"),
        ({"concurrency": 0}, "concurrency must be"),
        ({"grader": 3}, "grader must be"),
        ({"reasoning_in_frame": False, "log": False}, "leave log on"),
        ({"temprature": 0.5}, "unexpected keyword arguments: temprature"),
        ({"models": None, "model": "llamacpp:m"}, r"needs models=\[...\]"),
        ({"preset": "low"}, r"needs presets=\[...\]"),
    ],
)
async def test_a_bad_sweep_is_refused_before_any_request(wire_server, answers, options, says):
    kw = {"models": "llamacpp:m", "presets": "low", "base_url": wire_server.url} | options
    with pytest.raises((ConfigError, TypeError), match=says):
        await asweep(["Q1"], **kw)
    assert answers.asked == []


def test_the_blocking_call_gives_a_frame_or_rows_that_say_how(
    wire_server, answers, monkeypatch, capsys
):
    kw = {"models": "llamacpp:m", "presets": "low,high", "base_url": wire_server.url}
    table = reasoning_nb.sweep(["Q1"], **kw)  # the package is the function
    assert list(table["answer"]) == ["A1", "A1"] and list(table["preset"]) == ["low", "high"]
    assert "2/2 done" in capsys.readouterr().err  # a bar on stderr, unless told otherwise
    reasoning_nb.sweep(["Q1"], on_progress=None, **kw)
    assert capsys.readouterr().err == ""
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    rows = reasoning_nb.sweep(["Q1"], **kw)
    assert isinstance(rows, Rows) and [r.answer for r in rows] == ["A1", "A1"]
    assert "pip install 'reasoning_nb[sweep]'" in repr(rows)
    with pytest.raises(ImportError, match=r"reasoning_nb\[sweep\]"):
        rows.frame()


OLD_RUNS = """CREATE TABLE runs (
  id INTEGER PRIMARY KEY, started_at TEXT, provider TEXT, model TEXT, preset TEXT, status TEXT,
  prompt TEXT, reasoning TEXT, answer TEXT,
  input_tokens INTEGER, output_tokens INTEGER, reasoning_tokens INTEGER,
  first_token_ms REAL, reasoning_ms REAL, total_ms REAL,
  replay INTEGER NOT NULL DEFAULT 0, trace TEXT NOT NULL
);"""


def test_a_log_from_before_sweeps_gets_its_sweep_id_column(tmp_path, monkeypatch):
    old = tmp_path / "old.sqlite3"
    with closing(sqlite3.connect(old)) as conn:
        conn.executescript(OLD_RUNS + "PRAGMA user_version = 1;")
        assert "sweep_id" not in {c[1] for c in conn.execute("PRAGMA table_info(runs)")}
    monkeypatch.setenv(store.DB_ENV, str(old))
    store.log_runs([{"prompt": "p", "answer": "a", "status": "complete"}], "s-1")
    store.log_run({"prompt": "q", "answer": "b", "status": "complete"})
    assert [t["answer"] for t in store.sweep_runs("s-1")] == ["a"]
    assert store.info()["logged_runs"] == 2


def test_progress_counts_and_eta_on_a_fake_clock():
    now = [100.0]
    seen = []
    tally = Tally(4, lambda: now[0], seen.append)
    tally.started()
    tally.finished(failed=False, cached=True, usage={}, usd=None)
    assert tally.progress.eta_s is None  # only a replay so far: no pace yet
    tally.started()
    now[0] += 10
    usage = {"input_tokens": 3, "output_tokens": 5, "reasoning_tokens": 2}
    tally.finished(failed=False, cached=False, usage=usage, usd=0.5)
    p = seen[-1]
    assert (p.done, p.running, p.elapsed_s, p.eta_s) == (2, 0, 10.0, 20.0)
    assert (p.input_tokens, p.output_tokens, p.reasoning_tokens, p.usd) == (3, 5, 2, 0.5)
    tally.started()
    tally.finished(failed=True, cached=True, usage=usage, usd=0.5)  # a replay spends nothing
    assert (seen[-1].failed, seen[-1].cached, seen[-1].usd) == (1, 2, 0.5)
    assert seen[-1].eta_s == 10.0  # 1 left at 10 s a run asked: replays set no pace
    tally.stop("max_usd")
    tally.stop("cancelled")  # the first reason stays
    assert seen[-1].stopped == "max_usd" and seen[-1].finished


async def test_a_missing_key_stops_the_sweep_with_its_sentence(wire_server, answers, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await asweep(["Q1", "Q2"], models="openai:gpt-5.1", presets="low")
    assert answers.asked == []


async def test_a_progress_callback_that_raises_costs_a_warning_not_the_sweep(wire_server, answers):
    calls = []

    def broken(progress):
        calls.append(progress)
        raise ValueError("no screen")

    kw = {"models": "llamacpp:m", "presets": "low", "base_url": wire_server.url}
    result = await asweep(["Q1", "Q2"], on_progress=broken, **kw)
    assert [r.answer for r in result.rows] == ["A1", "A2"] and len(calls) == 1
    assert result.warnings == [
        "on_progress raised ValueError: no screen; the sweep went on without it: fix the "
        "callback to see the progress of the next sweep."
    ]
