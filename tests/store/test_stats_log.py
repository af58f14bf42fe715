"""``stats()`` over the trace log: a real SQLite file with the writer's schema, read by path,
as ``"log"`` through ``$REASONING_NB_DB``, ``$REASONING_NB_CACHE_DIR`` or the cache directory,
filtered by ``since=``, with replays listed but not plotted, and clear errors for a missing or
foreign file."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone

import platformdirs
import pytest

from reasoning_nb import Trace, stats
from reasoning_nb.views.stats_table import plotted

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT,
  provider TEXT, model TEXT, preset TEXT, status TEXT,
  prompt TEXT, reasoning TEXT, answer TEXT,
  input_tokens INTEGER, output_tokens INTEGER, reasoning_tokens INTEGER,
  first_token_ms REAL, reasoning_ms REAL, total_ms REAL,
  replay INTEGER NOT NULL DEFAULT 0,
  trace TEXT NOT NULL
)
"""


def run(preset="high", status="complete", started_at="2025-06-02T10:00:00Z", **kw):
    return Trace(
        model="ollama:qwen3",
        provider="ollama",
        preset=preset,
        prompt=kw.pop("prompt", f"Why is the sky blue? ({preset})"),
        reasoning="r" * 400,
        answer="a" * 40,
        usage={"input_tokens": 10, "output_tokens": 300, "reasoning_tokens": 200},
        timing={"first_token_ms": 500.0, "reasoning_ms": 2000.0, "total_ms": 4000.0},
        status=status,
        started_at=started_at,
        **kw,
    )


def write_log(path, traces, replay=(), schema=SCHEMA):
    """The log as the writer makes it: the trace's fields in columns, and the trace as JSON."""
    with sqlite3.connect(path) as db:
        db.execute(schema)
        for i, t in enumerate(traces):
            d = t.to_dict()
            db.execute(
                "INSERT INTO runs (started_at, provider, model, preset, status, prompt, reasoning,"
                " answer, input_tokens, output_tokens, reasoning_tokens, first_token_ms,"
                " reasoning_ms, total_ms, replay, trace) VALUES"
                " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *(d[k] for k in ("started_at", "provider", "model", "preset", "status")),
                    *(d[k] for k in ("prompt", "reasoning", "answer")),
                    *d["usage"].values(),
                    *d["timing"].values(),
                    int(i in replay),
                    json.dumps(d),
                ),
            )
    db.close()
    return path


def test_log_rows_are_notebook_rows(tmp_path):
    traces = [run("low"), run("high", started_at="2025-06-01T09:00:00Z"), run("off")]
    s = stats(write_log(tmp_path / "runs.sqlite3", traces))
    # in the order they were logged, labelled by the log's id
    assert [r["source"] for r in s.rows] == ["log #1", "log #2", "log #3"]
    direct = stats(traces).rows
    assert [{**r, "source": ""} for r in s.rows] == [{**r, "source": ""} for r in direct]
    assert not s.notes
    for suffix in (".sqlite", ".db", ".SQLITE3"):
        path = write_log(tmp_path / f"other{suffix}", traces[:1])
        assert [r["preset"] for r in stats(str(path)).rows] == ["low"]


def test_log_reads_through_the_env_and_the_cache_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("REASONING_NB_CACHE_DIR", raising=False)
    monkeypatch.setenv("REASONING_NB_DB", str(write_log(tmp_path / "env.sqlite3", [run("low")])))
    assert [r["preset"] for r in stats("log").rows] == ["low"]
    monkeypatch.delenv("REASONING_NB_DB")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "reasoning_nb").mkdir()
    write_log(cache / "reasoning_nb" / "reasoning_nb.sqlite3", [run("max")])
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda app: str(cache / app))
    assert [r["preset"] for r in stats("log").rows] == ["max"]
    moved = tmp_path / "moved"  # REASONING_NB_CACHE_DIR moves the log with everything else
    moved.mkdir()
    write_log(moved / "reasoning_nb.sqlite3", [run("medium")])
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(moved))
    assert [r["preset"] for r in stats("log").rows] == ["medium"]


