"""A sweep through a batch service: make every request, send them, collect the same rows as a
live sweep (``collect``).

Runs the replay cache holds are replayed, not sent. The rest go one batch per model (OpenAI
takes one model per input file; Anthropic is given the same shape), each recorded in the SQLite
file the moment the service has accepted it (``store.batches``): ``aresume(id)`` collects it
after a kernel restart, by its batch id or by the sweep id. An interrupted wait leaves the
batches running at the provider, to be resumed.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio

from ...errors import ConfigError
from ...options import RunOptions
from ...providers import catalog
from ...providers.address import api_key_for, base_url_for
from ...providers.protocols import protocol_module
from ...providers.transport import Clock
from ...run import Run
from ...store import batches as records
from ...store import db as store
from ...store.keys import address_of
from .. import grading
from ..progress import Progress, Tally
from ..prompts import Prompt
from ..result import Sweep
from ..rows import Row
from . import jobs as job_rows
from .collect import Batch, collect, resumable
from .http import Client
from .jobs import Job
from .message_batches import MessageBatches
from .openai_batches import OpenAIBatches
from .service import Service

POLL_S = 30.0
"""Seconds between two looks at a batch: batches take minutes to hours, and each look is a
request against the account's rate limit."""


def supports(model: str) -> bool:
    """Whether a model's requests can go through a batch service (OpenAI, Anthropic)."""
    return job_rows.service_of(model) is not None


async def run_batch(
    prompts: Sequence[Prompt],
    *,
    models: Sequence[str],
    presets: Sequence[str],
    options: Mapping[tuple[str, str], RunOptions],
    sweep_id: str,
    tally: Tally,
    grader: grading.Grader | None = None,
    reasoning_in_frame: bool = True,
    logged: bool = True,
    poll_s: float = POLL_S,
    sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
) -> list[Row]:
    """Every prompt x model x preset through the models' batch services; the rows in the order
    prompt, model, preset (``options[model, preset]`` are the runs' options, as the engine
    makes them). ``tally`` gets the services' states while they run."""
    missing = [m for m in models if not supports(m)]
    if missing:
        raise job_rows.unsupported(missing)
    per_prompt = len(models) * len(presets)
    groups = [  # every request made before any is sent: a missing key fails the sweep here
        _prepare(
            model,
            [
                (
                    _custom_id(prompt_id * per_prompt + model_index * len(presets) + index),
                    prompt_id,
                    prompt,
                    options[model, preset],
                )
                for prompt_id, prompt in enumerate(prompts)
                for index, preset in enumerate(presets)
            ],
            sleep,
        )
        for model_index, model in enumerate(models)
    ]
    rows = {}
    for group in groups:
        rows |= await _replayed(group, sweep_id, tally, grader, reasoning_in_frame)
    batches = [await _submit(group, cids, sweep_id) for group in groups for cids in group.chunks()]
    with resumable(sweep_id):
        rows |= await collect(
            batches, sweep_id, tally, grader, reasoning_in_frame, logged, poll_s, sleep
        )
    return _in_order(rows)


def _custom_id(number: int) -> str:
    """The run's place in the sweep (prompt, model, preset), as the services take an id:
    ``[a-zA-Z0-9_-]{1,64}`` at Anthropic."""
    return f"r{number}"


def _in_order(rows: dict[str, Row]) -> list[Row]:
    return [rows[cid] for cid in sorted(rows, key=lambda cid: int(cid[1:]))]


@dataclass
class Group:
    """One model's requests, made and not sent yet."""

    model: str
    provider: str
    service: Service
    base_url: str
    jobs: dict[str, Job]
    bodies: dict[str, dict[str, Any]]
    options: dict[str, RunOptions]

    def chunks(self) -> list[list[str]]:
        """The custom ids of each batch to send: as many as a batch may hold."""
        cids = list(self.jobs)
        size = self.service.limit
        return [cids[i : i + size] for i in range(0, len(cids), size)]


def _prepare(
    model: str,
    group: list[tuple[str, int, Prompt, RunOptions]],
    sleep: Callable[[float], Awaitable[Any]],
) -> Group:
    first = group[0][3]
    ref = catalog.parse_model(model)
    base_url = base_url_for(ref.provider, first.base_url)
    api_key = api_key_for(ref.provider, base_url, first.api_key, first.api_key_env)
    jobs, bodies, options, headers = {}, {}, {}, {}
    for cid, prompt_id, prompt, run_options in group:
        job = Job(
            custom_id=cid,
            prompt_id=prompt_id,
            prompt=prompt.text,
            model=ref.full,
            preset=run_options.preset,
            budget_tokens=run_options.budget_tokens,
            max_tokens=run_options.max_tokens,
            expected=prompt.expected,
            extra=dict(prompt.extra),
            sample=prompt.sample,
        )
        jobs[cid], request = job_rows.prepare(job, run_options, base_url, api_key)
        bodies[cid], options[cid], headers = request.body, run_options, request.headers
    service = _service(model, base_url, headers, api_key, sleep)
    return Group(ref.full, ref.provider.id, service, base_url, jobs, bodies, options)


