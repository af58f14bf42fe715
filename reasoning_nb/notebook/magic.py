"""``%%think`` and ``%think``: the cell magic, its session defaults, and configuration.

A ``%%think`` cell runs as an *async* cell (an input transformer adds ``await``), so the kernel
handles widget messages (Stop, the dropdown) while the model streams; where it cannot be
awaited, it blocks on a worker loop. A failed run fails its cell with one line; Stop does not.
"""

from __future__ import annotations

import shlex
import sqlite3
from collections import deque
from typing import Any

import anyio
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display
from traitlets import Bool, Enum, Float, Int, Unicode, validate

from ..api import call_blocking
from ..config import check_cache_max_mb, configured_model, defaults
from ..core.history import CHOICES, Conversation
from ..core.presets import PRESETS
from ..core.trace import Trace
from ..errors import ReasoningNBError
from ..options import HIDE_REASONING, Flag, given, option_flags
from ..providers import catalog
from ..providers.profile import Profile
from ..run import Run
from ..store import db as store
from ..views.stats import row, session_stats
from . import host, interrupts, kernel_status
from .compare import CompareRunner, CompareWidgetRunner, parse_variants
from .listing import listing
from .runners import CellError, TextRunner, WidgetRunner
from .search_cell import SEARCH_FLAGS, check_search, remember_cell, run_search
from .sweep_cell import SWEEP_FLAGS, SweepRunner, check_alone, prepare

_ASYNC_ENTRY = "__reasoning_nb_think__"
MAX_STATS_ROWS = 10_000
"""Runs ``%think --stats`` remembers (a row of numbers each, no text); the oldest go first."""


CELL_FLAGS = (
    HIDE_REASONING,
    Flag(
        ("--chat",),
        "continue the named conversation across cells (its history is sent with the prompt)",
        metavar="NAME",
    ),
    Flag(
        ("--history",),
        "with `--chat`: earlier turns send back the `reasoning` too where the provider takes it "
        "(the default), or the `answer` only",
        choices=CHOICES,
        metavar="MODE",
    ),
    Flag(
        ("--compare",),
        "run variants side by side: presets (`low,high`) or model ids "
        "(`ollama:qwen3,ollama:deepseek-r1`)",
        metavar="A,B",
    ),
    Flag(("--list",), "(line form) list providers, running local servers and their models", bool),
    Flag(
        ("--stats",),
        "(line form) a table of this session's runs: tokens, timing, cost, warnings",
        bool,
    ),
    Flag(("--clear-cache",), "(line form) delete every cached run (the log is kept)", bool),
    *SEARCH_FLAGS,
    Flag(("--debug",), "show the full traceback on errors", bool),
)
FLAGS = (*option_flags(), *CELL_FLAGS, *SWEEP_FLAGS)  # in the order of its help and the docs


def _flags(func):
    for flag in reversed(FLAGS):  # decorators apply from the inside out
        func = argument(*flag.names, **flag.spec())(func)
    return magic_arguments()(func)