def test_a_missing_log_says_how_to_turn_logging_on(tmp_path, monkeypatch):
    monkeypatch.setenv("REASONING_NB_DB", str(tmp_path / "none.sqlite3"))
    with pytest.raises(FileNotFoundError) as caught:
        stats("log")
    message = str(caught.value)
    assert str(tmp_path / "none.sqlite3") in message
    assert "c.ThinkMagics.log = True" in message and "REASONING_NB_LOG=1" in message
    assert not (tmp_path / "none.sqlite3").exists()  # reading never creates the log


def test_a_file_that_is_not_a_log(tmp_path):
    (tmp_path / "text.db").write_text("not sqlite at all, " * 100)
    with pytest.raises(ValueError, match="is not a reasoning_nb trace log"):
        stats(tmp_path / "text.db")
    with sqlite3.connect(tmp_path / "other.db") as db:
        db.execute("CREATE TABLE notes (id INTEGER)")
    db.close()
    with pytest.raises(ValueError, match="no such table: runs"):
        stats(tmp_path / "other.db")


def test_columns_are_read_by_name(tmp_path):
    """A later writer may add columns or order them otherwise."""
    later = SCHEMA.replace("id INTEGER PRIMARY KEY,", "id INTEGER PRIMARY KEY, notebook TEXT,")
    later = later.replace(
        "  replay INTEGER NOT NULL DEFAULT 0,\n  trace TEXT NOT NULL",
        ("  trace TEXT NOT NULL,\n  replay INTEGER NOT NULL DEFAULT 0"),
    )
    assert later != SCHEMA
    s = stats(write_log(tmp_path / "later.sqlite3", [run("low")], replay={0}, schema=later))
    assert [(r["preset"], r["replay"]) for r in s.rows] == [("low", True)]


def test_since_keeps_recent_runs(tmp_path):
    days = [f"2025-06-{d:02d}T12:00:00Z" for d in (1, 8, 15)]
    path = write_log(tmp_path / "weeks.sqlite3", [run(started_at=d) for d in days])
    assert len(stats(path, since="2025-06-08").rows) == 2  # a date: from its midnight UTC
    assert len(stats(path, since="2025-06-08T12:00:01Z").rows) == 1
    assert len(stats(path, since="2025-06-08T13:00:00+02:00").rows) == 2  # 11:00 UTC
    assert len(stats(path, since=datetime(2025, 6, 15, 12, tzinfo=timezone.utc)).rows) == 1
    week_ago = datetime(2025, 6, 15, tzinfo=timezone.utc) - timedelta(weeks=1)
    assert [r["source"] for r in stats(path, since=week_ago.date()).rows] == ["log #2", "log #3"]
    with pytest.raises(ValueError, match="not an ISO date"):
        stats(path, since="last week")
    with pytest.raises(TypeError, match="trace log only"):
        stats([run()], since="2025-06-01")


def test_unreadable_entries_are_noted_not_fatal(tmp_path):
    path = write_log(tmp_path / "odd.sqlite3", [run("low"), run("high"), run("max")])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE runs SET trace = '{not json' WHERE id = 1")
        db.execute("UPDATE runs SET started_at = 'yesterday' WHERE id = 2")
    db.close()
    s = stats(path)
    assert [r["source"] for r in s.rows] == ["log #2", "log #3"]
    assert s.notes == ["log #1: its trace is not JSON; skipped"]
    s = stats(path, since="2025-01-01")
    assert [r["source"] for r in s.rows] == ["log #3"]
    assert "log #2: its start time cannot be read; left out (since= given)" in s.notes


def test_replays_are_listed_not_plotted(tmp_path):
    replayed = run("low", replay={"recorded_at": "2025-06-01T09:00:00Z", "pace": "instant"})
    traces = [run("low"), run("high"), replayed, run("high")]
    s = stats(write_log(tmp_path / "r.sqlite3", traces, replay={3}))
    assert [r["replay"] for r in s.rows] == [False, False, True, True]
    assert [plotted(r) for r in s.rows] == [True, True, False, False]
    assert not s.notes  # the trace's own replay note is not an unknown field
    [head, *shown] = s.table()
    assert [line[head.index("status")] for line in shown][2:] == ["complete, replay"] * 2
    bars = [line for line in s.chart()[1:] if "█" in line]
    assert [("low" in b, "high" in b) for b in bars] == [(True, False), (False, True)]
    assert "replayed runs are listed, not charted" in str(s)
