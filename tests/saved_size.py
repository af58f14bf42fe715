"""What a saved %%think output may spend beyond its text budget.

Issue 24 colours the saved output's code as the live view does, by class: that costs the code
stylesheet once and one classed span per coloured token (at most 32 bytes saved, its quotes
escaped in the notebook's JSON). The size tests allow exactly that on top of the text's budget,
counted in what was saved, so the rest of the output is held to the budget as before.
"""

from __future__ import annotations

from reasoning_nb.views import code_look

SPAN_BYTES = 32


def code_colour_bytes(html: str) -> int:
    """The bytes the code colours of the saved ``text/html`` may take."""
    spans = html.count(f'<span class="{code_look.CODE_PREFIX}')
    return (len(code_look.CODE_STYLE) + SPAN_BYTES * spans) if spans else 0
