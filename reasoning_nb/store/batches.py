"""Submitted batches, in the same SQLite file as the run log: what a kernel restart must not lose.

A batch sent to a provider's batch service (``sweep/batch``) is paid for once it runs, whether
or not the kernel that sent it is still there to collect it. So its id is written here the
moment the service has accepted it, with what the results need to become rows again: the
provider, the address (``keys.address_of``: never credentials), the sweep id and, per request
(``custom_id``), its prompt, model, preset and what was sent. Never the API key: ``resume``
reads it again from the environment (or ``api_key=``).

Like the log, this table is the user's record and is never evicted by the cache's size cap.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from . import db

SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
  id TEXT PRIMARY KEY,       -- the service's batch id (batch_..., msgbatch_...)
  sweep_id TEXT NOT NULL,
  provider TEXT NOT NULL,    -- the profile id: openai, anthropic
  address TEXT NOT NULL,     -- the base URL without credentials
  submitted_at TEXT NOT NULL,
  state TEXT,                -- the service's state when last seen
  collected_at TEXT,         -- set once its results became rows
  jobs TEXT NOT NULL         -- JSON: custom_id -> the request's job (sweep/batch/jobs.py)
);
CREATE INDEX IF NOT EXISTS batches_by_sweep ON batches (sweep_id);
"""


@dataclass(frozen=True)
class BatchRecord:
    id: str
    sweep_id: str
    provider: str
    address: str
    submitted_at: str
    state: str | None
    collected_at: str | None
    jobs: dict[str, dict[str, Any]]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _ready(conn: Any) -> None:
    """The table, made inside the caller's transaction (``executescript`` would commit it)."""
    for statement in filter(str.strip, SCHEMA.split(";")):
        conn.execute(statement)


def save(batch_id: str, *, sweep_id: str, provider: str, address: str, jobs: dict[str, Any]) -> str:
    """Record a batch the service accepted; its ``submitted_at`` is returned."""
    submitted = _now()
    with db._writing() as conn:
        _ready(conn)
        conn.execute(
            "INSERT OR REPLACE INTO batches (id, sweep_id, provider, address, submitted_at, jobs)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (batch_id, sweep_id, provider, address, submitted, json.dumps(jobs)),
        )
    return submitted


def mark(batch_id: str, state: str, *, collected: bool = False) -> None:
    """The service's latest state of the batch, and whether its results are now rows."""
    with db._writing() as conn:
        _ready(conn)
        conn.execute("UPDATE batches SET state = ? WHERE id = ?", (state, batch_id))
        if collected:
            conn.execute("UPDATE batches SET collected_at = ? WHERE id = ?", (_now(), batch_id))


def find(batch_or_sweep_id: str) -> list[BatchRecord]:
    """The batch of that id, or every batch of the sweep of that id (in submission order)."""
    with db._reading() as conn:
        try:
            rows = conn.execute(
                "SELECT id, sweep_id, provider, address, submitted_at, state, collected_at, jobs"
                " FROM batches WHERE id = ?1 OR sweep_id = ?1 ORDER BY submitted_at, rowid",
                (batch_or_sweep_id,),
            ).fetchall()
        except sqlite3.OperationalError as exc:  # no batch was ever sent from here
            if "no such table" in str(exc):
                return []
            raise
    return [BatchRecord(*row[:7], json.loads(row[7])) for row in rows]
