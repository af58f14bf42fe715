"""Waiting on submitted batches and reading their results into rows.

Polling reports the services' states as ``Progress.batch_state``; once every batch ended, each
request's result (matched by ``custom_id``: results come in any order) becomes a row, a
complete one also goes to the replay cache under its live request's key, and the runs go to the
run log with the sweep id. The batch record keeps the latest state and when it was collected.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...errors import ProviderError
from ...store import batches as records
from ...store import db as store
from ...store.recording import Recorder
from .. import grading
from ..progress import Tally
from ..rows import Row
from . import jobs as job_rows
from .jobs import Job
from .service import Outcome, Service, Status

GROUP = 500
"""Runs written to the log, and results to the replay cache, in one transaction each."""


@dataclass
class Batch:
    """One submitted batch and what its results need."""

    id: str
    service: Service
    base_url: str
    submitted_at: str
    jobs: dict[str, Job]
    status: Status | None = None
    logged: bool = True
    """Its runs go to the run log when collected (not again when collected a second time)."""


@contextlib.contextmanager
def resumable(sweep_id: str) -> Iterator[None]:
    """A failure while waiting on the batches says how to pick them up again: they run on."""
    try:
        yield
    except ProviderError as exc:
        exc.message += (
            f" The batches keep running at the provider: reasoning_nb.sweep.resume"
            f"({sweep_id!r}) collects them."
        )
        exc.args = (exc.message,)
        raise


async def collect(
    batches: list[Batch],
    sweep_id: str,
    tally: Tally,
    grader: grading.Grader | None,
    keep_reasoning: bool,
    logged: bool,
    poll_s: float,
    sleep: Callable[[float], Awaitable[Any]],
) -> dict[str, Row]:
    """Poll every batch until all ended, then read their results into rows by custom id."""
    for _ in range(sum(len(b.jobs) for b in batches)):
        tally.started()  # all of them are with the service now
    while True:
        for batch in batches:
            if batch.status is None or not batch.status.ended:
                batch.status = await batch.service.status(batch.id)
                _remember(batch.id, batch.status.state)
        seen = [b.status for b in batches if b.status is not None]
        tally.batch(_state(seen, tally.progress.total))
        if all(b.status and b.status.ended for b in batches):
            break
        await sleep(poll_s)
    rows: dict[str, Row] = {}
    for batch in batches:
        rows |= await _read(batch, sweep_id, tally, grader, keep_reasoning, logged and batch.logged)
    return rows


async def _read(
    batch: Batch,
    sweep_id: str,
    tally: Tally,
    grader: grading.Grader | None,
    keep_reasoning: bool,
    log: bool,
) -> dict[str, Row]:
    """One ended batch's results as rows, a line at a time: a results file is never held whole,
    and the log and the replay cache are written in groups."""
    assert batch.status is not None
    pending, rows, unlogged, recordings = dict(batch.jobs), {}, [], []

    def done(outcome: Outcome) -> None:
        job = pending.pop(outcome.custom_id)
        recorder = Recorder(_no_time) if job.cache else None
        trace = job_rows.trace_of(
            job,
            body=outcome.body,
            error=outcome.error,
            status=outcome.status,
            base_url=batch.base_url,
            submitted_at=batch.submitted_at,
            recorder=recorder,
        )
        if recorder is not None and trace.status == "complete" and job.entry:
            # under the live request's key, and as its own ask: a live run asked the same
            # finds it by its request, then links its ask
            recordings.append((job.entry, job.entry, recorder.recording(trace), trace.started_at))
        row = job_rows.row_of(job, trace, sweep_id=sweep_id, keep_reasoning=keep_reasoning)
        rows[job.custom_id] = grading.grade(row, grader)
        usd = (trace.cost or {}).get("usd")
        tally.finished(failed=trace.status == "error", cached=False, usage=trace.usage, usd=usd)
        if log:
            unlogged.append(trace.to_dict())
        if len(unlogged) >= GROUP or len(recordings) >= GROUP:
            _write(unlogged, recordings, sweep_id)

    async for outcome in batch.service.results(batch.id, batch.status):
        if outcome.custom_id in pending:  # (a line twice, or of another batch: once, ours)
            done(outcome)
    missing = batch.status.problem or f"{batch.service.name} gave no result for it."
    for cid in list(pending):
        done(Outcome(cid, error=missing))
    _write(unlogged, recordings, sweep_id)
    _remember(batch.id, batch.status.state, collected=True)
    return rows


def _state(statuses: list[Status], total: int) -> str:
    """The services' words, once each; with how many are done where a service counts them
    while it runs (OpenAI; Anthropic counts only at the end)."""
    words = ", ".join(dict.fromkeys(s.state for s in statuses))
    done = sum(s.done for s in statuses)
    return f"{words}: {done} of {total} done" if done and done < total else words


def _no_time() -> float:
    return 0.0  # a batch result arrives whole: its replay has no pace to keep


def _write(
    traces: list[dict[str, Any]],
    recordings: list[tuple[str, str, bytes, str | None]],
    sweep_id: str,
) -> None:
    """A group of runs to the log and of complete results to the replay cache, a transaction
    each; the lists are emptied. A broken database costs the record, never the rows."""
    with contextlib.suppress(sqlite3.Error, OSError):
        if traces:
            store.log_runs(traces, sweep_id)
    with contextlib.suppress(sqlite3.Error, OSError):
        if recordings:
            store.save_all(recordings)
    traces.clear()
    recordings.clear()


def _remember(batch_id: str, state: str, *, collected: bool = False) -> None:
    """The record keeps the latest state; a broken database must not lose the results."""
    with contextlib.suppress(sqlite3.Error, OSError):
        records.mark(batch_id, state, collected=collected)
