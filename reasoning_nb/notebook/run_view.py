"""One run in the live view: its reasoning pane and answer, its phase, warnings and numbers.

The trace is the one fold of the events: per event the view compares a phase (and a few sizes
when it may change); the text it takes from the trace per screen update (``max_cost``,
``flush``, ``status_html``), so the live view and the saved trace agree. Model text reaches the
page only as inert markdown (:mod:`.live_text`) or through ``html.escape``.
"""

from __future__ import annotations

import html

import ipywidgets as W

from ..core.cost import label as cost_label
from ..core.events import Event, Notice, ReasoningDelta, Reclassify, TextDelta, Usage, Waiting
from ..core.loops import REPETITION
from ..core.rescue import lost_answer
from ..core.subject import Subject
from ..core.trace import Trace
from ..views.cell_runs import continued_line, origin, replay_line
from ..views.render import ERROR_CLASS
from ..views.trace_labels import reasoning_summary, seconds_label, thought_label, tokens_label
from .live_text import LiveText
from .pacing import UpdateMeter
from .style import (
    ANSWER_CLASS,
    CLOCK_CLASS,
    PANE_CLASS,
    SCROLL_CLASS,
    TEXT_CLASS,
    THOUGHTS_CLASS,
    TOGGLE_CLASS,
)

LIVE_TITLE = "Thinking…"
HIDDEN_TITLE = "Reasoning (hidden while the model runs)"
_LIVE_LABEL = {"connecting": "connecting…", "thinking": "thinking…", "answering": "answering…"}
_CARET = {True: "caret-down", False: "caret-right"}
_PHASE_OF_STATUS = {"complete": "done", "truncated": "done", "cancelled": "stopped"}
LOST_DETAIL = "no answer, every token went to thinking"  # (its warning says what to do)
LOOP_DETAIL = "no answer, the server stopped a loop"  # (finish reason ``loops.REPETITION``)
SUBJECT_EVERY = 1.0  # seconds: the live subject changes at most this often, to be read


