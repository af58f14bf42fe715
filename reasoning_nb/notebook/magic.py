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
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import Bool, Enum, Float, Int, Unicode

from ..api import call_blocking
from ..config import defaults
from ..core.history import Conversation
from ..core.presets import PRESETS
from ..core.trace import Trace
from ..errors import ReasoningNBError
from ..providers import catalog
from ..run import Run
from .compare import CompareTextRunner, CompareWidgetRunner, parse_variants
from .listing import list_text
from .runners import TextRunner, WidgetRunner

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
                "--compare",
                metavar="A,B",
                help="run variants side by side: presets (low,high) or model ids "
                "(ollama:qwen3,ollama:deepseek-r1)",
            ),
            argument(
                "--list",
                action="store_true",
                help="(line form) list providers, running local servers and their models",
            ),
            argument(
                "--stats",
                action="store_true",
                help="(line form) a table of this session's runs: tokens, timing, warnings",
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
        self.traces: list[Trace] = []
        """Every finished run of this session, re-runs included: what ``%think --stats`` shows."""

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
        if args is None:
            return None
        if cell is None:
            return self._line(args)
        job = self._prepare(args, cell)
        return None if job is None else call_blocking(lambda: self._execute(*job))

    async def think_async(self, line: str, cell: str):
        """The awaited form the input transformer calls (same behaviour as the cell magic)."""
        args = self._parse(line)
        job = None if args is None else self._prepare(args, cell)
        return None if job is None else await self._execute(*job)

    def _parse(self, line: str):
        try:
            return parse_argstring(self.think, line)
        except Exception as exc:  # argparse's UsageError: one line, not a traceback
            print(f"%think: {exc}; see %%think? for the flags.", file=sys.stderr)
            return None

    def _line(self, args) -> None:
        if args.compare is not None:
            print(
                "%think: --compare is for the cell form (%%think --compare low,high).",
                file=sys.stderr,
            )
            return
        if args.list:
            print(call_blocking(list_text))
            return
        if args.stats:
            from ..analytics import stats

            display(stats(self.traces))
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
        """Flags + session defaults + config -> the run's arguments, or None after an error."""
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
            if args.compare is not None:
                options = parse_variants(args.compare, options, prompt)
        except ReasoningNBError as exc:
            print(f"%%think: {exc}", file=sys.stderr)
            return None
        return prompt, options, hide, chat, args.debug

    async def _execute(self, prompt, options, hide, chat, debug):
        widget = self._use_widget()
        if isinstance(options, list):  # --compare: a list of variants
            kind = CompareWidgetRunner if widget else CompareTextRunner
        else:
            kind = WidgetRunner if widget else TextRunner
        return await kind(self, hide=hide, debug=debug).run(prompt, options, chat)

    def _use_widget(self) -> bool:
        if self.widget != "auto":
            return self.widget == "always"
        return getattr(self.shell, "kernel", None) is not None

    def remember(self, trace: Trace, chat: Conversation | None) -> None:
        self.last = trace
        self.traces.append(trace)
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
