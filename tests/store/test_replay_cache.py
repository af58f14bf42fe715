"""The replay cache and the trace log, over a real socket (``wire_server``): what is a hit, what
is never stored, pace, the size cap (in bytes; ``inf`` for none), two processes writing at once,
replays from a full or read-only disk, where the file lives, and no key in the file."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import random
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing

import anyio
import pytest
import wire_fixtures as wf
from wire_server import Reply

from reasoning_nb import ConfigError, Done, ProviderError, astream, stats, think
from reasoning_nb.config import defaults
from reasoning_nb.core.trace import Trace
from reasoning_nb.llama_server import build as llama_build
from reasoning_nb.llama_server import choice as llama_choice
from reasoning_nb.store import db as store
from reasoning_nb.store.recording import encode

PATH = "/v1/chat/completions"
MODEL = "llamacpp:m"
FAKE_KEY = "sk-test-Zq8Vt3LmN0pR7wXy"


@pytest.fixture(autouse=True)
def db(tmp_path, monkeypatch):
    """A database of the test's own, and no key or model from the environment."""
    for name in ("LLAMACPP_API_KEY", "REASONING_NB_MODEL", "REASONING_NB_LOG"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "cache.sqlite3"
    monkeypatch.setenv(store.DB_ENV, str(path))
    return path


def serve(server, reasoning="Two and two.", answer="**4**", **kw):
    server.route("POST", PATH, Reply.sse(wf.chat_sse(reasoning, answer, usage=True), **kw))


def posts(server) -> int:
    return len(server.requests_to(PATH, "POST"))


def ask(server, prompt="2+2?", **kw) -> Trace:
    return think(kw.pop("prompt", prompt), **{"model": MODEL, "base_url": server.url, **kw})


def bare(trace: Trace) -> dict:
    saved = trace.to_dict()
    saved.pop("replay", None)
    return saved


def test_identical_request_replays_with_no_request_at_all(wire_server):
    serve(wire_server)
    first = ask(wire_server, cache=True)
    sent = len(wire_server.requests)
    assert first.status == "complete" and first.replay is None and posts(wire_server) == 1
    second = ask(wire_server, cache=True)
    assert len(wire_server.requests) == sent  # not even a capability probe
    assert second.replay == {"recorded_at": first.started_at, "pace": "instant"}
    assert bare(second) == first.to_dict()
    assert second.to_dict()["replay"]["pace"] == "instant"  # saved with the trace


def test_asked_as_before_replays_before_any_io(wire_server, monkeypatch):
    """Ollama probes /api/show (once per process) and /api/ps before it sends: a replay does
    not even probe, as in a restarted kernel (the probe's in-memory cache emptied)."""
    from reasoning_nb.providers import discovery

    wire_server.route("POST", "/api/show", wf.ollama_show())
    wire_server.route("POST", "/api/chat", Reply.ndjson(wf.ollama_chat("hmm", "four")))
    monkeypatch.setattr(discovery, "_show_cache", {})
    first = ask(wire_server, model="ollama:qwen3", preset="high", cache=True)
    assert [r.path for r in wire_server.requests] == ["/api/show", "/api/ps", "/api/chat"]
    monkeypatch.setattr(discovery, "_show_cache", {})
    second = ask(wire_server, model="ollama:qwen3", preset="high", cache=True)
    assert len(wire_server.requests) == 3 and bare(second) == first.to_dict()


def test_without_cache_every_call_asks(wire_server):
    serve(wire_server)
    ask(wire_server, cache=True)
    assert ask(wire_server).replay is None and posts(wire_server) == 2


@pytest.mark.parametrize(
    "change",
    [
        {"preset": "high"},
        {"model": "llamacpp:other"},
        {"system": "Be brief."},
        {"prompt": "3+3?"},
        {"temperature": 0.5},
    ],
)
def test_a_different_request_misses(wire_server, change):
    serve(wire_server)
    ask(wire_server, cache=True)
    again = ask(wire_server, cache=True, **change)
    assert again.replay is None and posts(wire_server) == 2


def test_different_history_misses(wire_server):
    serve(wire_server)

    async def run(history):
        async for event in astream(
            "and then?", model=MODEL, base_url=wire_server.url, cache=True, history=history
        ):
            if isinstance(event, Done):
                return event.trace

    one = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    two = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}]
    assert anyio.run(run, one).replay is None
    assert anyio.run(run, two).replay is None and posts(wire_server) == 2
    assert anyio.run(run, one).replay is not None and posts(wire_server) == 2


