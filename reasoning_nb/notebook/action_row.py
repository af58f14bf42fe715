"""The action row of a ``%%think`` widget: what a user can do next with the run on screen.

Under an ended run: Continue and its hint, Answer now and More room (``core.rescue``), Edit &
continue (where the provider can go on from prefilled reasoning: a text area with the reasoning,
whose end is the point the model thinks on from), Pin.
Under a live run that loops: Answer now. Buttons are made when first offered, so a saved
notebook holds no button never shown; Pin is there from the start (hidden until offered), as it
brings the page its assets. Clicks go to the runner through :class:`Actions`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import ipywidgets as W

from ..core import rescue
from ..core.loops import LOOP_NOTICE
from ..core.trace import Trace
from ..providers.catalog import PROVIDERS, output_limit
from .pacing import Pacer
from .pin import PinButton
from .run_view import RunView
from .style import ASSETS_CLASS, EDIT_CLASS, STEER_CLASS

# The statuses Continue picks up; also an error after text arrived (a dropped stream), never one
# before (a 404, a refused connection: asking again would fail the same way).
STEERABLE = ("cancelled", "truncated")


@dataclass
class Actions:
    """What a live widget's controls ask of its runner; None: that control is not offered."""

    rerun: Callable[[str], object] | None = None  # (preset)
    stop: Callable[[], object] | None = None
    continue_run: Callable[[Trace, str, int], object] | None = None  # (trace, hint, run number)
    # (trace, "answer_now" or "more_room", run number)
    rescue: Callable[[Trace, str, int], object] | None = None
    line_written: Callable[[str], object] | None = None  # "Use these flags" wrote this line
    resume: Callable[[Trace, str, int], object] | None = None  # (trace, edited text, run number)


class Owner(Protocol):
    """The widget around the row (``ThinkWidget``)."""

    pacer: Pacer
    layout: W.Layout
    stop_button: W.Button
    actions: Actions
    live: RunView | None

    @property
    def view(self) -> RunView | None: ...  # the run on screen

    def line_written(self, line: str) -> None: ...  # "Use these flags" wrote ``line``

    def flags_line(self, trace: Trace) -> str: ...  # the line Pin offers to write


