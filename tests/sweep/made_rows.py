"""Sweep rows made by hand, for the analysis, plot and view tests: ``row`` fills what a test
does not say with the values of a plain complete run."""

from __future__ import annotations

from typing import Any

from reasoning_nb.sweep.rows import Row

EFFORT = {"low": 400, "medium": 1200, "high": 3000}


def row(prompt_id: int = 0, model: str = "m", preset: str = "low", **given: Any) -> Row:
    tokens = given.pop("reasoning_tokens", EFFORT.get(preset, 800))
    values: dict[str, Any] = {
        "sweep_id": "s",
        "prompt_id": prompt_id,
        "prompt": f"question {prompt_id}",
        "model": model,
        "preset": preset,
        "sent": {"reasoning_effort": preset},
        "status": "complete",
        "answer": "42",
        "reasoning": "thinking",
        "input_tokens": 20,
        "output_tokens": None if tokens is None else tokens + 50,
        "reasoning_tokens": tokens,
        "cost_usd": None,
        "first_token_ms": 300.0,
        "total_ms": 1000.0 + (tokens or 0),
        "grade": 1.0,
    }
    return Row(**(values | given))


def sweep_rows(
    grades: dict[tuple[str, str], list[float]], cost_per_token: float | None = None
) -> list[Row]:
    """Rows of a sweep with these grades per (model, preset), prompt by prompt."""
    out = []
    for (model, preset), marks in grades.items():
        for k, grade in enumerate(marks):
            tokens = EFFORT.get(preset, 800) + 10 * k
            cost = None if cost_per_token is None else (tokens + 50) * cost_per_token
            out.append(row(k, model, preset, grade=grade, reasoning_tokens=tokens, cost_usd=cost))
    return out