@magics_class
class ThinkMagics(Magics):
    """``%%think`` streams a reasoning model's answer into a live widget."""

    default_model = Unicode(
        None,
        allow_none=True,
        help="Model for cells without --model, e.g. 'ollama:qwen3' (REASONING_NB_MODEL wins).",
    ).tag(config=True)
    default_preset = Enum(
        PRESETS, default_value="auto", help="Preset for cells without --preset."
    ).tag(config=True)
    fold_reasoning = Bool(
        True, help="Fold the reasoning pane to a one-line summary when the answer starts."
    ).tag(config=True)
    max_updates_per_second = Float(
        25.0, help="Upper bound on live widget updates per second (all parts together)."
    ).tag(config=True)
    widget = Enum(
        ("auto", "always", "never"),
        default_value="auto",
        help="Live widget: 'auto' in a kernel with a frontend, 'never' streams text to stdout.",
    ).tag(config=True)
    timeout = Float(
        None, allow_none=True, help="Seconds to wait for the first byte and between bytes."
    ).tag(config=True)
    max_tokens = Int(None, allow_none=True, help="Default limit on generated tokens.").tag(
        config=True
    )

    chat_history = Enum(
        CHOICES,
        default_value="reasoning",
        help="What --chat's earlier turns send back when a cell has no --history: 'reasoning' "
        "(where the provider takes it back) or 'answer' (the answers only).",
    ).tag(config=True)

    cache = Bool(
        False, help="Replay an identical earlier run instead of calling the model (--cache)."
    ).tag(config=True)
    log = Bool(
        False, help="Log every run to the runs table of the cache database (REASONING_NB_LOG=1)."
    ).tag(config=True)
    stop_on_loop = Bool(
        False,
        help="End a run whose reasoning repeats itself (it is always shown as a warning).",
    ).tag(config=True)
    cache_max_mb = Float(
        200.0,
        help="Size cap of the replay cache in MB (inf: none); least recently used runs go first.",
    ).tag(config=True)

    @validate("cache_max_mb")
    def _check_cache_max_mb(self, proposal) -> float:
        return check_cache_max_mb(proposal["value"])  # when set, not after a paid-for run

    def __init__(self, shell=None, **kwargs: Any):
        super().__init__(shell=shell, **kwargs)
        self.session: dict[str, Any] = {}
        self.chats: dict[str, Conversation] = {}
        self.stats_rows: deque[dict[str, Any]] = deque(maxlen=MAX_STATS_ROWS)  # --stats
        self._cell_id: str | None = None  # of the cell running now, where the front end says
        self._outputs: dict[str, Any] = {}  # cell id -> the runner of its %%think output
        self.run_cells: dict[tuple, str] = {}  # a run (views.search.Hit.key) -> its cell id

    # -- the magic -----------------------------------------------------------------------------

    @_flags
    @line_cell_magic
    def think(self, line: str, cell: str | None = None):
        """Ask a reasoning model; the cell body is the prompt.

        %%think --model ollama:qwen3 --preset high
        Why is the sky blue?

        The line form sets session defaults for later cells (%think --model ... --preset ...);
        --compare low,high (or model ids) runs the variants at once, side by side, with a
        table and a diff of the answers; _compare holds their traces. %think --list shows
        providers and what local servers are running; %think --stats tabulates this session's
        runs (reasoning_nb.stats(path) does the same for a notebook).
        """
        args = self._parse(line)
        if args.sweep is None and cell is None:
            return self._line(args)
        try:
            if args.sweep is not None:
                return call_blocking(self._sweep_job(args, cell))
            job = self._prepare(args, cell)
            return call_blocking(lambda: self._execute(*job))
        except KeyboardInterrupt:  # the worker loop's run is cancelled and saved by now
            raise CellError.stopped() from None

    async def think_async(self, line: str, cell: str):
        args = self._parse(host.expand_magic_line(self.shell, line))
        if args.sweep is not None:
            return await self._sweep_job(args, cell)()
        return await self._execute(*self._prepare(args, cell))

    def _parse(self, line: str):
        """The line read as a shell reads it (IPython's own splitter keeps the quotes)."""
        try:
            return self.think.parser.parse_args(shlex.split(line))
        except Exception as exc:  # an unclosed quote; argparse's UsageError: one line
            raise CellError(f"%think: {exc}; see %%think? for the flags.") from None

    def _line(self, args) -> None:
        check_alone(args)
        check_search(args, None)
        if args.compare is not None:
            raise CellError("%think: --compare is for the cell form (%%think --compare low,high).")
        if args.list:
            display(call_blocking(listing))
            return
        if args.stats:
            display(session_stats(self.stats_rows))
            return
        if args.search is not None:
            display(run_search(args.search, args.reasoning_first))
            return
        if args.clear_cache:
            try:
                count = store.clear()
            except (sqlite3.Error, OSError) as exc:  # a corrupt file: one line, as the CLI says
                raise CellError(f"%think: {store.unusable(exc)}") from None
            print(f"%think: cleared {count} cached runs from {store.path()}")
            return
        changed = given(args)
        changed.pop("refresh", None)  # for the cell it is on, never a default
        if args.hide_reasoning:
            changed["hide_reasoning"] = True
        if not changed:
            print(self._describe_defaults())
            return
        try:
            if "model" in changed:
                catalog.parse_model(changed["model"])
        except ReasoningNBError as exc:
            raise CellError(f"%think: {exc}") from None
        self.session.update(changed)
        if "model" in changed:
            defaults.model = changed["model"]  # think() in this session follows %think too
        print(self._describe_defaults())

    def _describe_defaults(self) -> str:
        merged = {"model": self.default_model, "preset": self.default_preset, **self.session}
        shown = ", ".join(f"{k}={v}" for k, v in merged.items() if v is not None)
        return f"%%think defaults: {shown or '(none)'}"

    def _prepare(self, args, cell: str):
        """Flags + session defaults + config -> the run's arguments; CellError when invalid."""
        prompt = cell.strip()
        if not prompt:
            raise CellError("%%think: the cell is empty; write the prompt below the %%think line.")
        check_alone(args)
        check_search(args, cell)
        options = self._options(args)
        defaults.cache_max_mb = self.cache_max_mb
        hide = args.hide_reasoning or self.session.get("hide_reasoning", False)
        if args.history and not args.chat:
            raise CellError("%%think: --history is for --chat; add --chat NAME to the line.")
        chat = self.chats.setdefault(args.chat, Conversation(args.chat)) if args.chat else None
        if chat is not None:
            chat.send = args.history or self.chat_history
            chat.asked = args.history == "reasoning"
        try:
            Run(prompt, **options)  # validate flags now: one clear line instead of a widget
            if args.compare is not None:
                options = parse_variants(args.compare, options, prompt)
        except ReasoningNBError as exc:
            raise CellError(f"%%think: {exc}") from None
        return prompt, options, hide, chat, args.debug

    def _options(self, args) -> dict[str, Any]:
        """The run's options: flag > %think default > configuration > discovery."""
        options = {
            "model": configured_model(self.default_model)[0],  # (config.configured_model)
            "preset": self.default_preset,
            "timeout": self.timeout,
            "max_tokens": self.max_tokens,
            "cache": self.cache,
            "log": True if self.log else None,  # else REASONING_NB_LOG decides
            "stop_on_loop": self.stop_on_loop,
        }
        options.update({k: v for k, v in self.session.items() if k != "hide_reasoning"})
        options.update(given(args))
        return options

    def _sweep_job(self, args, cell: str | None):
        """``--sweep``: checked now (one line, no widget), run by the returned coroutine
        function."""
        job = prepare(args, cell, self._options(args))
        defaults.cache_max_mb = self.cache_max_mb
        runner = SweepRunner(self, widget=self._use_widget(), debug=args.debug)
        self._replace_output(runner)
        return lambda: runner.run(job)

    async def _execute(self, prompt, options, hide, chat, debug) -> None:
        widget = self._use_widget()
        if isinstance(options, list):  # --compare: a list of variants
            kind = CompareWidgetRunner if widget else CompareRunner
        else:
            kind = WidgetRunner if widget else TextRunner
        runner = kind(self, hide=hide, debug=debug)
        self._replace_output(runner)
        try:
            with kernel_status.busy():
                traces = await runner.run(prompt, options, chat)
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt):
            raise CellError.stopped() from None  # the runner saved the partial trace
        failure = CellError.failed(traces, debug)
        if failure is not None:
            raise failure

    def _replace_output(self, runner) -> None:
        if self._cell_id is None:  # the front end did not say which cell (nbclient, console)
            return
        old = self._outputs.pop(self._cell_id, None)
        if old is not None:
            old.close()
        self._outputs[self._cell_id] = runner

    def _pre_run_cell(self, info) -> None:
        self._cell_id = getattr(info, "cell_id", None)

    def _use_widget(self) -> bool:
        if self.widget != "auto":
            return self.widget == "always"
        return getattr(self.shell, "kernel", None) is not None

    def remember(self, traces: list[Trace], chat: Conversation | None) -> None:
        """A cell's runs ended: ``_think`` is the first (the chat's next turn), ``_compare``
        all of a --compare."""
        self.stats_rows.extend(row(trace) for trace in traces)
        for trace in traces:  # (a run from a widget's button: no request names the cell)
            remember_cell(self.run_cells, trace, host.executing_cell_id())
        if self.shell is not None:
            self.shell.user_ns["_think"] = traces[0]
            if len(traces) > 1:
                self.shell.user_ns["_compare"] = traces
        if chat is not None:
            chat.add(traces[0])

    def history_for(self, chat: Conversation | None, model: str | None) -> list[dict[str, Any]]:
        if chat is None:
            return []
        return chat.messages(self._provider(model))

    def note_history(self, trace: Trace, chat: Conversation | None, model: str | None) -> None:
        if chat is not None and (note := chat.notice(self._provider(model))):
            trace.warn(note)

    @staticmethod
    def _provider(model: str | None) -> Profile:
        """The provider a chat's next turn goes to."""
        if not model:
            return catalog.PROVIDERS["openai-compatible"]
        return catalog.parse_model(model).provider


