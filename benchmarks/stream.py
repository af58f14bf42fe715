"""End-to-end streaming overhead: ``think()`` over a 25,000-chunk local stream, against the floor.

    .venv/bin/python benchmarks/stream.py [--chunks 25000] [--repeat 9] [--peers] [--profile]

The stream is ``wire_fixtures.many_chunks`` (half reasoning, half answer) served by the test wire
server in a child process (so its writes do not compete with the client for the GIL), once as
Ollama NDJSON and once as Chat Completions SSE. The floor, measured in the same run on the same
stream, is what any client must at least do: raw ``httpx`` async streaming with the same client
settings, reading lines and ``json.loads``-ing each one. Both figures include making the client
and the event loop, as ``think()`` does. The ratio ``think / floor`` of wall times is the
overhead; the median of ``--repeat`` interleaved runs counts. The CPU ratio (this
process's CPU time; the server runs in another process) says the same with far less noise when
other jobs share the machine. No timing is asserted.

``--peers`` also times, on the same stream in the same run, a plain sync httpx reader (the sync
floor) and the clients users would pick instead (official ``ollama``, ``openai`` SDK, LiteLLM;
``pip install -r benchmarks/requirements.txt``), and prints think()'s ratio to each. The goal
(issue 12): within 1.1 of the sync floor, and below 1 against every peer.

``--profile`` runs the same call once per variant under cProfile (``astream`` on the main thread,
since ``think()`` runs its loop in a worker thread) and prints the top functions by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import json
import multiprocessing
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # wire_server, wire_fixtures
if importlib.util.find_spec("reasoning_nb") is None:  # run from a checkout, not installed
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import httpx  # noqa: E402
import wire_fixtures as wf  # noqa: E402
from peers import available, sync_floor  # noqa: E402

from reasoning_nb import astream, think  # noqa: E402
from reasoning_nb.providers.transport import Transport  # noqa: E402

VARIANTS = {
    # name -> (many_chunks kind, path, model id, framing)
    "ollama-ndjson": ("ollama", "/api/chat", "ollama:qwen3", "ndjson"),
    "chat-sse": ("chat", "/v1/chat/completions", "llamacpp:bench", "sse"),
}


def serve(chunks: int, chunking: str, ready, stop) -> None:
    """Child process: the wire server with every variant routed; runs until ``stop`` is set."""
    import wire_fixtures as wf
    from wire_server import Reply, WireServer

    with WireServer() as server:
        for kind, path, _, framing in VARIANTS.values():
            frames = wf.many_chunks(chunks, kind)
            build = Reply.ndjson if framing == "ndjson" else Reply.sse
            server.route("POST", path, build(frames, chunking=chunking, seed=1, max_piece=4096))
        ready.put(server.url)
        stop.wait()


async def floor(url: str, framing: str) -> tuple[int, int]:
    """Raw httpx: stream the body, split lines, json.loads each payload; (lines, bytes)."""
    lines = size = 0
    timeout = Transport()._timeout()
    body = {"model": "bench", "messages": [{"role": "user", "content": "go"}], "stream": True}
    async with (
        httpx.AsyncClient(timeout=timeout, trust_env=False) as client,
        client.stream("POST", url, json=body) as response,
    ):
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line:
                continue
            size += len(line)
            if framing == "sse":
                if not line.startswith("data:"):
                    continue
                line = line[5:].strip()
                if line == "[DONE]":
                    continue
            json.loads(line)
            lines += 1
    return lines, size


async def consume(model: str, base_url: str) -> None:
    """``astream`` on the current thread (cProfile sees one thread only; think() uses a worker)."""
    async for _ in astream("go", model=model, base_url=base_url):
        pass


def timed(work) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of this process, result); the server is another process, so
    CPU time is the client's own work and barely moves when other jobs load the machine."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def compare_peers(
    base: str, framing: str, think_s: tuple[float, float], repeat: int, sync_runs: list
) -> None:
    """Median wall time of each peer on this stream, and think()'s (wall, CPU) times as ratios
    of the peer's. The sync floor's runs come in: they were interleaved with think()'s, as that
    ratio is close to 1."""
    peers, missing = available(framing)
    for name, reader in {"sync floor": sync_floor, **peers}.items():
        if name == "sync floor":
            runs = sync_runs
        else:
            reader(base, framing)  # warm-up (imports, connection set-up)
            runs = [timed(lambda r=reader: r(base, framing)) for _ in range(repeat)]
        wall = statistics.median(w for w, _, _ in runs)
        cpu = statistics.median(c for _, c, _ in runs)
        pieces = runs[-1][2]
        ratio, cpu_ratio = think_s[0] / wall, think_s[1] / cpu
        print(
            f"  {name:<13} {wall:8.3f} s   think()/{name} = {ratio:5.2f} (CPU {cpu_ratio:4.2f})"
            f"   {pieces:,} read"
        )
    for note in missing:
        print(f"  ({note})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=25_000, help="content frames per stream")
    parser.add_argument("--repeat", type=int, default=9, help="runs per figure; the median counts")
    parser.add_argument(
        "--chunking",
        default="frames",
        choices=("frames", "random"),
        help="frames: one HTTP chunk per frame (as servers flush per token); random: cut anywhere",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile one think() per variant")
    parser.add_argument("--peers", action="store_true", help="also time the sync floor and peers")
    args = parser.parse_args()

    ready: multiprocessing.Queue = multiprocessing.Queue()
    stop = multiprocessing.Event()
    child = multiprocessing.Process(
        target=serve, args=(args.chunks, args.chunking, ready, stop), daemon=True
    )
    child.start()
    try:
        base = ready.get(timeout=60)
        print(
            f"{args.chunks:,} content frames per stream, chunking={args.chunking}, "
            f"median of {args.repeat} (first run of each kind discarded as warm-up)"
        )
        print(
            f"{'variant':<14} {'floor s':>8} {'think() s':>10} {'ratio':>6} {'µs/frame':>9}"
            f" {'CPU ratio':>10}   check"
        )
        for name, (_, path, model, framing) in VARIANTS.items():
            url = base + path
            base_url = base if framing == "ndjson" else base + "/v1"
            floor_runs, think_runs, sync_runs = [], [], []
            anyio.run(floor, url, framing)  # warm-up
            think("go", model=model, base_url=base_url)
            sync_floor(base, framing)
            for _ in range(args.repeat):  # interleaved, so drift hits all alike
                *times, (lines, _) = timed(lambda u=url, f=framing: anyio.run(floor, u, f))
                floor_runs.append(times)
                *times, trace = timed(lambda m=model, b=base_url: think("go", model=m, base_url=b))
                think_runs.append(times)
                if args.peers:
                    sync_runs.append(timed(lambda f=framing: sync_floor(base, f)))
            f, t = (
                statistics.median(wall for wall, _ in runs) for runs in (floor_runs, think_runs)
            )
            f_cpu, t_cpu = (
                statistics.median(cpu for _, cpu in runs) for runs in (floor_runs, think_runs)
            )
            reasoning, answer = wf.many_chunks_texts(args.chunks)
            ok = trace.status == "complete" and (trace.reasoning.strip(), trace.answer) == (
                reasoning.strip(),
                answer,  # only blank lines leave the answer's start
            )
            check = f"{lines:,} lines, trace {'ok' if ok else 'WRONG: ' + trace.status}"
            per_frame = (t - f) / args.chunks * 1e6
            print(
                f"{name:<14} {f:8.3f} {t:10.3f} {t / f:6.2f} {per_frame:9.2f}"
                f" {t_cpu / f_cpu:10.2f}   {check}"
            )
            if args.peers:
                compare_peers(base, framing, (t, t_cpu), args.repeat, sync_runs)
            if args.profile:
                profiler = cProfile.Profile()
                profiler.runcall(anyio.run, consume, model, base_url)
                print(f"\n--- cProfile of think() [{name}], by own time ---")
                pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    finally:
        stop.set()
        child.join(10)
        if child.is_alive():
            child.terminate()


if __name__ == "__main__":
    main()
