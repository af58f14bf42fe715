"""The page's part of the live view, sent by message: its stylesheet, Pin's script, and what a
view does when its kernel goes and when the notebook is saved (``static/session.js``).

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

from ..core.schema import METADATA_KEY, WIDGET_STATE, WIDGET_VIEW
from ..views.theme import lab
from .style import COMPARE_CLASS, LIVE_CLASS, PAGE_CSS, STATIC_CLASS, STYLE

_STATIC = Path(__file__).parent / "static"
_SCRIPTS = ("session.js", "pin.js")  # one module: pin.js calls session.js's `follow`
DEAD = "No kernel behind this output: run the cell again to use its controls."
"""What a live view says once its kernel is gone (shut down, restarted, dead)."""
_GONE = "jupyter-widgets-disconnected"  # (ipywidgets' class on a view whose comm is gone)
_ROOTS = f".{LIVE_CLASS},.{COMPARE_CLASS}"
# A view whose kernel went while the page looked: its output is hidden (``PAIRING_STYLE``) and
# the static twin below says why there are no controls; with no twin yet, the view says it.
DEAD_STYLE = (
    f".jp-OutputArea-child:has(:is({_ROOTS}).{_GONE}) + .jp-OutputArea-child"
    f" .{STATIC_CLASS}::before,:is({_ROOTS}).{_GONE}::after"
    f"{{content:{json.dumps(DEAD)};display:block;margin:0 0 .4em;"
    f"color:{lab('ui-font-color2')};font-size:{lab('ui-font-size1')}}}"
)
SESSION = {
    "view": WIDGET_VIEW,
    "trace": METADATA_KEY,
    "state": WIDGET_STATE,
    "roots": _ROOTS,
    "gone": _GONE,
    "dead": DEAD,
}
"""What ``static/session.js`` reads: the saved output's keys, the live roots and their dead
class, the dead note."""


@cache
def assets() -> dict[str, str]:
    """The stylesheet, the parts' script (with :mod:`.style`'s selectors) and their version."""
    scripts = "\n".join((_STATIC / name).read_text(encoding="utf-8") for name in _SCRIPTS)
    js = f"const CSS = {json.dumps(PAGE_CSS)};\nconst SESSION = {json.dumps(SESSION)};\n{scripts}"
    css = STYLE + DEAD_STYLE
    version = hashlib.sha256((css + js).encode()).hexdigest()[:12]
    return {"type": "assets", "version": version, "css": css, "js": js}


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