def test_the_base_url_path_is_part_of_the_key(wire_server):
    """Two gateways (or per-model URLs) on one host are two servers: B is asked, not A replayed."""
    for name, answer in (("a", "from A"), ("b", "from B")):
        wire_server.route(
            "POST", f"/{name}/v1/chat/completions", Reply.sse(wf.chat_sse("r", answer))
        )
    first = think("2+2?", model=MODEL, base_url=f"{wire_server.url}/a/v1", cache=True)
    second = think("2+2?", model=MODEL, base_url=f"{wire_server.url}/b/v1", cache=True)
    assert (first.answer, second.answer) == ("from A", "from B") and second.replay is None
    assert [r.path for r in wire_server.requests] == [
        "/a/v1/chat/completions",
        "/b/v1/chat/completions",
    ]


def test_one_address_written_two_ways_replays_before_any_io(wire_server, monkeypatch):
    """The ask key holds the base URL as the request is built from it (normalised), so
    ``URL/`` and ``URL`` are one address: not even Ollama's probes go out the second time."""
    from reasoning_nb.providers import discovery

    wire_server.route("POST", "/api/show", wf.ollama_show())
    wire_server.route("POST", "/api/chat", Reply.ndjson(wf.ollama_chat("hmm", "four")))
    monkeypatch.setattr(discovery, "_show_cache", {})
    host = f"127.0.0.1:{wire_server.port}"
    ask(wire_server, model="ollama:qwen3", preset="high", cache=True, base_url=f"http://{host}/")
    sent = len(wire_server.requests)
    monkeypatch.setattr(discovery, "_show_cache", {})
    again = ask(wire_server, model="ollama:qwen3", preset="high", cache=True, base_url=host)
    assert again.replay is not None and len(wire_server.requests) == sent


def test_credentials_in_the_base_url_stay_out_of_the_key():
    """``user:password@`` is dropped (as the API key is: who asks does not change the answer);
    a query, where a ``?key=`` would be, is refused before it could reach a key."""
    from reasoning_nb.store.keys import address_of

    assert address_of("http://me:sk-pass@gw.lan:8000/a/v1") == "http://gw.lan:8000/a/v1"
    assert address_of("http://gw.lan:8000/a/v1") != address_of("http://gw.lan:8000/b/v1")


def test_same_body_asked_another_way_replays_without_sending(wire_server, db):
    """With no ask -> entry map (as when a request is asked another way), the built body finds
    the entry: probes may go out, the POST does not; the map is written again for next time."""
    serve(wire_server)
    first = ask(wire_server, cache=True)
    with sqlite3.connect(db) as conn:
        assert conn.execute("DELETE FROM asks").rowcount == 1
    second = ask(wire_server, cache=True)
    assert second.replay is not None and posts(wire_server) == 1
    assert bare(second) == first.to_dict()
    sent = len(wire_server.requests)
    assert ask(wire_server, cache=True).replay is not None and len(wire_server.requests) == sent


def test_refresh_asks_again_and_replaces_the_entry(wire_server):
    serve(wire_server, answer="old")
    ask(wire_server, cache=True)
    serve(wire_server, answer="new")
    fresh = ask(wire_server, cache=True, refresh=True)
    assert fresh.answer == "new" and fresh.replay is None and posts(wire_server) == 2
    assert ask(wire_server, cache=True).answer == "new" and posts(wire_server) == 2


