"""The live view of one ``%%think`` cell: header, reasoning pane, answer, and earlier runs.

The magic drives it: ``start_run(trace)``, ``on_event(event)`` for every provider event,
``tick()`` about every ``1 / max_rate`` s while the run lasts, ``finish(trace)`` at the end. All
traffic goes through one :class:`~.throttle.Throttle` (``max_rate`` update messages a second in
total, first token at once); text goes through :class:`~.live_text.LiveText` so no update ever
resends the whole growing text. Model text reaches the DOM only through
``render.markdown_html`` (raw HTML off) or ``html.escape``.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable

import ipywidgets as W

from ..core.events import Notice, ReasoningDelta, Reclassify, TextDelta, Usage
from ..core.presets import PRESETS
from ..core.trace import USAGE_KEYS, Trace
from ..render import reasoning_summary, seconds_label, tokens_label
from .live_text import LiveText
from .throttle import Throttle

STATUS_INTERVAL = 0.25
"""The status line (elapsed time, tokens/s) refreshes at most this often while running."""
FINISH_RESERVE = 0.2
"""Share of ``max_rate`` (at most 5 messages) kept free for the unpaced burst of ``finish``."""
HEADROOM = 0.12
"""Share of ``max_rate`` (at most 3) paced under the cap, so a flush that touches a few
widgets seldom waits for room in the window."""
MUTED = "font-size:0.85em;opacity:0.7;line-height:1.5"
_PHASE_OF_STATUS = {"complete": "done", "truncated": "done", "cancelled": "stopped"}
_LIVE_LABEL = {"connecting": "connecting…", "thinking": "thinking…", "answering": "answering…"}

LIVE_TITLE = "Thinking…"
HIDDEN_TITLE = "Reasoning (hidden while the model runs)"

__all__ = ["ThinkWidget"]


class ThinkWidget:
    """Header (model, preset, Stop, status), run selector, and the shown run's panes."""

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
    ) -> None:
        self.model, self.hide_reasoning, self.fold_on_answer = model, hide_reasoning, fold_on_answer
        self.clock, self.on_preset, self.on_stop = clock, on_preset, on_stop
        reserve = min(5, max(1, round(max_rate * FINISH_RESERVE)))
        headroom = min(3, max(1, round(max_rate * HEADROOM)))
        self._throttle = Throttle(max_rate, clock, reserve=reserve, headroom=headroom)
        self._all: list[RunView] = []
        self._live: RunView | None = None
        self._shown: RunView | None = None
        self._status_due = 0.0
        self._status_dirty = False
        self._quiet = False  # True while we set widget values ourselves

        options = list(presets) + ([preset] if preset not in presets else [])
        self.model_label = W.HTML(f"<b>{html.escape(model)}</b>")
        self.dropdown = W.Dropdown(
            options=options, value=preset, tooltip="Reasoning preset", layout=W.Layout(width="8em")
        )
        self.stop_button = W.Button(
            description="Stop", icon="stop", disabled=True, tooltip="Stop this run",
            layout=W.Layout(width="auto"),
        )  # fmt: skip
        self.status = W.HTML()
        self.selector = W.ToggleButtons(
            options=[], style={"button_width": "auto"}, layout=W.Layout(display="none")
        )
        self.body = W.VBox()
        header = W.HBox(
            [self.model_label, self.dropdown, self.stop_button],
            layout=W.Layout(align_items="center"),
        )
        self.root = W.VBox([header, self.status, self.selector, self.body])
        self.root.add_class("reasoning-nb")
        self.dropdown.observe(self._on_preset, "value")
        self.stop_button.on_click(self._on_stop)
        self.selector.observe(self._on_pick, "value")

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
        now = self.clock()
        sent = 0
        if self._live is not None:  # re-run before the last run's finish(): show it stopped
            sent += self._close(self._live, self._live.trace, now)
        run = RunView(trace, len(self._all) + 1, now, hide_reasoning=self.hide_reasoning)
        self._all.append(run)
        self._live = run
        sent += self._show(run) + set_traits(self.stop_button, disabled=False, description="Stop")
        if trace.preset in self.dropdown.options and trace.preset != self.dropdown.value:
            self._quiet = True
            try:
                sent += set_traits(self.dropdown, value=trace.preset)
            finally:
                self._quiet = False
        sent += self._update_selector() + self._render_status(now)
        self._throttle.note(sent, now)

    def on_event(self, event) -> None:
        """Apply one provider event; sends at most what the throttle allows."""
        run = self._live
        if run is None:
            self.start_run(Trace(model=self.model, preset=str(self.dropdown.value)))
            run = self._live
            assert run is not None
        now = self.clock()
        before = run.phase
        if isinstance(event, ReasoningDelta):
            run.add_reasoning(event.text, now)
        elif isinstance(event, TextDelta):
            run.add_answer(event.text, now, fold=self.fold_on_answer)
        elif isinstance(event, Reclassify):
            run.reclassify(now)
        elif isinstance(event, Usage):
            counts = {k: getattr(event, k) for k in USAGE_KEYS}
            run.usage.update({k: v for k, v in counts.items() if v is not None})
            self._status_dirty = True
        elif isinstance(event, Notice) and event.text not in run.warnings:
            run.warnings.append(event.text)
            self._status_dirty = True
        self._status_dirty |= run.phase != before
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

    def finish(self, trace: Trace) -> None:
        """The run ended: render it in full, mark the phase, enable the history."""
        run = next((r for r in self._all if r.trace is trace), None) or self._live
        if run is None:  # a trace with no live run (e.g. a saved one): show it as a run
            self.start_run(trace)
            run = self._live
            assert run is not None
        now = self.clock()
        sent = self._close(run, trace, now)
        sent += self._update_selector() + self._render_status(now)
        self._throttle.note(sent, now)

    def _close(self, run: RunView, trace: Trace, now: float) -> int:
        run.end(trace, now)
        if trace.status == "running":  # superseded by a re-run before it was finished
            run.phase, run.detail = "stopped", ""
        else:
            run.phase = _PHASE_OF_STATUS.get(trace.status, "error")
            run.detail = trace.error or ("truncated" if trace.status == "truncated" else "")
        run.warnings += [w for w in trace.warnings if w not in run.warnings]
        sent = run.finalize(fold=self.fold_on_answer)
        if run is self._live:
            self._live = None
            self._status_dirty = False
            sent += set_traits(self.stop_button, disabled=True, description="Stop")
        return sent

    # -- sending ---------------------------------------------------------------------------------

    def _pump(self, now: float) -> None:
        run = self._live
        if run is None:
            return
        status = self._shown is run and (self._status_dirty or now >= self._status_due)
        cost = run.max_cost()
        if not cost and not status:
            return
        if not self._throttle.ready(cost + status, now):
            if not (cost and status and self._throttle.ready(cost, now)):
                return
            status = False  # text first; the status line waits for the next turn
        sent = run.flush()
        if status:
            sent += self._render_status(now)
        self._throttle.sent(sent, now)

    def _render_status(self, now: float) -> int:
        run = self._shown
        self._status_dirty = False
        self._status_due = now + STATUS_INTERVAL
        return set_traits(self.status, value=status_html(run, now) if run else "")

    def _show(self, run: RunView) -> int:
        self._shown = run
        return set_traits(self.body, children=(run.root,))

    def _update_selector(self) -> int:
        if len(self._all) < 2:
            return 0
        labels = tuple((run.label(), i) for i, run in enumerate(self._all))
        index = self._all.index(self._shown) if self._shown else 0
        sent = set_traits(self.selector.layout, display=None)
        if labels == self.selector.options and index == self.selector.value:
            return sent
        self._quiet = True
        try:
            with self.selector.hold_sync():  # new options reset the value: set both, one message
                self.selector.options = labels
                self.selector.value = index
        finally:
            self._quiet = False
        return sent + 1

    # -- user actions ----------------------------------------------------------------------------

    def _on_preset(self, change) -> None:
        if not self._quiet and self.on_preset is not None:
            self.on_preset(change["new"])

    def _on_stop(self, _button) -> None:
        if self._live is None:
            return
        self._throttle.note(set_traits(self.stop_button, disabled=True, description="Stopping…"))
        if self.on_stop is not None:
            self.on_stop()

    def _on_pick(self, change) -> None:
        if self._quiet or change["new"] is None:
            return
        now = self.clock()
        sent = self._show(self._all[change["new"]]) + self._render_status(now)
        self._throttle.note(sent, now)


