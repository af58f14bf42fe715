"""Token counts when the server gives none: one rule, so every view shows the same number."""

from __future__ import annotations

CHARS_PER_TOKEN = 4
"""About how many characters of English text make a token (BPE vocabularies of current
models)."""


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
