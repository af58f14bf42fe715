"""Pin: what the reader selected in a run, reasoning or answer, copied as its markdown source
into a new markdown cell below the ``%%think`` cell (all of the reasoning, with nothing selected).

An anywidget (``static/pin.js``): only the page knows the selection and can add a markdown cell.
The page says where the selection lies; the kernel maps it back to the model's markdown
(``views.selection``) and writes the cell, so model text is made safe in one place
(``render.safe_markdown``); the page inserts it, or copies it where it cannot. The same widget
offers "Use these flags": the page puts that line in place of the cell's ``%%think`` line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traitlets import Bool, Unicode

from ..core.schema import PIN_KEY  # an export strips the reasoning of a cell marked so
from ..core.trace import Trace
from ..views import render
from ..views.selection import Selection, pinned, selected_source
from .assets import AssetsWidget
from .host import executing_cell_id
from .run_view import RunView


def pin_markdown(trace: Trace, text: str = "", part: str = "reasoning") -> str:
    """``text`` of a ``part`` of ``trace`` (empty: all the reasoning), quoted under a head."""
    text = text.strip("\n") if text.strip() else trace.reasoning  # (indented code keeps its indent)
    body = render.quote(pinned(text, breaks=part == "reasoning"))
    return f"{render.pin_head(trace.model, trace.preset, part)}\n>\n{body}"


class PinButton(AssetsWidget):
    """Pin (from the run ``shown()`` returns) and "Use these flags" (``line`` in place of the
    cell's first line, then ``on_line(line)``)."""

    cell_id = Unicode("", help="The notebook cell the widget was made in.").tag(sync=True)
    line = Unicode("", help="The cell line 'Use these flags' writes (none: hidden).").tag(sync=True)
    offered = Bool(False, help="Pin is offered (else idle: hidden, assets only).").tag(sync=True)
    # (a trait the script follows, not a class in ``_dom_classes``: in Lab 4 an anywidget view
    # did not follow a change of them, and a new view took them after its script had run)

    def __init__(
        self,
        shown: Callable[[], RunView | None],
        on_line: Callable[[str], object] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(part="pin", cell_id=executing_cell_id(), **kwargs)
        self._shown, self._on_line = shown, on_line
        self.placed: list[str] = []  # how each pin landed: inserted, copied or failed
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget, content: Any, _buffers) -> None:
        if not isinstance(content, dict):
            return
        if content.get("type") == "pin":
            run = self._shown()
            if run is None or not (run.trace.reasoning or run.trace.answer):
                return
            parts = content.get("parts")
            selections = [Selection.read(p) for p in parts] if isinstance(parts, list) else []
            cells = [_cell(run, s) for s in selections if s is not None] or [_cell(run, None)]
            self.send({"type": "cells", "cells": cells})
        elif content.get("type") == "placed":
            self.placed.append(str(content.get("how")))
            # (the line the kernel offered, not text from the page)
            if content.get("how") == "rewritten" and self.line and self._on_line is not None:
                self._on_line(self.line)


def _cell(run: RunView, selection: Selection | None) -> dict[str, Any]:
    """One pinned cell: ``selection`` in ``run`` (None: its reasoning, else its answer)."""
    trace = run.trace
    part, text = ("reasoning", trace.reasoning) if trace.reasoning else ("answer", trace.answer)
    if selection is not None:
        breaks = selection.pane == "reasoning"
        if selection.static:  # in the static twin: the whole text, as the trace has it
            sources = (getattr(trace, selection.pane),)
        else:
            shown = getattr(run, selection.pane)  # its LiveText
            sources, breaks = shown.sources, shown.breaks
        picked = selected_source(sources, selection, breaks=breaks)
        part, text = (selection.pane, picked) if picked.strip() else (part, text)
    origin = {"model": trace.model, "preset": trace.preset, "run": run.number, "part": part}
    return {"markdown": pin_markdown(trace, text, part), "metadata": {PIN_KEY: origin}}
