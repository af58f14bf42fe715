"""The page's part of the live view, its stylesheet and Pin's script, sent by message.

A widget's synced state is saved with the notebook, once per cell: the stylesheet and the
script held as state were half of a one-run cell's saved bytes. So an :class:`AssetsWidget`
holds only a small loader (``static/loader.js``), which asks the kernel for the assets once per
page and version; a message is never saved. A widget restored without a kernel behind it gets
no assets, and is not shown: the static twin below it is (see ``style.PAIRING_STYLE``).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import anywidget
from traitlets import Unicode

from .style import PAGE_CSS, STYLE

_STATIC = Path(__file__).parent / "static"


@cache
def assets() -> dict[str, str]:
    """What the page asks for: the stylesheet, the script of the widgets' parts (``pin``), with
    the selectors it needs from :mod:`.style` put before it, and their version (a page keeps
    the assets of each version it was sent)."""
    script = (_STATIC / "pin.js").read_text(encoding="utf-8")
    js = f"const CSS = {json.dumps(PAGE_CSS)};\n{script}"
    version = hashlib.sha256((STYLE + js).encode()).hexdigest()[:12]
    return {"type": "assets", "version": version, "css": STYLE, "js": js}


def _loader() -> str:
    """The loader as each widget saves it: without its comment lines and indentation."""
    lines = (line.strip() for line in (_STATIC / "loader.js").read_text("utf-8").splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


class AssetsWidget(anywidget.AnyWidget):
    """A widget of the live view that brings the page its assets and renders a part of them:
    ``style`` (the stylesheet only, for a view with no other such widget) or ``pin``."""

    # The text, not the path: anywidget ties every instance made from a file path to the file
    # (for hot reload) with a strong reference, so no widget would ever be freed.
    _esm = _loader()
    part = Unicode("style", help="The part of the assets this widget renders.").tag(sync=True)
    version = Unicode(help="The assets' version: a page asks for each once.").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(version=assets()["version"], **kwargs)
        self.on_msg(self._on_assets_msg)

    def _on_assets_msg(self, _widget, content: Any, _buffers) -> None:
        if isinstance(content, dict) and content.get("type") == "assets":
            self.send(assets())