def status_html(run: RunView, now: float) -> str:
    """``thinking… · 4.2 s · reasoning 3.1 s, ≈812 tokens · ≈190 tok/s`` plus ⚠ lines."""
    label = _LIVE_LABEL.get(run.phase, run.phase)
    bits = [f"{label}: {run.detail}" if run.detail else label, f"{run.elapsed(now):.1f} s"]
    if run.reasoning.chars:
        ms = run.reasoning_ms(now)
        tokens = tokens_label(run.usage.get("reasoning_tokens"), run.reasoning.chars)
        bits.append(f"reasoning {seconds_label(ms)}, {tokens}" if ms else f"reasoning {tokens}")
    rate = run.tokens_per_s(now)
    if rate:
        bits.append(rate)
    lines = [" · ".join(bits), *(f"⚠ {w}" for w in run.warnings)]
    return f'<div style="{MUTED}">' + "<br>".join(html.escape(x) for x in lines) + "</div>"


def set_traits(widget: W.Widget, **traits) -> int:
    """Set traits in one ``update`` message; returns how many messages went out (0 or 1)."""
    changed = {k: v for k, v in traits.items() if getattr(widget, k) != v}
    if not changed:
        return 0
    with widget.hold_sync():
        for key, value in changed.items():
            setattr(widget, key, value)
    return 1


