"""``%think --sweep FILE`` and ``%%think --sweep``: a prompt set across presets and models.

The flags are declared here, once (``SWEEP_FLAGS``); the magic adds them to its own. The line
form reads the prompts from a CSV or JSONL file, the cell form from its body, one prompt per
line. The engine (``sweep.engine.asweep``) runs them; while it does, a live progress view (the
widget, or a terminal bar where there is none) follows its ``on_progress``; at the end the
static result takes the view's place: an output that survives a reopen and an export.
``_sweep`` holds the :class:`~reasoning_nb.sweep.result.Sweep`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from IPython.display import display

from ..errors import ConfigError, ReasoningNBError
from ..options import Flag, RunOptions, check_number
from ..sweep.analysis import MARGIN
from ..sweep.bar import TerminalBar
from . import kernel_status
from .host import widget_only
from .runners import CellError, Runner


@dataclass(frozen=True)
class _MaybeValue(Flag):
    """A flag whose value may be left out: ``--sweep`` alone (the cell form) reads as ""."""

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "nargs": "?", "const": ""}


SWEEP = _MaybeValue(
    ("--sweep",),
    "run a prompt set across `--presets` and models (`--model a,b`): the prompts of a CSV or "
    "JSONL `FILE` (line form), or the cell's lines, one prompt each (cell form)",
    metavar="FILE",
)
SWEEP_FLAGS = (
    SWEEP,
    Flag(("--presets",), "with `--sweep`: the presets to try, e.g. `low,high`", metavar="A,B"),
    Flag(("--concurrency",), "with `--sweep`: how many runs go at once to one server", int),
    Flag(
        ("--max-usd",),
        "with `--sweep`: stop before the next request would pass this spend",
        float,
        metavar="USD",
    ),
    Flag(
        ("--batch",),
        "with `--sweep`: send it through OpenAI's or Anthropic's batch service, at half price "
        "(`reasoning_nb.sweep.resume(id)` collects it after a restart)",
        bool,
    ),
    Flag(
        ("--margin",),
        "with `--sweep`: recommend the cheapest preset within this much of the best mean grade "
        f"(default {MARGIN:g}: {MARGIN * 100:g} points of a 0-1 grade)",
        float,
    ),
)
"""The sweep's own flags, in the order the help lists them (argparse names each ``dest``)."""
# flag dest -> asweep keyword
_ENGINE = {"concurrency": "concurrency", "max_usd": "max_usd", "batch": "batch"}
_NOT_WITH = ("compare", "chat", "list", "stats", "clear_cache", "search", "reasoning_first")


