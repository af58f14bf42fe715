"""The sweep's analysis: the summary, the No effect flags (which kind, and why), the Pareto front
and the recommendation, over rows made by hand; the front and the choice also over any points
hypothesis makes."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st
from made_rows import row, sweep_rows

from reasoning_nb.core.capabilities import Capabilities
from reasoning_nb.core.presets import PRESETS
from reasoning_nb.providers.catalog import PROVIDERS
from reasoning_nb.sweep.analysis import (
    Point,
    choose,
    effort_changed,
    front,
    measure_of,
    no_effect,
    pareto,
    recommend,
    summary,
    summary_frame,
    within,
    within_noise,
)

# -- summary --------------------------------------------------------------------------------


def test_summary_counts_failed_runs_but_measures_and_grades_only_finished_ones():
    rows = [
        row(0, preset="low", reasoning_tokens=100, grade=1.0, cost_usd=0.01, total_ms=2000.0),
        row(1, preset="low", reasoning_tokens=300, grade=0.0, cost_usd=0.03, total_ms=4000.0),
        row(2, preset="low", status="truncated", reasoning_tokens=500, grade=0.0, cost_usd=0.05),
        row(3, preset="low", status="error", reasoning_tokens=None, output_tokens=None, grade=None),
    ]
    (cell,) = summary(rows)
    assert (cell.model, cell.preset, cell.runs, cell.failed, cell.graded) == ("m", "low", 4, 1, 3)
    assert cell.grade == pytest.approx(1 / 3)
    assert cell.reasoning_tokens == pytest.approx(300)  # the truncated run counts: it spent
    assert cell.cost_usd == pytest.approx(0.09)
    assert cell.cost_per_run == pytest.approx(0.03)
    assert cell.total_s == pytest.approx((2 + 4 + 1.5) / 3)


def test_summary_orders_presets_weakest_first_and_models_as_first_seen():
    rows = [row(0, "b", "high"), row(0, "b", "low"), row(0, "a", "medium"), row(0, "a", "off")]
    assert [(c.model, c.preset) for c in summary(rows)] == [
        ("b", "low"),
        ("b", "high"),
        ("a", "off"),
        ("a", "medium"),
    ]


def test_reasoning_tokens_are_estimated_where_the_server_gave_no_count():
    rows = [row(0, reasoning_tokens=None, output_tokens=None, reasoning="x" * 400, answer="")]
    assert summary(rows)[0].reasoning_tokens == 100  # 4 characters a token


def test_a_local_model_has_no_cost_and_the_measure_falls_back_to_tokens():
    rows = sweep_rows({("m", "low"): [1.0], ("m", "high"): [1.0]})
    assert summary(rows)[0].cost_usd is None
    assert measure_of(rows) == "tokens"
    priced = sweep_rows({("m", "low"): [1.0], ("m", "high"): [1.0]}, cost_per_token=1e-6)
    assert measure_of(priced) == "cost"
    with pytest.raises(ValueError, match="measure must be"):
        measure_of(priced, "dollars")


def test_summary_frame_has_a_row_per_model_and_preset():
    rows = sweep_rows({("m", "low"): [1.0, 0.0], ("m", "high"): [1.0, 1.0]})
    table = summary_frame(rows)
    assert list(table["preset"]) == ["low", "high"]
    assert list(table["grade"]) == [0.5, 1.0]


# -- no effect ------------------------------------------------------------------------------


def test_the_same_request_as_a_weaker_preset_is_flagged_ignored_naming_it():
    warning = "Model 'm' takes no reasoning levels, only on or off, so thinking was switched on"
    rows = [
        row(k, preset=p, sent={"think": True}, warnings=(warning,) if p != "low" else ())
        for k in range(3)
        for p in ("low", "medium", "high")
    ]
    flags = no_effect(rows)
    assert [(f.preset, f.kind, f.like) for f in flags] == [
        ("medium", "ignored", "low"),
        ("high", "ignored", "low"),
    ]
    assert "sent the same request as 'low': {\"think\": true}" in flags[0].reason
    assert "only on or off" in flags[0].reason


def test_a_preset_the_planner_sent_nothing_for_is_ignored_even_alone():
    said = "Model 'm' does not support reasoning controls, so preset 'high' sent nothing."
    flags = no_effect([row(0, preset="high", sent={}, warnings=(said,))])
    assert [(f.preset, f.kind, f.like, f.reason) for f in flags] == [
        ("high", "ignored", None, said)
    ]


def test_reasoning_tokens_within_noise_of_the_next_weaker_preset_are_flagged_noise():
    low = [800, 1200, 950, 1010, 700]
    high = [830, 1150, 990, 980, 720]  # a few percent either way
    rows = [row(k, preset="low", reasoning_tokens=t) for k, t in enumerate(low)]
    rows += [row(k, preset="high", reasoning_tokens=t) for k, t in enumerate(high)]
    (flag,) = no_effect(rows)
    assert (flag.preset, flag.kind, flag.like) == ("high", "noise", "low")
    assert "934 against 932 on average over 5 prompts" in flag.reason


def test_a_real_effect_is_not_flagged():
    rows = sweep_rows({("m", "low"): [1.0] * 4, ("m", "medium"): [1.0] * 4})
    assert no_effect(rows) == []


def test_a_small_steady_difference_is_an_effect_and_a_tiny_one_is_not():
    steady = ([1000, 2000, 3000, 4000], [1080, 2160, 3240, 4320])  # +8% on every prompt
    assert not within_noise(*steady)
    assert within_noise([0, 3, 0, 5], [9, 0, 4, 12])  # a few tokens either way: nothing
    assert within_noise([1000], [1050])  # one prompt: the ratio alone
    assert not within_noise([1000], [1200])
    assert not within_noise([], [])


def test_auto_is_compared_by_its_request_only():
    rows = [row(k, preset="auto", sent={}, reasoning_tokens=1000) for k in range(3)]
    rows += [row(k, preset="low", reasoning_tokens=1000) for k in range(3)]
    assert no_effect(rows) == []  # same tokens, but auto is no level on the line


@pytest.mark.parametrize("overrides", [{"reasoning": False}, {"efforts": ()}, {}])
def test_every_warning_the_planner_writes_about_the_effort_is_recognised(overrides):
    """The flags read the planner's words: this holds them together. Every provider's row, every
    preset and a few budgets, on a model that takes no control, one with only on/off, and one
    with narrow efforts and budgets that cannot switch off."""
    caps = Capabilities(
        reasoning=True,
        efforts=("low", "high"),
        budget_min=1024,
        budget_max=2048,
        can_disable=False,
        max_output=8192,
        model="m",
    )
    caps = replace(caps, **overrides)
    said = set()
    for profile in PROVIDERS.values():
        for preset in PRESETS:
            for budget in (None, 16, 100_000):
                plan = profile.plan(preset, budget, caps)
                said.update(w for w in plan.warnings if not w.startswith("max_tokens="))
    assert said, "the planner warned about nothing: the cases above no longer test anything"
    assert [w for w in said if effort_changed(w) is None] == []
    if overrides.get("reasoning") is False:
        assert all(effort_changed(w) == "ignored" for w in said)


# -- Pareto front and recommendation --------------------------------------------------------


def test_recommend_picks_the_cheapest_preset_within_the_margin():
    rows = sweep_rows(
        {("m", "low"): [1, 1, 1, 0, 1], ("m", "medium"): [1, 1, 1, 1, 1], ("m", "high"): [1] * 5},
        cost_per_token=1e-6,
    )
    (tight,) = recommend(rows, margin=0.05)
    assert (tight.choice.preset, tight.best.preset, tight.measure) == ("medium", "medium", "cost")
    (loose,) = recommend(rows, margin=0.2)
    assert (loose.choice.preset, loose.best.preset) == ("low", "medium")
    assert "m: low — grade 0.8, within 0.2 of the best (medium, 1)" in loose.text()
    assert "(3 compared on 5 prompts)" in loose.text()


def test_recommend_compares_on_the_prompts_graded_under_every_preset():
    rows = sweep_rows({("m", "low"): [0, 1, 1], ("m", "high"): [1, 1, 1]})
    rows[0] = replace(rows[0], status="error", grade=None)  # low failed where it would score 0
    (advice,) = recommend(rows)
    assert advice.prompts == 2
    assert (advice.choice.preset, advice.choice.grade) == ("low", 1.0)


def test_recommend_adds_one_across_models_and_says_nothing_without_grades():
    rows = sweep_rows({("a", "low"): [1, 0], ("a", "high"): [1, 1], ("b", "low"): [1, 1]})
    scopes = [(r.scope, r.choice.model, r.choice.preset) for r in recommend(rows)]
    assert scopes == [("a", "a", "high"), (None, "b", "low")]  # b has one preset: no own advice
    ungraded = [replace(r, grade=None) for r in rows]
    assert recommend(ungraded) == []
    with pytest.raises(ValueError, match="margin must be"):
        recommend(rows, margin=-1)


def test_pareto_of_rows_is_cheapest_first():
    rows = sweep_rows({("m", "low"): [0, 1], ("m", "medium"): [0, 0], ("m", "high"): [1, 1]})
    assert [p.preset for p in pareto(rows)] == ["low", "high"]


points_of = st.lists(
    st.builds(
        Point,
        model=st.sampled_from("abc"),
        preset=st.sampled_from(("low", "medium", "high")),
        x=st.floats(0, 100, allow_nan=False).map(lambda v: round(v, 1)),
        grade=st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 2)),
    ),
    max_size=12,
)


def beats(a: Point, b: Point) -> bool:
    return a.x <= b.x and a.grade >= b.grade and (a.x < b.x or a.grade > b.grade)


@given(points_of)
def test_the_front_is_exactly_the_points_nothing_beats(found):
    on = front(found)
    assert sorted(on, key=repr) == sorted(
        (p for p in found if not any(beats(q, p) for q in found)), key=repr
    )
    assert [p.x for p in on] == sorted(p.x for p in on)
    assert all(a.grade <= b.grade for a, b in pairwise(on))


@given(points_of, st.permutations(range(12)))
def test_the_front_does_not_depend_on_the_order_of_the_points(found, order):
    shuffled = [found[k] for k in order if k < len(found)]
    assert sorted(front(shuffled), key=repr) == sorted(front(found), key=repr)


@given(points_of, st.floats(0, 1, allow_nan=False))
def test_the_choice_is_the_cheapest_within_the_margin_and_on_the_front(found, margin):
    picked = choose(found, margin)
    if not found:
        assert picked is None
        return
    choice, best = picked
    assert best.grade == max(p.grade for p in found)
    assert within(choice.grade, best.grade, margin)
    assert all(p.x >= choice.x for p in found if within(p.grade, best.grade, margin))
    assert choice in front(found)


@given(points_of)
def test_a_zero_margin_chooses_the_cheapest_of_the_best(found):
    picked = choose(found, 0.0)
    if found:
        choice, best = picked
        assert choice.grade == best.grade
        assert choice.x == min(p.x for p in found if p.grade == best.grade)
