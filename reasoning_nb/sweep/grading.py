"""Grades: a user's grader ``(answer, row) -> score``, or the default check of an expected
answer (exact, else contained as a whole word or phrase, after normalising case, spacing,
markdown emphasis and a trailing full stop)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .rows import Row

Grader = Callable[[str, Row], Any]
_EMPHASIS = re.compile(r"[*_`]+")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    text = _SPACE.sub(" ", _EMPHASIS.sub("", text)).strip().casefold()
    return text.rstrip(" .")


def check(answer: str, expected: str) -> float:
    """1.0 where ``answer`` is ``expected`` or says it as a whole word or phrase, else 0.0."""
    said, wanted = normalise(answer), normalise(expected)
    if said == wanted:
        return 1.0
    if not wanted:
        return 0.0
    found = re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", said)
    return 1.0 if found else 0.0


def grade(row: Row, grader: Grader | None) -> Row:
    """``row`` with its grade: the grader's score, or the default check where the prompt set
    has an expected answer; no grade for a failed run. A grader that raises or answers with
    something that is not a number leaves the grade empty, with a warning that says why."""
    if row.status == "error":
        return row
    if grader is None:
        if row.expected is None:
            return row
        return row.graded(check(row.answer, row.expected))
    try:
        score = grader(row.answer, row)
        value = None if score is None else float(score)
        if value is not None and math.isnan(value):
            value = None
    except Exception as exc:  # the user's code: one bad row must not end the sweep
        name = getattr(grader, "__name__", "grader")
        why = f"The grader {name} failed on this row ({type(exc).__name__}: {exc}); fix it "
        why += "and run the sweep again (completed runs replay from the cache)."
        return _warned(row, why)
    return row.graded(value)


def _warned(row: Row, text: str) -> Row:
    return replace(row, warnings=(*row.warnings, text[:500]))