async def _replayed(
    group: Group, sweep_id: str, tally: Tally, grader: grading.Grader | None, keep: bool
) -> dict[str, Row]:
    """The runs the replay cache holds (a sweep run again, live or in a batch), replayed as a
    live sweep replays them: never sent, never billed twice. They leave the group."""
    rows = {}
    asked = [j.entry for cid, j in group.jobs.items() if _replays(group.options[cid]) and j.entry]
    held = _held(asked)
    for cid, job in list(group.jobs.items()):
        if job.entry not in held:
            continue
        run = Run(job.prompt, group.options[cid], sample=job.sample)
        tally.started()
        async for _ in run.events():  # found by its request: replayed, with no I/O
            pass
        trace = run.trace
        rows[cid] = grading.grade(
            job_rows.row_of(job, trace, sweep_id=sweep_id, keep_reasoning=keep), grader
        )
        tally.finished(failed=trace.status == "error", cached=True, usage={}, usd=None)
        del group.jobs[cid], group.bodies[cid]
    return rows


def _replays(options: RunOptions) -> bool:
    return bool(options.cache) and not options.refresh


def _held(entries: list[str]) -> set[str]:
    try:
        return store.held(entries) if entries else set()
    except (sqlite3.Error, OSError):  # no cache to read: every run is sent
        return set()


async def _submit(group: Group, cids: list[str], sweep_id: str) -> Batch:
    lines = [(cid, group.bodies[cid]) for cid in cids]
    batch_id = await group.service.submit(lines, sweep_id)
    jobs = {cid: group.jobs[cid] for cid in cids}
    submitted = records.save(
        batch_id,
        sweep_id=sweep_id,
        provider=group.provider,
        address=_address(group.base_url),
        jobs={cid: job.to_dict() for cid, job in jobs.items()},
    )
    return Batch(batch_id, group.service, group.base_url, submitted, jobs)


def _service(
    model: str,
    base_url: str,
    headers: Mapping[str, str],
    api_key: str | None,
    sleep: Callable[[float], Awaitable[Any]],
) -> Service:
    """The client of the model's batch service, with the protocol's own headers (its key and
    API version) and the clock the sweep waits on."""
    # a password in the base URL (https://user:pass@host) is a secret too, as in a run
    secrets = tuple(filter(None, (api_key, urlsplit(base_url).password)))
    client = Client(headers=dict(headers), secrets=secrets, clock=Clock(sleep=sleep))
    if job_rows.service_of(model) == "openai":
        return OpenAIBatches(base_url, client)
    return MessageBatches(base_url, client)


def _address(base_url: str) -> str:
    return address_of(base_url) or base_url


async def aresume(
    batch_or_sweep_id: str,
    *,
    api_key: str | None = None,
    api_key_env: str | None = None,
    base_url: str | None = None,
    grader: grading.Grader | None = None,
    reasoning_in_frame: bool = True,
    on_progress: Callable[[Progress], object] | None = None,
    poll_s: float = POLL_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
) -> Sweep:
    """Collect a batch sweep sent earlier (from this kernel or one before a restart): by one
    batch id, or by the sweep id for all its batches. It waits for the ones still running.
    The key is read again as a run reads it (``api_key=``, ``api_key_env=``, the environment);
    ``base_url=`` gives the address again where the first one held a password."""
    found = records.find(batch_or_sweep_id)
    if not found:
        raise ConfigError(
            f"No batch or batch sweep {batch_or_sweep_id!r} is recorded in {store.path()}: "
            "check the id (it is in the sweep's progress and its rows' sweep_id), and that "
            "REASONING_NB_DB names the same file as when it was sent."
        )
    sweep_id = found[0].sweep_id
    batches = []
    for record in found:
        jobs = {cid: Job.from_dict(data) for cid, data in record.jobs.items()}
        model = next(iter(jobs.values())).model
        info = catalog.parse_model(model).provider
        url = base_url_for(info, base_url or record.address)
        key = api_key_for(info, url, api_key, api_key_env)
        headers = _headers(model, url, key)
        service = _service(model, url, headers, key, sleep)
        first_time = record.collected_at is None
        batches.append(Batch(record.id, service, url, record.submitted_at, jobs, logged=first_time))
    total = sum(len(b.jobs) for b in batches)
    tally = Tally(total, clock, on_progress)
    with resumable(sweep_id):
        rows = await collect(
            batches, sweep_id, tally, grader, reasoning_in_frame, True, poll_s, sleep
        )
    return Sweep(sweep_id, _in_order(rows), tally.progress)


def _headers(model: str, base_url: str, api_key: str | None) -> dict[str, str]:
    """The protocol's headers (key, API version), from a request it builds for nothing."""
    job = Job(custom_id="", prompt_id=0, prompt="", model=model, preset="auto")
    ctx = job_rows.context(job, base_url, api_key)
    proto = protocol_module(catalog.parse_model(model).provider.protocol)
    return proto.build_request(ctx).headers
