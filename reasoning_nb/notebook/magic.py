"""``%%think`` and ``%think``: the cell magic, its session defaults, and configuration.

A ``%%think`` cell runs as an *async* cell (an input transformer adds ``await``), so the kernel
keeps handling widget messages while the model streams: the Stop button and the preset
dropdown work mid-run (ipykernel 7.4 dispatches comm messages during a running async cell).
Where the cell cannot be awaited, it runs on a worker loop and blocks; kernel interrupt still
stops it.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from typing import Any

import anyio
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import Bool, Enum, Float, Int, Unicode

from .. import render
from ..api import call_blocking
from ..config import defaults
from ..core.events import Done
from ..core.history import Conversation
from ..core.presets import PRESETS
from ..core.trace import Trace
from ..errors import ReasoningNBError
from ..providers import catalog
from ..run import Run
from ..terminal import TerminalView
from .listing import list_text

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
    "</style>"
)
_CELL_CALL = re.compile(r"^(\s*)get_ipython\(\)\.run_cell_magic\('think', ")
_ASYNC_ENTRY = "__reasoning_nb_think__"


def _flags(func):
    for decorator in reversed(
        (
            magic_arguments(),
            argument("-m", "--model", help="PROVIDER:MODEL, e.g. ollama:qwen3 or llamacpp:default"),
            argument("-p", "--preset", choices=PRESETS, help="reasoning effort (default: auto)"),
            argument("--budget", type=int, help="reasoning token budget; wins over the preset"),
            argument("--base-url", help="server address, e.g. http://127.0.0.1:8080/v1"),
            argument("--system", help="system prompt"),
            argument("--max-tokens", type=int, help="limit on generated tokens"),
            argument("--temperature", type=float, help="sampling temperature"),
            argument("--timeout", type=float, help="seconds to wait for the next byte"),
            argument(
                "--hide-reasoning",
                action="store_true",
                help="keep the reasoning pane collapsed and quiet (still saved)",
            ),
            argument(
                "--chat",
                metavar="NAME",
                help="continue the named conversation (history is sent with the prompt)",
            ),
            argument(
                "--list",
                action="store_true",
                help="(line form) list providers, running local servers and their models",
            ),
            argument("--debug", action="store_true", help="show the full traceback on errors"),
        )
    ):
        func = decorator(func)
    return func


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
        None, allow_none=True, help="Seconds to wait for the next byte from the server."
    ).tag(config=True)
    max_tokens = Int(None, allow_none=True, help="Default limit on generated tokens.").tag(
        config=True
    )

    def __init__(self, shell=None, **kwargs: Any):
        super().__init__(shell=shell, **kwargs)
        self.session: dict[str, Any] = {}
        self.chats: dict[str, Conversation] = {}
        self.last: Trace | None = None

    # -- the magic -----------------------------------------------------------------------------

    @_flags
    @line_cell_magic
    def think(self, line: str, cell: str | None = None):
        """Ask a reasoning model; the cell body is the prompt.

        %%think --model ollama:qwen3 --preset high
        Why is the sky blue?

        The line form sets session defaults for later cells (%think --model ... --preset ...);
        %think --list shows providers and what local servers are running.
        """
        try:
            args = parse_argstring(self.think, line)
        except Exception as exc:  # argparse's UsageError: one line, not a traceback
            print(f"%think: {exc}; see %%think? for the flags.", file=sys.stderr)
            return None
        if cell is None:
            return self._line(args)
        job = self._prepare(args, cell)
        if job is None:
            return None
        return call_blocking(lambda: self._execute(*job))

    async def think_async(self, line: str, cell: str):
        """The awaited form the input transformer calls (same behaviour as the cell magic)."""
        try:
            args = parse_argstring(self.think, line)
        except Exception as exc:
            print(f"%think: {exc}; see %%think? for the flags.", file=sys.stderr)
            return None
        job = self._prepare(args, cell)
        if job is None:
            return None
        return await self._execute(*job)

    def _line(self, args) -> None:
        if args.list:
            print(call_blocking(list_text))
            return
        changed = {k: v for k, v in self._options(args).items() if v is not None}
        if args.hide_reasoning:
            changed["hide_reasoning"] = True
        if not changed:
            print(self._describe_defaults())
            return
        try:
            if "model" in changed:
                catalog.parse_model(changed["model"])
        except ReasoningNBError as exc:
            print(f"%think: {exc}", file=sys.stderr)
            return
        self.session.update(changed)
        if "model" in changed:
            defaults.model = changed["model"]  # think() in this session follows %think too
        print(self._describe_defaults())

    def _describe_defaults(self) -> str:
        merged = {"model": self.default_model, "preset": self.default_preset, **self.session}
        shown = ", ".join(f"{k}={v}" for k, v in merged.items() if v is not None)
        return f"%%think defaults: {shown or '(none)'}"

    @staticmethod
    def _options(args) -> dict[str, Any]:
        return {
            "model": args.model,
            "preset": args.preset,
            "budget_tokens": args.budget,
            "base_url": args.base_url,
            "system": args.system,
            "max_tokens": args.max_tokens,
            "temperature": args.temperature,
            "timeout": args.timeout,
        }

    def _prepare(self, args, cell: str):
        """Flags + session defaults + config -> (view, options, chat), or None after an error."""
        prompt = cell.strip()
        if not prompt:
            print(
                "%%think: the cell is empty; write the prompt below the %%think line.",
                file=sys.stderr,
            )
            return None
        options = {
            # flag > %think default > REASONING_NB_MODEL > c.ThinkMagics.default_model > discovery
            "model": os.environ.get("REASONING_NB_MODEL") or self.default_model,
            "preset": self.default_preset,
            "timeout": self.timeout,
            "max_tokens": self.max_tokens,
        }
        options.update({k: v for k, v in self.session.items() if k != "hide_reasoning"})
        options.update({k: v for k, v in self._options(args).items() if v is not None})
        hide = args.hide_reasoning or self.session.get("hide_reasoning", False)
        chat = self.chats.setdefault(args.chat, Conversation(args.chat)) if args.chat else None
        try:
            Run(prompt, **options)  # validate flags now: one clear line instead of a widget
        except ReasoningNBError as exc:
            print(f"%%think: {exc}", file=sys.stderr)
            return None
        return prompt, options, hide, chat, args.debug

    async def _execute(self, prompt, options, hide, chat, debug):
        runner = (WidgetRunner if self._use_widget() else TextRunner)(self, hide=hide, debug=debug)
        return await runner.run(prompt, options, chat)

    def _use_widget(self) -> bool:
        if self.widget != "auto":
            return self.widget == "always"
        return getattr(self.shell, "kernel", None) is not None

    def remember(self, trace: Trace, chat: Conversation | None) -> None:
        self.last = trace
        if self.shell is not None:
            self.shell.user_ns["_think"] = trace
        if chat is not None:
            chat.add(trace)

    def history_for(self, chat: Conversation | None, model: str | None) -> list[dict[str, Any]]:
        if chat is None:
            return []
        flavor = "openai-compatible"
        if model:
            flavor = catalog.parse_model(model).provider.flavor
        return chat.messages(flavor)


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
            print(f"\nerror: {error_line(exc, self.debug)}", file=sys.stderr)
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
        )
        self.view.root.add_class(LIVE_CLASS)
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
        if self.scope is not None:  # still running: stop first, then re-run
            self.scope.cancel()
        options = {**self.options, "preset": preset}
        try:
            import asyncio

            asyncio.get_running_loop().create_task(self._stream(options))
        except RuntimeError:  # no loop in this thread (blocking mode): run to the end here
            call_blocking(lambda: self._stream(options))

    async def _stream(self, options: dict[str, Any]) -> Trace:
        history = self.magics.history_for(self.chat, options.get("model"))
        run = Run(self.prompt, history=history, **options)
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


def transform_think_cells(lines: list[str]) -> list[str]:
    """Input transformer: make ``%%think`` cells awaitable, so widget messages flow mid-run."""
    if lines and _CELL_CALL.match(lines[0]):
        lines = [_CELL_CALL.sub(rf"\1await {_ASYNC_ENTRY}(", lines[0], count=1), *lines[1:]]
    return lines


def load_ipython_extension(ipython) -> None:
    magics = ThinkMagics(shell=ipython)
    ipython.register_magics(magics)
    ipython.push({_ASYNC_ENTRY: magics.think_async}, interactive=False)
    if getattr(ipython, "autoawait", False) and transform_think_cells not in (
        ipython.input_transformers_post
    ):
        ipython.input_transformers_post.append(transform_think_cells)


def unload_ipython_extension(ipython) -> None:
    if transform_think_cells in ipython.input_transformers_post:
        ipython.input_transformers_post.remove(transform_think_cells)


__all__ = ["ThinkMagics", "load_ipython_extension", "unload_ipython_extension"]