def test_failed_run_is_not_cached_and_does_not_replace_a_good_entry(wire_server):
    wire_server.route("POST", PATH, Reply.json(wf.openai_error_body("boom"), status=500))
    with pytest.raises(ProviderError):
        ask(wire_server, cache=True)
    serve(wire_server, answer="good")
    assert ask(wire_server, cache=True).replay is None and posts(wire_server) == 2
    wire_server.route("POST", PATH, Reply.json(wf.openai_error_body("boom"), status=500))
    with pytest.raises(ProviderError):
        ask(wire_server, refresh=True)
    assert ask(wire_server, cache=True).answer == "good" and posts(wire_server) == 3


def test_truncated_run_is_not_cached(wire_server):
    wire_server.route(
        "POST", PATH, Reply.sse(wf.chat_sse("r", "cut", finish_reason="length", usage=True))
    )
    assert ask(wire_server, cache=True).status == "truncated"
    assert ask(wire_server, cache=True).replay is None and posts(wire_server) == 2


def test_dropped_stream_is_not_cached(wire_server):
    frames = wf.chat_sse("step one", "The answer is", done=False)
    wire_server.route("POST", PATH, Reply.sse(frames, drop_after=len("".join(frames[:-2]))))
    with pytest.raises(ProviderError):
        ask(wire_server, cache=True)
    with pytest.raises(ProviderError):
        ask(wire_server, cache=True)
    assert posts(wire_server) == 2


def test_cancelled_run_is_not_cached(wire_server):
    serve(wire_server, reasoning="x " * 50, pause=0.01)

    async def stop_early():
        async with anyio.create_task_group() as tg:

            async def consume():
                async for event in astream(
                    "2+2?", model=MODEL, base_url=wire_server.url, cache=True
                ):
                    if event.kind == "reasoning":
                        tg.cancel_scope.cancel()

            tg.start_soon(consume)

    anyio.run(stop_early)
    assert posts(wire_server) == 1
    assert ask(wire_server, cache=True).replay is None and posts(wire_server) == 2


def test_recorded_pace_sleeps_the_recorded_gaps(wire_server):
    ticks = iter(range(0, 10_000, 100))  # a fake clock: each reading is 0.1 s later

    serve(wire_server, reasoning="a b c", answer="d e")

    async def record():
        from reasoning_nb.run import Run

        run = Run("2+2?", model=MODEL, base_url=wire_server.url, cache=True,
                  clock=lambda: next(ticks) / 1000)  # fmt: skip
        return [e async for e in run.events()]

    anyio.run(record)
    slept: list[float] = []

    async def fake_sleep(seconds):
        slept.append(seconds)

    async def replay():
        from reasoning_nb.run import Run

        run = Run("2+2?", model=MODEL, base_url=wire_server.url, cache=True, pace="recorded",
                  sleep=fake_sleep)  # fmt: skip
        return [e async for e in run.events()]

    events = anyio.run(replay)
    timeline = store.lookup(entry=_only_entry())["timeline"]
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(timeline) if b[0] > a[0]]
    first = [timeline[0][0]] if timeline[0][0] > 0 else []
    assert slept == pytest.approx([g / 1000 for g in first + gaps])
    assert len(slept) >= 3 and all(s >= 0.1 for s in slept)
    assert events[-1].trace.replay["pace"] == "recorded"
    assert posts(wire_server) == 1
    slept.clear()
    anyio.run(lambda: _drain(pace="instant", sleep=fake_sleep, url=wire_server.url))
    assert slept == []  # instant: no sleep at all


async def _drain(**kw):
    from reasoning_nb.run import Run

    url = kw.pop("url")
    async for _ in Run("2+2?", model=MODEL, base_url=url, cache=True, **kw).events():
        pass


def _only_entry() -> str:
    with sqlite3.connect(store.path()) as conn:
        [(key,)] = conn.execute("SELECT key FROM entries").fetchall()
    return key


def test_size_cap_evicts_least_recently_used(wire_server):
    serve(wire_server, answer="x" * 2_000)
    for prompt in ("a", "b", "c"):
        ask(wire_server, prompt, cache=True)
    ask(wire_server, "a", cache=True)  # "a" is used again: "b" is now the oldest
    with sqlite3.connect(store.path()) as conn:
        [(size,)] = conn.execute("SELECT MAX(size) FROM entries").fetchall()
    old = defaults.cache_max_mb
    defaults.cache_max_mb = size * 3.5 / 1_000_000  # room for three and a half: one must go
    try:
        ask(wire_server, "d", cache=True)
    finally:
        defaults.cache_max_mb = old
    assert store.info()["entries"] == 3 and posts(wire_server) == 4
    assert ask(wire_server, "a", cache=True).replay is not None
    assert ask(wire_server, "c", cache=True).replay is not None
    assert ask(wire_server, "b", cache=True).replay is None and posts(wire_server) == 5


