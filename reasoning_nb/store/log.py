"""Rows from the trace log, so presets can be compared across notebooks and weeks.

    stats("log")                          # the default log (or $REASONING_NB_DB)
    stats("runs.sqlite3", since="2025-06-01")

The log is the SQLite file ``%%think`` appends each run to when logging is on. It is opened
read-only (``mode=ro``): reading never creates, migrates or locks it for writing. Columns are
selected by name, so a later writer's extra columns do not matter. Each run is rebuilt from its
``trace`` column through the same checks as a saved notebook, so a logged run and the same run
read from a notebook give the same row.

Replays (``replay = 1``: served from the replay cache, not the model) are listed and marked
``replay`` but never plotted: their tokens and times are the recorded run's, and that run is
usually in the log already, so plotting both would count one run twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from ..core.text import parse_time
from . import db

LOG = "log"
"""``stats(LOG)`` reads the default log."""
LOG_SUFFIXES = (".sqlite3", ".sqlite", ".db")
HOW_TO_LOG = (
    "turn logging on with c.ThinkMagics.log = True (or REASONING_NB_LOG=1 before starting "
    "Jupyter), run some %%think cells, then call stats('log') again"
)


class Reader(Protocol):
    """What takes the logged runs (the stats table's reader)."""

    def add_note(self, text: str) -> None: ...

    def add(self, data: Any, source: str, *, replay: bool = False) -> None: ...


def is_log(source: str | os.PathLike) -> bool:
    return source == LOG or Path(source).suffix.lower() in LOG_SUFFIXES


def utc(value: Any) -> datetime:
    """An ISO date or datetime (str, ``date`` or ``datetime``) as an aware UTC datetime; a
    naive one is taken to be UTC already, as the log writes it."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        return parse_time(value)
    else:
        raise TypeError(f"not a date: {type(value).__name__}")
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def _since(since: Any) -> datetime | None:
    if since is None:
        return None
    try:
        return utc(since)
    except (TypeError, ValueError):
        raise ValueError(f"since={since!r} is not an ISO date or datetime") from None


def read_log(source: str | os.PathLike, since: Any, reader: Reader) -> None:
    """Add each logged run (started at or after ``since``, if given) to ``reader`` as
    ``log #<id>``, in the order they were logged."""
    path = db.path() if source == LOG else Path(source)
    cutoff = _since(since)
    if not path.is_file():
        raise FileNotFoundError(f"No trace log at {path}: {HOW_TO_LOG}.")
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        runs = connection.execute(
            "SELECT id, started_at, replay, trace FROM runs ORDER BY id"
        ).fetchall()
    except sqlite3.DatabaseError as exc:  # not SQLite, or no runs table
        raise ValueError(f"{path} is not a reasoning_nb trace log ({exc})") from None
    finally:
        connection.close()
    for run_id, started_at, replay, text in runs:
        label = f"log #{run_id}"
        if cutoff is not None:
            try:
                if utc(started_at) < cutoff:
                    continue
            except (TypeError, ValueError):  # cannot be said to be recent
                reader.add_note(f"{label}: its start time cannot be read; left out (since= given)")
                continue
        try:
            data = json.loads(text)
        except (TypeError, ValueError, RecursionError):
            reader.add_note(f"{label}: its trace is not JSON; skipped")
            continue
        # The replay column is the writer's word; the trace's own note of it (not a field the
        # notebook reader knows) is taken out so it does not read as an unknown field.
        recorded = data.pop("replay", None) if isinstance(data, dict) else None
        reader.add(data, label, replay=bool(replay) or bool(recorded))
