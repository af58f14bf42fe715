"""Restart & Run All of a notebook of ``%%think --cache`` cells, twice, on the embedded model.

    python benchmarks/cache_rerun.py [--cells 4] [--preset high]

The first pass asks the real ``llama-server`` (``local:smollm2``, started by the kernel); the
second replays every cell from the cache and starts no server at all. Both passes run in a
fresh kernel under nbclient, as Run All would, against a database of their own (a temporary
``REASONING_NB_DB``), so nothing cached earlier helps the first pass. It prints both wall
times, their ratio, and what the run log then holds. No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

QUESTIONS = (
    "Why is the sky blue?",
    "What is 17 * 23?",
    "Name three prime numbers.",
    "Why do cats purr?",
    "What makes a proof convincing?",
    "How far away is the Moon?",
)


def run_all(cells: list[str]) -> tuple[float, nbformat.NotebookNode]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    started = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    return time.perf_counter() - started, nb


def traces(nb: nbformat.NotebookNode) -> list[dict]:
    return [
        o.metadata["reasoning_nb"]
        for cell in nb.cells
        for o in cell.get("outputs", [])
        if "reasoning_nb" in o.get("metadata", {})
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=4, choices=range(1, len(QUESTIONS) + 1))
    parser.add_argument("--preset", default="high")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "cache.sqlite3"
        os.environ.update(REASONING_NB_DB=str(db), REASONING_NB_LOG="1")
        flags = f"--model local:smollm2 --preset {args.preset} --cache"
        cells = ["%load_ext reasoning_nb"]
        cells += [f"%%think {flags}\n{q}" for q in QUESTIONS[: args.cells]]
        first_s, first = run_all(cells)
        second_s, second = run_all(cells)
        recorded, replayed = traces(first), traces(second)
        same = all(
            (r["reasoning"], r["answer"]) == (p["reasoning"], p["answer"])
            for r, p in zip(recorded, replayed, strict=True)
        )
        print(f"{args.cells} cells of %%think {flags}, Restart & Run All twice:")
        print(f"  first pass (the model runs):   {first_s:6.2f} s")
        print(f"  second pass (replayed):        {second_s:6.2f} s  ({second_s / first_s:.2f}x)")
        print(f"  replays marked: {sum('replay' in t for t in replayed)} of {len(replayed)}")
        print(f"  same reasoning and answers: {same}")
        with sqlite3.connect(db) as conn:
            rows = conn.execute(
                "SELECT id, model, preset, status, replay, reasoning_tokens, "
                "round(total_ms), substr(prompt, 1, 24) FROM runs ORDER BY id"
            ).fetchall()
        print("\nthe run log (SELECT id, model, preset, status, replay, reasoning_tokens,")
        print("  round(total_ms), substr(prompt, 1, 24) FROM runs):")
        for row in rows:
            print("  " + " | ".join("" if v is None else str(v) for v in row))


if __name__ == "__main__":
    main()
