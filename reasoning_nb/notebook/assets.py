"""The page's part of the live view, its stylesheet and Pin's script, sent by message.

A widget's synced state is saved with the notebook, once per cell: the stylesheet and the
script held as state were half of a one-run cell's saved bytes. So a :class:`Kit` widget holds
only a small loader (``static/loader.js``), which asks the kernel for the kit once per page and
version; a message is never saved. A widget restored without a kernel behind it gets no kit,
and is not shown: the static twin below it is (see ``style.PAIRING_STYLE``).
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path
from typing import Any

import anywidget
from traitlets import Unicode

_STATIC = Path(__file__).parent / "static"
_COMMENT = re.compile(r"^\s*//.*$|\s+//\s.*$", re.M)
_OPEN_END = re.compile(r"([;{(\[,])\n")


def compact_js(source: str) -> str:
    """``source`` without its comments and indentation, for the wire and the saved loader.
    Line ends stay where they may end a statement (not after ``; { ( [ ,``); the files have no
    ``//`` inside a string, and no template string over lines."""
    lines = (line.strip() for line in _COMMENT.sub("", source).splitlines())
    return _OPEN_END.sub(r"\1", "\n".join(line for line in lines if line))


@cache
def kit() -> dict[str, str]:
    """What the page asks for: the stylesheet, the script of the kit's parts (``pin``), and
    their version (a page keeps the kit of each version it was sent)."""
    from .style import STYLE  # (style reads the classes of the modules that import this one)

    js = compact_js((_STATIC / "pin.js").read_text(encoding="utf-8"))
    version = hashlib.sha256((STYLE + js).encode()).hexdigest()[:12]
    return {"type": "kit", "version": version, "css": STYLE, "js": js}


class Kit(anywidget.AnyWidget):
    """A widget of the live view with a part of the kit: ``style`` (the stylesheet only, for
    a view with no other kit widget) or ``pin``."""

    # The text, not the path: anywidget ties every instance made from a file path to the file
    # (for hot reload) with a strong reference, so no widget would ever be freed.
    _esm = compact_js((_STATIC / "loader.js").read_text(encoding="utf-8"))
    part = Unicode("style", help="The part of the kit this widget renders.").tag(sync=True)
    version = Unicode(help="The kit's version: a page asks for each version once.").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(version=kit()["version"], **kwargs)
        self.on_msg(self._on_kit_msg)

    def _on_kit_msg(self, _widget, content: Any, _buffers) -> None:
        if isinstance(content, dict) and content.get("type") == "kit":
            self.send(kit())
