"""Memory: a sweep keeps its rows, not its runs. Each run's trace is dropped once its row is
made, and with ``reasoning_in_frame=False`` a long reasoning costs the sweep nothing to keep
(it went to the log). Measured with tracemalloc as the bytes still held after the sweep."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from reasoning_nb.core.trace import Trace
from reasoning_nb.sweep.engine import asweep

pytestmark = pytest.mark.anyio
RUNS = 40
LONG = 20_000  # characters of reasoning per run
ROW = 3_000
"""Bytes a row without its reasoning may hold (about 1,100 measured: the row, what was sent,
the answer): 10,000 rows stay near 11 MB."""


class _Forgetful(list):
    def append(self, item) -> None:  # the hook's notes would count as the sweep's memory
        pass


async def held_after(wire_server, first: int, **options) -> tuple[int, object]:
    """Bytes still allocated once a sweep of ``RUNS`` prompts is over (its result kept)."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    result = await asweep(
        [f"Q{first + i}" for i in range(RUNS)],
        models="llamacpp:m",
        presets="low",
        base_url=wire_server.url,
        **options,
    )
    wire_server.requests.clear()  # the test server's own record of what it was sent
    gc.collect()
    return tracemalloc.get_traced_memory()[0] - before, result


async def test_a_sweep_holds_its_rows_not_its_runs(wire_server, answers, monkeypatch):
    monkeypatch.setattr(answers, "asked", _Forgetful())
    step = "Let me think this through step by step. " * 50  # 2,000 characters a frame
    answers.reasoning = [step] * (LONG // len(step))
    tracemalloc.start()
    try:
        await held_after(wire_server, 1000)  # warm up: imports, clients, the database file
        lean, lean_result = await held_after(wire_server, 0, reasoning_in_frame=False)
        full, full_result = await held_after(wire_server, 100)
    finally:
        tracemalloc.stop()
    assert not [o for o in gc.get_objects() if isinstance(o, Trace)]  # every trace dropped
    assert full >= RUNS * LONG  # the reasoning is in these rows...
    assert lean < RUNS * ROW  # ...and not in these: what is left is the rows themselves
    assert all(r.reasoning is None for r in lean_result.rows)
    assert len(full_result.rows) == len(lean_result.rows) == RUNS
    print(f"held per row: {lean / RUNS:.0f} bytes lean, {full / RUNS:.0f} with reasoning")
