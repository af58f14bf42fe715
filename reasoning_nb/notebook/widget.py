"""The live view of one ``%%think`` cell: header, status line, run selector, the shown run.

The runner calls ``start_run``, ``on_event`` (once the trace folded the event), ``tick`` while
the run lasts, ``finish`` and ``hand_over``: once the static output below shows the run, the
widget holds no text of it, so a saved notebook keeps the text once. Every update goes through
one :class:`~.pacing.Pacer`; clicks go to the runner through :class:`~.action_row.Actions`.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable

import ipywidgets as W
from ipywidgets.widgets.widget_string import HTMLStyle

from ..core.events import Notice, ReasoningDelta, TextDelta
from ..core.loops import LOOP_NOTICE
from ..core.presets import PRESETS
from ..core.trace import Trace
from ..views.cell_runs import line_for
from .action_row import ActionRow, Actions
from .pacing import TEXT_INTERVAL, TIGHT, Pacer
from .run_view import RunView, close_tree
from .style import HEADER_CLASS, MODEL_CLASS, ROOT_CLASSES, RUNS_CLASS, STATUS_CLASS

# Style values None in Python and "" in the page: set to "", they equal the page's defaults,
# which saved widget state leaves out (~25 bytes a value). (A colour may not be "".)
_UNSET = "font_family", "font_size", "font_style", "font_variant", "font_weight", "text_decoration"

__all__ = ["Actions", "ThinkWidget"]


def _unset_style(kind: type[W.Style]) -> W.Style:
    return kind(**{name: "" for name in _UNSET if kind.class_traits().get(name)})


class ThinkWidget:
    """Header (model, preset, Stop, status), run selector, the shown run's panes, and the
    action row under them (``action_row``)."""

    def __init__(
        self,
        *,
        model: str,
        preset: str,
        hide_reasoning: bool = False,
        fold_on_answer: bool = True,
        max_rate: float = 25.0,
        clock: Callable[[], float] = time.monotonic,
        actions: Actions | None = None,
        line: str = "",
    ) -> None:
        self.model, self.hide_reasoning, self.fold_on_answer = model, hide_reasoning, fold_on_answer
        self.actions = actions or Actions()
        self.line = line  # the cell's %%think line, as the front end sent it
        self.clock = clock
        self.pacer = Pacer.for_view(max_rate, clock)
        self.meter = self.pacer.meter
        self.layout = W.Layout()  # every widget's: each Layout is one more saved model
        self._all: list[RunView] = []
        self.live: RunView | None = None  # the run streaming
        self._shown: RunView | None = None
        self._status_dirty = False
        self._waits = False  # text waits to be sent (known at the last full look)
        self._quiet = False  # True while we set widget values ourselves
        self.handed_over: Trace | None = None  # the run the static output shows (hand_over)

        options = list(PRESETS) + ([preset] if preset not in PRESETS else [])
        html_style = _unset_style(HTMLStyle)  # (the HTML parts and the dropdown share it)
        self.model_label = W.HTML(_model_html(model), layout=self.layout, style=html_style)
        self._labelled = model  # (the model it names: compared at every event)
        self.dropdown = W.Dropdown(
            options=options, value=preset, tooltip="Reasoning preset",
            layout=self.layout, style=html_style,
        )  # fmt: skip
        self.button_style = _unset_style(W.ButtonStyle)
        # (disabled, hidden, before the first run; closed once it ended: none is saved)
        self.stop_button = self._new_stop_button()
        self.status = W.HTML(layout=self.layout, style=html_style, _dom_classes=(STATUS_CLASS,))
        self.selector: W.ToggleButtons | None = None  # made for the second run
        self.body = W.VBox(layout=self.layout)
        self.action_row = ActionRow(self)
        self.header = W.HBox(
            [self.model_label, self.dropdown, self.stop_button, self.status],
            layout=self.layout,
            _dom_classes=(HEADER_CLASS,),
        )
        # (the action row above the run's text: where it is whether the widget or the static
        # output below shows the text, so Pin and Continue never jump)
        self.root = W.VBox(
            [self.header, self.action_row.box, self.body],
            layout=self.layout,
            _dom_classes=ROOT_CLASSES,
        )
        self.dropdown.observe(self._on_preset, "value")

    def _new_stop_button(self, disabled: bool = True) -> W.Button:
        button = W.Button(
            description="Stop", icon="stop", disabled=disabled, tooltip="Stop this run",
            layout=self.layout, style=self.button_style,
        )  # fmt: skip
        button.on_click(self._on_stop)
        return button

    def _show_stop(self, running: bool) -> None:
        if running and self.stop_button.comm is None:  # (closed when the last run ended)
            self.stop_button = self._new_stop_button(disabled=False)
            header = (self.model_label, self.dropdown, self.stop_button, self.status)
            self.meter.set(self.header, children=header)
        elif running:
            self.meter.set(self.stop_button, disabled=False, description="Stop")
        elif self.stop_button.comm is not None:
            children = tuple(c for c in self.header.children if c is not self.stop_button)
            self.meter.set(self.header, children=children)
            self.stop_button.close()
            self.stop_button.disabled = True  # (closed: no message)

    # -- the contract with the runner -----------------------------------------------------------

    @property
    def runs(self) -> list[Trace]:
        """Every finished run, oldest first."""
        return [run.trace for run in self._all if run.finished]

    @property
    def view(self) -> RunView | None:
        """The run on screen (the live one unless an earlier run was picked)."""
        return self._shown

    def start_run(self, trace: Trace) -> None:
        """A new run begins; the one before stays reachable through the run selector."""
        with self.pacer.unpaced() as now:
            if self.live is not None:  # re-run before the last run's finish(): show it stopped
                self._close(self.live, self.live.trace, now)
            self.pacer.new_run()
            self._waits = False
            number = len(self._all) + 1
            run = RunView(trace, number, now, hide_reasoning=self.hide_reasoning,
                          meter=self.meter, layout=self.layout)  # fmt: skip
            self._all.append(run)
            self.live = run
            self._show(run)
            self._show_stop(True)
            self._follow_preset(run)
            self._follow_model(run)
            self._update_selector()
            self._update_actions()
            self._render_status(now)

    def on_event(self, event) -> None:
        """Apply one provider event; sends at most what the pacer allows."""
        run = self.live
        if run is None:
            self.start_run(Trace(model=self.model, preset=str(self.dropdown.value)))
            run = self.live
            assert run is not None
        now = self.clock()
        if run.trace.model and run.trace.model != self._labelled:
            with self.pacer.unpaced(now):
                self._follow_model(run)
        if isinstance(event, (ReasoningDelta, TextDelta)):
            self.pacer.arrived(event.text, now)
        self._status_dirty |= run.apply(event, now, fold=self.fold_on_answer)
        if isinstance(event, Notice) and event.text.startswith(LOOP_NOTICE):
            with self.pacer.unpaced(now):
                self._update_actions()  # Answer now, while it loops
        self._pump(now)

    def tick(self) -> None:
        """Send a pending update if it is due and refresh the elapsed time."""
        self._pump(self.clock())

    def set_phase(self, phase: str, detail: str = "") -> None:
        run = self.live or self._shown
        if run is None:
            return
        if (phase, detail) != (run.phase, run.detail):
            run.phase, run.detail = phase, detail
            self._status_dirty = True
            self._pump(self.clock())

    def finish(self, trace: Trace, *, error_in_cell: bool = False, render: bool = True) -> None:
        """The run ended. ``error_in_cell``: the cell's error line says its error (not twice).
        ``render=False``: no final render, the static output is about to show it, and
        ``hand_over`` (or ``settle``, should there be none) settles the header after it."""
        run = next((r for r in self._all if r.trace is trace), None) or self.live
        if run is None:  # a trace with no live run (e.g. a saved one): show it as a run
            self.start_run(trace)
            run = self.live
            assert run is not None
        with self.pacer.unpaced() as now:
            self._close(run, trace, now, error_in_cell, final=render)
            if render:
                self._settle(run, now)

    def hand_over(self, trace: Trace) -> None:
        """The static output below shows ``trace`` in full from now on: while it is on screen
        the widget shows only its header, selector and actions (``style.LIVE_PAIRING``). The
        status line says how the run ended only now, so no frame says "done" over the live text
        the static output replaces."""
        self.handed_over = trace
        run = self._shown
        if run is not None and self._handed_over(run):
            with self.pacer.unpaced():
                self._show(run)
        self.settle(trace)

    def settle(self, trace: Trace) -> None:
        """The header says how the run of ``trace`` ended (after ``finish(render=False)``)."""
        run = next((r for r in self._all if r.trace is trace), None)
        if run is not None:
            with self.pacer.unpaced() as now:
                self._settle(run, now)

    def _settle(self, run: RunView, now: float) -> None:
        """A run ended: the label, selector, actions and status line say so."""
        self._follow_model(run)
        self._update_selector()
        self._update_actions()
        self._render_status(now)

    def _handed_over(self, run: RunView) -> bool:
        return run.finished and run.trace is self.handed_over

    def _close(
        self,
        run: RunView,
        trace: Trace,
        now: float,
        error_in_cell: bool = False,
        *,
        final: bool = True,
    ) -> None:
        run.end(trace, now)  # (its phase says how it ended)
        if final:
            run.finalize(fold=self.fold_on_answer, error_in_cell=error_in_cell)
        if run is not self._shown:  # it ended while an earlier run was picked
            run.park()
        if run is self.live:
            self.live = None
            self._status_dirty = False
            self._show_stop(False)

    # -- sending ---------------------------------------------------------------------------------

    def _pump(self, now: float) -> None:
        """Send what is due, if the pacer lets it: text and status line, else the status line
        alone (a new phase or warning, no text waiting), else the text alone."""
        run, pacer = self.live, self.pacer
        if run is None:
            return
        shown = self._shown is run
        self._status_dirty |= shown and run.subject_due(now)  # (at most once a second)
        # Nothing may go (no text yet, nor a status line alone while text waits), or the
        # pacer takes no message now: a chunk costs no more than this.
        early = now < pacer.text_at + TEXT_INTERVAL
        if (early and not (self._status_dirty and not self._waits)) or not pacer.ready(1, now):
            return
        run.set_tail_limit(pacer.tail_limit(now))
        if pacer.paused(now):
            run.settle()  # the text paused: show the word (or line) it holds back
        status = shown and (self._status_dirty or pacer.status_due(now))
        waiting = run.max_cost()
        self._waits = bool(waiting)  # (until a flush: more text leaves it waiting)
        free = not (run.reasoning.chars or run.answer.chars)  # (the status is all there is)
        due = pacer.text_due(now, run.byte_cost) if waiting else None
        cost, nbytes = (waiting, due) if due is not None else (0, 0)
        join = run.join_cost() if cost else 0  # (a block cut by force that ended: one piece)
        join = join if pacer.affords(nbytes + join + pacer.byte_slack * TIGHT, now) else 0
        cost, nbytes = cost + bool(join), nbytes + join
        options = [(cost, status)] if cost else []
        # (a new phase comes with its text: the status line never says more than the panes)
        options += [(0, True)] if shown and self._status_dirty and not waiting else []
        options += [(cost, False)] if cost and status else []
        sbytes = 0 if free else pacer.status_bytes
        for cost, status in options:
            if pacer.ready(cost + status, now, nbytes=nbytes * bool(cost) + sbytes * status):
                break
        else:
            return
        before = self.meter.all_bytes
        sent = run.flush(join=bool(join)) if cost else 0
        if cost:
            pacer.text_at, self._waits = now, False
        if status:
            sent += self._render_status(now)
        charged = 0 if free and not cost else self.meter.all_bytes - before
        if cost:
            pacer.sent(sent, now, nbytes=charged)
        else:  # a new phase or warning: counted, but it delays no text
            pacer.note(sent, now, nbytes=charged)

    def _render_status(self, now: float) -> int:
        run = self._shown
        self._status_dirty = False
        self.pacer.status_at = now
        before = self.meter.bytes
        sent = self.meter.set(self.status, value=run.status_html(now) if run else "")
        if sent:
            self.pacer.status_bytes = self.meter.bytes - before
        return sent

    def _show(self, run: RunView) -> int:
        """Put ``run`` on screen (an empty body for the run handed over); park the one before."""
        before, self._shown = self._shown, run
        if self._handed_over(run):  # (off screen first: no frame shows its text closing)
            sent = self.meter.set(self.body, children=())
            run.park()  # (a parked run's unpark is a final render, should it be picked again)
        else:
            sent = run.unpark(fold=self.fold_on_answer)
            sent += self.meter.set(self.body, children=(run.root,))
        if before is not None and before is not run:
            before.park()  # (once off screen: the front end never shows a closed widget)
        return sent

    def _follow_model(self, run: RunView) -> int:
        """The label names the model of the run on screen, once it is known."""
        if run is not self._shown or not run.trace.model:
            return 0
        self._labelled = run.trace.model
        return self.meter.set(self.model_label, value=_model_html(run.trace.model))

    def _follow_preset(self, run: RunView) -> int:
        preset = run.trace.preset
        if preset not in self.dropdown.options or preset == self.dropdown.value:
            return 0
        return self._set_quietly(self.dropdown, value=preset)

    def _set_quietly(self, widget: W.Widget, **traits) -> int:
        self._quiet = True
        try:
            return self.meter.set(widget, **traits)
        finally:
            self._quiet = False

    def _update_selector(self) -> int:
        if len(self._all) < 2:
            return 0
        labels = tuple((run.label(), i) for i, run in enumerate(self._all))
        index = self._all.index(self._shown) if self._shown else 0
        if self.selector is None:  # the second run: the selector joins, under the header
            self.selector = W.ToggleButtons(
                options=labels, value=index, style={"button_width": "auto"},
                layout=self.layout, _dom_classes=(RUNS_CLASS,),
            )  # fmt: skip
            self.selector.observe(self._on_pick, "value")
            kids = (self.header, self.selector, self.action_row.box, self.body)
            return self.meter.set(self.root, children=kids)
        # (new options reset the value: set both, one message)
        return self._set_quietly(self.selector, options=labels, value=index)

    def _update_actions(self) -> int:
        return self.action_row.update(self.flags_line)

    def flags_line(self, trace: Trace) -> str:
        """The cell line that asks for ``trace``'s preset, when the cell's asks another; ""."""
        first = self._all[0].trace.preset if self._all else trace.preset
        return line_for(self.line, trace, first)

    def line_written(self, line: str) -> None:
        """The page put ``line`` in place of the cell's line ("Use these flags"). The saved
        output is updated before the button goes: once it is gone, a save keeps the new line."""
        self.line = line
        if self.actions.line_written is not None:
            self.actions.line_written(line)
        with self.pacer.unpaced():
            self._update_actions()

    def close(self) -> None:
        roots = [self.root, self.button_style, *self.action_row.widgets()]  # (Stop may be gone)
        close_tree(*roots, *(part for run in self._all for part in run.parts))

    # -- user actions ----------------------------------------------------------------------------

    def _on_preset(self, change) -> None:
        if not self._quiet and self.actions.rerun is not None:
            self.actions.rerun(change["new"])

    def _on_stop(self, _button) -> None:
        if self.live is None:
            return
        with self.pacer.unpaced():
            self.meter.set(self.stop_button, disabled=True, description="Stopping…")
        if self.actions.stop is not None:
            self.actions.stop()

    def _on_pick(self, change) -> None:
        if self._quiet or change["new"] is None:
            return
        run = self._all[change["new"]]
        with self.pacer.unpaced() as now:
            self._show(run)
            self._follow_preset(run)
            self._follow_model(run)
            self._update_actions()
            self._render_status(now)


def _model_html(model: str) -> str:
    return f'<span class="{MODEL_CLASS}">{html.escape(model)}</span>'
