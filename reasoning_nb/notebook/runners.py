"""How a ``%%think`` cell shows its run: a live widget, or text where there is no widget frontend.

Either way the cell ends with one static output that carries the trace in its metadata.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
from IPython.display import display

from ..api import call_blocking
from ..core import rescue
from ..core.continuation import Continuation
from ..core.events import Done, Event
from ..core.history import Conversation
from ..core.schema import HISTORY_KEY, METADATA_KEY
from ..core.trace import Trace
from ..errors import ReasoningNBError
from ..providers.catalog import output_limit
from ..run import Run
from ..views import render
from ..views.cell_runs import CellRuns
from ..views.terminal import TerminalView, inert
from . import interrupts, kernel_status
from .host import executing_cell_line, widget_only
from .style import ERROR_IN_CELL_CLASS, ERROR_IN_CELL_STYLE, PAIRING_STYLE, STATIC_CLASS


def error_line(exc: BaseException, debug: bool) -> str:
    if debug:
        return "".join(traceback.format_exception(exc))
    if isinstance(exc, ReasoningNBError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class CellError(Exception):
    """Fails a ``%%think`` cell (Run All stops there) with one line, not a traceback."""

    def __init__(self, line: str, *, interrupt: bool = False, detail: str = ""):
        super().__init__(line)
        self.interrupt = interrupt
        self.lines = [inert(line), *inert(detail).splitlines()]

    def _render_traceback_(self) -> list[str]:
        return self.lines

    @classmethod
    def stopped(cls) -> CellError:
        return cls("stopped: kernel interrupt", interrupt=True)

    @classmethod
    def failed(cls, traces: list[Trace], debug: bool) -> CellError | None:
        """The error of the first failed run, if one failed (a stopped run is not a failure)."""
        failed = [t for t in traces if t.status == "error"]
        if not failed:
            return None
        error = failed[0].error or "the run failed"
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        if debug:  # --debug: the whole traceback the trace kept
            return cls(f"%%think failed{more}:", detail=error)
        return cls(f"%%think failed: {error.splitlines()[0]}{more}")


class CellMagic(Protocol):
    """What a runner asks of the ``%%think`` magic (``magic.ThinkMagics``)."""

    max_updates_per_second: float
    fold_reasoning: bool

    def history_for(self, chat: Conversation | None, model: str | None) -> list[dict]: ...

    def note_history(self, trace: Trace, chat: Conversation | None, model: str | None): ...

    def remember(self, traces: list[Trace], chat: Conversation | None) -> None: ...


def detached(work: Callable[[], Awaitable[object]]) -> Any:
    """Run ``work()`` after the cell ended (a widget asked for it), the kernel reading busy
    meanwhile: a task on the kernel's loop, to be kept (the loop holds tasks only weakly), or
    None once it ran to its end here, in a thread with no loop (blocking mode)."""

    async def busy() -> object:
        with kernel_status.busy():
            return await work()

    try:
        import asyncio

        return asyncio.get_running_loop().create_task(busy())
    except RuntimeError:  # no loop in this thread
        call_blocking(busy)
        return None


def ended(trace: Trace) -> Trace:
    """``trace``, finished as cancelled if it was still running (its stream was stopped)."""
    return trace.finish("cancelled") if trace.status == "running" else trace


class Runner:
    """Runs a ``%%think`` cell, one run or N variants, streaming into a view; whatever ends a
    stream (Stop, an error, an interrupt), its partial trace is kept. ``run`` returns them."""

    def __init__(self, magics: CellMagic, *, hide: bool, debug: bool):
        self.magics, self.hide, self.debug = magics, hide, debug
        self.scope: anyio.CancelScope | None = None

    def stop(self) -> None:
        if self.scope is not None:
            self.scope.cancel()

    def close(self) -> None:
        """The cell runs again: stop what streams."""
        self.stop()

    async def _stream(self, run: Run, on_event: Callable[[Event], object]) -> Trace:
        """Feed ``run``'s events to ``on_event``; its trace, ended (with its error line)."""
        try:
            async for event in run.events():
                if not isinstance(event, Done):
                    on_event(event)
        except ReasoningNBError as exc:
            self._failed(run.trace, exc)
        finally:
            ended(run.trace)
        return run.trace

    def _failed(self, trace: Trace, exc: ReasoningNBError) -> None:
        if not trace.error or self.debug:
            trace.error = error_line(exc, self.debug)

    async def _stream_all(
        self,
        runs: list[Run],
        limit: int,
        start: Callable[[int, Trace], object] = lambda i, trace: None,
        on_event: Callable[[int, Event], object] = lambda i, event: None,
        done: Callable[[int, Trace], object] = lambda i, trace: None,
    ) -> None:
        """Stream every run, at most ``limit`` at once, telling of run ``i`` as it goes."""
        limiter = anyio.CapacityLimiter(limit)

        async def one(i: int, run: Run) -> None:
            try:
                async with limiter:
                    start(i, run.trace)
                    await self._stream(run, lambda event: on_event(i, event))
            finally:
                done(i, ended(run.trace))

        async with anyio.create_task_group() as tg:
            for i, run in enumerate(runs):
                tg.start_soon(one, i, run)

    async def _live(self, view: Any, work: Callable[[], Awaitable[object]]) -> None:
        """Await ``work()`` in a scope that Stop and an interrupt cancel; ``view`` ticks."""
        interval = 1.0 / max(1.0, self.magics.max_updates_per_second)

        async def tick() -> None:
            while True:
                await anyio.sleep(interval)
                view.tick()

        with anyio.CancelScope() as scope, interrupts.streaming(scope.cancel):
            self.scope = scope
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(tick)
                    try:
                        await work()
                    finally:
                        tg.cancel_scope.cancel()
            finally:
                if self.scope is scope:
                    self.scope = None

    def _new_run(
        self,
        prompt: str,
        options: dict[str, Any],
        chat: Conversation | None,
        continuation: Continuation | None = None,
    ) -> Run:
        model = options.get("model")
        history = self.magics.history_for(chat, model)
        run = Run(prompt, history=history, continuation=continuation, **options)
        self.magics.note_history(run.trace, chat, model)
        return run