def _flag_of(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def check_alone(args: Any) -> None:
    """A sweep flag without ``--sweep``, or ``--sweep`` with a flag it does not take: one line."""
    if args.sweep is None:
        named = ("presets", "margin", *_ENGINE)
        stray = [f for f in named if getattr(args, f) not in (None, False)]
        if stray:
            flag = _flag_of(stray[0])
            raise CellError(f"%think: {flag} is for --sweep; add --sweep to the line.")
        return
    clash = [f for f in _NOT_WITH if getattr(args, f, None) not in (None, False)]
    if clash:
        raise CellError(f"%think: --sweep does not take {_flag_of(clash[0])}; drop one of them.")


def cell_prompts(cell: str) -> list[str]:
    """The cell form's prompts: each non-blank line is one."""
    return [line.strip() for line in cell.splitlines() if line.strip()]


@dataclass
class SweepJob:
    """What a sweep cell asked for, checked: the prompts, and the engine's keywords."""

    where: str  # "%think" or "%%think", for its error lines
    prompts: Any  # a list of prompts, or a file's path (the engine reads it)
    models: list[str]
    presets: list[str]
    run_options: dict[str, Any]
    engine: dict[str, Any]
    margin: float = MARGIN


def _items(spec: str | None, flag: str) -> list[str] | None:
    if spec is None:
        return None
    items = [s.strip() for s in spec.split(",")]
    if not all(items):
        raise ConfigError(f"{flag} takes comma-separated items, not {spec!r}.")
    if len(set(items)) != len(items):
        raise ConfigError(f"{flag} lists an item twice: {spec!r}.")
    return items


def prepare(args: Any, cell: str | None, options: dict[str, Any]) -> SweepJob:
    """Flags, the cell and the merged run options -> a checked job; CellError when invalid."""
    check_alone(args)
    where = "%think" if cell is None else "%%think"
    body = (cell or "").strip()
    try:
        if args.sweep and body:
            raise ConfigError(
                f"--sweep {args.sweep} reads its prompts from the file: empty the cell, or drop "
                "the FILE to sweep the cell's lines."
            )
        if args.sweep:
            prompts: Any = args.sweep
        elif cell is None:
            raise ConfigError(
                "--sweep needs a FILE (CSV or JSONL) in the line form, or use a %%think --sweep "
                "cell with one prompt per line."
            )
        else:
            prompts = cell_prompts(body)
            if not prompts:
                raise ConfigError(
                    "the cell has no prompts: write one prompt per line below %%think --sweep."
                )
        # unset options go: the engine's own defaults apply (its replay cache is on)
        run_options = {k: v for k, v in options.items() if v not in (None, False)}
        models = _items(run_options.pop("model", None), "--model")
        if not models:
            raise ConfigError(
                "--sweep needs a model: add --model PROVIDER:MODEL (or several: a,b), or set "
                "one with %think --model."
            )
        presets = _items(args.presets, "--presets") or [run_options.get("preset", "auto")]
        run_options.pop("preset", None)
        check_number("--margin", args.margin, (int, float), minimum=0, finite=True)
        for m in models:  # bad ids, presets and options fail here, before any request
            for p in presets:
                RunOptions(**{**run_options, "model": m, "preset": p})
    except ReasoningNBError as exc:
        raise CellError(f"{where}: {exc}") from None
    engine = {kw: getattr(args, dest) for dest, kw in _ENGINE.items()}
    engine = {kw: value for kw, value in engine.items() if value not in (None, False)}
    margin = MARGIN if args.margin is None else args.margin
    return SweepJob(where, prompts, models, presets, run_options, engine, margin)


class SweepRunner(Runner):
    """Runs a sweep cell: the live progress view, then the static result in its place. Stop
    and an interrupt end it early; the runs that ended are shown (and in the replay cache: the
    cell run again asks only the rest)."""

    def __init__(self, magics: Any, *, widget: bool, debug: bool):
        super().__init__(magics, hide=False, debug=debug)
        self.widget = widget
        self.view: Any = None
        self._on_progress: Callable[[Any], object] = lambda progress: None

    async def run(self, job: SweepJob) -> None:
        """Run it, show it; ``_sweep`` holds it (the cell has no value: its output says it)."""
        from ..sweep.engine import Engine  # (the engine, and pandas, only when a sweep runs)

        try:  # the prompt set is read and every option checked here, before any request
            engine = Engine(
                job.prompts,
                models=job.models,
                presets=job.presets,
                on_progress=lambda progress: self._on_progress(progress),
                **job.engine,
                **job.run_options,
            )
        except ReasoningNBError as exc:
            raise CellError(f"{job.where}: {exc}") from None
        handle = None
        if self.widget:
            from .sweep_view import SweepWidget

            rate = self.magics.max_updates_per_second
            view = self.view = SweepWidget(on_stop=self.stop, max_rate=rate)
            view.update(engine.result().progress)
            view.tick()  # (0 of N at once)
            self._on_progress, finish = view.update, view.finish
            handle = display(widget_only(view.root), raw=True, display_id=True)
        else:
            bar = TerminalBar(sys.stdout, redraw=False)
            self._on_progress, finish = bar, bar.finish
        try:
            with kernel_status.busy():
                await self._live(self.view or _Quiet(), engine.run)
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
            raise CellError.stopped() from None  # (after the runs that ended are shown)
        finally:
            sweep = engine.result()  # (what ended, if an interrupt ends the cell here)
            finish(sweep.progress)
            self._show(sweep, handle, job.margin)
            if self.magics.shell is not None:
                self.magics.shell.user_ns["_sweep"] = sweep
        failed = [row for row in sweep.rows if row.status == "error"]
        if sweep.rows and len(failed) == len(sweep.rows):
            error = (failed[0].error or "the run failed").splitlines()[0]
            raise CellError(f"{job.where} --sweep: every run failed; the first: {error}")

    def _show(self, sweep: Any, handle: Any, margin: float) -> None:
        from .sweep_result import result_bundle

        data, metadata = result_bundle(sweep, margin)
        if handle is None:
            display(data, raw=True, metadata=metadata)
            return
        handle.update(data, raw=True, metadata=metadata)  # the static result in the view's place
        self.view.close()

    def close(self) -> None:
        self.stop()
        if self.view is not None:
            self.view.close()


class _Quiet:
    """The text path's stand-in for a view: the bar prints as the engine tells it."""

    def tick(self) -> None:
        pass


__all__ = ["SWEEP_FLAGS", "SweepRunner", "check_alone", "prepare"]
