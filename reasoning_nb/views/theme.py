"""JupyterLab's CSS variables as every view uses them, static and live, each with its one
fallback: what a page without Lab's variables shows (an export read on GitHub, in a browser, in
an editor). Inside JupyterLab and Notebook 7 the variables are always set.

Two saved views keep a fallback of their own (``render``'s table head and error line): their
text is in every export made so far, and a test holds it byte for byte.
"""

from __future__ import annotations

_FALLBACKS = {
    "border-color1": "#d0d7de",
    "border-color2": "#d0d7de",
    "border-width": "1px",
    "code-font-family": "monospace",
    "code-font-size": "13px",
    "content-font-color1": "#24292f",
    "content-font-color2": "#57606a",
    "layout-color0": "#fff",
    "layout-color2": "#f6f8fa",
    "rendermime-error-background": "#fdd",
    "rendermime-table-row-background": "#8881",
    "ui-font-color0": "#000",
    "ui-font-color2": "#757575",
    "ui-font-size1": "13px",
}


def lab(name: str) -> str:
    """Lab's variable ``--jp-<name>``, with its fallback, for a CSS value."""
    return f"var(--jp-{name},{_FALLBACKS[name]})"


ADDED, REMOVED = "rgba(46,160,67,0.22)", "rgba(248,81,73,0.22)"
"""The tints of a diff's added and removed text: translucent, so they read on Light and Dark."""
DIFF_BOX = (
    f"font-size:0.85em;background:{lab('layout-color2')};"
    f"color:{lab('content-font-color1')};padding:0.5em 0.8em;overflow-x:auto;"
    "word-break:normal;overflow-wrap:anywhere"
)
"""The box a diff's text is in (the answers' diff, where two reasonings part): where a line
wraps, between words (Lab's ``pre`` breaks anywhere, mid-word)."""

__all__ = ["ADDED", "DIFF_BOX", "REMOVED", "lab"]
