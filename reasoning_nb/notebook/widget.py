"""The live view of one ``%%think`` cell: header, status line, run selector, the shown run.

The magic drives it: ``start_run(trace)``, ``on_event(event)`` for every provider event (once
the trace has folded it: the run's view reads its text from the trace per screen update),
``tick()`` about every ``1 / max_rate`` s while the run lasts, ``finish(trace, twin=True)`` at
the end, then ``pair(trace)`` once the static output below shows that run: from then on the
widget holds no text of it (a saved notebook keeps the text once, as that output's HTML). Each
run's panes live in a :class:`~.run_view.RunView`, whose texts are ``Output`` widgets that the
front end renders as markdown (:mod:`.live_text`); an earlier run picked is made again whole.
All traffic goes through one :class:`~.throttle.Throttle`: at most ``max_rate`` update messages
a second in total, the first token at once, the live tails at most ``1 / TEXT_INTERVAL`` times a
second, and at most ``BYTE_RATIO`` x the text received + ``BYTE_SLACK`` + ``BYTE_RATE`` a second
of update state before the final render. A tail is re-sent whole at each update, so while text
arrives slowly the tails are cut shorter (``TAIL_SECONDS`` of text) and go out less often. The
status line's clock counts on in the page; its other figures ride along with the text.
"""

from __future__ import annotations

import html
import time
from collections import deque
from collections.abc import Callable

import ipywidgets as W
from ipywidgets.widgets.widget_string import HTMLStyle

from ..core.events import Notice, ReasoningDelta, TextDelta
from ..core.loops import LOOP_NOTICE
from ..core.presets import PRESETS
from ..core.trace import Trace
from ..views.cell_runs import line_for
from .run_view import RunView, close_tree
from .steer_row import SteerRow
from .style import HEADER_CLASS, ROOT_CLASSES, RUNS_CLASS, STATUS_CLASS
from .throttle import Meter, Throttle

TEXT_INTERVAL = 0.1
"""The live tails change at most this often: at 10 a second the front end spent ~40% less time
than at 20 (MathJax typesets each new tail), and the text still reads as smooth. A slow stream
updates, once all but a quarter of its slack is spent, as often as the text earns the update's
bytes, up to every ``TEXT_SPREAD`` s."""
TEXT_SPREAD = 1.5
TIGHT = 0.25
STATUS_INTERVAL = 2.0
"""The status line's figures (tokens, tok/s) ride along with the text at most this often..."""
STATUS_SHARE = 0.1
"""...and take at most this share of the byte budget (a slow model's figures change rarely);
a new phase or warning goes out at once. The clock needs no message (see ``style.CLOCK_STYLE``)."""
FINISH_RESERVE = 0.2
"""Share of ``max_rate`` (at most 5 messages) kept free for the unpaced burst of ``finish``."""
HEADROOM = 0.12
"""Share of ``max_rate`` (at most 3) paced under the cap, so a flush that touches a few
widgets seldom waits for room in the window."""
BYTE_RATIO = 4.0
"""Update bytes the live view may send per byte of model text received. The final render adds
at most one resend of the blocks cut by force (their join), so all told it stays within 5x."""
BYTE_SLACK = 6_000
"""Update bytes allowed on top: a short answer streams token by token before the ratio binds..."""
BYTE_RATE = 100.0
"""...and per second since the first text: a slow model's text shows every second or so."""
TAIL_SECONDS = 1.5
MIN_TAIL, MAX_TAIL = 160, 4_000
"""A live tail is cut by force past the text of ``TAIL_SECONDS`` at the rate it arrives, within
these bounds: each update re-sends the tail, so a slow stream sends short tails."""
RATE_WINDOW = 4.0
"""The text rate is measured over this many seconds."""
PAUSE = 0.3
"""No text for this long: the tails show what they hold back (the end of a word...)."""

_UNSET = "font_family", "font_size", "font_style", "font_variant", "font_weight", "text_decoration"
"""Style values that ipywidgets leaves None in Python and the page's models default to "". Set
to "" (which sets no CSS either), they equal the page's defaults, which Lab's saved widget
state leaves out: ~25 bytes a value, 7 in a header. (A colour may not be "".)"""

__all__ = ["ThinkWidget"]


def _unset_style(kind: type[W.Style]) -> W.Style:
    """A ``kind`` style model with every value unset, as the page has it (:data:`_UNSET`)."""
    return kind(**{name: "" for name in _UNSET if kind.class_traits().get(name)})


