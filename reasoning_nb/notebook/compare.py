"""``%%think --compare low,high``: several variants of one prompt, run concurrently, side by side.

Each item is a preset (same model) or a model id (the cell's preset). The variants run through
the same :class:`~.runners.Runner` as a single run, at most ``MAX_CONCURRENT`` at once, shown as
one column each (a :class:`~.run_view.RunView`) under one :class:`~.pacing.Pacer` and one Stop.
Once all have ended, the static output (``views.compare``: summary, columns, diff) shows them
below the widget, whose columns close, so the text is saved once, as HTML. It carries the first
trace under ``reasoning_nb`` and the others under ``reasoning_nb_variants``. What stays of the
widget is each column's title and preset: another preset re-runs that column alone, live in its
place, and the static output is made again with it (as the single run's preset does).
Model text reaches the page only as inert markdown or through ``render`` (raw HTML off).
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from IPython.display import display

from ..core.events import Event
from ..core.history import Conversation
from ..core.presets import PRESETS
from ..core.schema import METADATA_KEY, VARIANTS_KEY
from ..core.trace import Trace
from ..errors import ConfigError
from ..providers import catalog
from ..run import Run
from ..views.compare import TITLE_STYLE, bundle, cell_bundle, label
from ..views.trace_labels import footer, summary
from .host import widget_only
from .runners import Runner, detached, ended
from .style import COMPARE_CLASS, LIVE_CLASS

MAX_CONCURRENT = 4
MAX_VARIANTS = 8
COLUMN_TAIL = 2_000  # a column's live tail is cut by force past this (it is re-sent whole)
STATUS_EVERY = 2.0  # seconds between a column's status lines (its clock counts in the page)


@dataclass
class Variant:
    label: str
    options: dict[str, Any]


def parse_variants(spec: str, options: dict[str, Any], prompt: str) -> list[Variant]:
    """``low,high`` or ``ollama:qwen3,ollama:deepseek-r1`` -> variants; ConfigError when an item
    is neither a preset nor a valid model id, or the run's options are invalid."""
    items = [s.strip() for s in spec.split(",")]
    if any(not s for s in items) or len(items) < 2:
        raise ConfigError(
            f"--compare takes two or more comma-separated presets or model ids, not {spec!r}."
        )
    if len(items) > MAX_VARIANTS:
        raise ConfigError(f"--compare takes at most {MAX_VARIANTS} variants, not {len(items)}.")
    if len(set(items)) != len(items):
        raise ConfigError(f"--compare lists a variant twice: {spec!r}.")
    variants = []
    for item in items:
        if item in PRESETS:
            opts = {**options, "preset": item}
        else:
            if ":" not in item:
                raise ConfigError(
                    f"--compare: {item!r} is neither a preset ({', '.join(PRESETS)}) "
                    "nor a model id (PROVIDER:MODEL)."
                )
            catalog.parse_model(item)
            opts = {**options, "model": item}
        run = Run(prompt, **opts)  # validate now: one clear line instead of a widget
        variants.append(Variant(label(run.trace), opts))
    return variants


# -- runners ----------------------------------------------------------------------------------


class CompareRunner(Runner):
    """No widget frontend: each variant is printed as it ends, then the static output."""

    async def run(self, prompt: str, variants: list[Variant], chat: Conversation | None):
        # (the chat's next turn is the first variant's, with no notice of its own)
        runs = [
            Run(prompt, history=self.magics.history_for(chat, v.options.get("model")), **v.options)
            for v in variants
        ]
        try:
            await self._variants(runs, [v.label for v in variants])
        finally:
            traces = [ended(r.trace) for r in runs]
            self.magics.remember(traces, chat)
            self._save(traces)
        return traces

    async def _variants(self, runs: list[Run], labels: list[str]) -> None:
        print(f"comparing {len(labels)} variants: {' | '.join(labels)}")

        def done(i: int, trace: Trace) -> None:
            print(f"\n== {labels[i]} ==")
            if trace.reasoning and not self.hide:
                print(f"[{summary(trace)}]\n{trace.reasoning}\n[/reasoning]")
            if trace.answer:
                print(trace.answer)
            print(f"({footer(trace)})")
            if trace.error:
                print(f"error ({labels[i]}): {trace.error}", file=sys.stderr)

        await self._stream_all(runs, MAX_CONCURRENT, done=done)

    def _save(self, traces: list[Trace]) -> None:
        """The static output, in full (a console has no HTML to fold it)."""
        first, *others = (t.to_dict() for t in traces)
        metadata = {METADATA_KEY: first, VARIANTS_KEY: others}
        display(bundle(traces), raw=True, metadata=metadata)
        self.close()


