"""Full-text search over prompt, reasoning and answer: the run log, or any set of texts.

The query is FTS5's: words (all must occur), ``"a phrase"``, ``prefix*``, ``OR``, ``NOT``.
The log is searched through its index (``fts``). A log without one that cannot be given one
(a read-only file: nothing is built in it) and a notebook's traces are searched through an
index built in memory for the one search, so a query means the same everywhere. (Python's
SQLite comes with FTS5 from every usual source; where it does not, the search says so.)

Each match comes back with a snippet of every part it is in, the matched words between
``MARK`` and ``END`` (control characters: the view escapes the text, then marks them).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import db
from .fts import COLUMNS, HOW_TO_QUERY, TABLE, available, bad_query, has_index

MARK, END = "\x02", "\x03"
SNIPPET_TOKENS = 16
"""Words of context a snippet shows around its match (FTS5's ``snippet()`` caps it at 64)."""
NO_FTS5 = (
    "This Python's SQLite was built without FTS5, which the search needs: use a Python from "
    "python.org, conda or your system's package manager (theirs include it)."
)
_RUN_COLUMNS = ("id", "started_at", "provider", "model", "preset", "status", "prompt")


@dataclass(frozen=True)
class Match:
    """One matching text: its row id, rank (lower is better) and a snippet of each part the
    query matched in, in ``COLUMNS`` order."""

    rowid: int
    rank: float
    snippets: tuple[tuple[str, str], ...]

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(part for part, _ in self.snippets)


class QueryError(ValueError):
    """A query FTS5 cannot read; its message says how to write one."""


def _ranked(
    conn: sqlite3.Connection, table: str, query: str, reasoning_first: bool, limit: int | None
) -> list[tuple[int, float]]:
    """(rowid, rank) of the matches, best first; with ``reasoning_first``, those that match in
    the reasoning before the rest. Only ids and ranks: snippets are made for the ones shown."""
    try:
        found = conn.execute(
            f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ? ORDER BY 2, 1 DESC",
            (query,),
        ).fetchall()
        in_reasoning: set[int] = set()
        if reasoning_first and found:
            in_reasoning = {
                rowid
                for (rowid,) in conn.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (f"reasoning : ({query})",)
                )
            }
    except sqlite3.OperationalError as exc:
        sentence = bad_query(query, exc)
        if sentence is None:
            raise
        raise QueryError(sentence) from None
    found.sort(key=lambda hit: hit[0] not in in_reasoning)  # (stable: rank order within)
    return found[:limit] if limit is not None else found


def _snippets(conn: sqlite3.Connection, table: str, query: str, rowid: int) -> tuple:
    parts = ", ".join(
        f"snippet({table}, {i}, ?, ?, '…', {SNIPPET_TOKENS})" for i in range(len(COLUMNS))
    )
    args = [MARK, END] * len(COLUMNS)
    row = conn.execute(
        f"SELECT {parts} FROM {table} WHERE {table} MATCH ? AND rowid = ?",
        (*args, query, rowid),
    ).fetchone()
    found = zip(COLUMNS, row, strict=True) if row is not None else ()
    return tuple((part, text) for part, text in found if text and MARK in text)


def _matches(
    conn: sqlite3.Connection, table: str, query: str, reasoning_first: bool, limit: int | None
) -> list[Match]:
    return [
        Match(rowid, rank, _snippets(conn, table, query, rowid))
        for rowid, rank in _ranked(conn, table, query, reasoning_first, limit)
    ]


def search_texts(
    texts: list[tuple[str, str, str]],
    query: str,
    *,
    reasoning_first: bool = False,
    limit: int | None = None,
) -> list[Match]:
    """Search ``(prompt, reasoning, answer)`` triples; a match's ``rowid`` is its index + 1."""
    check(query)
    if not available():
        raise QueryError(NO_FTS5)
    with closing(sqlite3.connect(":memory:")) as conn:
        names = ", ".join(COLUMNS)
        conn.execute(
            f"CREATE VIRTUAL TABLE {TABLE} USING fts5({names}, tokenize='unicode61 "
            "remove_diacritics 2')"
        )
        conn.executemany(
            f"INSERT INTO {TABLE} (rowid, {names}) VALUES (?, ?, ?, ?)",
            [(i, *(t or "" for t in text)) for i, text in enumerate(texts, 1)],
        )
        return _matches(conn, TABLE, query, reasoning_first, limit)


def check(query: str) -> None:
    if not isinstance(query, str) or not query.strip():
        raise QueryError(f"The search is empty: {HOW_TO_QUERY}.")


def search_log(
    query: str,
    source: str | Path | None = None,
    *,
    reasoning_first: bool = False,
    limit: int | None = None,
) -> list[tuple[dict[str, Any], Match]]:
    """The logged runs that match, best first: each as its row (``_RUN_COLUMNS``) and match.
    The index is built here if the log has none yet (a log only read until now)."""
    check(query)
    path = Path(source) if source is not None else db.path()
    _check_log(path)
    with db._reading(path) as conn:
        if has_index(conn):
            matches = _matches(conn, TABLE, query, reasoning_first, limit)
            return _with_runs(conn, matches)
        rows = conn.execute(f"SELECT id, {', '.join(COLUMNS)} FROM runs ORDER BY id").fetchall()
        ids = [row[0] for row in rows]
        found = search_texts(
            [row[1:] for row in rows], query, reasoning_first=reasoning_first, limit=limit
        )
        matches = [Match(ids[m.rowid - 1], m.rank, m.snippets) for m in found]
        return _with_runs(conn, matches)


def _with_runs(conn: sqlite3.Connection, matches: list[Match]) -> list[tuple[dict, Match]]:
    found = []
    for match in matches:
        row = conn.execute(
            f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs WHERE id = ?", (match.rowid,)
        ).fetchone()
        if row is not None:
            found.append((dict(zip(_RUN_COLUMNS, row, strict=True)), match))
    return found


def _check_log(path: Path) -> None:
    """A missing file, or one that is not a log, is said so: opening it for the search would
    create one, or add the log's tables to someone else's database."""
    from .log import HOW_TO_LOG

    if not path.is_file():
        raise FileNotFoundError(f"No trace log at {path}: {HOW_TO_LOG}.")
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            conn.execute("SELECT id FROM runs LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{path} is not a reasoning_nb trace log ({exc})") from None