class ActionRow:
    """``box``: the row; ``update`` sets its parts for the run on screen."""

    def __init__(self, owner: Owner) -> None:
        self._owner, self._meter, self._layout = owner, owner.pacer.meter, owner.layout
        button = owner.stop_button
        self._look = {"layout": button.layout, "style": button.style}  # (as wide as its text)
        self.hint: W.Text | None = None
        self.continue_button: W.Button | None = None
        self.answer_button: W.Button | None = None
        self.room_button: W.Button | None = None
        self.edit_button: W.Button | None = None
        self.editor: W.Textarea | None = None
        self.resume_button: W.Button | None = None
        self._editing: Trace | None = None  # the run whose reasoning the text area holds
        self.pin = PinButton(
            self._pinnable, owner.line_written, layout=self._layout, _dom_classes=(ASSETS_CLASS,)
        )
        self.box = W.HBox((self.pin,), layout=self._layout, _dom_classes=(STEER_CLASS,))

    def _runs(self) -> tuple[RunView | None, RunView | None]:
        return self._owner.view, self._owner.live

    def update(self, flags_line: Callable[[Trace], str]) -> int:
        """The parts for the run on screen; ``flags_line``: the line Pin offers to write."""
        run, live = self._runs()
        actions = self._owner.actions
        parts: list[W.Widget] = []
        sent = 0
        looping = live is not None and any(w.startswith(LOOP_NOTICE) for w in live.trace.warnings)
        if looping and run is live and actions.rescue is not None:
            parts += self._rescues(run.trace)[:1]  # Answer now stops the loop
        if live is None and run is not None and run.finished:
            if actions.rescue is not None and rescue.lost_answer(run.trace):
                parts += self._rescues(run.trace)
            if actions.continue_run is not None and steerable(run.trace):
                parts += self._steering()
            if actions.resume is not None and resumable(run.trace):
                parts += self._edit(run.trace)
            if run.trace.reasoning or run.trace.answer:
                sent += self._meter.set(self.pin, line=flags_line(run.trace))
                parts.append(self.pin)
        # Pin stays in the row, idle (hidden) when not offered: it brings the page its assets.
        sent += self._meter.set(self.pin, offered=self.pin in parts)
        kids = tuple(parts) if self.pin in parts else (*parts, self.pin)
        return sent + self._meter.set(self.box, children=kids)

    def widgets(self) -> list[W.Widget]:
        made = [self.box, self.pin, self.continue_button, self.hint, self.answer_button]
        edits = [self.edit_button, self.editor, self.resume_button]
        return [w for w in [*made, self.room_button, *edits] if w is not None]

    def _steering(self) -> list[W.Widget]:
        if self.hint is None or self.continue_button is None:
            self.hint = W.Text(  # (continuous: the page sends Enter before the text typed last)
                placeholder="Hint for the model (optional)",
                continuous_update=True,
                layout=self._layout,
            )
            self.continue_button = W.Button(
                description="Continue",
                icon="play",
                tooltip="Ask again with this run's reasoning kept, and the hint",
                **self._look,
            )
            self.continue_button.on_click(self._on_continue)
            self.hint.on_msg(self._on_hint_msg)  # Enter in the hint: Continue
        return [self.continue_button, self.hint]

    def _edit(self, trace: Trace) -> list[W.Widget]:
        """Edit & continue; once clicked, the text area with ``trace``'s reasoning and the
        button that goes on from its end."""
        if self.edit_button is None:
            self.edit_button = W.Button(
                description="Edit & continue",
                icon="pencil",
                tooltip="Cut or correct the reasoning, and let the model think on from its end",
                **self._look,
            )
            self.edit_button.on_click(self._on_edit)
        if self._editing is not trace or self.editor is None or self.resume_button is None:
            return [self.edit_button]
        return [self.edit_button, self.editor, self.resume_button]

    def _on_edit(self, _button) -> None:
        run, live = self._runs()
        if live is not None or run is None:
            return
        if self.editor is None or self.resume_button is None:
            self.editor = W.Textarea(
                rows=8, layout=W.Layout(width="100%"), _dom_classes=(EDIT_CLASS,)
            )
            self.resume_button = W.Button(
                description="Continue from here",
                icon="play",
                tooltip="The model thinks on from the end of this text, then answers",
                **self._look,
            )
            self.resume_button.on_click(self._on_resume)
        self._editing = None if self._editing is run.trace else run.trace  # (a second click: close)
        with self._owner.pacer.unpaced():
            self._meter.set(self.editor, value=run.trace.reasoning)
            self.update(self._owner.flags_line)

    def _on_resume(self, _button) -> None:
        run, live = self._runs()
        go = self._owner.actions.resume
        if live is not None or run is None or go is None or self.editor is None:
            return
        if self._editing is not run.trace or not self.editor.value.strip():
            return
        self._editing = None
        go(run.trace, self.editor.value, run.number)

    def _rescues(self, trace: Trace) -> list[W.Widget]:
        """Answer now, and More room unless ``trace`` had its model's whole output limit."""
        if self.answer_button is None or self.room_button is None:
            self.answer_button = W.Button(
                description="Answer now",
                icon="forward",
                tooltip="Ask for the answer from this reasoning, with thinking off",
                **self._look,
            )
            self.room_button = W.Button(
                description="More room",
                icon="expand",
                tooltip="Ask again with a larger max_tokens, within the model's limit",
                **self._look,
            )
            self.answer_button.on_click(lambda _b: self._on_rescue("answer_now"))
            self.room_button.on_click(lambda _b: self._on_rescue("more_room"))
        if self._owner.live is None and rescue.room(trace, output_limit(trace.model)) is not None:
            return [self.answer_button, self.room_button]
        return [self.answer_button]

    def _pinnable(self) -> RunView | None:
        run = self._owner.view
        return run if run is not None and run.finished else None

    def _on_continue(self, _button) -> None:
        run, live = self._runs()
        go = self._owner.actions.continue_run
        if live is not None or run is None or go is None:
            return
        hint = ""
        if self.hint is not None:
            hint = self.hint.value
            with self._owner.pacer.unpaced():
                self._meter.set(self.hint, value="")
        go(run.trace, hint, run.number)

    def _on_rescue(self, action: str) -> None:
        """Under the run on screen; Answer now also under a live run that loops."""
        run, live = self._runs()
        go = self._owner.actions.rescue
        if run is None or go is None:
            return
        if live is not None and (run is not live or action != "answer_now"):
            return
        go(run.trace, action, run.number)

    def _on_hint_msg(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("event") == "submit":
            self._on_continue(None)


def resumable(trace: Trace) -> bool:
    """A run with reasoning, whose provider can go on from a point in it (``Profile.resume``)."""
    profile = PROVIDERS.get(trace.provider)
    return bool(trace.reasoning) and profile is not None and profile.resume is not None


def steerable(trace: Trace) -> bool:
    arrived = bool(trace.reasoning or trace.answer)
    return trace.status in STEERABLE or (trace.status == "error" and arrived)
