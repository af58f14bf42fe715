"""What a sweep gives back: ``Sweep`` (rows, progress, the frame), and ``Rows``, the plain list
``sweep()`` returns where pandas is not installed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .progress import Progress
from .rows import Row, frame

EXTRA = "pip install 'reasoning_nb[sweep]'"
NO_PANDAS = f"A sweep's frame needs pandas: {EXTRA}, then call .frame() again."


def to_frame(rows: list[Row]) -> Any:
    """``rows.frame``, with an ImportError that names the extra."""
    try:
        return frame(rows)
    except ImportError:
        raise ImportError(NO_PANDAS) from None


@dataclass
class Sweep:
    """A finished (or stopped) sweep: one ``Row`` per prompt x model x preset run, in the order
    prompt, model, preset; runs a stopped sweep never asked have no row."""

    sweep_id: str
    rows: list[Row]
    progress: Progress
    warnings: list[str] = field(default_factory=list)
    """What the sweep could not do as asked (its log, its spend cap), one sentence each."""

    def frame(self) -> Any:
        """The rows as a pandas DataFrame (``rows.COLUMNS``); its ``attrs`` hold the sweep id."""
        table = to_frame(self.rows)
        table.attrs["sweep_id"] = self.sweep_id
        return table

    def __repr__(self) -> str:
        p = self.progress
        state = f", stopped: {p.stopped}" if p.stopped else ""
        return (
            f"<Sweep {self.sweep_id}: {len(self.rows)} of {p.total} runs, {p.failed} failed, "
            f"{p.cached} replayed{state}>"
        )


class Rows(list):
    """The rows of a sweep as a plain list (pandas is not installed); ``.frame()`` once it is."""

    def __init__(self, rows: list[Row], sweep_id: str) -> None:
        super().__init__(rows)
        self.sweep_id = sweep_id

    def frame(self) -> Any:
        return Sweep(self.sweep_id, list(self), Progress(total=len(self))).frame()

    def __repr__(self) -> str:
        return (
            f"<{len(self)} sweep rows of sweep {self.sweep_id}: a list of reasoning_nb.sweep.Row; "
            f"for a DataFrame, {EXTRA} and call .frame()>"
        )
