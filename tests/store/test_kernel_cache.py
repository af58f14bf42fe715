"""The replay cache in real kernels: Run All twice with ``--cache`` (the second pass sends
nothing and shows the same traces), again from a read-only disk, two kernels filling one
database at once, and a failed cell that is not cached."""

from __future__ import annotations

import os
import sqlite3
import time

import nbformat
import pytest
import wire_fixtures as wf
from kernel_session import KernelSession
from nbclient import NotebookClient
from wire_server import Reply

CHAT = "/v1/chat/completions"
pytestmark = pytest.mark.kernel


@pytest.fixture
def db(tmp_path, monkeypatch):
    """The kernels inherit this process's environment: a database of the test's own."""
    path = tmp_path / "cache.sqlite3"
    monkeypatch.setenv("REASONING_NB_DB", str(path))
    monkeypatch.setenv("REASONING_NB_LOG", "1")
    monkeypatch.delenv("REASONING_NB_MODEL", raising=False)
    return path


def run_all(nb: nbformat.NotebookNode, allow_errors: bool = False) -> float:
    """Restart & Run All: a fresh kernel runs every cell; returns the seconds it took."""
    started = time.perf_counter()
    NotebookClient(
        nb, timeout=60, kernel_name="python3", record_timing=False, allow_errors=allow_errors
    ).execute()
    return time.perf_counter() - started


def saved_traces(nb: nbformat.NotebookNode) -> list[dict]:
    return [
        o.metadata["reasoning_nb"]
        for cell in nb.cells
        for o in cell.get("outputs", [])
        if "reasoning_nb" in o.get("metadata", {})
    ]


def test_run_all_twice_replays_with_zero_requests(wire_server, db):
    wire_server.route(
        "POST",
        CHAT,
        Reply.sse(wf.chat_sse("Think " * 40, "First.", usage=True), pause=0.002),
        Reply.sse(wf.chat_sse("Ponder " * 40, "Second.", usage=True), pause=0.002),
    )
    wire_server.route("POST", "/api/show", wf.ollama_show())  # Ollama probes before it sends
    wire_server.route("POST", "/api/chat", Reply.ndjson(wf.ollama_chat("Muse " * 40, "Third.")))
    flags = f"--model llamacpp:m --base-url {wire_server.url} --cache"
    cells = [
        "%load_ext reasoning_nb",
        f"%%think {flags} --preset low\nWhy is the sky blue?",
        f"%%think {flags} --preset high\nWhy is the sea blue?",
        f"%%think --model ollama:qwen3 --base-url {wire_server.url} --cache --preset high\n"
        "Why are eyes blue?",
    ]

    def notebook():
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
        return nb

    first_nb, second_nb = notebook(), notebook()
    first_s = run_all(first_nb)
    sent = len(wire_server.requests)
    assert len(wire_server.requests_to(CHAT)) == 2 and sent == 5  # +/api/show, /api/ps, /api/chat
    second_s = run_all(second_nb)
    print(
        f"\nRun All with --cache, 3 cells: first pass {first_s:.2f} s ({sent} requests), "
        f"second pass {second_s:.2f} s ({len(wire_server.requests) - sent} requests)"
    )
    assert len(wire_server.requests) == sent  # the second pass asked the server nothing
    first, second = saved_traces(first_nb), saved_traces(second_nb)
    assert [t["answer"] for t in first] == ["First.", "Second.", "Third."]
    assert all("replay" not in t for t in first)
    for recorded, replayed in zip(first, second, strict=True):
        mark = replayed.pop("replay")
        assert mark == {"recorded_at": recorded["started_at"], "pace": "instant"}
        assert replayed == recorded
    with sqlite3.connect(db) as conn:  # the log: three runs, then their three replays
        rows = conn.execute("SELECT answer, replay FROM runs ORDER BY id").fetchall()
    answers = ["First.", "Second.", "Third."]
    assert rows == [(a, 0) for a in answers] + [(a, 1) for a in answers]


def test_run_all_replays_from_a_read_only_cache_dir_with_no_cap(
    wire_server, small_disk, monkeypatch
):
    """REASONING_NB_CACHE_DIR alone places the database, c.ThinkMagics.cache_max_mb = inf keeps
    every run, and once that disk is read-only, Run All still replays, asking nothing."""
    monkeypatch.delenv("REASONING_NB_DB", raising=False)
    monkeypatch.delenv("REASONING_NB_LOG", raising=False)
    monkeypatch.delenv("REASONING_NB_MODEL", raising=False)
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(small_disk.path / "reasoning_nb"))
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("Think " * 40, "Blue.", usage=True)))
    cells = [
        "%load_ext reasoning_nb",
        "%config ThinkMagics.cache_max_mb = float('inf')",
        f"%%think --model llamacpp:m --base-url {wire_server.url} --cache\nWhy is the sky blue?",
    ]
    first, second = (nbformat.v4.new_notebook() for _ in range(2))
    for nb in (first, second):
        nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    run_all(first)
    assert (small_disk.path / "reasoning_nb" / "reasoning_nb.sqlite3").is_file()
    small_disk.read_only()
    run_all(second)
    assert len(wire_server.requests_to(CHAT)) == 1  # the second pass asked the server nothing
    [recorded], [replayed] = saved_traces(first), saved_traces(second)
    assert replayed.pop("replay")["recorded_at"] == recorded["started_at"]
    assert replayed == recorded and recorded["answer"] == "Blue."


def test_failed_cell_is_not_cached(wire_server, db):
    wire_server.route(
        "POST",
        CHAT,
        Reply.json(wf.openai_error_body("boom"), status=500),
        Reply.sse(wf.chat_sse("Fine now.", "Done.", usage=True)),
    )
    source = f"%%think --model llamacpp:m --base-url {wire_server.url} --cache\nQ"
    for expected_posts in (1, 2, 2):  # fails; asks again and is stored; replays
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(s) for s in ("%load_ext reasoning_nb", source)]
        run_all(nb, allow_errors=True)
        assert len(wire_server.requests_to(CHAT)) == expected_posts
    [trace] = saved_traces(nb)
    assert trace["answer"] == "Done." and "replay" in trace


WRITER = """
from reasoning_nb import think
for i in range({count}):
    t = think(f"{name} question {{i}}", model="llamacpp:m", base_url="{url}", cache=True)
    assert t.status == "complete", t.error
print("done", {count})
"""


def test_two_kernels_fill_one_cache_at_once(wire_server, db):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("r", "a", usage=True)))
    count = 25
    kernels = [KernelSession(env=dict(os.environ)) for _ in range(2)]
    try:
        ids = [
            k.execute(WRITER.format(count=count, name=name, url=wire_server.url))
            for k, name in zip(kernels, ("left", "right"), strict=True)
        ]  # both run at once
        for kernel, msg_id in zip(kernels, ids, strict=True):
            out = kernel.collect(msg_id, timeout=120)
            text = "".join(m["content"].get("text", "") for m in out if m["msg_type"] == "stream")
            errors = [m["content"] for m in out if m["msg_type"] == "error"]
            assert not errors and f"done {count}" in text
    finally:
        for kernel in kernels:
            kernel.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone() == (2 * count,)
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone() == (2 * count,)
    assert len(wire_server.requests_to(CHAT)) == 2 * count
