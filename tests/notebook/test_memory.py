"""What a run holds in memory, and its bound: a long run holds a few times its text, replay cache
included (not ~15 bytes of objects per token, nor ~10x its text with ``cache=True``), and
``max_chars`` ends a runaway stream, ``truncated``, keeping what arrived.

The long stream comes from a wire server in a child process, so that the server's own frames
are not in this process's allocations; ``tracemalloc`` measures the run's peak as a ratio of its
text (``benchmarks/memory.py`` gives the RSS of a 25 MB run).
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest
import wire_fixtures as wf
from wire_server import Reply, WireServer, in_child_process

from reasoning_nb import Trace, think
from reasoning_nb.providers import discovery
from reasoning_nb.store import db as store

MODEL = "ollama:m"
LONG, SHORT, TOKEN = 500_000, 50_000, 8
"""The two streams: this many characters of reasoning, a frame per token of ``TOKEN``
characters (small tokens are where a per-token object costs most)."""
LIMIT = 3.0
"""The issue's budget: a run within about three times its text, cache included."""


def tokens(chars: int, size: int) -> list[str]:
    """Distinct tokens of ``size`` characters (distinct, so the loop watch stays quiet)."""
    return [f" w{i:0{size - 2}d}" for i in range(chars // size)]


def _serve(ready, stop) -> None:
    with WireServer() as long, WireServer() as short:
        for server, chars in ((long, LONG), (short, SHORT)):
            frames = wf.ollama_chat(tokens(chars, TOKEN), ["The answer."], model="m")
            server.route("POST", "/api/chat", Reply.ndjson(frames))
        ready.put((long.url, short.url))
        stop.wait()


@pytest.fixture(scope="module")
def streams():
    """The base URLs of two servers (in a child process): the long stream and the short one."""
    with in_child_process(_serve) as urls:
        yield urls


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))
    monkeypatch.delenv("REASONING_NB_LOG", raising=False)
    monkeypatch.setattr(discovery, "_show_cache", {})


def peak(url: str, cache: bool) -> tuple[int, int, Trace]:
    """``(peak bytes, characters of text, trace)`` of one run, its text read (joined) inside."""
    gc.collect()
    tracemalloc.start()
    try:
        trace = think("go", model=MODEL, base_url=url, cache=cache)
        chars = len(trace.reasoning) + len(trace.answer)
        return tracemalloc.get_traced_memory()[1], chars, trace
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_a_long_run_holds_about_its_text(streams, cache):
    """What a run holds per character of its text: the peak of the long run less the short
    one's, over the text between them (the fixed costs of a run, buffers and the compressor's
    state, cancel out)."""
    long_url, short_url = streams
    peak(short_url, cache)  # warm-up: imports and first-use caches are not the run's memory
    short, short_chars, _ = peak(short_url, cache)
    long, long_chars, trace = peak(long_url, cache)
    assert trace.status == "complete" and len(trace.reasoning) == LONG // TOKEN * TOKEN
    ratio = (long - short) / (long_chars - short_chars)
    assert ratio < LIMIT, f"{ratio:.2f} bytes held per character of text"
    if cache:  # and the recording replays as the same run
        again = think("go", model=MODEL, base_url=long_url, cache=True)
        assert again.replay is not None
        assert (again.reasoning, again.answer) == (trace.reasoning, trace.answer)


def test_max_chars_ends_a_runaway_stream_keeping_what_arrived(wire_server):
    """The server would go on for 10 minutes: the run ends at the limit, and says so."""
    sent = tokens(40_000, 10)
    frames = wf.ollama_chat(sent, ["never"])
    wire_server.route("POST", "/api/chat", Reply.ndjson(frames, stall_after=3000, stall=600))
    trace = think("go", model=MODEL, base_url=wire_server.url, max_chars=5_000)
    assert trace.status == "truncated" and trace.answer == ""
    assert 5_000 < len(trace.reasoning) <= 5_010 and "".join(sent).startswith(trace.reasoning)
    assert any("max_chars=5,000" in w for w in trace.warnings)


def test_max_chars_none_sets_no_limit(wire_server):
    wire_server.route("POST", "/api/chat", Reply.ndjson(wf.ollama_chat(tokens(2_000, 10), ["a"])))
    trace = think("go", model=MODEL, base_url=wire_server.url, max_chars=None)
    assert trace.status == "complete" and len(trace.reasoning) == 2_000
