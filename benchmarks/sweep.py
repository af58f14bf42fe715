"""What a sweep costs over the wire and in the kernel, against what it cannot beat (issue 26).

    .venv/bin/python benchmarks/sweep.py [--prompts 24] [--slots 8] [--tokens 100]
        [--delay 0.01] [--repeat 3] [--no-kernel]

The server (``paced_server.py``, a process of its own) speaks Chat Completions with ``--slots``
slots, each streaming one token every ``--delay`` seconds. In one run, interleaved, the median
of ``--repeat``:

- ``asweep`` over the prompts x two presets (low, high) at concurrency ``--slots``;
- the floor a user could write by hand: one ``httpx.AsyncClient`` and an ``asyncio`` semaphore
  at the same concurrency, each stream's lines read and ``json.loads``-ed;
- the server's own limit, computed: ceil(requests / slots) x tokens x delay.

It prints sweep / floor and sweep / limit (the goal: at most 1.1 each). Each repeat sweeps new
prompts, so the replay cache never answers in the server's place (the cache file is a fresh
temporary one).

Then, in a real IPython kernel, the kernel's CPU time per streamed token (as
``live_view.py`` reads it: ``time.process_time`` around the cell, its threads included) for a
``%%think --sweep`` cell with its progress view, against a single ``%%think`` cell with its live
view streaming as many tokens at the same rate (the goal: the sweep's at most the single
cell's). No figure is asserted anywhere.

Measured for issue 26 (2 shared cores under other jobs, defaults): before, the replay cache's
SQLite commits ran on the event loop (~24 ms each, every other stream held still meanwhile):
sweep / loop 1.17, sweep / limit 1.20; with them in a worker thread (``Run._stored``), two
runs gave 1.06 and 1.09 / loop, 1.08 and 1.12 / limit (the loop itself 1.02-1.03 / limit).
Kernel CPU per token: single cell 171-175 µs, sweep cell 268-286 µs (1.56-1.63x); the cache
opened an SQLite connection and ran the schema script for each lookup and save (~7 ms a run).

Later: one kept connection for reads and one for writes (a lookup and save 0.22 ms
CPU, not 2.4), sniffio installed (httpcore's failed import of it scanned sys.path on every
connection), the recorder writing with orjson. Three runs of five: sweep / loop 1.006-1.011,
sweep / limit 1.019-1.028. Kernel CPU: sweep / single 1.16-1.19 (one run under a parallel
build: 1.19), sweep / single --cache 1.08-1.16. In-process, with the cache and log off, a
sweep costs what one stream does (184 against 183 µs a token); the cache costs ~50 µs a token
and the log ~15: about 3.5 ms a run, of which the store's own calls measure ~0.6 ms and the
recorder ~1.3 ms. Not met yet: the rest is not found.

Then: a finished stream is read to its end (``transport.drain``), so its connection goes back to
the pool (a profile had shown a connect and a close per run). Median of 5: sweep / loop 1.006,
sweep / limit 1.017; kernel CPU sweep / single 1.10 (runs of 100 tokens; the single cell's own
five runs spread 195-242 µs a token, the sweep's 191-252). With ``--prompts 8 --tokens 600``
(runs of a more usual length): sweep / single 1.02, sweep / single --cache 1.06, each within
the run-to-run spread (±15%). A yappi profile of both cells shows the same per-token path (the
sweep has no live view to render, ~85 µs a token in the single cell); what is left is each
run's fixed cost (its request, cache lookups and save, log row: ~2 ms), which a single cell of
one run pays once.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # wire_server, kernel_session
if importlib.util.find_spec("reasoning_nb") is None:  # run from a checkout, not installed
    sys.path.insert(0, str(ROOT))
# a replay cache and run log of the benchmark's own (the kernel inherits it)
os.environ["REASONING_NB_DB"] = str(Path(tempfile.mkdtemp(prefix="bench-sweep-")) / "db.sqlite3")

import anyio  # noqa: E402
import httpx  # noqa: E402
from kernel_session import KernelSession  # noqa: E402
from live_view import _runs, cpu_of  # noqa: E402
from paced_server import limit_s, serve  # noqa: E402
from wire_server import in_child_process  # noqa: E402

from reasoning_nb.sweep.engine import asweep  # noqa: E402

MODEL = "llamacpp:bench"
PRESETS = ["low", "high"]


def prompts_for(repeat: int, count: int) -> list[str]:
    """New prompts for every repeat: none of them is in the replay cache yet."""
    return [f"question {i} of run {repeat}" for i in range(count)]


async def floor(url: str, prompts: list[str], concurrency: int) -> int:
    """The hand-written loop: every prompt x preset, ``concurrency`` at a time; tokens read."""
    slots = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async def one(client: httpx.AsyncClient, prompt: str, preset: str) -> int:
        body = {
            "model": "bench",
            "messages": [{"role": "user", "content": prompt}],
            "stream": True,
            "reasoning_effort": preset,
        }
        pieces = 0
        async with slots, client.stream("POST", url, json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    for choice in json.loads(line[6:])["choices"]:
                        pieces += bool(choice["delta"])
        return pieces

    async with httpx.AsyncClient(timeout=60, limits=limits, trust_env=False) as client:
        runs = [one(client, prompt, preset) for prompt in prompts for preset in PRESETS]
        return sum(await asyncio.gather(*runs))


def timed(work) -> tuple[float, object]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def wire(base: str, args: argparse.Namespace) -> None:
    requests = args.prompts * len(PRESETS)
    limit = limit_s(requests, args.slots, args.tokens, args.delay)
    run_sweep = partial(
        asweep, models=[MODEL], presets=PRESETS, concurrency=args.slots, base_url=base + "/v1"
    )
    run_floor = partial(floor, base + "/v1/chat/completions", concurrency=args.slots)
    anyio.run(partial(run_sweep, prompts_for(-1, args.slots)))  # warm-up
    asyncio.run(run_floor(prompts_for(-1, args.slots)))
    sweeps, floors, checks = [], [], []
    for repeat in range(args.repeat):  # interleaved, so drift hits both alike
        prompts = prompts_for(repeat, args.prompts)
        wall, result = timed(
            lambda p=prompts: anyio.run(partial(run_sweep, p, base_url=base + "/v1"))
        )
        sweeps.append(wall)
        rows = result.rows
        checks.append(
            len(rows) == requests
            and all(r.status == "complete" and r.output_tokens == args.tokens for r in rows)
        )
        wall, tokens = timed(lambda p=prompts: asyncio.run(run_floor(p)))
        floors.append(wall)
        checks.append(tokens == requests * args.tokens)
    s, f = statistics.median(sweeps), statistics.median(floors)
    print(
        f"{requests} requests ({args.prompts} prompts x {len(PRESETS)} presets) of {args.tokens} "
        f"tokens, {args.slots} slots at {args.delay * 1000:g} ms a token, median of {args.repeat}"
    )
    print(f"server's limit      {limit:7.3f} s")
    print(f"asyncio+httpx loop  {f:7.3f} s   (runs: {_runs(floors)})")
    print(f"asweep              {s:7.3f} s   (runs: {_runs(sweeps)})")
    print(f"sweep / loop        {s / f:7.3f}     (goal: at most 1.1)")
    print(f"sweep / limit       {s / limit:7.3f}     (goal: at most 1.1)")
    print(f"loop / limit        {f / limit:7.3f}")
    print(f"every row and stream complete: {all(checks)}")


def kernel_cpu(base: str, args: argparse.Namespace) -> None:
    """Kernel CPU per token: the sweep cell on ``base``, and one ``%%think`` cell on a server of
    one slot that streams as many tokens as the whole sweep at the sweep's rate, so both cells
    stream the same tokens over about the same time (fixed costs weigh alike)."""
    swept = args.prompts * len(PRESETS) * args.tokens
    rate = args.slots / args.delay
    kernel = KernelSession(env=dict(os.environ))
    try:
        with in_child_process(serve, 1, swept, 1 / rate) as one_slot:
            kernel.run("%load_ext reasoning_nb")
            kernel.run("%config ThinkMagics.widget = 'always'")
            single = f"%%think --model {MODEL} --base-url {one_slot}/v1\ngo"

            def cached_single(repeat: int) -> str:  # the replay cache on, as a sweep has it
                return f"%%think --cache --model {MODEL} --base-url {one_slot}/v1\ngo {repeat}"
            flags = f"--sweep --presets {','.join(PRESETS)} --concurrency {args.slots}"
            flags += f" --model {MODEL} --base-url {base}/v1"

            def sweep_cell(repeat: int) -> str:
                return f"%%think {flags}\n" + "\n".join(prompts_for(repeat, args.prompts))

            cpu_of(kernel, single)  # warm-up: imports, the first connection
            cpu_of(kernel, cached_single(-2))
            cpu_of(kernel, sweep_cell(-2))
            singles, cached, sweeps = [], [], []
            for repeat in range(args.repeat):  # interleaved
                singles.append(cpu_of(kernel, single) / swept * 1e6)  # µs a token
                cached.append(cpu_of(kernel, cached_single(100 + repeat)) / swept * 1e6)
                sweeps.append(cpu_of(kernel, sweep_cell(100 + repeat)) / swept * 1e6)
    finally:
        kernel.close()
    one, kept, many = (statistics.median(v) for v in (singles, cached, sweeps))
    print(f"kernel CPU per streamed token ({swept:,} tokens a cell at {rate:g} a second), ", end="")
    print(f"median of {args.repeat}")
    print(f"%%think cell, live view         {one:7.1f} µs   (runs: {_runs(singles)})")
    print(f"%%think --cache, live view      {kept:7.1f} µs   (runs: {_runs(cached)})")
    print(f"%%think --sweep, progress view  {many:7.1f} µs   (runs: {_runs(sweeps)})")
    print(f"sweep / single                  {many / one:7.2f}      (goal: at most 1)")
    print(f"sweep / single --cache          {many / kept:7.2f}      (both record for the cache)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=24, help="prompts (each run per preset)")
    parser.add_argument("--slots", type=int, default=8, help="server slots = sweep concurrency")
    parser.add_argument("--tokens", type=int, default=100, help="tokens per stream")
    parser.add_argument("--delay", type=float, default=0.01, help="seconds per token per slot")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median counts")
    parser.add_argument("--no-kernel", action="store_true", help="skip the kernel CPU figure")
    args = parser.parse_args()
    with in_child_process(serve, args.slots, args.tokens, args.delay) as base:
        wire(base, args)
        if not args.no_kernel:
            kernel_cpu(base, args)


if __name__ == "__main__":
    main()