def _write_many(args):
    path, worker, count = args
    import os

    os.environ[store.DB_ENV] = path
    for i in range(count):
        trace = {"started_at": f"w{worker}-{i}", "answer": "y" * 500, "model": "m"}
        stored = encode({"trace": trace, "timeline": []})
        store.save(f"{worker}-{i}", f"ask-{worker}-{i}", stored, trace["started_at"])
        store.log_run(trace)
    return count


def test_two_processes_writing_at_once_lose_nothing(db):
    count = 150
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_write_many, [(str(db), w, count) for w in (1, 2)]) == [count, count]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone() == (2 * count,)
        assert conn.execute("SELECT COUNT(*) FROM asks").fetchone() == (2 * count,)
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone() == (2 * count,)
    for w in (1, 2):
        for i in (0, count - 1):
            assert store.lookup(ask=f"ask-{w}-{i}")["trace"]["started_at"] == f"w{w}-{i}"


def test_log_holds_every_run_and_never_the_key(wire_server, db, monkeypatch):
    monkeypatch.setenv("REASONING_NB_LOG", "1")
    serve(wire_server)
    ask(wire_server, cache=True, api_key=FAKE_KEY)
    ask(wire_server, cache=True, api_key=FAKE_KEY)  # a replay, logged as one
    wire_server.route("POST", PATH, Reply.json(wf.openai_error_body("boom"), status=500))
    with pytest.raises(ProviderError):
        ask(wire_server, "fails", api_key=FAKE_KEY)
    assert wire_server.requests_to(PATH)[0].headers["authorization"] == f"Bearer {FAKE_KEY}"
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY id")]
    assert [(r["status"], r["replay"]) for r in rows] == [
        ("complete", 0),
        ("complete", 1),
        ("error", 0),
    ]
    assert rows[0]["answer"] == "**4**" and rows[0]["model"] == MODEL
    assert rows[0]["provider"] == "llamacpp" and rows[0]["output_tokens"] is not None
    assert json.loads(rows[1]["trace"])["replay"]["recorded_at"] == rows[0]["started_at"]
    files = [db, *db.parent.glob(db.name + "-*")]  # the WAL too, if it is still there
    assert all(FAKE_KEY.encode() not in f.read_bytes() for f in files)
    assert any(b"**4**" in f.read_bytes() for f in files)  # the grep can find what is there


def test_log_is_off_unless_asked(wire_server, db):
    serve(wire_server)
    ask(wire_server)
    ask(wire_server, log=True)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone() == (1,)


def test_cache_command_info_and_clear(wire_server, db):
    serve(wire_server)
    ask(wire_server, cache=True, log=True)
    cli = [sys.executable, "-m", "reasoning_nb", "cache"]
    info = subprocess.run([*cli, "info"], capture_output=True, text=True, check=True).stdout
    assert str(db) in info and "1 entries" in info and "1 logged runs" in info
    out = subprocess.run([*cli, "clear"], capture_output=True, text=True, check=True).stdout
    assert "1 entries" in out
    assert store.info()["entries"] == 0 and store.info()["logged_runs"] == 1
    subprocess.run([*cli, "clear", "--log"], capture_output=True, check=True)
    assert store.info()["logged_runs"] == 0
    assert ask(wire_server, cache=True).replay is None and posts(wire_server) == 2


def test_a_broken_database_costs_a_warning_not_the_run(wire_server, tmp_path, monkeypatch):
    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "no-dir-here.txt" / "x.sqlite3"))
    (tmp_path / "no-dir-here.txt").write_text("a file where a directory should be")
    serve(wire_server)
    trace = ask(wire_server, cache=True)
    assert trace.status == "complete" and trace.answer == "**4**"
    assert any("could not be used" in w for w in trace.warnings)


