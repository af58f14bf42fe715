"""Search over a run log of 10,000 runs: the one-time index build, and a query's time.

    python benchmarks/search.py [--runs 10000] [--repeat 7]

Fills a temporary log with runs whose reasoning is a few KB of made-up sentences (a vocabulary
of 3,000 words drawn with a Zipf-like skew, as real text is; 2-6 KB a run, about 40 MB in all),
written without the index as a log from before it would be. Then it times the index's build
(``'rebuild'``, what the first connection of a newer version does once), the cost the triggers
add to logging (the same rows written into a log that has them), and ``search()`` for four
queries, each the median of several rounds: a rare word, a phrase, a prefix and a word nearly
every run holds, with the default ranking and with ``reasoning_first``. Nothing is asserted.

Measured on the project's 2-core machine (shared with other work), 10,000 runs, 44 MB of
reasoning and answers, two runs of the script:

    index build of an old log (rebuild), once   1.3-1.8 s
    logging 10,000 runs in one transaction      0.4-1.4 s without the index, 5.2-6.7 s with
                                                its triggers (0.5 ms more a run)
    search, median of 7 rounds, limit 50        word 8 ms (326 runs match), phrase 9-12 ms
                                                (172), prefix 5-12 ms (523), a word in every
                                                run 39 ms (10,000)
    the same with reasoning_first               4 ms, 5-9 ms, 5-12 ms, 37 ms
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from contextlib import closing
from pathlib import Path

PLANTED = (
    (("photosynthesis",), 0.03),
    (("the second derivative", "the derivative"), 0.04),
    (("recursion", "recursive", "recurses"), 0.05),
)
"""Words and phrases the queries look for, and the share of runs whose reasoning holds one."""
QUERIES = {
    "word": "photosynthesis",
    "phrase": '"the second derivative"',
    "prefix": "recurs*",
}


def vocabulary(rng: random.Random) -> list[str]:
    letters = "etaoinshrdlcumwfgypbvk"
    words = {"".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(3_200)}
    return sorted(words)[:3_000]


def reasoning(rng: random.Random, words: list[str], weights: list[float]) -> str:
    """2-6 KB of sentences; now and then one of the words and phrases the queries look for."""
    size, out = rng.randint(2_000, 6_000), []
    while sum(map(len, out)) < size:
        sentence = rng.choices(words, weights, k=rng.randint(6, 20))
        out.append(" ".join(sentence).capitalize() + ". ")
    for planted, share in PLANTED:  # in a few runs each, as a fact in the reasoning would be
        if rng.random() < share:
            out.insert(rng.randrange(len(out)), f"Here {rng.choice(planted)} matters. ")
    return "".join(out)


def traces(count: int) -> tuple[list[dict], str]:
    """The runs, and the most frequent word of their text (in nearly every run)."""
    rng = random.Random(27)
    words = vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    runs = [
        {
            "started_at": f"2026-01-{1 + i % 28:02d}T{i % 24:02d}:00:00Z",
            "provider": "llamacpp",
            "model": "llamacpp:qwen3",
            "preset": rng.choice(("low", "medium", "high")),
            "status": "complete",
            "prompt": " ".join(rng.choices(words, weights, k=12)) + "?",
            "reasoning": reasoning(rng, words, weights),
            "answer": " ".join(rng.choices(words, weights, k=60)) + ".",
        }
        for i in range(count)
    ]
    return runs, words[0]


def insert(path: Path, runs: list[dict]) -> None:
    """The runs as rows, the columns search reads (and the trace, as the writer keeps it)."""
    columns = ("started_at", "provider", "model", "preset", "status", "prompt", "reasoning",
               "answer")  # fmt: skip
    rows = [[t[c] for c in columns] + [json.dumps(t)] for t in runs]
    with closing(sqlite3.connect(path)) as conn, conn:
        names = ", ".join(columns)
        conn.executemany(f"INSERT INTO runs ({names}, trace) VALUES ({'?, ' * 8}?)", rows)


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="search-bench-"))
    os.environ["REASONING_NB_DB"] = str(folder / "log.sqlite3")
    from reasoning_nb import search
    from reasoning_nb.store import db, fts

    runs, common = traces(args.runs)
    queries = {**QUERIES, "common word": common}
    text_mb = sum(len(t["reasoning"]) + len(t["answer"]) for t in runs) / 1e6
    print(f"{args.runs} runs, {text_mb:.1f} MB of reasoning and answers")

    # a log from before the index (the schema, at the version before it), then one with it
    old, fresh = folder / "old.sqlite3", folder / "fresh.sqlite3"
    with closing(sqlite3.connect(old)) as conn:
        conn.executescript(db.SCHEMA + f"PRAGMA user_version = {db.SEARCH_INDEX - 1};")
    os.environ["REASONING_NB_DB"] = str(fresh)
    db.info()  # (the schema, the index and its triggers)
    db._forget()
    plain, indexed = (timed(lambda path=path: insert(path, runs)) for path in (old, fresh))
    extra_ms = (indexed - plain) / args.runs * 1000
    print(f"logging {args.runs} runs in one transaction: no index {plain:.2f} s, with the "
          f"triggers {indexed:.2f} s ({extra_ms:.2f} ms more a run)")  # fmt: skip
    with closing(sqlite3.connect(old, isolation_level=None)) as conn:
        build = timed(lambda: fts.add_index(conn, db.SEARCH_INDEX))
    print(f"index build of the old log (rebuild), once: {build:.2f} s")
    os.environ["REASONING_NB_DB"] = str(old)
    for first in (False, True):
        medians = []
        for kind, query in queries.items():
            search(query, reasoning_first=first)  # (the connection, opened once)
            times = [timed(lambda q=query, f=first: search(q, reasoning_first=f))
                     for _ in range(args.repeat)]  # fmt: skip
            hits = len(search(query, limit=None))
            medians.append(f"{kind} {statistics.median(times) * 1000:.0f} ms ({hits} runs)")
        label = "reasoning_first" if first else "default ranking"
        print(f"search, median of {args.repeat}, limit 50, {label}: " + ", ".join(medians))
    db._forget()
    for leftover in folder.iterdir():
        leftover.unlink()
    folder.rmdir()


if __name__ == "__main__":
    main()
