"""Token counts: which reported counts are believed, and an estimate when the server gives none;
one rule each, so every parser and view agrees."""

from __future__ import annotations

from typing import Any

CHARS_PER_TOKEN = 4
"""Of English text, in the BPE vocabularies of current models."""

MAX_COUNT = 10**12
"""No run comes near this many tokens (context windows hold millions): a larger count is a
broken server or a crafted notebook, and past ~10**308 it is not even a float."""


def count(value: Any) -> int | None:
    """A whole number from 0 below ``MAX_COUNT``, as an int (``12.0`` is 12: JSON has one number
    type); None for anything else (a string, a bool, NaN...): not reported."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():  # also NaN and infinities
        return None
    return int(value) if 0 <= value < MAX_COUNT else None


def shown(value: Any) -> str:
    """An odd count, short enough for a warning (``10**400`` has 401 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_COUNT:
        return "a number past any real count"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def estimate(chars: int) -> int:
    """Tokens in ``chars`` characters of text: at least 1 for any text, 0 for none."""
    return max(1, round(chars / CHARS_PER_TOKEN)) if chars else 0


def reasoning_tokens(
    reported: int | None, output: int | None, reasoning_chars: int, answer_chars: int
) -> tuple[int | None, bool]:
    """``(count, estimated)``: the server's reasoning count; else its output total split by
    characters between reasoning and answer; else an estimate from the characters; else None."""
    if reported is not None:
        return reported, False
    if output is not None and reasoning_chars:
        return round(output * reasoning_chars / (reasoning_chars + answer_chars)), True
    if reasoning_chars:
        return estimate(reasoning_chars), True
    return None, False
