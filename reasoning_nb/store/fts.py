"""The full-text index of the run log: prompt, reasoning and answer of every logged run.

An FTS5 table with external content (``content='runs'``): it keeps the words, not a second
copy of the text, and three triggers keep it in step with every insert, delete and update of
``runs``, whoever writes (another kernel, an older writer of the same file). A log written
before the index gets it built once (``'rebuild'``) when the schema is set up (``db``).

A log without the index that cannot be given one (a read-only file) is searched through an
index built in memory for the one search (``store.search``). A SQLite without FTS5 builds no
index, and its search says what it needs.
"""

from __future__ import annotations

import sqlite3
from functools import cache

TABLE = "runs_text"
COLUMNS = ("prompt", "reasoning", "answer")

_NEW = ", ".join(f"new.{c}" for c in COLUMNS)
_OLD = ", ".join(f"old.{c}" for c in COLUMNS)
_NAMES = ", ".join(COLUMNS)
# (unicode61 with diacritics removed: "naive" finds "naïve"; words, not substrings)
INDEX = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5({_NAMES}, content='runs',"
    " content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_insert AFTER INSERT ON runs BEGIN"
    f" INSERT INTO {TABLE} (rowid, {_NAMES}) VALUES (new.id, {_NEW}); END",
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_delete AFTER DELETE ON runs BEGIN"
    f" INSERT INTO {TABLE} ({TABLE}, rowid, {_NAMES}) VALUES ('delete', old.id, {_OLD}); END",
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_update AFTER UPDATE OF {_NAMES} ON runs BEGIN"
    f" INSERT INTO {TABLE} ({TABLE}, rowid, {_NAMES}) VALUES ('delete', old.id, {_OLD});"
    f" INSERT INTO {TABLE} (rowid, {_NAMES}) VALUES (new.id, {_NEW}); END",
)

HOW_TO_QUERY = (
    'write words (all must occur), a phrase in double quotes ("exact words"), a prefix with '
    "a star (reason*), OR between alternatives, and quote any word with punctuation "
    '("gpt-4o")'
)


@cache
def available() -> bool:
    """Whether this SQLite was built with FTS5 (Python's usually is)."""
    try:
        with sqlite3.connect(":memory:") as conn:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    return True


def has_index(conn: sqlite3.Connection) -> bool:
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
    ).fetchone()
    return found is not None


def add_index(conn: sqlite3.Connection, version: int) -> bool:
    """Create the index and its triggers, and fill it from the runs already logged, in one
    write transaction; then ``PRAGMA user_version = version``. Two kernels doing it at once
    queue on the writer lock and the second finds it done. False where SQLite has no FTS5
    (the version stays, so a later, better SQLite builds it)."""
    if not available():
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] < version:
            built = has_index(conn)
            for statement in INDEX:  # (executescript would commit)
                conn.execute(statement)
            if not built:
                conn.execute(f"INSERT INTO {TABLE} ({TABLE}) VALUES ('rebuild')")
            conn.execute(f"PRAGMA user_version = {version}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return True


_QUERY_ERRORS = ("fts5: syntax error", "unterminated string", "no such column", "unknown special")
"""What SQLite (3.40 here) says of a query it cannot parse; other errors are the file's."""


def bad_query(query: str, exc: sqlite3.Error) -> str | None:
    """The one sentence for a query FTS5 cannot read, or None when ``exc`` is another error."""
    text = str(exc)
    if not any(sign in text for sign in _QUERY_ERRORS):
        return None
    return f"The search {query!r} cannot be read as a query: {HOW_TO_QUERY}."
