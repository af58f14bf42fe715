"""How a ``%%think`` cell shows its run: a live widget, or text where there is no widget frontend.

Either way the cell ends with one static output that carries the trace in its metadata.
"""

from __future__ import annotations

import sys
import traceback
from typing import TYPE_CHECKING, Any

import anyio
from IPython.display import display

from .. import render
from ..api import call_blocking
from ..core.events import Done
from ..core.history import Conversation
from ..core.steering import Continuation
from ..core.trace import Trace
from ..errors import ReasoningNBError
from ..run import Run
from ..terminal import TerminalView, inert

if TYPE_CHECKING:
    from .magic import ThinkMagics

METADATA_KEY = "reasoning_nb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LIVE_CLASS, STATIC_CLASS = "reasoning-nb-live", "reasoning-nb-static"
# A %%think cell leaves two outputs: the live widget, then the static trace (the one output
# with the metadata). Where the widget renders (live, or restored from saved widget state) the
# static twin is hidden; where it cannot ("model not found" after reopening in a Lab that did
# not save widget state) the widget's output is hidden and the static trace shows. Untrusted
# notebooks drop the <style>: there the widget never renders, and the static output shows.
PAIRING_STYLE = (
    "<style>"
    f".jp-OutputArea-child:has(.{LIVE_CLASS}) + .jp-OutputArea-child:has(.{STATIC_CLASS})"
    "{display:none}"
    f".jp-OutputArea-child:has(+ .jp-OutputArea-child .{STATIC_CLASS}):not(:has(.{LIVE_CLASS}))"
    "{display:none}"
    # Code blocks in the static twin, where Lab shows it: the same calm box as the widget's.
    f".{STATIC_CLASS} pre{{background:var(--jp-layout-color2,#f6f8fa);padding:0.5em 0.8em;"
    "border-radius:4px;overflow-x:auto}"
    "</style>"
)


def error_line(exc: BaseException, debug: bool) -> str:
    if debug:
        return "".join(traceback.format_exception(exc))
    if isinstance(exc, ReasoningNBError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class TextRunner:
    """No widget frontend: stream to stdout, then the static output with the trace metadata."""

    def __init__(self, magics: ThinkMagics, *, hide: bool, debug: bool):
        self.magics, self.hide, self.debug = magics, hide, debug

    async def run(self, prompt: str, options: dict[str, Any], chat: Conversation | None):
        run = Run(prompt, history=self.magics.history_for(chat, options.get("model")), **options)
        view = TerminalView(show_reasoning=not self.hide)
        try:
            async for event in run.events():
                if not isinstance(event, Done):
                    view.on_event(event)
        except ReasoningNBError as exc:
            print(f"\nerror: {inert(error_line(exc, self.debug))}", file=sys.stderr)
        finally:
            trace = run.trace
            view.finish(trace)
            self.magics.remember(trace, chat)
            display(render.bundle(trace), raw=True, metadata={METADATA_KEY: trace.to_dict()})


class WidgetRunner:
    """A live widget while the model streams; the final output also carries static fallbacks."""

    def __init__(self, magics: ThinkMagics, *, hide: bool, debug: bool):
        self.magics, self.hide, self.debug = magics, hide, debug
        self.view = None
        self.static = None
        self._rerun_task = None
        self.scope: anyio.CancelScope | None = None
        self.runs: list[Trace] = []

    async def run(self, prompt: str, options: dict[str, Any], chat: Conversation | None):
        from .widget import ThinkWidget  # ipywidgets only when a widget is shown

        self.prompt, self.options, self.chat = prompt, options, chat
        self.view = ThinkWidget(
            model=options.get("model") or "(default model)",
            preset=options.get("preset") or "auto",
            hide_reasoning=self.hide,
            fold_on_answer=self.magics.fold_reasoning,
            max_rate=self.magics.max_updates_per_second,
            on_preset=self._rerun,
            on_stop=self.stop,
            on_continue=self._continue,
        )
        # The live view is its own output, with no fallback text of its own: the static output
        # below it is the fallback (see PAIRING_STYLE).
        view_only = {WIDGET_VIEW: self.view.root._repr_mimebundle_()[WIDGET_VIEW], "text/plain": ""}
        display(view_only, raw=True)
        await self._stream(options)

    def stop(self) -> None:
        if self.scope is not None:
            self.scope.cancel()

    def _rerun(self, preset: str) -> None:
        """The dropdown changed: run the same prompt again in the same widget."""
        self._again({**self.options, "preset": preset})

    def _continue(self, trace: Trace, hint: str, number: int) -> None:
        """Continue under a stopped run: its preset, its reasoning kept, the hint."""
        self._again({**self.options, "preset": trace.preset}, Continuation.of(trace, hint, number))

    def _again(self, options: dict[str, Any], continuation: Continuation | None = None) -> None:
        if self.scope is not None:  # still running: stop first, then run again
            self.scope.cancel()
        try:
            import asyncio

            # Keep a reference: the loop holds tasks only weakly.
            self._rerun_task = asyncio.get_running_loop().create_task(
                self._stream(options, continuation)
            )
        except RuntimeError:  # no loop in this thread (blocking mode): run to the end here
            call_blocking(lambda: self._stream(options, continuation))

    async def _stream(
        self, options: dict[str, Any], continuation: Continuation | None = None
    ) -> Trace:
        history = self.magics.history_for(self.chat, options.get("model"))
        run = Run(self.prompt, history=history, continuation=continuation, **options)
        view = self.view
        view.start_run(run.trace)
        view.set_phase("connecting")
        error: BaseException | None = None
        try:
            with anyio.CancelScope() as scope:
                self.scope = scope
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._tick, 1.0 / max(1.0, self.magics.max_updates_per_second))
                    try:
                        async for event in run.events():
                            if not isinstance(event, Done):
                                view.on_event(event)
                    except ReasoningNBError as exc:
                        error = exc
                    finally:
                        tg.cancel_scope.cancel()
        finally:
            # Runs on stop, error and kernel interrupt alike: the partial trace is kept.
            if self.scope is scope:
                self.scope = None
            trace = run.trace
            if trace.status == "running":
                trace.finish("cancelled")
            if error is not None and not trace.error:
                trace.error = error_line(error, self.debug)
            elif error is not None and self.debug:
                trace.error = error_line(error, True)
            view.finish(trace)
            self.runs.append(trace)
            self.magics.remember(trace, self.chat if len(self.runs) == 1 else None)
            self._save(trace)
        return trace

    async def _tick(self, interval: float) -> None:
        while True:
            await anyio.sleep(interval)
            self.view.tick()

    def _save(self, trace: Trace) -> None:
        """The static output (shown or updated): the trace's bundle with its metadata."""
        data = render.bundle(trace)
        data["text/html"] = f'<div class="{STATIC_CLASS}">{PAIRING_STYLE}{data["text/html"]}</div>'
        metadata: dict[str, Any] = {METADATA_KEY: trace.to_dict()}
        if len(self.runs) > 1:
            metadata[f"{METADATA_KEY}_history"] = [t.to_dict() for t in self.runs[:-1]]
        if self.static is None:
            self.static = display(data, raw=True, metadata=metadata, display_id=True)
        else:
            self.static.update(data, raw=True, metadata=metadata)