class RunView:
    """One run: its reasoning pane and answer widgets, phase, warnings and live numbers."""

    def __init__(
        self,
        trace: Trace,
        number: int,
        now: float,
        *,
        hide_reasoning: bool,
        meter: UpdateMeter | None = None,
        layout: W.Layout | None = None,
    ) -> None:
        self.trace, self.number, self.hide = trace, number, hide_reasoning
        self.meter = meter or UpdateMeter()
        self._layout = layout or W.Layout()  # one for every part with no layout of its own
        self._title, self._open = (HIDDEN_TITLE, False) if hide_reasoning else (LIVE_TITLE, True)
        self._quiet = False  # True while we set the toggle ourselves
        self._parked = False
        self._build()
        self.phase, self.detail = "connecting", ""
        self.finished = False
        self.t0 = self.t_end = now
        self._sizes = (0, 0)  # the trace's text sizes at the last event
        self._taken = {"reasoning": 0, "answer": 0}  # ...and how much of it the texts hold
        self._moved = False  # a Reclassify: the answer so far moved into the reasoning
        self._pane_dirty = False
        self.subject = Subject()  # reads the reasoning as it arrives
        self._latest = ""  # its subject after the last screen update
        self._subject, self._subject_at = "", float("-inf")  # the one shown, and since when

    def _build(self) -> None:
        layout, meter = self._layout, self.meter
        self.reasoning = LiveText(
            breaks=True, meter=meter, layout=layout, classes=(TEXT_CLASS, THOUGHTS_CLASS)
        )
        self.answer = LiveText(meter=meter, layout=layout, classes=(TEXT_CLASS, ANSWER_CLASS))
        self.pane = W.Accordion(
            [W.Box([self.reasoning.box], layout=layout, _dom_classes=(SCROLL_CLASS,))],
            titles=(self._title,),
            selected_index=0 if self._open else None,
            layout=layout,
            _dom_classes=(PANE_CLASS,),
        )
        self.toggle = W.ToggleButton(
            value=self._open, description=self._title, icon=_CARET[self._open],
            tooltip="Show or hide the reasoning", layout=layout, _dom_classes=(TOGGLE_CLASS,),
        )  # fmt: skip
        self.toggle.observe(self._on_toggle, "value")
        self.error: W.HTML | None = None  # a failed run's error line, made at the end
        self.root = W.VBox([self.answer.box], layout=layout)

    def park(self) -> None:
        """Close a finished run's widgets while it is off screen (its trace has the text)."""
        if self.finished and not self._parked:
            close_tree(*self.parts, keep=(self._layout,))
            self._parked = True

    def unpark(self, *, fold: bool) -> int:
        """Widgets again for a parked run, showing all of it; returns the messages sent."""
        if not self._parked:
            return 0
        self._parked = False
        self._build()
        return self.finalize(fold=fold)

    # -- what the trace folded ------------------------------------------------------------------

    def apply(self, event: Event, now: float, *, fold: bool) -> bool:
        """Note one event the trace folded; True when the status line has news."""
        if isinstance(event, ReasoningDelta):  # (most events: one compare, nothing more)
            return self.phase != "thinking" and self._follow(now, fold=fold)
        if isinstance(event, TextDelta):
            return self.phase != "answering" and self._follow(now, fold=fold)
        if isinstance(event, Waiting):  # (not part of the trace: its own label, "loading model…")
            self.phase = event.text
            return True
        if isinstance(event, Reclassify):
            self._moved = True
        return self._follow(now, fold=fold) or isinstance(event, (Usage, Notice))

    def _follow(self, now: float, *, fold: bool) -> bool:
        """Follow the trace's phase (constant work: its sizes, compared); True if it changed."""
        if self.finished:
            return False
        reasoning, answer, last = self.trace.progress
        grew = (reasoning, answer) != self._sizes or self._moved
        self._sizes = (reasoning, answer)
        if not grew or not last:
            return False
        phase = "answering" if last == "answer" and answer else "thinking"
        if last == "answer" and not answer:
            phase = self.phase  # (only whitespace so far: it waits for visible text)
        if phase == self.phase and not self._moved:
            return False
        self._pull()  # (a new phase: the pane's title sums up the text so far)
        self.phase = phase
        if phase == "thinking":
            self._set_pane(HIDDEN_TITLE if self.hide else LIVE_TITLE, not self.hide)
        elif phase == "answering":
            self.reasoning.settle()  # it paused: hold nothing of it back
            if self.reasoning.chars:  # the pane's title sums it up (folded, unless told not to)
                # The label it keeps once the run ended (``trace_labels.summary``); an estimate
                # of its tokens may still be refined then, from the server's output total.
                rt = self.trace.usage.get("reasoning_tokens")
                tokens = tokens_label(rt, self.reasoning.chars)
                summary = thought_label(self.reasoning_ms(now), tokens)
                self._set_pane(summary, self._open and not fold)
        return True

    def _pull(self) -> None:
        """Take the text the trace folded since the last screen update into the live texts."""
        if self.finished or self.trace.done:  # (``finalize`` shows all of it: the trace's
            return  # ends are tidied now, so its offsets moved)
        if self._moved:  # everything shown as answer so far was reasoning: the pane has it now
            self._moved, self._taken["answer"] = False, 0
            self.answer.clear()
        for part, live in (("reasoning", self.reasoning), ("answer", self.answer)):
            if text := self.trace.text_from(part, self._taken[part]):
                self._taken[part] += len(text)
                live.append(text)
                if live is self.reasoning:
                    self.subject.feed(text)
                    self._latest = self.subject.current

    def end(self, trace: Trace, now: float) -> None:
        self.trace, self.finished, self.t_end = trace, True, now
        if trace.status == "running":  # superseded by a re-run before it was finished
            self.phase, self.detail = "stopped", ""
            return
        self.phase = _PHASE_OF_STATUS.get(trace.status, "error")
        self.detail = "truncated" if trace.status == "truncated" else ""  # (errors: own line)
        if lost_answer(trace):
            self.detail = LOOP_DETAIL if trace.finish_reason == REPETITION else LOST_DETAIL

    # -- widgets ---------------------------------------------------------------------------------

    def _texts(self) -> tuple[LiveText, ...]:
        """The texts sent live, up to date (hidden reasoning waits for ``finalize``)."""
        self._pull()
        return (self.answer,) if self.hide else (self.reasoning, self.answer)

    def set_tail_limit(self, chars: int) -> None:
        self.reasoning.tail_limit = self.answer.tail_limit = chars

    def max_cost(self) -> int:
        """An upper bound of the update messages the next ``flush`` sends."""
        cost = sum(t.max_cost() for t in self._texts())
        if self._pane_dirty and self.reasoning.chars:
            cost += 2 + (self.pane not in self.root.children)
        return cost

    def byte_cost(self) -> int:
        """About how many state bytes the next ``flush`` sends."""
        cost = sum(t.byte_cost() for t in self._texts())
        return cost + (200 if self._pane_dirty and self.reasoning.chars else 0)

    def settle(self) -> None:
        self._pull()
        self.reasoning.settle()
        self.answer.settle()

    def join_cost(self) -> int:
        """About the bytes ``flush(join=True)`` adds (see ``LiveText.join_cost``)."""
        return sum(t.join_cost() for t in self._texts())

    def flush(self, *, join: bool = False) -> int:
        """Send what changed; returns the message count (``join``: see ``LiveText.flush``)."""
        return sum(t.flush(join=join) for t in self._texts()) + self._flush_pane()

    def finalize(self, *, fold: bool, error_in_cell: bool = False) -> int:
        """All the text, the pane folded to its summary (or open), and the error line (unless
        ``error_in_cell``: the cell's own error line says it)."""
        trace = self.trace
        sent = self.reasoning.finalize(trace.reasoning) + self.answer.finalize(trace.answer)
        if trace.reasoning:
            self._set_pane(reasoning_summary(trace), not self.hide and not (fold and trace.answer))
        sent += self._flush_pane()
        error = trace.error and not error_in_cell
        if error:  # as the static view says it
            line = html.escape(f"✖ {trace.error}")
            if self.error is None:
                self.error = W.HTML(line, layout=self._layout, _dom_classes=(ERROR_CLASS,))
            else:
                sent += self.meter.set(self.error, value=line)
        kids = self._panes() + (self.answer.box,) + ((self.error,) if error else ())
        return sent + self.meter.set(self.root, children=kids)

    def _set_pane(self, title: str, open_: bool) -> None:
        self._title, self._open, self._pane_dirty = title, open_, True

    @property
    def parts(self) -> tuple[W.Widget, ...]:
        parts = (self.root, self.toggle, self.pane, self.answer.box, self.error)
        return tuple(w for w in parts if w is not None)

    def _panes(self) -> tuple[W.Widget, ...]:
        return (self.toggle, self.pane) if self.reasoning.chars else ()

    def _flush_pane(self) -> int:
        if not self._pane_dirty or not self.reasoning.chars:
            return 0
        self._pane_dirty = False
        sent = 0
        if self.pane not in self.root.children:
            sent += self.meter.set(self.root, children=(*self._panes(), self.answer.box))
        index = 0 if self._open else None
        sent += self.meter.set(self.pane, titles=(self._title,), selected_index=index)
        return sent + self._set_toggle()

    def _set_toggle(self) -> int:
        self._quiet = True
        try:
            return self.meter.set(
                self.toggle, value=self._open, description=self._title, icon=_CARET[self._open]
            )
        finally:
            self._quiet = False

    def _on_toggle(self, change) -> None:
        if self._quiet or change["new"] == self._open:
            return
        self._open = change["new"]
        self.meter.set(self.pane, selected_index=0 if self._open else None)
        self._set_toggle()

    # -- numbers ---------------------------------------------------------------------------------

    def elapsed(self, now: float) -> float:
        total = self.trace.timing.get("total_ms") if self.finished else None
        if total is not None:
            return total / 1000
        return (self.t_end if self.finished else now) - self.t0

    def reasoning_ms(self, now: float) -> float | None:
        """The reasoning's time so far, from the fold's timers (on the trace's clock)."""
        saved = self.trace.timing.get("reasoning_ms") if self.finished else None
        began, last, answered = self.trace.moments
        if saved is not None or began is None:
            return saved
        if answered is not None:
            end = answered
        elif self.finished or self.phase != "thinking":
            end = last if last is not None else began
        else:
            end = now
        return round(max(0.0, end - began) * 1000, 1)

    def tokens_per_s(self, now: float) -> str:
        out = self.trace.usage.get("output_tokens")
        guessed = out is None
        if guessed:
            out = self.trace.chars / 4
        first = min((t for t in self.trace.moments[::2] if t is not None), default=None)
        if first is None or not out:
            return ""
        span = (self.t_end if self.finished else now) - first
        if span < 0.2:
            return ""
        return f"{'≈' if guessed else ''}{out / span:,.0f} tok/s"

    def label(self) -> str:
        """``Run 2 · high · 9.1 s`` for the run selector."""
        when = seconds_label(self.elapsed(self.t_end) * 1000) if self.finished else "running…"
        status = self.trace.status if self.finished else ""
        extra = f" · {status}" if status not in ("", "complete") else ""
        if (self.trace.continued or {}).get("run"):
            extra += f" · {origin(self.trace.continued)}"
        return f"Run {self.number} · {self.trace.preset} · {when}{extra}"

    def status_html(self, now: float) -> str:
        """``thinking… · 4.2 s · reasoning 3.1 s, ≈812 tokens · ≈190 tok/s``; ⚠ lines."""
        self._pull()
        label = _LIVE_LABEL.get(self.phase, self.phase)
        bits = [f"{label}: {self.detail}" if self.detail else label]
        elapsed = self.elapsed(now)
        bits.append(seconds_label(elapsed * 1000))
        if self.reasoning.chars and self._title in (LIVE_TITLE, HIDDEN_TITLE):
            ms = self.reasoning_ms(now)
            tokens = tokens_label(self.trace.usage.get("reasoning_tokens"), self.reasoning.chars)
            bits.append(f"reasoning {seconds_label(ms)}, {tokens}" if ms else f"reasoning {tokens}")
        if rate := self.tokens_per_s(now):
            bits.append(rate)
        if cost := cost_label(self.trace.cost):  # set when the run ends; none for local models
            bits.append(cost)
        parts = [html.escape(b) for b in bits]
        if not self.finished:  # counted on by the page (see CLOCK_CLASS); the text is a fallback
            parts[1] = (
                f'<span class="{CLOCK_CLASS}" style="animation-delay:-{elapsed:.2f}s">'
                f"<span>{parts[1]}</span></span>"
            )
        lines = [" · ".join(parts)]
        subject = self.live_subject(now)
        if subject or not (self.finished or self.hide):  # (its line kept while the run lasts:
            lines.append(f"<i>{html.escape(subject) or '&nbsp;'}</i>")  # the header holds still)
        replay = replay_line(self.trace)
        notes = (f"↻ {replay}" if replay else "", continued_line(self.trace.continued, short=True))
        lines += [html.escape(n) for n in (*notes, history_note(self.trace.request)) if n]
        return "<br>".join([*lines, *(html.escape(f"⚠ {w}") for w in self.trace.warnings)])

    def live_subject(self, now: float) -> str:
        """What the model thinks about now (``core.subject``), never of hidden reasoning."""
        if self.subject_due(now):
            self._subject, self._subject_at = self._latest, now
        return "" if self.hide or self.finished or self.phase != "thinking" else self._subject

    def subject_due(self, now: float) -> bool:
        """A new subject is due (sent then, not with the next text: a summary pauses)."""
        if self.hide or self.finished or self.phase != "thinking":
            return False
        latest, since = self._latest, self._subject_at + SUBJECT_EVERY
        return bool(latest) and latest != self._subject and now >= since


def history_note(request: dict) -> str:
    """``history: ≈1,240 tokens from 3 turns``: what a ``--chat`` run's earlier turns add."""
    turns = request.get("history_turns")
    if not turns:
        return ""
    return f"history: ≈{request.get('history_tokens', 0):,} tokens from {turns} turn" + (
        "s" if turns != 1 else ""
    )


def close_tree(*roots: W.Widget, keep: tuple[W.Widget, ...] = ()) -> None:
    """Close these widgets and every widget they reach (children, layout, style...) but
    ``keep`` (shared with widgets that stay)."""
    seen = {id(widget) for widget in keep}
    todo = list(roots)
    while todo:
        widget = todo.pop()
        if id(widget) in seen:
            continue
        seen.add(id(widget))
        for name in widget.keys:
            value = getattr(widget, name, None)
            items = value if isinstance(value, (list, tuple)) else (value,)
            todo.extend(v for v in items if isinstance(v, W.Widget))
        widget.close()
