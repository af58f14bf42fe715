"""One sweep row: a prompt x model x preset run, flattened from its ``Trace``.

The row is what every part of a sweep shares: the engine makes rows, the grader fills
``grade``, the analysis (summary, no-effect flags, Pareto front, recommendation) and the views
read them, and ``frame`` turns them into a pandas DataFrame with ``COLUMNS`` in this order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from ..core.trace import Trace


@dataclass(frozen=True)
class Row:
    sweep_id: str
    prompt_id: int
    """The prompt's place in the prompt set (0-based): rows of one prompt share it."""
    prompt: str
    model: str
    preset: str
    sent: dict[str, Any]
    """The reasoning control fields sent (``trace.request``): what the preset became."""
    status: str
    answer: str
    reasoning: str | None
    """None when the sweep keeps reasoning in the run log only (``reasoning_in_frame=False``)."""
    input_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    cost_usd: float | None
    """The estimate of ``trace.cost``; None for a local model or an unknown price."""
    first_token_ms: float | None
    total_ms: float | None
    grade: float | None = None
    expected: str | None = None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    cached: bool = False
    """Replayed from the replay cache (a resumed sweep), not asked again."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The prompt set's other columns, for a grader that needs them."""

    @classmethod
    def of(
        cls,
        trace: Trace,
        *,
        sweep_id: str,
        prompt_id: int,
        expected: str | None = None,
        keep_reasoning: bool = True,
        extra: dict[str, Any] | None = None,
    ) -> Row:
        usage, timing = trace.usage, trace.timing
        cost = trace.cost or {}
        return cls(
            sweep_id=sweep_id,
            prompt_id=prompt_id,
            prompt=trace.prompt,
            model=trace.model,
            preset=trace.preset,
            sent=dict(trace.request),
            status=trace.status,
            answer=trace.answer,
            reasoning=trace.reasoning if keep_reasoning else None,
            input_tokens=usage.get("input_tokens"),
            output_tokens=usage.get("output_tokens"),
            reasoning_tokens=usage.get("reasoning_tokens"),
            cost_usd=cost.get("usd"),
            first_token_ms=timing.get("first_token_ms"),
            total_ms=timing.get("total_ms"),
            expected=expected,
            error=trace.error,
            warnings=tuple(trace.warnings),
            cached=trace.replay is not None,
            extra=dict(extra or {}),
        )

    def graded(self, grade: float | None) -> Row:
        return replace(self, grade=grade)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS = tuple(f.name for f in fields(Row))
"""The frame's columns, in order."""


def frame(rows: list[Row]) -> Any:
    """A pandas DataFrame of ``rows`` (pandas is the ``[sweep]`` extra); ImportError without it."""
    import pandas  # optional: only a caller that asks for a frame needs it

    return pandas.DataFrame([row.to_dict() for row in rows], columns=list(COLUMNS))
