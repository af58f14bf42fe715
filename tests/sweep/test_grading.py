"""Grades: the default check of an expected answer, and a user's grader."""

from __future__ import annotations

import pytest

from reasoning_nb.sweep.grading import check, grade
from reasoning_nb.sweep.rows import Row


@pytest.mark.parametrize(
    ("answer", "expected", "score"),
    [
        ("391", "391", 1.0),
        ("  **391**. ", "391", 1.0),
        ("The answer is 391.", "391", 1.0),
        ("The answer is 3910.", "391", 0.0),
        ("Paris", "paris", 1.0),
        ("New  York City", "new york", 1.0),
        ("Newark", "new", 0.0),
        ("", "391", 0.0),
        ("anything", "", 0.0),
        ("a+b (c)", "b (c)", 1.0),
    ],
)
def test_the_default_check(answer, expected, score):
    assert check(answer, expected) == score


def row(**kw) -> Row:
    base = dict(
        sweep_id="s", prompt_id=0, prompt="p", model="m", preset="low", sent={},
        status="complete", answer="391", reasoning=None, input_tokens=None,
        output_tokens=None, reasoning_tokens=None, cost_usd=None, first_token_ms=None,
        total_ms=None,
    )  # fmt: skip
    return Row(**(base | kw))


def test_grade_by_expected_grader_and_failure():
    assert grade(row(expected="391"), None).grade == 1.0
    assert grade(row(), None).grade is None  # nothing to grade against
    assert grade(row(status="error", expected="391"), None).grade is None
    assert grade(row(), lambda answer, r: len(answer) / 10).grade == pytest.approx(0.3)
    assert grade(row(), lambda answer, r: answer == "391").grade == 1.0
    assert grade(row(), lambda answer, r: None).grade is None


def test_a_grader_that_raises_leaves_a_warning_not_a_crash():
    def picky(answer, r):
        raise KeyError("topic")

    graded = grade(row(), picky)
    assert graded.grade is None
    assert "The grader picky failed on this row (KeyError" in graded.warnings[-1]
    assert grade(row(), lambda a, r: "high").warnings  # not a number
