"""``%%think --compare low,high``: several variants of one prompt, run concurrently, side by side.

Each item of ``--compare`` is a preset name (same model, that preset) or a model id (that model,
the cell's preset). The variants run at once (at most ``MAX_CONCURRENT``), each folding its own
Trace. The widget shows one column per variant (a :class:`~.run_view.RunView` each, flushed by a
single ticker under one message budget, final renders included) and one Stop for all.

Once every variant has ended, the static output takes the widget's place (``update_display``)
and the widgets close. That output (``compare_view``, which the exporters share) shows the
summary table, the variants side by side and the answers' diff, saved once as HTML and never
again as widget state. It carries the first trace under ``reasoning_nb`` (exactly one output
carries it) and the others under ``reasoning_nb_variants``.

Model text reaches the front end only escaped, as inert markdown (``live_markdown``, in the
columns' ``Output`` widgets) or through ``render.markdown_html`` (raw HTML off).
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from IPython.display import display, update_display

from ..core.events import Done, Event
from ..core.history import Conversation
from ..core.presets import PRESETS
from ..core.schema import METADATA_KEY, VARIANTS_KEY
from ..core.trace import Trace
from ..errors import ConfigError, ReasoningNBError
from ..providers import catalog
from ..run import Run
from ..views.compare import bundle, cell_bundle, label
from ..views.trace_labels import footer, summary
from .runners import LIVE_CLASS, WIDGET_VIEW, error_line

if TYPE_CHECKING:
    from .magic import ThinkMagics

MAX_CONCURRENT = 4
MAX_VARIANTS = 8
COLUMN_TAIL = 2_000
"""A column's live tail is cut by force past this many chars (a tail is re-sent whole)."""
STATUS_EVERY = 2.0
"""A column's status line refreshes at most this often (its clock counts on in the page)."""
_ENDED = ("complete", "truncated", "error", "cancelled")


class Variant:
    """One column: its label (``compare_view.label`` of its trace) and the run's options."""

    def __init__(self, label: str, options: dict[str, Any]):
        self.label, self.options = label, options


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


def make_runs(
    variants: list[Variant],
    prompt: str,
    history_for: Callable[[str | None], list[dict[str, Any]]],
) -> list[Run]:
    return [Run(prompt, history=history_for(v.options.get("model")), **v.options) for v in variants]


async def run_variants(
    runs: list[Run],
    *,
    on_start: Callable[[int, Trace], None] | None = None,
    on_event: Callable[[int, Event], None] | None = None,
    on_done: Callable[[int, Trace], None] | None = None,
    debug: bool = False,
    limit: int = MAX_CONCURRENT,
) -> list[Trace]:
    """Run them all (at most ``limit`` at once); the traces in order, each finished (complete,
    error or cancelled) also when the group is cancelled."""
    limiter = anyio.CapacityLimiter(limit)

    async def one(i: int) -> None:
        run = runs[i]
        error: BaseException | None = None
        try:
            async with limiter:
                if on_start is not None:
                    on_start(i, run.trace)
                try:
                    async for event in run.events():
                        if on_event is not None and not isinstance(event, Done):
                            on_event(i, event)
                except ReasoningNBError as exc:
                    error = exc
        finally:
            trace = run.trace
            if trace.status not in _ENDED:
                trace.finish("cancelled")
            if error is not None and (not trace.error or debug):
                trace.error = error_line(error, debug)
            if on_done is not None:
                on_done(i, trace)

    async with anyio.create_task_group() as tg:
        for i in range(len(runs)):
            tg.start_soon(one, i)
    return [r.trace for r in runs]


# -- the static output -----------------------------------------------------------------------


def save(traces: list[Trace], *, replace: str | None = None) -> dict[str, Any]:
    """The static output: in place of the live view shown under display id ``replace``, which
    saves the text once (``cell_bundle``), else a new output with the text view's bundle."""
    metadata = {METADATA_KEY: traces[0].to_dict(), VARIANTS_KEY: [t.to_dict() for t in traces[1:]]}
    if replace:
        update_display(cell_bundle(traces), raw=True, metadata=metadata, display_id=replace)
    else:
        display(bundle(traces), raw=True, metadata=metadata)
    return metadata