class TextRunner(Runner):
    """No widget frontend: stream to stdout, then the static output with the trace metadata."""

    async def run(
        self, prompt: str, options: dict[str, Any], chat: Conversation | None
    ) -> list[Trace]:
        run = self._new_run(prompt, options, chat)
        view = TerminalView(show_reasoning=not self.hide)
        try:
            await self._stream(run, view.on_event)
        finally:
            trace = run.trace
            view.finish(trace)
            self.magics.remember([trace], chat)
            # the text once, as HTML; text/plain sums it up (a console just showed it in full)
            data = render.cell_bundle(trace)
            display(data, raw=True, metadata={METADATA_KEY: trace.to_dict()})
        return [trace]

    def _failed(self, trace: Trace, exc: ReasoningNBError) -> None:
        if self.debug:  # the cell's error line says the rest
            print(f"\nerror: {inert(error_line(exc, True))}", file=sys.stderr)


class WidgetRunner(Runner):
    """A live widget while the model streams, then the static output below it.

    The dropdown and Continue ask for another run in the same widget: queued in the cell while
    it runs, else streamed on the kernel's loop. Either way an interrupt stops it.
    """

    def __init__(self, magics: CellMagic, *, hide: bool, debug: bool):
        super().__init__(magics, hide=hide, debug=debug)
        self.view = None
        self.static = None
        self.runs: list[Trace] = []
        self._in_cell = False  # the cell runs (its last run's error fails it: CellError)
        self._next: tuple[dict[str, Any], Continuation | None] | None = None
        self._driving = False  # a loop (the cell's, or a task's after the cell) takes _next
        self._task = None  # that task: the loop holds tasks only weakly
        self.line = ""  # the cell's %%think line: the saved output says which run it shows
        self._error_in_cell = False  # of the run saved last
        self._streaming: Run | None = None  # (Answer now may end its reasoning)

    async def run(
        self, prompt: str, options: dict[str, Any], chat: Conversation | None
    ) -> list[Trace]:
        from .widget import Actions, ThinkWidget  # ipywidgets only when a widget is shown

        self.prompt, self.options, self.chat = prompt, options, chat
        self.line = executing_cell_line()  # (read now: a re-run's request is a widget message)
        actions = Actions(
            self._rerun, self.stop, self._continue, self._rescue, self._line_written, self._resume
        )
        self.view = ThinkWidget(
            model=options.get("model") or "(default model)",
            preset=options.get("preset") or "auto",
            hide_reasoning=self.hide,
            fold_on_answer=self.magics.fold_reasoning,
            max_rate=self.magics.max_updates_per_second,
            actions=actions,
            line=self.line,
        )
        # The live view is its own output, with no fallback text of its own: the static output
        # below it is the fallback (see PAIRING_STYLE).
        display(widget_only(self.view.root), raw=True)
        self._next = (options, None)
        self._in_cell = True
        try:
            return [await self._drive()]
        finally:
            self._in_cell = False

    def close(self) -> None:
        self._next = None
        self.stop()
        if self.view is not None:
            self.view.close()

    def _rerun(self, preset: str) -> None:
        self._again({**self.options, "preset": preset})

    def _continue(self, trace: Trace, hint: str, number: int) -> None:
        self._again({**self.options, "preset": trace.preset}, Continuation.of(trace, hint, number))

    def _resume(self, trace: Trace, text: str, number: int) -> None:
        """Edit & continue: the model thinks on from the end of ``text`` (the run's reasoning,
        cut and perhaps corrected), then answers."""
        options = {**self.options, "preset": trace.preset, "model": trace.model}
        self._again(options, Continuation.edited_to(trace, text, number))

    def _rescue(self, trace: Trace, action: str, number: int) -> None:
        """Answer now or More room under a run that lost its answer (``core.rescue``); Answer
        now under a live run first asks its server to end the reasoning in the same stream."""
        live = self._streaming
        if action == "answer_now" and live is not None and live.trace is trace:
            self._task = detached(lambda: self._answer_now_live(live, number))
            return
        if action == "answer_now":
            self._answer_now(trace, number)
            return
        limit, had = output_limit(trace.model), self.options.get("max_tokens")
        room = rescue.room(trace, limit, had)
        if room is not None:  # (the widget offers More room only then)
            options = {**self.options, "preset": trace.preset, "max_tokens": room}
            self._again(options, rescue.more_room(trace, room, number))

    def _answer_now(self, trace: Trace, number: int) -> None:
        """Ask again with the reasoning so far, thinking off, and room of its own for the answer
        (the thinking ate the cell's limit)."""
        limit, had = output_limit(trace.model), self.options.get("max_tokens")
        room = rescue.answer_room(trace, limit, had)
        options = {**self.options, "preset": rescue.ANSWER_NOW_PRESET, "max_tokens": room}
        self._again(options, rescue.answer_now(trace, room, number))

    async def _answer_now_live(self, run: Run, number: int) -> None:
        """The server ends the reasoning and the answer follows in this run; where it cannot
        (no such control), ask again as under an ended run."""
        if not await run.end_reasoning():
            self._answer_now(run.trace, number)

    def _line_written(self, line: str) -> None:
        """The page wrote "Use these flags"'s line: the saved output stops offering it."""
        self.line = line
        if self.runs:
            self._save(self.runs[-1], error_in_cell=self._error_in_cell)

    def _again(self, options: dict[str, Any], continuation: Continuation | None = None) -> None:
        self._next = (options, continuation)  # the newest ask wins
        self.stop()  # a run still streaming ends first, as stopped
        if not self._driving:
            self._task = detached(self._drive)

    async def _drive(self) -> Trace:
        self._driving = True
        try:
            trace = None
            while self._next is not None:
                options, continuation = self._next
                self._next = None
                trace = await self._one(options, continuation)
            assert trace is not None
            return trace
        except BaseException:
            self._next = None  # an interrupt also drops a re-run asked for meanwhile
            raise
        finally:
            self._driving = False

    async def _one(self, options: dict[str, Any], continuation: Continuation | None) -> Trace:
        run = self._new_run(self.prompt, options, self.chat, continuation)
        view = self.view
        view.start_run(run.trace)
        view.set_phase("connecting")
        self._streaming = run
        try:
            await self._live(view, lambda: self._stream(run, view.on_event))
        finally:
            self._streaming = None
            trace = ended(run.trace)
            # the cell's last run: its error fails the cell, whose error line says it
            in_cell = self._in_cell and self._next is None and trace.status == "error"
            view.finish(trace, error_in_cell=in_cell, render=False)
            self.runs.append(trace)
            self.magics.remember([trace], self.chat if len(self.runs) == 1 else None)
            try:
                self._save(trace, error_in_cell=in_cell)
            except BaseException:
                view.settle(trace)  # (no static output: the live text stays, its header says)
                raise
            view.hand_over(trace)  # (after the static output shows it: no frame without it)
        return trace

    def _save(self, trace: Trace, *, error_in_cell: bool = False) -> None:
        """Show or update the static output, the earlier runs folded under it."""
        self._error_in_cell = error_in_cell
        data = render.cell_bundle(trace, CellRuns(self.line, tuple(self.runs[:-1])))
        classes, style = STATIC_CLASS, PAIRING_STYLE
        if error_in_cell:
            classes, style = f"{classes} {ERROR_IN_CELL_CLASS}", style + ERROR_IN_CELL_STYLE
        data["text/html"] = f'<div class="{classes}">{style}{data["text/html"]}</div>'
        metadata: dict[str, Any] = {METADATA_KEY: trace.to_dict()}
        if len(self.runs) > 1:
            metadata[HISTORY_KEY] = [t.to_dict() for t in self.runs[:-1]]
        if self.static is None:
            self.static = display(data, raw=True, metadata=metadata, display_id=True)
        else:
            self.static.update(data, raw=True, metadata=metadata)
