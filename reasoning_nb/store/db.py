"""The SQLite file: replay entries, the ask -> entry map, and the opt-in log of runs.

One file in the package's cache directory (``config.cache_dir()``; ``REASONING_NB_DB`` names
the file itself). Several kernels share it: WAL mode lets readers go on while one writer writes,
every write is one ``BEGIN IMMEDIATE`` transaction (the writer lock is taken up front, so two
writers queue on ``busy_timeout`` instead of failing half-way), and a process keeps a
connection open for reads and one for writes, its threads taking turns. A replay only reads: on
a read-only or full disk it still comes back, and only its bookkeeping (which entry was used
last) is skipped.

Entries are evicted least recently used first once their recordings pass the size cap; the
log is the user's record and is never evicted (``python -m reasoning_nb cache clear --log``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Any

from ..config import cache_dir, defaults
from ..core.schema import TIMING_KEYS, USAGE_KEYS
from .fts import add_index
from .recording import decode

DB_ENV = "REASONING_NB_DB"
LOG_ENV = "REASONING_NB_LOG"
FILE_NAME = "reasoning_nb.sqlite3"
BUSY_MS = 30_000
MARK_BUSY_MS = 1_000
"""How long marking an entry used waits for another writer before it gives up (a save waits
``BUSY_MS``): a replay is not held up for long by its bookkeeping."""
SIZES_IN_BYTES = 1
"""``PRAGMA user_version`` from which ``entries.size`` counts UTF-8 bytes (before: characters)."""
SWEEP_IDS = 2
"""``PRAGMA user_version`` from which ``runs`` has its ``sweep_id`` column."""
SEARCH_INDEX = 3
"""``PRAGMA user_version`` from which ``runs`` has its full-text index (``fts``): a log from
before gets it built once, here."""
_TRACE_COLUMNS = (
    "started_at",
    "provider",
    "model",
    "preset",
    "status",
    "prompt",
    "reasoning",
    "answer",
)
"""The columns of ``runs`` read from the trace as they are (then its usage and timing)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
  key TEXT PRIMARY KEY,          -- keys.entry_key: provider, host, model, request body
  recorded_at TEXT,              -- the recorded run's started_at
  used INTEGER NOT NULL,         -- a counter, not a time: larger = used more recently
  size INTEGER NOT NULL,         -- bytes of recording as stored
  recording TEXT NOT NULL        -- deflated JSON, a BLOB (recording.py); JSON text before
);
CREATE INDEX IF NOT EXISTS entries_by_use ON entries (used, size);  -- next use, LRU, total
CREATE TABLE IF NOT EXISTS asks (
  ask TEXT PRIMARY KEY,          -- keys.ask_key: what the user asked, before any I/O
  entry TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT,           -- ISO 8601 UTC
  provider TEXT, model TEXT, preset TEXT, status TEXT,
  prompt TEXT, reasoning TEXT, answer TEXT,
  input_tokens INTEGER, output_tokens INTEGER, reasoning_tokens INTEGER,
  first_token_ms REAL, reasoning_ms REAL, total_ms REAL,
  replay INTEGER NOT NULL DEFAULT 0,  -- 1: served from the replay cache
  trace TEXT NOT NULL,                 -- trace.to_dict() as JSON
  sweep_id TEXT                        -- the sweep the run was part of (None: a single run)
);
"""


def path() -> Path:
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV]).expanduser()
    return cache_dir() / FILE_NAME


def unusable(exc: BaseException, outcome: str = "") -> str:
    """The one sentence for a database that cannot be used (the command line, the magic, a run's
    warning); ``outcome`` says what happened instead, e.g. ``"; the run went on without it"``."""
    return (
        f"The cache and log database {path()} could not be used ({exc}){outcome}: fix its "
        "folder's permissions or delete the file to start over."
    )


def log_enabled(log: bool | None) -> bool:
    if log is not None:
        return bool(log)
    return os.environ.get(LOG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _use_wal(conn: sqlite3.Connection, busy_ms: int) -> None:
    """Put the file in WAL mode once. Two processes opening a new file at once may both ask for
    the switch, and SQLite answers one "locked" at once, without waiting out ``busy_timeout``:
    that one asks again until the other's switch is done (then it is a no-op)."""
    deadline = time.monotonic() + busy_ms / 1000
    while conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:  # (a read-only file is not waited on)
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _connect(db: Path | None = None, busy_ms: int = BUSY_MS) -> sqlite3.Connection:
    db = db or path()
    db.parent.mkdir(parents=True, exist_ok=True)
    # (kept, it is used by one thread at a time, but from any of them: ``_Kept``)
    conn = sqlite3.connect(
        db, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
        _use_wal(conn, busy_ms)
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL's safe setting: no corruption on a crash
        conn.executescript(SCHEMA)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version < SIZES_IN_BYTES:
            _count_bytes(conn)
        if version < SWEEP_IDS:
            _add_sweep_ids(conn)
        if version < SEARCH_INDEX:
            add_index(conn, SEARCH_INDEX)
    except BaseException:
        conn.close()
        raise
    return conn


def _add_sweep_ids(conn: sqlite3.Connection) -> None:
    """The ``sweep_id`` column on a log written before sweeps; idempotent, like the above."""
    conn.execute("BEGIN IMMEDIATE")
    columns = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    if "sweep_id" not in columns:
        conn.execute("ALTER TABLE runs ADD COLUMN sweep_id TEXT")
    conn.execute("CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs (sweep_id)")
    conn.execute(f"PRAGMA user_version = {SWEEP_IDS}")
    conn.execute("COMMIT")


def _count_bytes(conn: sqlite3.Connection) -> None:
    """Sizes recorded in characters by older versions, as bytes (the cap and ``info`` count
    bytes); idempotent, so two kernels doing it at once is harmless."""
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE entries SET size = length(CAST(recording AS BLOB))")
    conn.execute(f"PRAGMA user_version = {SIZES_IN_BYTES}")
    conn.execute("COMMIT")


class _Kept:
    """A connection kept open (opening one and checking the schema costs ten times a lookup),
    and the lock its users take turns under. Reads and writes keep one each, so a write that
    waits for another process's writer lock holds up no read (WAL lets them go on)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.where: tuple[str, int | None] | None = None  # (path, inode) it is open on
        self.conn: sqlite3.Connection | None = None

    def held(self, db: Path, busy_ms: int) -> sqlite3.Connection:
        """The connection to ``db`` (hold ``lock``), opened on first use. Another file, or
        this one deleted or replaced ("delete the file to start over": another inode, as the
        open connection keeps the old one from reuse): a new one."""
        where = (str(db), _inode(db))
        if self.conn is not None and self.where == where and where[1] is not None:
            self.conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
            return self.conn
        self.forget()
        self.conn = _connect(db, busy_ms)
        self.where = (where[0], _inode(db))
        return self.conn

    def forget(self) -> None:
        """Close it (the next use opens one)."""
        with self.lock:
            conn, self.conn, self.where = self.conn, None, None
            if conn is not None:
                with suppress(sqlite3.Error):
                    conn.close()

    @contextmanager
    def lent(self, db: Path, busy_ms: int):
        """The connection, to one thread at a time (another waits ``busy_ms`` at most, as for
        another process); one that failed, or is left in a transaction, is not kept."""
        if not self.lock.acquire(timeout=busy_ms / 1000):
            raise sqlite3.OperationalError("database is locked (by this process's other thread)")
        try:
            conn = self.held(db, busy_ms)
            try:
                yield conn
            except BaseException as exc:
                if isinstance(exc, sqlite3.Error) or conn.in_transaction:
                    self.forget()
                raise
        finally:
            self.lock.release()


_readers, _writers = _Kept(), _Kept()
_forked: list[sqlite3.Connection | None] = []


def _inode(db: Path) -> int | None:
    try:
        return db.stat().st_ino
    except OSError:
        return None


def _forget() -> None:
    """Close the kept connections (the next use opens new ones)."""
    _readers.forget()
    _writers.forget()


def _after_fork() -> None:
    """A forked child opens its own: the parent's connections are never used, nor closed,
    there (nor its locks taken, should a thread have held one at the fork)."""
    global _readers, _writers
    _forked.extend((_readers.conn, _writers.conn))
    _readers, _writers = _Kept(), _Kept()


os.register_at_fork(after_in_child=_after_fork)


@contextmanager
def _reading(db: Path | None = None):
    """A connection for reads only. Where the file cannot be opened for writing (a read-only or
    full disk, no right to create its ``-shm`` file) it is read as it is on disk (``immutable``):
    what a WAL not yet checkpointed holds is then missed, a cache miss rather than a failure."""
    db = db or path()
    with _readers.lock:
        try:
            _readers.held(db, BUSY_MS)
        except sqlite3.OperationalError:
            if not db.is_file():
                raise
            immutable = f"{db.resolve().as_uri()}?immutable=1"
            with closing(sqlite3.connect(immutable, uri=True)) as conn:
                yield conn
            return
        with _readers.lent(db, BUSY_MS) as conn:  # (the one just opened)
            yield conn


@contextmanager
def _writing(db: Path | None = None, busy_ms: int = BUSY_MS):
    """One write transaction, with the writer lock taken at its start."""
    with _writers.lent(db or path(), busy_ms) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def lookup(*, ask: str | None = None, entry: str | None = None) -> dict[str, Any] | None:
    """The recording stored under an entry key, or under the entry an ask key maps to."""
    with _reading() as conn:
        if entry is None:
            found = conn.execute("SELECT entry FROM asks WHERE ask = ?", (ask,)).fetchone()
            if found is None:
                return None
            entry = found[0]
        row = conn.execute("SELECT recording FROM entries WHERE key = ?", (entry,)).fetchone()
    if row is None:
        return None
    _mark_used(entry)
    return decode(row[0])


def _mark_used(entry: str) -> None:
    """Move an entry to the back of the eviction queue. Bookkeeping only: where it cannot be
    written (a read-only or full disk, a writer holding the lock) the entry keeps its place."""
    with suppress(sqlite3.Error, OSError), _writing(busy_ms=MARK_BUSY_MS) as conn:
        conn.execute("UPDATE entries SET used = ? WHERE key = ?", (_next_use(conn), entry))


def save(
    entry: str, ask: str, stored: bytes, recorded_at: str | None, max_mb: float | None = None
) -> None:
    """Store a complete run's recording, ``stored`` as ``recording.Recorder`` writes it
    (replacing any under that key; ``recorded_at``: the run's ``started_at``), map ``ask`` to
    it, then evict the least recently used entries beyond ``max_mb`` (``inf``: no cap)."""
    save_all([(entry, ask, stored, recorded_at)], max_mb)


def save_all(
    recordings: list[tuple[str, str, bytes, str | None]], max_mb: float | None = None
) -> None:
    """``save`` for several runs, ``(entry, ask, stored, recorded_at)`` each, in one
    transaction: a batch's results arrive together, and a transaction per run costs ~20 ms."""
    if max_mb is None:
        max_mb = defaults.cache_max_mb
    with _writing() as conn:
        for entry, ask, stored, recorded_at in recordings:
            conn.execute(  # the size as stored, counted by SQLite (no copy here)
                "INSERT OR REPLACE INTO entries (key, recorded_at, used, size, recording)"
                " VALUES (?1, ?2, ?3, length(CAST(?4 AS BLOB)), ?4)",
                (entry, recorded_at, _next_use(conn), stored),
            )
            conn.execute("INSERT OR REPLACE INTO asks (ask, entry) VALUES (?, ?)", (ask, entry))
        _evict(conn, max_mb * 1_000_000)


def held(entries: list[str]) -> set[str]:
    """Which of ``entries`` the cache holds, asked in a few queries however many there are."""
    found: set[str] = set()
    with _reading() as conn:
        for start in range(0, len(entries), 500):  # (SQLite's limit on parameters is higher)
            part = entries[start : start + 500]
            marks = ", ".join("?" * len(part))
            rows = conn.execute(f"SELECT key FROM entries WHERE key IN ({marks})", part)
            found.update(key for (key,) in rows)
    return found


def link(ask: str, entry: str) -> None:
    with _writing() as conn:
        conn.execute("INSERT OR REPLACE INTO asks (ask, entry) VALUES (?, ?)", (ask, entry))


def _next_use(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COALESCE(MAX(used), 0) + 1 FROM entries").fetchone()[0]


def _evict(conn: sqlite3.Connection, cap: float) -> None:
    total = conn.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0]
    if total <= cap:
        return
    for key, size in conn.execute("SELECT key, size FROM entries ORDER BY used").fetchall():
        if total <= cap:
            break
        conn.execute("DELETE FROM entries WHERE key = ?", (key,))
        total -= size
    conn.execute("DELETE FROM asks WHERE entry NOT IN (SELECT key FROM entries)")


def log_run(trace: dict[str, Any], sweep_id: str | None = None) -> None:
    """One finished run (any status) as a row of ``runs``; the trace never holds a key."""
    log_runs([trace], sweep_id)


def log_runs(traces: list[dict[str, Any]], sweep_id: str | None = None) -> None:
    """Finished runs as rows of ``runs``, in one transaction (a sweep logs its runs in groups:
    one writer lock per group, not per run)."""
    columns = [*_TRACE_COLUMNS, *USAGE_KEYS, *TIMING_KEYS, "replay", "trace", "sweep_id"]
    rows = []
    for trace in traces:
        usage, timing = trace.get("usage") or {}, trace.get("timing") or {}
        row = [trace.get(key) for key in _TRACE_COLUMNS]
        row += [usage.get(key) for key in USAGE_KEYS] + [timing.get(key) for key in TIMING_KEYS]
        row += [1 if trace.get("replay") else 0, json.dumps(trace, ensure_ascii=False), sweep_id]
        rows.append(row)
    with _writing() as conn:
        conn.executemany(
            f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            rows,
        )


def sweep_runs(sweep_id: str) -> list[dict[str, Any]]:
    """The logged traces of one sweep, in the order they were logged."""
    with _reading() as conn:
        found = conn.execute(
            "SELECT trace FROM runs WHERE sweep_id = ? ORDER BY id", (sweep_id,)
        ).fetchall()
    return [json.loads(text) for (text,) in found]


def clear(*, log: bool = False) -> int:
    """Delete every replay entry (and the log too with ``log=True``); returns entries deleted."""
    with _writing() as conn:
        count = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        conn.execute("DELETE FROM entries")
        conn.execute("DELETE FROM asks")
        if log:
            conn.execute("DELETE FROM runs")
    with closing(_connect()) as conn:
        conn.execute("VACUUM")  # give the space back to the disk
    return count


def info() -> dict[str, Any]:
    """Where the file is, how many entries and logged runs it holds, and their size."""
    db = path()
    with _reading(db) as conn:
        entries, size = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM entries"
        ).fetchone()
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    return {
        "path": str(db),
        "entries": entries,
        "entries_mb": round(size / 1_000_000, 2),
        "logged_runs": runs,
        "file_mb": round(db.stat().st_size / 1_000_000, 2) if db.exists() else 0.0,
    }
