"""Pin: a part of a run's reasoning, copied into a new markdown cell below the ``%%think`` cell.

The button is a small anywidget (``static/pin.js``): only the browser knows what the reader
selected, and only the notebook's document model can take a new cell (a kernel can add a code
cell while a cell runs, never a markdown cell from a button click). The kernel writes the cell's
markdown, so model text is made safe in one place (``render.safe_markdown``, as exports do);
the page inserts it, or copies it to the clipboard where it cannot reach the document.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
from traitlets import Unicode

from .. import render
from ..core.trace import Trace
from ..export.schema import PIN_KEY  # an export strips the reasoning of a cell marked so


def pin_markdown(trace: Trace, text: str = "") -> str:
    """The pinned cell: ``text`` (all of the reasoning when empty), quoted under a head line."""
    text = text.strip() or trace.reasoning
    body = render.quote(render.safe_markdown(text, breaks=True, allow_fences=False))
    return f"{render.pin_head(trace.model, trace.preset)}\n>\n{body}"


def executing_cell_id() -> str:
    """The id of the notebook cell being run (JupyterLab sends it with the request), or ""."""
    try:
        from IPython import get_ipython

        parent = get_ipython().kernel.get_parent()
    except Exception:  # no kernel (plain IPython, tests): the page finds the cell on screen
        return ""
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
    return cell_id if isinstance(cell_id, str) else ""


class PinButton(anywidget.AnyWidget):
    """The "Pin" button of a ``ThinkWidget``; pins from the run ``shown()`` returns."""

    # The text, not the path: anywidget ties every instance made from a file path to the file
    # (for hot reload) with a strong reference, so no PinButton would ever be freed.
    _esm = (Path(__file__).parent / "static" / "pin.js").read_text(encoding="utf-8")
    cell_id = Unicode("", help="The notebook cell the widget was made in.").tag(sync=True)

    def __init__(self, shown: Callable[[], tuple[Trace, int] | None], **kwargs: Any) -> None:
        super().__init__(cell_id=executing_cell_id(), **kwargs)
        self._shown = shown
        self.placed: list[str] = []
        """How each pin landed, as the page reported it: inserted, copied or failed."""
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget, content: Any, _buffers) -> None:
        if not isinstance(content, dict):
            return
        if content.get("type") == "pin":
            shown = self._shown()
            if shown is None or not shown[0].reasoning:
                return
            trace, number = shown
            text = content.get("text")
            markdown = pin_markdown(trace, text if isinstance(text, str) else "")
            origin = {"model": trace.model, "preset": trace.preset, "run": number}
            self.send({"type": "cell", "markdown": markdown, "metadata": {PIN_KEY: origin}})
        elif content.get("type") == "placed":
            self.placed.append(str(content.get("how")))