def test_size_cap_counts_bytes_as_stored(wire_server, monkeypatch):
    """40,000 CJK characters drawn at random are 120,000 bytes of UTF-8 and, deflated as a
    recording is stored, still over 50,000: a 0.1 MB cap keeps one such run. Counting
    characters would keep two."""
    rng = random.Random(7)
    serve(wire_server, answer="".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(40_000)))
    monkeypatch.setattr(defaults, "cache_max_mb", 0.1)
    for prompt in ("a", "b", "c"):
        assert ask(wire_server, prompt, cache=True).status == "complete"
    with sqlite3.connect(store.path()) as conn:
        count, stored = conn.execute(
            "SELECT COUNT(*), SUM(length(CAST(recording AS BLOB))) FROM entries"
        ).fetchone()
    assert count == 1 and 50_000 < stored <= 100_000
    assert store.info()["entries_mb"] == round(stored / 1_000_000, 2)


def test_sizes_an_older_version_counted_in_characters_are_counted_again(db):
    """An older version stored the recording as JSON text and counted its characters."""
    old = json.dumps({"trace": {"answer": "思" * 1_000}, "timeline": []}, ensure_ascii=False)
    store.info()  # the file, with its tables
    with closing(sqlite3.connect(db)) as conn:  # as a version that counted characters left it
        conn.execute("INSERT INTO entries VALUES ('k', NULL, 1, length(?1), ?1)", (old,))
        conn.execute("PRAGMA user_version = 0")
        conn.commit()
    store._forget()  # (this thread's kept connection: a new kernel opens the file afresh)
    store.info()
    with closing(sqlite3.connect(db)) as conn:
        size, stored = conn.execute(
            "SELECT size, length(CAST(recording AS BLOB)) FROM entries"
        ).fetchone()
    assert size == stored > 3_000
    assert store.lookup(entry="k")["trace"]["answer"] == "思" * 1_000  # and it still replays


@pytest.mark.parametrize(
    "frames",
    [
        # forced-open template: the answer so far is moved into the reasoning (Reclassify)
        wf.chat_sse("First I think. ", "\n\n  Then **answer**.", field=None, tags_open=False),
        # blank lines before the answer, and reasoning again after some answer
        wf.chat_sse("one", "\n\n\n") + wf.chat_sse("two", "\n  three", role_chunk=False),
        # a lone surrogate escaped in a frame (json.loads reads it; orjson cannot write it)
        [f.replace("LONE", "\\ud800") for f in wf.chat_sse("half a pair: LONE.", "LONE!")],
    ],
    ids=["reclassified", "blocks", "lone-surrogate"],
)
def test_a_replay_folds_the_recorded_text_into_the_same_trace(wire_server, db, frames):
    """A recording keeps the text once, in its timeline: the replay's fold gives it back."""
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=4))
    first = ask(wire_server, cache=True)
    second = ask(wire_server, cache=True)
    assert second.replay is not None and bare(second) == first.to_dict()
    with closing(sqlite3.connect(db)) as conn:
        key, stored = conn.execute("SELECT key, recording FROM entries").fetchone()
    assert isinstance(stored, bytes) and "reasoning" not in store.lookup(entry=key)["trace"]


def test_no_cap_is_inf(wire_server, monkeypatch):
    """The natural "no cap" must not fail a run that was already paid for."""
    monkeypatch.setattr(defaults, "cache_max_mb", float("inf"))
    serve(wire_server)
    first = ask(wire_server, cache=True)
    assert first.status == "complete" and first.warnings == []
    assert ask(wire_server, cache=True).replay is not None and posts(wire_server) == 1


@pytest.mark.parametrize("bad", [float("nan"), -1, -0.5, "200", None, True])
def test_a_bad_cap_is_a_config_error_when_set(bad):
    before = defaults.cache_max_mb  # (what an earlier test's cell left there)
    with pytest.raises(ConfigError, match="cache_max_mb"):
        defaults.cache_max_mb = bad
    assert defaults.cache_max_mb == before


