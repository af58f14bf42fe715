"""The sweep engine over real sockets: rows, order, grades, the run log with the sweep id."""

from __future__ import annotations

import pytest

from reasoning_nb.store import db as store
from reasoning_nb.sweep.engine import asweep
from reasoning_nb.sweep.rows import COLUMNS

pytestmark = pytest.mark.anyio


async def test_every_prompt_model_and_preset_is_one_row_in_order(wire_server, answers):
    seen = []
    result = await asweep(
        ["Q1", "Q2", "Q3"],
        models=["llamacpp:a", "llamacpp:b"],
        presets=["low", "high"],
        base_url=wire_server.url,
        on_progress=seen.append,
    )
    rows = result.rows
    assert [(r.prompt_id, r.model, r.preset) for r in rows] == [
        (p, f"llamacpp:{m}", preset) for p in range(3) for m in "ab" for preset in ("low", "high")
    ]
    assert [r.answer for r in rows] == [f"A{p}" for p in (1, 2, 3) for _ in range(4)]
    assert {r.status for r in rows} == {"complete"} and {r.sweep_id for r in rows} == {
        result.sweep_id
    }
    assert all(r.reasoning == "Let me think." for r in rows)
    assert len(answers.asked) == 12
    final = result.progress
    assert (final.total, final.done, final.running, final.failed) == (12, 12, 0, 0)
    assert final.stopped is None and final.eta_s == 0.0
    assert seen[-1] == final and len(seen) == 24  # a start and an end per run
    assert max(p.running for p in seen) >= 1

    frame = result.frame()
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 12
    assert frame.attrs["sweep_id"] == result.sweep_id

    logged = store.sweep_runs(result.sweep_id)
    assert sorted(t["answer"] for t in logged) == sorted(r.answer for r in rows)
