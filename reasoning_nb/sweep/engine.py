"""The sweep engine: every prompt x model x preset as one ``Run``, a few at a time per server.

    result = await asweep(questions, models=["ollama:qwen3"], presets=["low", "high"])
    result.frame()

Each run is the one ``Run`` path (``think()``'s), with the replay cache on: a sweep run again,
or one that was interrupted, replays what completed and asks only the rest. Only a request the
server refused (429, 503, 529, with nothing of an answer arrived) is asked again; a completed
run never is, so nothing is billed twice. Every run goes to the run log with the sweep id; rows
keep the prompt text by reference and the trace is dropped once its row is made, so memory
grows with the rows alone (less with ``reasoning_in_frame=False``: reasoning stays in the log).
"""

from __future__ import annotations

import inspect
import secrets
import sqlite3
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import fields
from datetime import datetime, timezone
from typing import Any, NamedTuple

import anyio

from ..api import call_blocking
from ..errors import ConfigError, ProviderError
from ..options import RunOptions
from ..providers import catalog
from ..providers.transport import shared_clients
from ..run import Run
from ..store import db as store
from . import grading
from . import prompts as prompt_sets
from .bar import TerminalBar
from .batch.runner import run_batch
from .budget import Budget
from .progress import CANCELLED, STOPPED_BY_CAP, Progress, Tally
from .prompts import Prompt
from .result import Rows, Sweep
from .rows import Row
from .servers import Gate, limit_of, server_of

REFUSED = frozenset({429, 503, 529})
"""Statuses that say the server did not take the request on (rate limit, overload): asked again
after the shared back-off. Other failures (a 502 from a gateway may follow a billed answer) are
rows with their error."""
ATTEMPTS = 5
"""Times a refused request is asked in all, before its row says the server's refusal."""
UNPRICED = (
    "max_usd cannot hold for {model}: its price is not published, so its runs count as $0; "
    "set a smaller sweep, or watch the provider's own usage page."
)
BACKOFF = 2.0
"""Seconds of the first back-off where the server named none; doubled each time."""


class Job(NamedTuple):
    number: int
    """The run's place in the rows."""
    prompt_id: int
    prompt: Prompt
    model: str
    preset: str