def test_one_variable_moves_everything_the_package_writes(wire_server, tmp_path, monkeypatch):
    """REASONING_NB_CACHE_DIR moves the database as it moves the llama-server builds (and the
    record of binaries that died); REASONING_NB_DB still names the database itself."""
    where = tmp_path / "moved"
    monkeypatch.delenv(store.DB_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # the default, were it used
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(where))
    serve(wire_server)
    ask(wire_server, cache=True, log=True)
    assert (where / "reasoning_nb.sqlite3").is_file() and not (tmp_path / "xdg").exists()
    assert store.path() == where / "reasoning_nb.sqlite3" and store.info()["entries"] == 1
    assert [r["source"] for r in stats("log").rows] == ["log #1"]
    for written in (llama_build.NATIVE.binary(), llama_build.PORTABLE.binary()):
        assert written.is_relative_to(where / "llama-server")
    assert llama_choice._store().is_relative_to(where)
    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "named.sqlite3"))
    assert store.path() == tmp_path / "named.sqlite3"


# -- a replay only reads: a full or read-only disk, or another writer, cannot take it away -----


@pytest.mark.parametrize("spoil", ["fill", "read_only"], ids=["full", "read-only"])
def test_a_replay_comes_back_from_a_disk_that_takes_no_write(
    wire_server, small_disk, spoil, monkeypatch
):
    monkeypatch.setenv(store.DB_ENV, str(small_disk.path / "cache" / "cache.sqlite3"))
    serve(wire_server)
    first = ask(wire_server, cache=True)
    store._forget()  # (a kept connection would keep the remount from going read-only)
    getattr(small_disk, spoil)()
    sent = len(wire_server.requests)
    second = ask(wire_server, cache=True)
    assert second.replay is not None and bare(second) == first.to_dict()
    assert len(wire_server.requests) == sent  # the model was not asked again
    assert store.info()["entries"] == 1  # `cache info` reads it too


HOLD_THE_WRITER_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_replay_comes_back_while_another_process_holds_the_writer_lock(wire_server, db):
    """Marking the entry used cannot be written while another kernel holds the lock: the
    replay does not wait for it, nor call the model instead."""
    serve(wire_server)
    first = ask(wire_server, cache=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_WRITER_LOCK, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        writer = closing(sqlite3.connect(db, timeout=0))
        with writer as conn, pytest.raises(sqlite3.OperationalError, match="locked"):
            conn.execute("BEGIN IMMEDIATE")  # writes do fail now
        second = ask(wire_server, cache=True)
    finally:
        holder.stdin.close()
        holder.wait()
    assert second.replay is not None and bare(second) == first.to_dict()
    assert posts(wire_server) == 1


def test_a_replay_comes_back_while_another_thread_of_the_kernel_writes(wire_server, db):
    """The kernel keeps a connection for reads and one for writes: a read goes on while a
    write of another thread (a sweep's log) is open, and marking the entry used waits for it
    no longer than for another process."""
    serve(wire_server)
    first = ask(wire_server, cache=True)
    inside, leave = threading.Event(), threading.Event()

    def write() -> None:
        with store._writing():
            inside.set()
            leave.wait(30)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert inside.wait(10)
        second = ask(wire_server, cache=True)
        assert writer.is_alive()  # (it came back while the write was still open)
    finally:
        leave.set()
        writer.join()
    assert second.replay is not None and bare(second) == first.to_dict()
    assert posts(wire_server) == 1


def test_the_file_deleted_while_the_kernel_runs_starts_over(wire_server, db):
    """"Delete the file to start over" (what a broken database's message says), the kernel
    running: the next run writes a new file, not the deleted one its open connection holds."""
    serve(wire_server)
    ask(wire_server, cache=True)
    for part in db.parent.glob(db.name + "*"):
        part.unlink()
    again = ask(wire_server, cache=True)
    assert again.replay is None and posts(wire_server) == 2  # the old entry went with the file
    assert db.is_file() and store.info()["entries"] == 1
    assert ask(wire_server, cache=True).replay is not None  # and the new one replays
