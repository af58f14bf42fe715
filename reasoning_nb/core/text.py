"""Labels from untrusted text: a model id, a preset, a hint may come from a saved notebook."""

from __future__ import annotations

import re

# C0/C1 controls and bidi overrides (a "Trojan source" label could reorder what is shown).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+")


def one_line(text: str) -> str:
    """Collapse whitespace and control characters: a label must stay one line."""
    return " ".join(_CONTROLS.sub(" ", text).split())