class CompareWidgetRunner(CompareRunner):
    """The live columns (``CompareWidget``); then the static output below them, and a column's
    preset that re-runs it alone."""

    view: CompareWidget | None = None
    static: Any = None  # the static output's display handle
    _next: tuple[int, str] | None = None  # the column re-run asked for, and its preset
    _driving = False
    _task = None  # the re-run's task: the loop holds tasks only weakly
    _closed = False  # the cell ran again: its output and widgets are gone

    async def run(self, prompt: str, variants: list[Variant], chat: Conversation | None):
        self.prompt, self.variants = prompt, list(variants)
        return await super().run(prompt, variants, chat)

    async def _variants(self, runs: list[Run], labels: list[str]) -> None:
        self.histories = [run.history for run in runs]  # a re-run asks with the same turns
        view = self.view = CompareWidget(
            labels,
            presets=[run.trace.preset for run in runs],
            hide_reasoning=self.hide,
            fold_on_answer=self.magics.fold_reasoning,
            max_rate=self.magics.max_updates_per_second,
            on_stop=self.stop,
            on_preset=self._rerun,
        )
        display(widget_only(view.root), raw=True)
        columns = (view.start, view.on_event, view.finish)
        await self._live(view, partial(self._stream_all, runs, MAX_CONCURRENT, *columns))

    def _save(self, traces: list[Trace]) -> None:
        """The static output below the widget (made again after a re-run); the columns hand
        their text over to it."""
        self.traces = traces  # (a re-run sets its column in place: _compare is this list)
        first, *others = (t.to_dict() for t in traces)
        metadata = {METADATA_KEY: first, VARIANTS_KEY: others}
        if self.static is None:
            self.static = display(cell_bundle(traces), raw=True, metadata=metadata, display_id=True)
        else:
            self.static.update(cell_bundle(traces), raw=True, metadata=metadata)
        if self.view is not None:
            self.view.hand_over(traces)

    def _rerun(self, i: int, preset: str) -> None:
        """Column ``i``'s preset changed: run it again with ``preset``, the others kept."""
        self._next = (i, preset)  # the newest ask wins
        self.stop()  # a re-run still streaming ends first, as stopped
        if not self._driving:
            self._task = detached(self._drive)

    async def _drive(self) -> None:
        self._driving = True
        try:
            while self._next is not None:
                i, preset = self._next
                self._next = None
                await self._column(i, preset)
        finally:
            self._next, self._driving = None, False

    async def _column(self, i: int, preset: str) -> None:
        options = {**self.variants[i].options, "preset": preset}
        run = Run(self.prompt, history=self.histories[i], **options)
        view = self.view
        view.reopen(i, label(run.trace))
        at_i = (  # the one run is column i
            lambda _, trace: view.start(i, trace),
            lambda _, event: view.on_event(i, event),
            lambda _, trace: view.finish(i, trace),
        )
        try:
            await self._live(view, partial(self._stream_all, [run], 1, *at_i))
        finally:
            trace = self.traces[i] = ended(run.trace)
            self.variants[i] = Variant(label(trace), options)
            self.magics.remember([trace], None)  # (--stats counts it; _think is it)
            if not self._closed:
                self._save(self.traces)

    def close(self) -> None:
        """The cell runs again: stop, and close every widget."""
        self._next, self._closed = None, True
        self.stop()
        if self.view is not None:
            self.view.close()


