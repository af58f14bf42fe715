"""Throughput of the inline-tag splitter, against the floor of merely scanning each chunk.

    /work/venv/bin/python benchmarks/splitter.py [--chunk 10] [--mb 4]

The floor is one ``str.find('<')`` per chunk: what any streaming splitter must at least do.
The ratio says how many times slower than that floor the splitter runs; no timing is asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path

if importlib.util.find_spec("reasoning_nb") is None:  # run from a checkout, not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reasoning_nb.core.tags import InlineSplitter

PROSE = (
    "The sky looks blue because air molecules scatter short wavelengths more strongly than "
    "long ones; at sunset the light crosses more air, so the reds are what remain. "
)


def plain(size: int) -> str:
    return (PROSE * (size // len(PROSE) + 1))[:size]


def think_blocks(size: int) -> str:
    unit = f"<think>{PROSE * 2}</think>\n\n{PROSE}"
    return (unit * (size // len(unit) + 1))[:size]


def harmony(size: int) -> str:
    unit = (
        f"<|channel|>analysis<|message|>{PROSE * 2}<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>{PROSE}<|return|>"
    )
    return (unit * (size // len(unit) + 1))[:size]


def best_seconds(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def floor(chunks: list[str]) -> None:
    for chunk in chunks:
        chunk.find("<")


def split(chunks: list[str]) -> None:
    splitter = InlineSplitter()
    feed = splitter.feed
    for chunk in chunks:
        feed(chunk)
    splitter.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk", type=int, default=10, help="characters per fed chunk")
    parser.add_argument("--mb", type=float, default=4.0, help="size of each workload in MB")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure; the best counts")
    args = parser.parse_args()

    size = int(args.mb * 1_000_000)
    print(f"{args.mb:g} MB per workload, {args.chunk}-character chunks, best of {args.repeat}")
    print(f"{'workload':<12} {'splitter MB/s':>14} {'floor MB/s':>11} {'floor/splitter':>15}")
    for name, make in (("plain", plain), ("think", think_blocks), ("harmony", harmony)):
        text = make(size)
        mb = len(text.encode()) / 1e6
        chunks = [text[i : i + args.chunk] for i in range(0, len(text), args.chunk)]
        base = mb / best_seconds(lambda c=chunks: floor(c), args.repeat)
        ours = mb / best_seconds(lambda c=chunks: split(c), args.repeat)
        print(f"{name:<12} {ours:>14.1f} {base:>11.1f} {base / ours:>14.1f}x")


if __name__ == "__main__":
    main()