def _ended(trace: Trace) -> Trace:
    return trace if trace.status in _ENDED else trace.finish("cancelled")


def _remember(magics: ThinkMagics, traces: list[Trace], chat: Conversation | None) -> None:
    for trace in traces:
        magics.record(trace)
    magics.last = traces[0]
    if magics.shell is not None:
        magics.shell.user_ns["_think"] = traces[0]
        magics.shell.user_ns["_compare"] = traces
    if chat is not None:
        chat.add(traces[0])


# -- runners ----------------------------------------------------------------------------------


class CompareTextRunner:
    """No widget: run concurrently, print each variant's result as it finishes."""

    def __init__(self, magics: ThinkMagics, *, hide: bool, debug: bool):
        self.magics, self.hide, self.debug = magics, hide, debug

    async def run(self, prompt: str, variants: list[Variant], chat: Conversation | None):
        labels = [v.label for v in variants]
        print(f"comparing {len(variants)} variants: {' | '.join(labels)}")

        def done(i: int, trace: Trace) -> None:
            print(f"\n== {labels[i]} ==")
            if trace.reasoning and not self.hide:
                print(f"[{summary(trace)}]\n{trace.reasoning}\n[/reasoning]")
            if trace.answer:
                print(trace.answer)
            print(f"({footer(trace)})")
            if trace.error:
                print(f"error ({labels[i]}): {trace.error}", file=sys.stderr)

        runs = make_runs(variants, prompt, lambda model: self.magics.history_for(chat, model))
        try:
            await run_variants(runs, on_done=done, debug=self.debug)
        finally:
            traces = [_ended(r.trace) for r in runs]
            _remember(self.magics, traces, chat)
            save(traces)
        return traces

    def close(self) -> None:
        """Nothing outlives the cell."""