class CompareWidget:
    """Columns side by side (one RunView each) and one Stop for all, while the variants run."""

    def __init__(
        self,
        labels: list[str],
        *,
        presets: list[str] | None = None,
        hide_reasoning: bool,
        fold_on_answer: bool,
        max_rate: float,
        on_stop: Callable[[], object] | None = None,
        on_preset: Callable[[int, str], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        import ipywidgets as W
        from ipywidgets.widgets.widget_string import HTMLStyle

        from .assets import AssetsWidget
        from .pacing import Pacer
        from .style import ASSETS_CLASS

        self.hide, self.fold = hide_reasoning, fold_on_answer
        self.on_stop, self.on_preset, self.clock = on_stop, on_preset, clock
        max_rate = max(1.0, max_rate)
        fifth = max(3, round(max_rate / 5))
        # One budget for all: 80% of the rate paced, in bursts of a fifth. No byte budget: a
        # column's tail is cut short instead (COLUMN_TAIL).
        self.pacer = Pacer(max_rate, clock, headroom=fifth, burst=fifth)
        self.meter = self.pacer.meter
        self._layout = layout = W.Layout()  # every part's with no layout of its own
        self.views: list[Any] = [None] * len(labels)
        style = HTMLStyle()  # (the HTML parts share it)
        self.statuses = [W.HTML(value="waiting…", layout=layout, style=style) for _ in labels]
        self.slots = [W.VBox(layout=layout) for _ in labels]
        # A title takes the room its preset leaves; cut to one line (see ``title_html``).
        title, head = W.Layout(flex="1 1 auto", min_width="0"), W.Layout(align_items="center")
        self.titles = [W.HTML(title_html(name), layout=title, style=style) for name in labels]
        preset_layout = W.Layout(width="8em", flex="0 0 auto")
        # Each column's preset: disabled while the columns run, then it re-runs its column.
        presets = presets or ["auto"] * len(labels)
        tip = "Run this column again with this preset"
        self.presets = [
            W.Dropdown(
                options=[*PRESETS, *([p] if p not in PRESETS else [])],
                value=p,
                disabled=True,
                tooltip=tip,
                layout=preset_layout,
                style=style,
            )
            for p in presets
        ]
        for i, dropdown in enumerate(self.presets):
            dropdown.observe(partial(self._on_preset, i), "value")
        self._quiet = False  # True while we set a dropdown's value ourselves
        # The single view's stylesheet (scoped to LIVE_CLASS), which the page asks for.
        self.assets = AssetsWidget(layout=layout, _dom_classes=(ASSETS_CLASS,))
        column = W.Layout(flex="1 1 0", min_width="0", padding="0 0.5em")
        self.columns = [
            W.VBox([W.HBox([name, preset], layout=head), status, slot], layout=column)
            for name, preset, status, slot in zip(
                self.titles, self.presets, self.statuses, self.slots, strict=True
            )
        ]
        self.stop_layout = W.Layout(width="auto")
        self.stop_button = W.Button(
            description="Stop", icon="stop", tooltip="Stop every variant",
            layout=self.stop_layout,
        )  # fmt: skip
        self.stop_button.on_click(self._on_stop)
        self.root = W.VBox(
            [self.assets, self.stop_button, W.HBox(self.columns, layout=W.Layout(width="100%"))],
            layout=layout,
            _dom_classes=(COMPARE_CLASS, LIVE_CLASS),
        )
        self._next = 0  # round-robin
        self._status_at = [float("-inf")] * len(labels)
        self._phase_shown: list[str | None] = [None] * len(labels)
        self._finals: dict[int, Trace] = {}  # ended columns whose final render waits, in order

    def _open(self, i: int, trace: Trace, now: float) -> None:
        from .run_view import RunView

        view = RunView(
            trace, i + 1, now, hide_reasoning=self.hide, meter=self.meter, layout=self._layout
        )
        view.set_tail_limit(COLUMN_TAIL)
        self.views[i] = view
        self.meter.set(self.slots[i], children=(view.root,))
        self.meter.set(self.statuses[i], value=view.status_html(now))
        self._status_at[i], self._phase_shown[i] = now, view.phase

    def start(self, i: int, trace: Trace) -> None:
        """Column ``i`` starts: at once, and the paced flushes after it repay it."""
        now, msgs = self.clock(), self.meter.msgs
        self._open(i, trace, now)
        self.pacer.sent(self.meter.msgs - msgs, now)

    def on_event(self, i: int, event: Event) -> None:
        view = self.views[i]
        view.apply(event, self.clock(), fold=self.fold)

    @property
    def finals_pending(self) -> bool:
        return bool(self._finals)

    def tick(self) -> int:
        """One flush round: a waiting final render first, else the columns in turn. The column
        whose turn it is waits for its budget, and no cheaper one overtakes it (else a column
        with a long tail to cut would never go out)."""
        now, pacer = self.clock(), self.pacer
        if self._finals:
            # (its cost is not known ahead: it waits for a whole burst, and the flushes with
            # it, so it cannot be starved)
            if not pacer.ready(pacer.burst, now):
                return 0
            i = next(iter(self._finals))
            got = self._final(i, self._finals.pop(i))
            pacer.sent(got, now)
            return got
        sent = 0
        n = len(self.views)
        for k in range(n):
            i = (self._next + k) % n
            view = self.views[i]
            if view is None or view.finished:
                continue
            cost = view.max_cost()
            status_due = (  # (a new phase at once: not "connecting…" over streaming text)
                now >= self._status_at[i] + STATUS_EVERY or view.phase != self._phase_shown[i]
            )
            need = cost + status_due
            if not need:
                continue
            if not pacer.ready(min(need, pacer.burst), now):
                break  # (a flush dearer than a burst goes out once a whole burst is free)
            got = view.flush() if cost else 0
            if status_due:
                got += self.meter.set(self.statuses[i], value=view.status_html(now))
                self._status_at[i], self._phase_shown[i] = now, view.phase
            pacer.sent(got, now)
            sent += got
            self._next = (i + 1) % n
        return sent

    def finish(self, i: int, trace: Trace) -> None:
        """Column ``i`` ended: its final render waits for the budget (see ``tick``)."""
        view = self.views[i]
        if view is not None:
            view.end(trace, self.clock())  # so its time stops now, and tick leaves it be
        self._finals[i] = trace

    def _final(self, i: int, trace: Trace) -> int:
        now, mark = self.clock(), self.meter.msgs
        if self.views[i] is None:  # cancelled before it started
            self._open(i, trace, now)
        view = self.views[i]
        if not view.finished:
            view.end(trace, now)
        view.detail = trace.error or ""  # (a column has no error line of its own)
        view.finalize(fold=self.fold)
        self.meter.set(self.statuses[i], value=view.status_html(now))
        return self.meter.msgs - mark

    def _on_stop(self, _button) -> None:
        with self.pacer.unpaced():
            self.meter.set(self.stop_button, disabled=True, description="Stopping…")
        if self.on_stop is not None:
            self.on_stop()

    def _on_preset(self, i: int, change) -> None:
        if not self._quiet and self.on_preset is not None:
            self.on_preset(i, change["new"])

    # -- after the run: the static output shows the columns ----------------------------------

    def hand_over(self, traces: list[Trace]) -> None:
        """The static output below shows every column from now on: close their views, keep
        each column's title and preset (as ``traces`` have them now), the presets enabled;
        Stop hides, keeping its room, until a column runs again."""
        from .run_view import close_tree

        with self.pacer.unpaced():
            for i, view in enumerate(self.views):
                if view is not None:
                    close_tree(*view.parts, keep=(self._layout,))
                    self.meter.set(self.slots[i], children=())
                self.meter.set(self.statuses[i], value="")
                self.meter.set(self.titles[i], value=title_html(label(traces[i])))
            self._quiet = True
            try:
                for dropdown, trace in zip(self.presets, traces, strict=True):
                    if trace.preset in dropdown.options and trace.preset != dropdown.value:
                        self.meter.set(dropdown, value=trace.preset)
                    self.meter.set(dropdown, disabled=False)
            finally:
                self._quiet = False
            self.meter.set(self.stop_layout, visibility="hidden")  # (its room kept: no jump)
        self.views = [None] * len(self.views)
        self._finals.clear()

    def reopen(self, i: int, name: str) -> None:
        """Column ``i`` runs again, as ``name``: Stop back, the presets disabled until it ends."""
        with self.pacer.unpaced():
            self.meter.set(self.titles[i], value=title_html(name))
            for dropdown in self.presets:
                self.meter.set(dropdown, disabled=True)
            self.meter.set(self.stop_layout, visibility=None)
            self.meter.set(self.stop_button, disabled=False, description="Stop")

    def close(self) -> None:
        """Close every widget (the cell runs again)."""
        from .run_view import close_tree

        close_tree(self.root, *(part for v in self.views if v is not None for part in v.parts))


def title_html(name: str) -> str:
    """A column's title, on one line (whole in its tooltip): the columns start level. (Sized
    by its box, not its text, so a long one leaves its preset the room it needs.)"""
    name, style = html.escape(name), f"display:block;contain:inline-size;{TITLE_STYLE}"
    return f'<b style="{style}" title="{name}">{name}</b>'
