"""``python -m reasoning_nb cache info|clear [--log]``: where the database is, and emptying it."""

from __future__ import annotations

import argparse
import sqlite3

from . import db as store


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reasoning_nb cache",
        description="The replay cache and the run log: one SQLite file (REASONING_NB_CACHE_DIR "
        "moves it, REASONING_NB_DB names it).",
    )
    parser.add_argument("action", choices=("info", "clear"))
    parser.add_argument(
        "--log",
        action="store_true",
        help="(clear) delete the log of runs too; it is kept otherwise",
    )
    args = parser.parse_args(argv)
    try:
        if args.action == "clear":
            count = store.clear(log=args.log)
            also = " and the run log" if args.log else ""
            print(f"cleared {count} entries{also} from {store.path()}")
            return 0
        info = store.info()
    except (sqlite3.Error, OSError) as exc:
        print(f"error: {store.unusable(exc)}")
        return 1
    print(
        f"{info['path']}\n{info['entries']} entries ({info['entries_mb']} MB of recordings), "
        f"{info['logged_runs']} logged runs; file {info['file_mb']} MB"
    )
    return 0