def transform_think_cells(lines: list[str]) -> list[str]:
    """Input transformer: make ``%%think`` cells awaitable, so widget messages flow mid-run."""
    return host.await_cell_magic(lines, "think", _ASYNC_ENTRY)


def load_ipython_extension(ipython) -> None:
    magics = ThinkMagics(shell=ipython)
    ipython.register_magics(magics)
    ipython.events.register("pre_run_cell", magics._pre_run_cell)
    interrupts.install(ipython)
    kernel_status.install(ipython)
    ipython.push({_ASYNC_ENTRY: magics.think_async}, interactive=False)
    if getattr(ipython, "autoawait", False) and transform_think_cells not in (
        ipython.input_transformers_post
    ):
        ipython.input_transformers_post.append(transform_think_cells)


def unload_ipython_extension(ipython) -> None:
    magics = ipython.magics_manager.registry.get("ThinkMagics")
    if magics is not None and magics._pre_run_cell in ipython.events.callbacks["pre_run_cell"]:
        ipython.events.unregister("pre_run_cell", magics._pre_run_cell)
    if transform_think_cells in ipython.input_transformers_post:
        ipython.input_transformers_post.remove(transform_think_cells)


__all__ = ["ThinkMagics", "load_ipython_extension", "unload_ipython_extension"]