class CompareWidget:
    """Columns side by side (one RunView each) and one Stop for all, while the variants run."""

    def __init__(
        self,
        labels: list[str],
        *,
        hide_reasoning: bool,
        fold_on_answer: bool,
        max_rate: float,
        on_stop: Callable[[], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        import ipywidgets as W
        from ipywidgets.widgets.widget_string import HTMLStyle

        from .kit import Kit
        from .style import KIT_CLASS
        from .throttle import Meter

        self.labels, self.hide, self.fold = labels, hide_reasoning, fold_on_answer
        self.max_rate, self.on_stop, self.clock = max(1.0, max_rate), on_stop, clock
        self.meter = Meter()
        self._layout = layout = W.Layout()  # every part's with no layout of its own
        self.views: list[Any] = [None] * len(labels)
        style = HTMLStyle()  # (the HTML parts share it)
        self.statuses = [W.HTML(value="waiting…", layout=layout, style=style) for _ in labels]
        self.slots = [W.VBox(layout=layout) for _ in labels]
        heads = [f"<b>{html.escape(name)}</b>" for name in labels]
        # The single view's stylesheet (scoped to LIVE_CLASS), which the page asks for (kit).
        self.kit = Kit(layout=layout, _dom_classes=(KIT_CLASS,))
        column = W.Layout(flex="1 1 0", min_width="0", padding="0 0.5em")
        self.columns = [
            W.VBox([W.HTML(head, layout=layout, style=style), status, slot], layout=column)
            for head, status, slot in zip(heads, self.statuses, self.slots, strict=True)
        ]
        self.stop_button = W.Button(
            description="Stop", icon="stop", tooltip="Stop every variant",
            layout=W.Layout(width="auto"),
        )  # fmt: skip
        self.stop_button.on_click(self._on_stop)
        self.root = W.VBox(
            [self.kit, self.stop_button, W.HBox(self.columns, layout=W.Layout(width="100%"))],
            layout=layout,
            _dom_classes=("reasoning-nb-compare-live", LIVE_CLASS),
        )
        # 80% of the rate, a fifth of it as burst: a window of one second stays within the rate,
        # with room for the unpaced messages (a column's start, a click).
        self._refill_rate, self._burst = 0.8 * self.max_rate, max(3.0, self.max_rate / 5)
        self._budget = self._burst  # messages we may send now (a token bucket; below zero
        # after unpaced messages, or a final render dearer than the bucket, which it repays)
        self._at = clock()
        self._next = 0  # round-robin
        self._status_at = [float("-inf")] * len(labels)
        self._phase_shown: list[str | None] = [None] * len(labels)
        self._finals: dict[int, Trace] = {}  # ended columns whose final render waits, in order

    def _refill(self, now: float) -> None:
        self._budget = min(self._burst, self._budget + (now - self._at) * self._refill_rate)
        self._at = now

    def _charge(self, since: int) -> None:
        """Unpaced messages (sent since the meter read ``since``) count against the budget."""
        self._refill(self.clock())
        self._budget -= self.meter.msgs - since

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
        mark = self.meter.msgs
        self._open(i, trace, self.clock())
        self._charge(mark)

    def on_event(self, i: int, event: Event) -> None:
        view = self.views[i]
        view.apply(event, self.clock(), fold=self.fold)

    @property
    def finals_pending(self) -> bool:
        return bool(self._finals)

    def tick(self) -> int:
        """One flush round under the shared budget: a waiting final render first, else the
        columns in turn, text then status line. The column whose turn it is waits for the
        budget its flush needs; the next ones do not overtake it (each cheaper flush would
        spend what it waits for: a column with a long tail to cut would never go out)."""
        now = self.clock()
        self._refill(now)
        if self._finals:
            # What a final render sends is not known ahead (joins, resends): it waits for a
            # full bucket, and the paced flushes wait with it, so it cannot be starved.
            if self._budget < self._burst:
                return 0
            i = next(iter(self._finals))
            got = self._final(i, self._finals.pop(i))
            self._budget -= got
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
            if self._budget < min(need, self._burst):
                break  # (a flush dearer than the burst goes out once the bucket is full)
            got = view.flush() if cost else 0
            if status_due:
                got += self.meter.set(self.statuses[i], value=view.status_html(now))
                self._status_at[i], self._phase_shown[i] = now, view.phase
            self._budget -= got
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
        mark = self.meter.msgs
        self.meter.set(self.stop_button, disabled=True, description="Stopping…")
        self._charge(mark)
        if self.on_stop is not None:
            self.on_stop()


class CompareWidgetRunner:
    """The live columns; then, in their place, the static output with every trace."""

    def __init__(self, magics: ThinkMagics, *, hide: bool, debug: bool):
        self.magics, self.hide, self.debug = magics, hide, debug
        self.scope: anyio.CancelScope | None = None

    def stop(self) -> None:
        """The Stop button: cancel every variant (each keeps its partial trace, cancelled)."""
        if self.scope is not None:
            self.scope.cancel()

    def close(self) -> None:
        """The cell runs again, or the variants ended: stop, and close every widget of the live
        view."""
        self.stop()
        view = getattr(self, "view", None)
        if view is not None:
            from .run_view import close_tree

            runs = [part for run in view.views if run is not None for part in run.parts]
            close_tree(view.root, *runs)

    async def run(self, prompt: str, variants: list[Variant], chat: Conversation | None):
        view = CompareWidget(
            [v.label for v in variants],
            hide_reasoning=self.hide,
            fold_on_answer=self.magics.fold_reasoning,
            max_rate=self.magics.max_updates_per_second,
            on_stop=self.stop,
        )
        self.view = view
        live = {WIDGET_VIEW: view.root._repr_mimebundle_()[WIDGET_VIEW], "text/plain": ""}
        display_id = display(live, raw=True, display_id=True).display_id
        interval = 1.0 / view.max_rate
        runs = make_runs(variants, prompt, lambda model: self.magics.history_for(chat, model))
        try:
            async with anyio.create_task_group() as tg:

                async def ticker() -> None:
                    while True:
                        await anyio.sleep(interval)
                        view.tick()

                tg.start_soon(ticker)
                try:
                    with anyio.CancelScope() as scope:
                        self.scope = scope
                        await run_variants(
                            runs,
                            on_start=view.start,
                            on_event=view.on_event,
                            on_done=view.finish,
                            debug=self.debug,
                        )
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self.scope = None
            traces = [_ended(r.trace) for r in runs]
            _remember(self.magics, traces, chat)
            save(traces, replace=display_id)
            self.close()
        return traces
