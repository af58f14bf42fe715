"""Where a run's cost shows: the live status line (once known), the static notes, the saved
trace (validated as untrusted input), ``stats()`` / ``%think --stats``; local runs show no cost
anywhere, never ``$0``. The last test runs %%think in a real kernel against the wire server."""

from __future__ import annotations

import json

import pytest
import wire_fixtures as wf
from wire_server import Reply

from reasoning_nb import stats
from reasoning_nb.core.trace import Trace, read_trace
from reasoning_nb.notebook.run_view import RunView
from reasoning_nb.views.render import to_html, to_markdown, to_plain

COST = {
    "usd": 0.0123,
    "estimate": True,
    "prices_as_of": "2026-11-01",
    "source": "genai-prices 0.2.3",
    "input_tokens": 100,
    "output_tokens": 1200,
}


def trace(provider="openai", cost=COST, **kw) -> Trace:
    t = Trace(model=f"{provider}:m", provider=provider, answer="Yes.", status="complete", **kw)
    t.usage |= {"input_tokens": 100, "output_tokens": 1200, "reasoning_tokens": 1000}
    t.cost = dict(cost) if cost else None
    return t


def test_static_views_show_the_estimate_with_its_price_date():
    line = "≈ $0.0123, estimate, prices of 2026-11-01"
    t = trace()
    assert line in to_plain(t)
    assert line in to_html(t)
    assert "≈ \\$0.0123, estimate, prices of 2026-11-01" in to_markdown(t)  # \$: not math


def test_local_run_shows_no_cost_anywhere():
    t = trace("ollama", cost=None)
    for text in (
        to_plain(t),
        to_html(t),
        to_markdown(t),
        str(stats([t])),
        stats([t])._repr_html_(),
    ):
        assert "$" not in text and "estimate, prices" not in text
    assert stats([t]).rows[0]["cost_usd"] is None


def test_status_line_shows_cost_once_the_run_has_one():
    t = trace(cost=None)
    view = RunView(t, 1, 0.0, hide_reasoning=False)
    assert "$" not in view.status_html(0.0)
    t.cost = dict(COST)
    view.end(t, 1.0)
    assert view.status_html(1.0).count("≈ $0.0123") == 1


def test_stats_cost_column_and_total_leave_replays_out():
    runs = [
        trace(),
        trace(),
        trace("openai", replay={"recorded_at": "2026-11-01T00:00:00Z", "pace": "instant"}),
        trace("ollama", cost=None),
    ]
    s = stats(runs)
    assert [r["cost_usd"] for r in s.rows] == [0.0123, 0.0123, 0.0123, None]
    table = s.table()
    col = table[0].index("cost")
    assert [row[col] for row in table[1:]] == ["≈ $0.0123"] * 3 + [""]
    assert "cost ≈ $0.0246 over 2 runs (estimate; replays not counted)" in s.legend()


@pytest.mark.parametrize(
    "bad",
    [
        {**COST, "usd": -1},
        {**COST, "usd": float("nan")},
        {**COST, "usd": True},
        {**COST, "usd": "0.01"},
        {**COST, "estimate": False},
        {**COST, "prices_as_of": "<script>"},
        {**COST, "output_tokens": -5},
        {**COST, "usd": 1e300},
        "$0",
        [1],
    ],
)
def test_schema_skips_a_hostile_cost(bad):
    data = {**trace(cost=None).to_dict(), "cost": bad}
    got, warnings = read_trace(data)
    assert got is not None and got.cost is None
    assert any("'cost'" in w for w in warnings)


def test_schema_keeps_a_valid_cost_and_drops_extra_keys():
    data = {**trace().to_dict(), "cost": {**COST, "source": "a\nb <i>" + "x" * 200, "evil": 1}}
    got, warnings = read_trace(data)
    assert warnings == []
    assert got.cost["usd"] == 0.0123 and "evil" not in got.cost
    assert "\n" not in got.cost["source"] and len(got.cost["source"]) <= 80
    assert "&lt;i&gt;" in to_html(got) or "<i>" not in to_html(got)


@pytest.mark.kernel
def test_real_kernel_saves_and_shows_the_cost(wire_server):
    from test_kernel_magic import execute_notebook, traced_outputs

    frames = wf.responses_sse("Think <b>hard</b>.", "Blue.", reasoning_tokens=40)
    wire_server.route("POST", "/v1/responses", Reply.sse(frames, chunking="random", seed=5))
    nb = execute_notebook(
        "import os; os.environ['OPENAI_API_KEY'] = 'sk-test-0123'",
        f"%%think --model openai:gpt-5.1 --base-url {wire_server.url} --api-key-env OPENAI_API_KEY"
        "\nWhy blue?",
        "%think --stats",
    )
    (output,) = traced_outputs(nb.cells[2])
    cost = output.metadata["reasoning_nb"]["cost"]
    assert cost["estimate"] is True and cost["usd"] > 0 and cost["prices_as_of"]
    assert "estimate, prices of" in output.data["text/plain"]
    state = json.dumps(nb.metadata["widgets"], ensure_ascii=False)
    assert "≈ $" in state  # the widget's final status line
    shown = json.dumps(
        [o.get("data", o.get("text")) for o in nb.cells[3].outputs], ensure_ascii=False
    )
    assert "cost" in shown and "replays not counted" in shown
