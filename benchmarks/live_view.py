"""What the live widget of a ``%%think`` cell costs, against ``think()`` alone, in a real kernel.

    .venv/bin/python benchmarks/live_view.py [--chunks 25000] [--repeat 5] [--profile]

The stream is ``wire_fixtures.many_chunks`` as Ollama NDJSON (half reasoning, half answer, every
frame a piece of 1-7 bytes), served by the test wire server in a child process (see
``stream.py``). A real IPython kernel (jupyter_client) runs, interleaved, ``think()`` on that
stream and a ``%%think`` cell with its live widget on it; each figure is the kernel's own CPU time
(``time.process_time`` read in the kernel around the cell, its threads included), so other jobs
on the machine barely move it. The median of ``--repeat`` runs counts. It prints the ratio
cell / ``think()`` and the view's cost per chunk, (cell - think()) / chunks. The goal (issue 23):
at most 1.4x and 25 µs a chunk. No figure is asserted anywhere (``tests/test_widget.py`` counts
the calls a chunk costs).

Measured for issue 23 (2 shared cores, median of 5-7): before, think() 0.41 s and the cell
2.51 s, 6.1x and 84 µs a chunk (the tail was planned again at every chunk, and a forced cut
listed every space of the tail); after, think() 0.43 s and the cell 0.55 s, 1.28x and 4.8 µs.

``--profile`` runs the cell once more under cProfile in the kernel (the main thread, where the
cell and its widget run) and prints the top functions by own time and their call counts: what
is done per chunk shows as ~``--chunks`` calls.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # wire_server, wire_fixtures, kernel_session
if importlib.util.find_spec("reasoning_nb") is None:  # run from a checkout, not installed
    sys.path.insert(0, str(ROOT))

from kernel_session import KernelSession  # noqa: E402
from stream import serve  # noqa: E402
from wire_server import in_child_process  # noqa: E402

MODEL = "ollama:qwen3"


def cpu_of(kernel: KernelSession, code: str) -> float:
    """The kernel's CPU seconds for ``code``, run as a cell of its own (as a user runs it)."""
    kernel.run("import time as _bench_time; _bench_t = _bench_time.process_time()")
    msgs = kernel.run(code, timeout=600)
    errors = [m for m in msgs if m["msg_type"] == "error"]
    if errors:
        raise RuntimeError(errors[0]["content"]["evalue"])
    return float(kernel.value("_bench_time.process_time() - _bench_t"))


def _runs(times: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=25_000, help="content frames per stream")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure; the median counts")
    parser.add_argument("--profile", action="store_true", help="cProfile the cell once")
    parser.add_argument(
        "--restrict", default="30", help="what pstats prints: a count, or a regex of names"
    )
    args = parser.parse_args()

    with in_child_process(serve, args.chunks, "frames") as base:
        kernel = KernelSession(env=dict(os.environ))
        try:
            measure(kernel, base, args)
        finally:
            kernel.close()


def measure(kernel: KernelSession, base: str, args: argparse.Namespace) -> None:
    kernel.run("%load_ext reasoning_nb")
    kernel.run("%config ThinkMagics.widget = 'always'")
    kernel.run("from reasoning_nb import think")
    call = f"think('go', model={MODEL!r}, base_url={base!r})"
    cell = f"%%think --model {MODEL} --base-url {base}\ngo"
    cpu_of(kernel, call)  # warm-up: imports, the first connection
    cpu_of(kernel, cell)
    alone, widget = [], []
    for _ in range(args.repeat):  # interleaved, so drift hits both alike
        alone.append(cpu_of(kernel, call))
        widget.append(cpu_of(kernel, cell))
    t, c = statistics.median(alone), statistics.median(widget)
    print(f"{args.chunks:,} chunks (Ollama NDJSON, 1-7 byte pieces), median of {args.repeat}")
    print(f"think() alone       {t:7.3f} s CPU   (runs: {_runs(alone)})")
    print(f"%%think cell        {c:7.3f} s CPU   (runs: {_runs(widget)})")
    print(f"cell / think()      {c / t:7.2f}       (goal: at most 1.4)")
    print(f"view per chunk      {(c - t) / args.chunks * 1e6:7.1f} µs    (goal: at most 25)")
    if args.profile:
        kernel.run("import cProfile as _bench_cp; _bench_p = _bench_cp.Profile()")
        kernel.run("_bench_p.enable()")
        kernel.run(cell, timeout=600)
        restrict = args.restrict if args.restrict.isdigit() else repr(args.restrict)
        msgs = kernel.run(
            "_bench_p.disable(); import pstats as _bench_ps\n"
            f"_bench_ps.Stats(_bench_p).sort_stats('tottime').print_stats({restrict})"
        )
        print("".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream"))


if __name__ == "__main__":
    main()