def live_summary(ms: float | None, tokens: int | None, chars: int) -> str:
    """``render.reasoning_summary`` for a run still going (no finished Trace yet)."""
    parts = [f"Thought for {seconds_label(ms)}" if ms is not None else "Reasoning"]
    if label := tokens_label(tokens, chars):
        parts.append(label)
    return " · ".join(parts)


class RunView:
    """One run: its reasoning pane and answer widgets, phase, warnings and live numbers."""

    def __init__(self, trace: Trace, number: int, now: float, *, hide_reasoning: bool) -> None:
        self.trace, self.number, self.hide = trace, number, hide_reasoning
        self.reasoning = LiveText(
            breaks=True, layout=W.Layout(border_left="3px solid #ccc", padding="0 0 0 0.8em")
        )
        self.answer = LiveText()
        self._title, self._open = (HIDDEN_TITLE, False) if hide_reasoning else (LIVE_TITLE, True)
        self.pane = W.Accordion(
            [self.reasoning.box], titles=(self._title,), selected_index=0 if self._open else None
        )
        self.root = W.VBox([self.answer.box])  # the pane joins when reasoning arrives
        self.phase, self.detail = "connecting", ""
        self.warnings = list(trace.warnings)
        self.usage = dict(trace.usage)
        self.finished = False
        self.t0 = self.t_end = now
        self.t_first: float | None = None
        self.t_think: float | None = None
        self.t_thought: float | None = None
        self.t_answer: float | None = None
        self._last = ""
        self._pane_dirty = False

    # -- text, folded as Trace.fold does ---------------------------------------------------------

    def add_reasoning(self, text: str, now: float) -> None:
        if not text:
            return
        if self._last == "answer" and self.reasoning.chars:
            self.reasoning.append("\n\n")  # a new block after some answer text
        self.reasoning.append(text)
        self._last = "reasoning"
        self._stamp(now)
        self.t_think = now if self.t_think is None else self.t_think
        self.t_thought = now
        if self.phase != "thinking":
            self.phase = "thinking"
            self._set_pane(HIDDEN_TITLE if self.hide else LIVE_TITLE, not self.hide)

    def add_answer(self, text: str, now: float, *, fold: bool) -> None:
        if not text:
            return
        self._last = "answer"
        if not self.answer.chars:
            text = text.lstrip()  # the blank line after a closing tag is not the answer
            if not text:
                return
        self.answer.append(text)
        self._stamp(now)
        self.t_answer = now if self.t_answer is None else self.t_answer
        if self.phase != "answering":
            self.phase = "answering"
            self.reasoning.settle()  # its last block is complete: send it whole, now, paced
            if fold and self.reasoning.chars:
                rt = self.usage.get("reasoning_tokens")
                self._set_pane(
                    live_summary(self.reasoning_ms(now), rt, self.reasoning.chars), False
                )

    def reclassify(self, now: float) -> None:
        """Everything shown as answer so far was reasoning: move it into the pane."""
        moved = self.answer.text
        self.answer.clear()
        if moved:
            self.reasoning.append(f"\n\n{moved}" if self.reasoning.chars else moved)
            self.t_think = self.t_answer if self.t_think is None else self.t_think
            self.t_thought = now
        self.t_answer = None
        self._last = "reasoning"
        self.phase = "thinking"
        self._set_pane(HIDDEN_TITLE if self.hide else LIVE_TITLE, not self.hide)

    def end(self, trace: Trace, now: float) -> None:
        self.trace, self.finished, self.t_end = trace, True, now
        self.usage.update({k: v for k, v in trace.usage.items() if v is not None})

    def _stamp(self, now: float) -> None:
        if self.t_first is None:
            self.t_first = now

    # -- widgets ---------------------------------------------------------------------------------

    def max_cost(self) -> int:
        """An upper bound of the update messages the next ``flush`` sends."""
        cost = self.answer.max_cost() + (0 if self.hide else self.reasoning.max_cost())
        if self._pane_dirty and self.reasoning.chars:
            cost += 1 + (self.pane not in self.root.children)
        return cost

    def flush(self) -> int:
        """Send what changed (the reasoning only if shown live); returns the message count."""
        sent = 0 if self.hide else self.reasoning.flush()
        return sent + self.answer.flush() + self._flush_pane()

    def finalize(self, *, fold: bool) -> int:
        """Full final render: all text, the pane folded to its summary (or open)."""
        trace = self.trace
        sent = self.reasoning.finalize(trace.reasoning) + self.answer.finalize(trace.answer)
        if trace.reasoning:
            self._set_pane(reasoning_summary(trace), not self.hide and not (fold and trace.answer))
        elif self.pane in self.root.children:
            sent += set_traits(self.root, children=(self.answer.box,))
        return sent + self._flush_pane()

    def _set_pane(self, title: str, open_: bool) -> None:
        self._title, self._open, self._pane_dirty = title, open_, True

    def _flush_pane(self) -> int:
        if not self._pane_dirty or not self.reasoning.chars:
            return 0
        self._pane_dirty = False
        sent = 0
        if self.pane not in self.root.children:
            sent += set_traits(self.root, children=(self.pane, self.answer.box))
        index = 0 if self._open else None
        return sent + set_traits(self.pane, titles=(self._title,), selected_index=index)

    # -- numbers ---------------------------------------------------------------------------------

    def elapsed(self, now: float) -> float:
        total = self.trace.timing.get("total_ms") if self.finished else None
        if total is not None:
            return total / 1000
        return (self.t_end if self.finished else now) - self.t0

    def reasoning_ms(self, now: float) -> float | None:
        saved = self.trace.timing.get("reasoning_ms") if self.finished else None
        if saved is not None or self.t_think is None:
            return saved
        if self.t_answer is not None:
            end = self.t_answer
        elif self.finished or self.phase != "thinking":
            end = self.t_thought or self.t_think
        else:
            end = now
        return round(max(0.0, end - self.t_think) * 1000, 1)

    def tokens_per_s(self, now: float) -> str:
        out = self.usage.get("output_tokens")
        guessed = out is None
        if guessed:
            out = (self.reasoning.chars + self.answer.chars) / 4
        if self.t_first is None or not out:
            return ""
        span = (self.t_end if self.finished else now) - self.t_first
        if span < 0.2:
            return ""
        return f"{'≈' if guessed else ''}{out / span:,.0f} tok/s"

    def label(self) -> str:
        """``Run 2 · high · 9.1 s`` for the run selector."""
        when = f"{self.elapsed(self.t_end):.1f} s" if self.finished else "running…"
        status = self.trace.status if self.finished else ""
        extra = f" · {status}" if status not in ("", "complete") else ""
        return f"Run {self.number} · {self.trace.preset} · {when}{extra}"
