"""The page's part of the live view, its stylesheet and Pin's script, sent by message.

Held as widget state they were half a one-run cell's saved bytes, so an :class:`AssetsWidget`
holds only a small loader (``static/loader.js``) that asks the kernel for them once per page
and version: a message is never saved. Without a kernel, no assets: the static twin shows.
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
    """The stylesheet, the parts' script (with :mod:`.style`'s selectors) and their version."""
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
