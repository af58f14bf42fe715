"""What one long run holds in memory, as a multiple of its text, with and without ``cache=True``.

    .venv/bin/python benchmarks/memory.py [--mb 25] [--token 16] [--max-chars N]

A wire server in a child process streams ``--mb`` MB of reasoning as Ollama NDJSON, one token of
``--token`` characters per frame, then a short answer. Each figure comes from a fresh process
that warms up (imports, a first small run), then runs ``think()`` on the long stream once:

- RSS: the peak resident size during the run (``VmHWM``, reset after the warm-up) less the size
  before it, as ``ps`` would show a user;
- tracemalloc: the peak of Python's own allocations during a second such run (tracemalloc slows
  the run down, so it is measured apart; SQLite's own buffers are not Python allocations).

Both are divided by the run's text (reasoning + answer, in UTF-8 bytes). The goal (issue 22):
about 3x or less, cache included. The runs set no ``max_chars`` unless ``--max-chars`` gives
one (the stream is then cut there, ``truncated``). No figure is asserted;
``tests/test_memory.py`` holds a smaller run to a tracemalloc ratio.

Measured for issue 22 (25 MB, tokens of 16 characters), RSS / tracemalloc over the text:
before, 7.04 / 6.11 without the cache and 13.60 / 7.54 with it; after, 1.26 / 1.03 and
1.90 / 1.33.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # wire_server, wire_fixtures
if importlib.util.find_spec("reasoning_nb") is None:  # run from a checkout, not installed
    sys.path.insert(0, str(ROOT))

from wire_server import in_child_process  # noqa: E402

MODEL = "ollama:bench"


def reasoning_tokens(mb: float, token: int) -> list[str]:
    """Distinct tokens of ``token`` characters (distinct, so the loop watch stays quiet)."""
    count = int(mb * 1_000_000) // token
    return [f" w{i:0{token - 2}d}" for i in range(count)]


def serve(mb: float, token: int, ready, stop) -> None:
    """Child process: one server with the long stream, one with a short one for warm-ups."""
    import wire_fixtures as wf
    from wire_server import Reply, WireServer

    long_frames = wf.ollama_chat(reasoning_tokens(mb, token), ["The answer."], model="bench")
    short_frames = wf.ollama_chat(["warm", " up"], ["ok"], model="bench")
    with WireServer() as long_server, WireServer() as short_server:
        long_server.route("POST", "/api/chat", Reply.ndjson(long_frames))
        short_server.route("POST", "/api/chat", Reply.ndjson(short_frames))
        ready.put((long_server.url, short_server.url))
        stop.wait()


def _status(field: str) -> int:
    """A ``/proc/self/status`` size in bytes (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure(long_url: str, short_url: str, cache: bool, traced: bool, max_chars: int | None):
    """In a fresh process: one warm-up run, then the long run; prints its figures as JSON."""
    from reasoning_nb import think

    options = {"model": MODEL, "cache": cache, "max_chars": max_chars}
    think("go", base_url=short_url, **options)
    gc.collect()
    if traced:
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
    else:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        before = _status("VmRSS")
    trace = think("go", base_url=long_url, **options)
    peak = tracemalloc.get_traced_memory()[1] if traced else _status("VmHWM")
    grown = peak - before
    text = len(trace.reasoning.encode()) + len(trace.answer.encode())
    print(json.dumps({"grown": grown, "text": text, "status": trace.status}))


def run_measure(urls: tuple[str, str], cache: bool, traced: bool, max_chars: int | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "REASONING_NB_DB": str(Path(tmp) / "cache.sqlite")}
        argv = [sys.executable, __file__, "--measure", *urls]
        argv += ["--cache"] * cache + ["--traced"] * traced
        argv += ["--max-chars", str(max_chars)] if max_chars is not None else []
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=25.0, help="MB of reasoning in the stream")
    parser.add_argument("--token", type=int, default=16, help="characters per token (>= 8)")
    parser.add_argument("--max-chars", type=int, help="the run option (default: no limit)")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--cache", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure, args.cache, args.traced, args.max_chars)
        return

    with in_child_process(serve, args.mb, args.token) as urls:
        print(f"{args.mb:g} MB of reasoning in tokens of {args.token} characters")
        print(f"{'':<10} {'text MB':>8} {'RSS MB':>8} {'RSS/text':>9} {'traced/text':>12}  status")
        for cache in (False, True):
            rss = run_measure(urls, cache, False, args.max_chars)
            traced = run_measure(urls, cache, True, args.max_chars)
            text = rss["text"]
            print(
                f"{'cache' if cache else 'no cache':<10} {text / 1e6:8.1f}"
                f" {rss['grown'] / 1e6:8.1f} {rss['grown'] / text:9.2f}"
                f" {traced['grown'] / traced['text']:12.2f}  {rss['status']}"
            )


if __name__ == "__main__":
    main()