def new_sweep_id() -> str:
    """Readable and sortable: when it began, and 6 hex digits."""
    return f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class Engine:
    """One sweep, ready to run: everything checked before any I/O."""

    def __init__(
        self,
        prompts: Any,
        *,
        models: str | Sequence[str] | None = None,
        presets: str | Sequence[str] | None = None,
        grader: Callable[[str, Row], Any] | str | None = None,
        concurrency: int | Mapping[str, int] | None = None,
        max_usd: float | None = None,
        reasoning_in_frame: bool = True,
        on_progress: Callable[[Progress], object] | None = None,
        sweep_id: str | None = None,
        batch: bool = False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
        **run_options: Any,
    ) -> None:
        for one, given in (("model", models), ("preset", presets)):
            if given is None or one in run_options:
                raise ConfigError(f"A sweep needs {one}s=[...]: a list, or one {one} as text.")
        expected = grader if isinstance(grader, str) else None
        if grader is not None and expected is None and not callable(grader):
            raise ConfigError(
                "grader must be a function (answer, row) -> score, or the name of the prompt "
                f"set's column of expected answers, not {type(grader).__name__}."
            )
        self.grader = None if expected is not None else grader
        self.prompts = prompt_sets.load(prompts, expected)
        self.models, self.presets = _names("models", models), _names("presets", presets)
        if max_usd is not None and not (isinstance(max_usd, int | float) and max_usd >= 0):
            raise ConfigError(f"max_usd must be a number of dollars, at least 0, not {max_usd!r}.")
        if batch and max_usd is not None:  # a batch is sent whole and billed when it ends
            raise ConfigError(
                "max_usd cannot stop a batch partway: leave max_usd out, or sweep without batch."
            )
        self.batch, self._sleep = bool(batch), sleep
        unknown = sorted(set(run_options) - {f.name for f in fields(RunOptions)})
        if unknown:
            raise TypeError(f"sweep() got unexpected keyword arguments: {', '.join(unknown)}.")
        run_options.setdefault("cache", True)
        self.logged = run_options.pop("log", True) is not False
        if not reasoning_in_frame and not self.logged:
            raise ConfigError(
                "reasoning_in_frame=False keeps the reasoning in the run log only: leave log on, "
                "or keep the reasoning in the frame."
            )
        # the engine logs each run itself, with the sweep id; a sweep replays at once
        run_options |= {"log": False, "pace": "instant"}
        self.options = {
            (model, preset): RunOptions(model=model, preset=preset, **run_options)
            for model in self.models
            for preset in self.presets
        }
        self.sweep_id = sweep_id or new_sweep_id()
        self.keep_reasoning = reasoning_in_frame
        free = [m for m in self.models if catalog.parse_model(m).provider.cost is None]
        self.budget = Budget(max_usd, free)
        self.tally = Tally(len(self.prompts) * len(self.options), clock, on_progress)
        self._rows: list[Row | None] = [None] * self.tally.progress.total
        self._gates: dict[str, tuple[Gate, deque[int]]] = {}
        base_url = run_options.get("base_url")
        for model_index, model in enumerate(self.models):
            server, local = server_of(model, base_url)
            if server not in self._gates:
                gate = Gate(server, limit_of(concurrency, server, local), clock, sleep)
                self._gates[server] = (gate, deque())
            self._gates[server][1].extend(self._jobs_of(model_index))
        self._misuse: ConfigError | None = None  # a run's: the sweep raises it
        self._workers: anyio.CancelScope | None = None  # the task group's, while it runs
        self._unlogged: list[dict[str, Any]] = []
        self._logging = False
        self.warnings: list[str] = []
        """What the sweep could not do as asked (the log, the cap), one sentence each."""

    def _jobs_of(self, model_index: int) -> list[int]:
        """The run numbers of one model, prompt by prompt (a prompt's presets go together)."""
        per_prompt, presets = len(self.options), len(self.presets)
        return [
            prompt_id * per_prompt + model_index * presets + preset_index
            for prompt_id in range(len(self.prompts))
            for preset_index in range(presets)
        ]

    def result(self) -> Sweep:
        rows = [row for row in self._rows if row is not None]
        warnings = [*self.warnings, *filter(None, [self.tally.warning])]
        return Sweep(self.sweep_id, rows, self.tally.progress, warnings)

    async def run(self) -> Sweep:
        if self.batch:
            return await self._run_batch()
        try:
            async with shared_clients(), anyio.create_task_group() as workers:
                self._workers = workers.cancel_scope
                for gate, queue in self._gates.values():
                    for _ in range(gate.runs):
                        workers.start_soon(self._worker, gate, queue)
        except BaseException:
            self.tally.stop(CANCELLED)
            raise
        finally:
            with anyio.CancelScope(shield=True):  # the runs that finished reach the log
                await self._flush_log()
        if self._misuse is not None:
            raise self._misuse
        return self.result()

    async def _run_batch(self) -> Sweep:
        """``batch=True``: the whole sweep through the provider's batch service (``sweep.batch``),
        at its price; polled, and resumable by its sweep id after a restart."""
        try:
            self._rows = list(
                await run_batch(
                    self.prompts,
                    models=self.models,
                    presets=self.presets,
                    options=self.options,
                    sweep_id=self.sweep_id,
                    tally=self.tally,
                    grader=self.grader,
                    reasoning_in_frame=self.keep_reasoning,
                    logged=self.logged,
                    sleep=self._sleep,
                )
            )
        except BaseException:
            self.tally.stop(CANCELLED)
            raise
        return self.result()

    async def _worker(self, gate: Gate, queue: deque[int]) -> None:
        while queue and self.tally.progress.stopped is None:
            await self._one(gate, queue.popleft())

    def job(self, number: int) -> Job:
        """Run ``number`` of the sweep (its place in the rows, prompt by prompt)."""
        prompt_id, rest = divmod(number, len(self.options))
        model = self.models[rest // len(self.presets)]
        preset = self.presets[rest % len(self.presets)]
        return Job(number, prompt_id, self.prompts[prompt_id], model, preset)

    async def _one(self, gate: Gate, number: int) -> None:
        job = self.job(number)
        for attempt in range(1, ATTEMPTS + 1):
            await gate.wait()
            reserved = await self.budget.admit(job.model, job.preset)
            if reserved is None or self.tally.progress.stopped is not None:
                self.tally.stop(STOPPED_BY_CAP)
                if reserved is not None:
                    self.budget.release(job.model, job.preset, reserved)
                return
            options = self.options[job.model, job.preset]
            run = Run(job.prompt.text, options, sleep=gate.back_off, sample=job.prompt.sample)
            self.tally.started()
            try:
                refused = await self._ask(run, last=attempt == ATTEMPTS)
            except BaseException:
                self.budget.release(job.model, job.preset, reserved)
                raise
            if self._misuse is not None:
                self.budget.release(job.model, job.preset, reserved)
                return
            self._settle(job, reserved, run.trace)
            if refused is None:
                await self.record(number, run.trace)
                return
            self.tally.retrying()
            gate.hold(refused.retry_after or BACKOFF * 2 ** (attempt - 1))

    async def _ask(self, run: Run, *, last: bool) -> ProviderError | None:
        """Perform ``run``; the error of a request the server refused (to ask again unless it
        is the ``last`` attempt). A ``ConfigError`` (a missing key) stops the sweep."""
        try:
            async with aclosing(run.events()) as events:
                async for _ in events:
                    pass
        except ProviderError as exc:
            if exc.status in REFUSED and exc.trace is None and not last:
                return exc
        except ConfigError as exc:  # every run would say the same: stop here
            self._misuse = exc
            if self._workers is not None:
                self._workers.cancel()
        return None

    def _settle(self, job: Job, reserved: float, trace: Any) -> None:
        """What the run cost, for the cap: a replay bills nothing but tells the price."""
        cost = (trace.cost or {}).get("usd")
        spent = 0.0 if trace.replay is not None else cost or 0.0
        told = trace.status != "error" or bool(trace.usage.get("output_tokens"))
        # a model with no price (a local one) costs nothing; a failed request tells nothing
        price = (cost or 0.0) if told else None
        if told and cost is None and self.budget.max_usd is not None and _priced(trace):
            self._warn(UNPRICED.format(model=job.model))
        self.budget.settle(job.model, job.preset, reserved, spent=spent, cost=price)

    async def record(self, number: int, trace: Any) -> Row:
        """Run ``number`` ended as ``trace``: its row (graded), the log, the progress. Also the
        way in for runs asked elsewhere (a batch service's results)."""
        job = self.job(number)
        row = Row.of(
            trace,
            sweep_id=self.sweep_id,
            prompt_id=job.prompt_id,
            expected=job.prompt.expected,
            keep_reasoning=self.keep_reasoning,
            extra=job.prompt.extra,
        )
        self._rows[number] = row = grading.grade(row, self.grader)
        if self.logged:  # before it is reported done: a cancelled sweep still logs it
            self._unlogged.append(trace.to_dict())
        cached = trace.replay is not None
        usd = None if cached else (trace.cost or {}).get("usd")
        failed = trace.status == "error"
        self.tally.finished(failed=failed, cached=cached, usage=trace.usage, usd=usd)
        await self._flush_log()
        return row

    async def _flush_log(self) -> None:
        """Write the finished runs to the log in a worker thread, in groups: while one group is
        written, the runs that finish meanwhile gather for the next."""
        if self._logging:
            return
        self._logging = True
        try:
            while self._unlogged:
                group, self._unlogged = self._unlogged, []
                try:
                    await anyio.to_thread.run_sync(self._write_log, group)
                except BaseException:  # cancelled before the thread began: the final flush
                    self._unlogged[:0] = group
                    raise
        finally:
            self._logging = False

    def _write_log(self, group: list[dict[str, Any]]) -> None:
        try:
            store.log_runs(group, self.sweep_id)
        except (sqlite3.Error, OSError) as exc:  # the log costs a warning, never the sweep
            self._warn(store.unusable(exc, "; the sweep went on without its log"))

    def _warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


def _priced(trace: Any) -> bool:
    """The provider bills (a hosted API), so a run with no cost had no published price."""
    profile = catalog.PROVIDERS.get(trace.provider)
    return profile is not None and profile.cost is not None


def _names(what: str, given: str | Sequence[str] | None) -> list[str]:
    """``"low,high"`` or ``["low", "high"]``, each once, in order."""
    items = given.split(",") if isinstance(given, str) else given
    names = [item.strip() if isinstance(item, str) else "" for item in items or ()]
    if not names or not all(names):
        raise ConfigError(f"{what} must be a list of names (or one string: a,b), each as text.")
    return list(dict.fromkeys(names))


async def asweep(prompts: Any, **options: Any) -> Sweep:
    """Ask every prompt of ``prompts`` with every model and preset; the ``Sweep`` holds a row per
    run, in the order prompt, model, preset.

    ``prompts``: a list of strings, a DataFrame (a ``prompt`` column; an ``expected`` column is
    graded by the default check) or one of its columns, or a CSV / JSONL / text file's path.
    ``models`` and ``presets``: lists, or one string each (``"low,high"``).
    ``grader``: a function ``(answer, row) -> score``, or the name of the column of expected
    answers. ``concurrency``: runs at once per provider and server (a number, or a mapping by
    provider id; default 4 for a local server, 8 for a hosted API). ``max_usd``: no run is asked
    that could take the estimated spend past it (``progress.stopped == "max_usd"``).
    ``reasoning_in_frame=False``: rows leave the reasoning out (it stays in the run log).
    ``on_progress(progress)`` is called after every change. ``sweep_id``: the id the log files
    the runs under (default: a new one). ``batch=True``: OpenAI and Anthropic models go through
    the provider's batch service at its price (``reasoning_nb.sweep.resume(sweep_id)`` collects
    after a restart). Other keywords are run options (``think()``'s:
    ``base_url``, ``max_tokens``, ``cache``...); the replay cache is on unless ``cache=False``,
    so a sweep run again resumes where it stopped.
    """
    return await Engine(prompts, **options).run()


def _signature(of: Callable[..., Any]) -> inspect.Signature:
    """The engine's options as the signature of ``of`` (for ``help()`` and an editor's hints);
    the test clock stays out of sight."""
    own = inspect.signature(Engine)
    shown = [p for p in own.parameters.values() if p.name not in ("clock", "sleep")]
    return own.replace(parameters=shown, return_annotation=inspect.signature(of).return_annotation)


asweep.__signature__ = _signature(asweep)  # type: ignore[attr-defined]


def sweep(prompts: Any, **options: Any) -> Any:
    """``asweep`` from synchronous code, a notebook cell too (same options): the rows as a pandas
    DataFrame, or as ``Rows`` where pandas is not installed. Ctrl-C stops it; the interrupt
    carries what finished in ``.sweep``. Unless ``on_progress`` is given (``None``: nothing), a
    bar on stderr shows the progress (``%%think --sweep`` shows it as a widget)."""
    options.setdefault("on_progress", TerminalBar(sys.stderr))
    engine = Engine(prompts, **options)
    try:
        result = call_blocking(engine.run)
    except KeyboardInterrupt as interrupt:
        interrupt.sweep = engine.result()  # type: ignore[attr-defined]
        raise
    try:
        return result.frame()
    except ImportError:
        return Rows(result.rows, result.sweep_id)


sweep.__signature__ = _signature(sweep)  # type: ignore[attr-defined]