class ThinkWidget:
    """Header (model, preset, Stop, status), run selector, the shown run's panes, and the steer
    row under them (``steer_row``)."""

    def __init__(
        self,
        *,
        model: str,
        preset: str,
        presets=PRESETS,
        hide_reasoning: bool = False,
        fold_on_answer: bool = True,
        max_rate: float = 25.0,
        clock: Callable[[], float] = time.monotonic,
        on_preset: Callable[[str], object] | None = None,
        on_stop: Callable[[], object] | None = None,
        on_continue: Callable[[Trace, str, int], object] | None = None,
        on_rescue: Callable[[Trace, str, int], object] | None = None,
        line: str = "",
        on_line: Callable[[str], object] | None = None,
    ) -> None:
        self.model, self.hide_reasoning, self.fold_on_answer = model, hide_reasoning, fold_on_answer
        self.line, self.on_line = line, on_line
        """The cell's ``%%think`` line (as the front end sent it; "" when unknown), and who to
        tell when "Use these flags" rewrote it."""
        self.clock, self.on_preset, self.on_stop = clock, on_preset, on_stop
        reserve = min(5, max(1, round(max_rate * FINISH_RESERVE)))
        headroom = min(3, max(1, round(max_rate * HEADROOM)))
        self._throttle = Throttle(
            max_rate, clock, reserve=reserve, headroom=headroom,
            byte_ratio=BYTE_RATIO, byte_slack=BYTE_SLACK, byte_rate=BYTE_RATE,
        )  # fmt: skip
        self._meter = Meter()
        self._layout = W.Layout()
        """One for every widget of this view (sizes and alignment are in the stylesheet, which
        is never saved): each Layout is one more model in a saved notebook."""
        self._all: list[RunView] = []
        self._live: RunView | None = None
        self._shown: RunView | None = None
        self._status_at = float("-inf")  # when the status line last went out
        self._text_at = float("-inf")  # when text last went out
        self._status_bytes = 100  # and how many bytes it took
        self._status_dirty = False
        self._waits = False  # text waits to be sent (known at the last full look)
        self._arrivals: deque[tuple[float, int]] = deque()  # (time, chars) of recent deltas
        self._recent = 0  # their chars
        self._text_since: float | None = None  # when the live run's first text arrived
        self._text_at_last: float | None = None  # ...and its last
        self._quiet = False  # True while we set widget values ourselves
        self.twin: Trace | None = None
        """The run the static twin below shows in full (see ``pair``): the widget holds no
        text of its own while that run is on screen."""

        options = list(presets) + ([preset] if preset not in presets else [])
        html_style = _unset_style(HTMLStyle)  # (the HTML parts and the dropdown share it)
        self.model_label = W.HTML(_model_html(model), layout=self._layout, style=html_style)
        """The model that answers the run on screen, once the run knows it."""
        self._labelled = model  # (the model it names: compared at every event)
        self.dropdown = W.Dropdown(
            options=options,
            value=preset,
            tooltip="Reasoning preset",
            layout=self._layout,
            style=html_style,
        )
        self._button_style = _unset_style(W.ButtonStyle)
        self.stop_button = self._new_stop_button()
        """Shown while a run is live; disabled (hidden: see STYLE) before the first run, closed
        once a run ended (a saved notebook keeps no Stop), made again for the next run."""
        self.status = W.HTML(layout=self._layout, style=html_style, _dom_classes=(STATUS_CLASS,))
        self.selector: W.ToggleButtons | None = None
        """The run selector, made for the second run (see ``_update_selector``)."""
        self.body = W.VBox(layout=self._layout)
        self.steer_row = SteerRow(
            meter=self._meter,
            layout=self._layout,
            button=self.stop_button,
            shown=lambda: self._shown,
            live=lambda: self._live,
            pin_line=self._line_written,
            charged=self._charged,
            on_continue=on_continue,
            on_rescue=on_rescue,
        )
        """Continue, Answer now, Pin… under the run on screen (see ``steer_row``)."""
        self._header = W.HBox(
            [self.model_label, self.dropdown, self.stop_button, self.status],
            layout=self._layout,
            _dom_classes=(HEADER_CLASS,),
        )
        self.root = W.VBox(
            [self._header, self.body, self.steer_row.box],
            layout=self._layout,
            _dom_classes=ROOT_CLASSES,
        )
        self.dropdown.observe(self._on_preset, "value")

    def _new_stop_button(self, disabled: bool = True) -> W.Button:
        button = W.Button(
            description="Stop", icon="stop", disabled=disabled, tooltip="Stop this run",
            layout=self._layout, style=self._button_style,
        )  # fmt: skip
        button.on_click(self._on_stop)
        return button

    def _show_stop(self, running: bool) -> None:
        """Stop in the header while a run is live; closed once none is."""
        if running and self.stop_button.comm is None:  # (closed when the last run ended)
            self.stop_button = self._new_stop_button(disabled=False)
            header = (self.model_label, self.dropdown, self.stop_button, self.status)
            self._meter.set(self._header, children=header)
        elif running:
            self._meter.set(self.stop_button, disabled=False, description="Stop")
        elif self.stop_button.comm is not None:
            children = tuple(c for c in self._header.children if c is not self.stop_button)
            self._meter.set(self._header, children=children)
            self.stop_button.close()
            self.stop_button.disabled = True  # (closed: no message)

    # -- the contract with the magic ------------------------------------------------------------

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
        now, mark = self.clock(), self._mark()
        if self._live is not None:  # re-run before the last run's finish(): show it stopped
            self._close(self._live, self._live.trace, now)
        self._arrivals.clear()
        self._recent, self._text_since, self._text_at_last = 0, None, None
        self._waits = False
        run = RunView(
            trace,
            len(self._all) + 1,
            now,
            hide_reasoning=self.hide_reasoning,
            meter=self._meter,
            layout=self._layout,
        )
        self._all.append(run)
        self._live = run
        self._show(run)
        self._show_stop(True)
        self._follow_preset(run)
        self._follow_model(run)
        self._update_selector()
        self._update_steer()
        self._render_status(now)
        self._note(now, mark)

    def on_event(self, event) -> None:
        """Apply one provider event; sends at most what the throttle allows."""
        run = self._live
        if run is None:
            self.start_run(Trace(model=self.model, preset=str(self.dropdown.value)))
            run = self._live
            assert run is not None
        now = self.clock()
        if run.trace.model and run.trace.model != self._labelled:
            mark = self._mark()
            self._follow_model(run)
            self._note(now, mark)
        if isinstance(event, (ReasoningDelta, TextDelta)):
            self._throttle.earn(len(event.text.encode("utf-8", "replace")), now)
            self._arrivals.append((now, len(event.text)))
            self._recent += len(event.text)
            self._text_since = now if self._text_since is None else self._text_since
            self._text_at_last = now
        self._status_dirty |= run.apply(event, now, fold=self.fold_on_answer)
        if isinstance(event, Notice) and event.text.startswith(LOOP_NOTICE):
            mark = self._mark()
            self._update_steer()  # Answer now, while it loops
            self._note(now, mark)
        self._pump(now)

    def tick(self) -> None:
        """Send a pending update if it is due and refresh the elapsed time."""
        self._pump(self.clock())

    def set_phase(self, phase: str, detail: str = "") -> None:
        run = self._live or self._shown
        if run is None:
            return
        if (phase, detail) != (run.phase, run.detail):
            run.phase, run.detail = phase, detail
            self._status_dirty = True
            self._pump(self.clock())

    def finish(self, trace: Trace, *, error_in_cell: bool = False, twin: bool = False) -> None:
        """The run ended: render it in full, mark the phase, enable the history.
        ``error_in_cell``: its error ends the cell, whose error line says it (not twice).
        ``twin``: no final render, the static twin is about to show it (see ``pair``)."""
        run = next((r for r in self._all if r.trace is trace), None) or self._live
        if run is None:  # a trace with no live run (e.g. a saved one): show it as a run
            self.start_run(trace)
            run = self._live
            assert run is not None
        now, mark = self.clock(), self._mark()
        self._close(run, trace, now, error_in_cell, final=not twin)
        self._follow_model(run)
        self._update_selector()
        self._update_steer()
        self._render_status(now)
        self._note(now, mark)

    def pair(self, trace: Trace) -> None:
        """The static output below the widget shows ``trace``, ended, in full from now on:
        while that run is on screen the widget shows only its header, selector and steering
        (see ``runners.LIVE_PAIRING``), so a saved notebook keeps the text once as HTML, not
        again as widget state."""
        self.twin = trace
        run = self._shown
        if run is not None and self._twinned(run):
            now, mark = self.clock(), self._mark()
            self._show(run)
            self._note(now, mark)

    def _twinned(self, run: RunView) -> bool:
        return run.finished and run.trace is self.twin

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
        if run is self._live:
            self._live = None
            self._status_dirty = False
            self._show_stop(False)

    # -- sending ---------------------------------------------------------------------------------

    def _pump(self, now: float) -> None:
        """Send what is due, if the throttle lets it: the text with the status line riding
        along, else the status line alone (a new phase or a warning, when no text waits),
        else the text alone."""
        run = self._live
        if run is None:
            return
        shown = self._shown is run
        self._status_dirty |= shown and run.subject_due(now)  # (at most once a second)
        # Nothing may go (no text yet, nor a status line alone while text waits), or the
        # throttle takes no message now: a chunk costs no more than this.
        early = now < self._text_at + TEXT_INTERVAL
        if (early and not (self._status_dirty and not self._waits)) or not self._throttle.ready(
            1, now
        ):
            return
        run.set_tail_limit(self._tail_limit(now))
        if self._text_at_last is not None and now - self._text_at_last >= PAUSE:
            run.settle()  # the text paused: show the word (or line) it holds back
        status = shown and (self._status_dirty or now >= self._status_at + self._status_every(now))
        waiting = run.max_cost()
        self._waits = bool(waiting)  # (until a flush: more text leaves it waiting)
        free = not (run.reasoning.chars or run.answer.chars)  # (the status is all there is)
        sbytes = 0 if free else self._status_bytes
        cost = waiting if now >= self._text_at + TEXT_INTERVAL else 0
        nbytes = run.byte_cost() if cost else 0
        tight = self._throttle.left(now) - nbytes < BYTE_SLACK * TIGHT
        if cost and tight and now < self._text_at + min(TEXT_SPREAD, nbytes / self._earning(now)):
            cost = nbytes = 0  # (spread out: not all the budget at once, then a long wait)
        join = run.join_cost() if cost else 0  # (a block cut by force that ended: one piece)
        join = join if self._throttle.affords(nbytes + join + BYTE_SLACK * TIGHT, now) else 0
        cost += bool(join)
        nbytes += join
        options = [(cost, status)] if cost else []
        # (a new phase comes with its text: the status line never says more than the panes)
        options += [(0, True)] if shown and self._status_dirty and not waiting else []
        options += [(cost, False)] if cost and status else []
        for cost, status in options:
            charge = nbytes * bool(cost) + sbytes * status
            if self._throttle.ready(cost + status, now, nbytes=charge):
                break
        else:
            return
        mark = self._mark()
        sent = run.flush(join=bool(join)) if cost else 0
        if cost:
            self._text_at, self._waits = now, False
        if status:
            sent += self._render_status(now)
        charged = 0 if free and not cost else self._meter_bytes() - mark[1]
        if cost:
            self._throttle.sent(sent, now, nbytes=charged)
        else:  # a new phase or warning: counted, but it delays no text
            self._throttle.note(sent, now, nbytes=charged)

    def _rate(self, now: float) -> float:
        """Chars a second the text arrives at, over the last ``RATE_WINDOW`` s (0: none yet)."""
        arrivals = self._arrivals
        while arrivals and arrivals[0][0] < now - RATE_WINDOW:
            self._recent -= arrivals.popleft()[1]
        if self._text_since is None:
            return 0.0
        return self._recent / min(RATE_WINDOW, max(1.0, now - self._text_since))

    def _earning(self, now: float) -> float:
        """Bytes of budget the text earns a second, at the rate it arrives lately (half the
        per-second part is left as a cushion)."""
        return self._rate(now) * BYTE_RATIO + BYTE_RATE / 2

    def _status_every(self, now: float) -> float:
        """How often the status line's figures may ride along: ``STATUS_INTERVAL``, or rarer
        when they would take more than ``STATUS_SHARE`` of what the text earns."""
        share = self._earning(now) * STATUS_SHARE
        return max(STATUS_INTERVAL, self._status_bytes / share)

    def _tail_limit(self, now: float) -> int:
        """The live tail's length before a forced cut: the text of ``TAIL_SECONDS`` at the
        rate it arrives."""
        if self._text_since is None:
            return MAX_TAIL
        return max(MIN_TAIL, min(MAX_TAIL, round(self._rate(now) * TAIL_SECONDS)))

    def _meter_bytes(self) -> int:
        """The bytes sent so far that count against the budget: updates, and the text new
        widgets were made with (a join)."""
        return self._meter.bytes + self._meter.opened_bytes

    def _mark(self) -> tuple[int, int]:
        return self._meter.msgs, self._meter_bytes()

    def _charged(self, send: Callable[[], object]) -> None:
        """``send`` an update the throttle did not pace, and count it."""
        now, mark = self.clock(), self._mark()
        send()
        self._note(now, mark)

    def _note(self, now: float, mark: tuple[int, int]) -> None:
        """Report what went out unpaced since ``mark``."""
        msgs, nbytes = self._meter.msgs - mark[0], self._meter_bytes() - mark[1]
        self._throttle.note(msgs, now, nbytes=nbytes)

    def _render_status(self, now: float) -> int:
        run = self._shown
        self._status_dirty = False
        self._status_at = now
        before = self._meter.bytes
        sent = self._meter.set(self.status, value=run.status_html(now) if run else "")
        if sent:
            self._status_bytes = self._meter.bytes - before
        return sent

    def _show(self, run: RunView) -> int:
        """Put ``run`` on screen (the twin's run: the twin shows it, the body is empty); the
        finished run it replaces is parked (see ``RunView.park``)."""
        before, self._shown = self._shown, run
        if self._twinned(run):  # (off screen first: no frame shows its text closing)
            sent = self._meter.set(self.body, children=())
            run.park()  # (a parked run's unpark is a final render, should it be picked again)
        else:
            sent = run.unpark(fold=self.fold_on_answer)
            sent += self._meter.set(self.body, children=(run.root,))
        if before is not None and before is not run:
            before.park()  # (once off screen: the front end never shows a closed widget)
        return sent

    def _follow_model(self, run: RunView) -> int:
        """The model label names the model of the run on screen, once it is known (a default
        model is resolved when the run starts)."""
        if run is not self._shown or not run.trace.model:
            return 0
        self._labelled = run.trace.model
        return self._meter.set(self.model_label, value=_model_html(run.trace.model))

    def _follow_preset(self, run: RunView) -> int:
        """The dropdown shows the preset of the run on screen (no re-run)."""
        preset = run.trace.preset
        if preset not in self.dropdown.options or preset == self.dropdown.value:
            return 0
        self._quiet = True
        try:
            return self._meter.set(self.dropdown, value=preset)
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
                layout=self._layout, _dom_classes=(RUNS_CLASS,),
            )  # fmt: skip
            self.selector.observe(self._on_pick, "value")
            kids = (self._header, self.selector, self.body, self.steer_row.box)
            return self._meter.set(self.root, children=kids)
        self._quiet = True
        try:  # new options reset the value: set both, one message
            return self._meter.set(self.selector, options=labels, value=index)
        finally:
            self._quiet = False

    def _update_steer(self) -> int:
        return self.steer_row.update(self.flags_line)

    def flags_line(self, trace: Trace) -> str:
        """The cell line that asks for ``trace``'s preset, when the cell's asks another; ""."""
        first = self._all[0].trace.preset if self._all else trace.preset
        return line_for(self.line, trace, first)

    def _line_written(self, line: str) -> None:
        """The page put ``line`` in place of the cell's line."""
        now, mark = self.clock(), self._mark()
        self.line = line
        self._update_steer()
        self._note(now, mark)
        if self.on_line is not None:
            self.on_line(line)

    def close(self) -> None:
        """Close every widget model of this view, the runs not on screen included."""
        roots = [self.root, self._button_style, *self.steer_row.widgets()]  # (Stop may be gone)
        close_tree(*roots, *(part for run in self._all for part in run.parts))

    # -- user actions ----------------------------------------------------------------------------

    def _on_preset(self, change) -> None:
        if not self._quiet and self.on_preset is not None:
            self.on_preset(change["new"])

    def _on_stop(self, _button) -> None:
        if self._live is None:
            return
        now, mark = self.clock(), self._mark()
        self._meter.set(self.stop_button, disabled=True, description="Stopping…")
        self._note(now, mark)
        if self.on_stop is not None:
            self.on_stop()

    def _on_pick(self, change) -> None:
        if self._quiet or change["new"] is None:
            return
        now, mark = self.clock(), self._mark()
        self._show(self._all[change["new"]])
        self._follow_preset(self._all[change["new"]])
        self._follow_model(self._all[change["new"]])
        self._update_steer()
        self._render_status(now)
        self._note(now, mark)


def _model_html(model: str) -> str:
    return f'<span class="reasoning-nb-model">{html.escape(model)}</span>'

