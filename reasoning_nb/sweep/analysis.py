"""What a sweep says: a summary per model x preset, the presets that changed nothing, the Pareto
front of grade against cost (or tokens), and the cheapest preset within a margin of the best grade.

Pure functions over ``list[Row]``. Runs that ended ``complete`` or ``truncated`` are measured
(a truncated run spent all it was allowed: leaving it out would flatter a strong preset); failed
and cancelled runs are counted, not measured. A failed run has no grade (``grading``), so grades
are compared on the prompts graded under every preset compared, pair by pair.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from itertools import pairwise
from statistics import fmean, stdev
from typing import Any, Literal

from ..core.presets import PRESETS
from ..core.text import clip
from ..core.tokens import reasoning_tokens
from .rows import Row

MEASURED = frozenset({"complete", "truncated"})
MARGIN = 0.05
"""The default margin of the recommendation, in grade units: 5 points on a 0-1 grade."""
NOISE = 0.10
"""Reasoning tokens this close (a fraction of the larger mean) may be the same preset twice."""
MIN_SCALE = 160
"""Tokens below which a difference is noise whatever the ratio (0 against 9 is nothing)."""
STRENGTH = ("off", "low", "medium", "high", "max")
"""Presets by strength; ``auto`` (the provider's default) and unknown names are not on the line."""

Measure = Literal["cost", "tokens"]
MEASURE_LABEL = {"cost": "cost per run (USD, estimate)", "tokens": "output tokens per run"}

# The planner's words (core.presets) when the effort asked is not what was sent; a test holds
# every warning the planner writes to one of these.
_IGNORED = re.compile(
    r"sent nothing|no reasoning control was sent|only on or off|overrides preset 'off'"
)
_CLAMPED = re.compile(r"\binstead\b|was sent as")


def effort_changed(warning: str) -> Literal["ignored", "clamped"] | None:
    """Whether a run's warning is the planner's word that the effort asked was not sent as is."""
    if _IGNORED.search(warning):
        return "ignored"
    return "clamped" if _CLAMPED.search(warning) else None


@dataclass(frozen=True)
class Cell:
    """One model x preset of a sweep, summed up."""

    model: str
    preset: str
    runs: int
    failed: int
    """Runs that ended in an error or were cancelled: counted, not measured."""
    graded: int
    grade: float | None
    """The mean grade over the graded runs."""
    reasoning_tokens: float | None
    """The mean over measured runs (estimated from the text where the server gave no count)."""
    output_tokens: float | None
    cost_usd: float | None
    """The estimated total; None when no run has a price (a local model, an unknown price)."""
    cost_per_run: float | None
    total_s: float | None
    first_token_s: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class NoEffect:
    """A preset that changed nothing for a model, and why we think so."""

    model: str
    preset: str
    kind: Literal["ignored", "noise"]
    """``ignored``: the provider got the same request as ``like`` or none at all (the effort
    was ignored or clamped); ``noise``: a different request, the same reasoning tokens."""
    like: str | None
    """The weaker preset it is the same as (None: ignored outright, with nothing to compare)."""
    reason: str


@dataclass(frozen=True)
class Point:
    """A model x preset on the plot: its cost (or tokens) and its mean grade."""

    model: str
    preset: str
    x: float
    grade: float


@dataclass(frozen=True)
class Recommendation:
    """The cheapest preset within ``margin`` of the best grade, among ``scope``'s presets."""

    scope: str | None
    """The model whose presets were compared; None: every model x preset."""
    choice: Point
    best: Point
    margin: float
    measure: Measure
    prompts: int
    """Prompts graded under every preset compared: the grades are means over these."""
    compared: int
    """How many model x presets were compared."""

    def text(self) -> str:
        c, b = self.choice, self.best
        name = c.preset if self.scope is not None else f"{clip(c.model, 40)} · {c.preset}"
        head = f"{clip(self.scope, 40)}: {name}" if self.scope is not None else f"overall: {name}"
        if c == b:
            said = (
                f"the best grade ({c.grade:.3g}) at {amount(c.x, self.measure)}; nothing "
                f"cheaper is within {self.margin:g} of it"
            )
        else:
            best = b.preset if self.scope is not None else f"{clip(b.model, 40)} · {b.preset}"
            said = (
                f"grade {c.grade:.3g}, within {self.margin:g} of the best ({best}, {b.grade:.3g}), "
                f"at {amount(c.x, self.measure)} against {amount(b.x, self.measure)}"
            )
        plural = "s" if self.prompts != 1 else ""
        return f"{head} — {said} ({self.compared} compared on {self.prompts} prompt{plural})"


def amount(x: float, measure: Measure) -> str:
    """A cost or a token count as the views say it."""
    if measure == "cost":
        return f"${x:.4f}" if x < 1 else f"${x:,.2f}"
    return f"{x:,.0f} tokens"


def measured(row: Row) -> bool:
    return row.status in MEASURED


def thought(row: Row) -> int | None:
    """The run's reasoning tokens: the server's count, else an estimate from the text."""
    reasoning = row.reasoning or ""
    count, _ = reasoning_tokens(
        row.reasoning_tokens, row.output_tokens, len(reasoning), len(row.answer)
    )
    return count


def cells_of(rows: Iterable[Row]) -> dict[tuple[str, str], list[Row]]:
    """Rows by (model, preset), models in the order first seen, presets weakest first."""
    rows = list(rows)
    models = list(dict.fromkeys(r.model for r in rows))
    presets = sorted(dict.fromkeys(r.preset for r in rows), key=_order)
    groups: dict[tuple[str, str], list[Row]] = {(m, p): [] for m in models for p in presets}
    for r in rows:
        groups[r.model, r.preset].append(r)
    return {key: group for key, group in groups.items() if group}


def _order(preset: str) -> int:
    return PRESETS.index(preset) if preset in PRESETS else len(PRESETS)


def _mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return fmean(known) if known else None


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000


def summary(rows: Iterable[Row]) -> list[Cell]:
    """One ``Cell`` per model x preset."""
    out = []
    for (model, preset), group in cells_of(rows).items():
        done = [r for r in group if measured(r)]
        graded = [r.grade for r in group if r.grade is not None]
        costs = [r.cost_usd for r in group if r.cost_usd is not None]
        out.append(
            Cell(
                model=model,
                preset=preset,
                runs=len(group),
                failed=len(group) - len(done),
                graded=len(graded),
                grade=fmean(graded) if graded else None,
                reasoning_tokens=_mean(thought(r) for r in done),
                output_tokens=_mean(r.output_tokens for r in done),
                cost_usd=sum(costs) if costs else None,
                cost_per_run=fmean(costs) if costs else None,
                total_s=_mean(_seconds(r.total_ms) for r in done),
                first_token_s=_mean(_seconds(r.first_token_ms) for r in done),
            )
        )
    return out


def summary_frame(rows: Iterable[Row]) -> Any:
    """The summary as a pandas DataFrame (the ``[sweep]`` extra); ImportError without it."""
    import pandas  # optional: only a caller that asks for a frame needs it

    return pandas.DataFrame([cell.to_dict() for cell in summary(rows)])


# -- no effect ------------------------------------------------------------------------------


def _sent_key(group: list[Row]) -> frozenset[str]:
    return frozenset(json.dumps(r.sent, sort_keys=True, default=str) for r in group)


def _effort_warning(group: list[Row]) -> str | None:
    """The planner's word on this preset, a warning that it was ignored first."""
    said = [w for r in group for w in dict.fromkeys(r.warnings) if effort_changed(w)]
    return min(said, key=lambda w: effort_changed(w) != "ignored", default=None)


def within_noise(weaker: list[float], stronger: list[float]) -> bool:
    """Paired reasoning tokens (one pair per prompt) that say the two presets are the same: the
    means are within ``NOISE`` of each other and, with 3 or more pairs and a gap of more than a
    few tokens, the mean difference is within two standard errors of zero (a small but steady
    difference is an effect)."""
    n = len(weaker)
    if n == 0:
        return False
    diffs = [s - w for w, s in zip(weaker, stronger, strict=True)]
    gap = abs(fmean(diffs))
    if gap > NOISE * max(fmean(weaker), fmean(stronger), MIN_SCALE):
        return False
    if n < 3 or gap <= NOISE * MIN_SCALE:
        return True
    return gap <= 2 * stdev(diffs) / math.sqrt(n)


def no_effect(rows: Iterable[Row]) -> list[NoEffect]:
    """The presets that changed nothing, model by model: the same request as a weaker preset
    (the provider took no control or clamped it: ``ignored``), a request the planner says sent
    nothing (``ignored``), or reasoning tokens within noise of the next weaker preset
    (``noise``). ``auto`` is only compared by its request: it is no level."""
    groups = cells_of(rows)
    out: list[NoEffect] = []
    for model in dict.fromkeys(m for m, _ in groups):
        presets = [p for m, p in groups if m == model]
        flagged: set[str] = set()
        for k, preset in enumerate(presets):
            group = groups[model, preset]
            sent = _sent_key(group)
            same = next((p for p in presets[:k] if _sent_key(groups[model, p]) == sent), None)
            warning = _effort_warning(group)
            if same is not None:
                why = f"sent the same request as {same!r}: {_sent_text(group)}"
                out.append(NoEffect(model, preset, "ignored", same, _with(why, warning)))
                flagged.add(preset)
            elif warning is not None and effort_changed(warning) == "ignored":
                out.append(NoEffect(model, preset, "ignored", None, warning))
                flagged.add(preset)
        line = [p for p in presets if p in STRENGTH]
        for weaker, stronger in pairwise(line):
            if stronger in flagged:
                continue
            a, b = _paired(groups[model, weaker], groups[model, stronger])
            if within_noise(a, b):
                why = (
                    f"reasoning tokens within noise of {weaker!r}: {fmean(b):,.0f} against "
                    f"{fmean(a):,.0f} on average over {len(a)} prompt{'s' if len(a) != 1 else ''}"
                )
                out.append(NoEffect(model, stronger, "noise", weaker, why))
    return out


def _with(why: str, warning: str | None) -> str:
    return f"{why} ({warning})" if warning else why


def _sent_text(group: list[Row]) -> str:
    sent = group[0].sent
    return json.dumps(sent, sort_keys=True, default=str) if sent else "no reasoning control"


def _paired(a: list[Row], b: list[Row]) -> tuple[list[float], list[float]]:
    """a's and b's reasoning tokens, in step, for each prompt measured under both."""
    first = {r.prompt_id: t for r in a if measured(r) and (t := thought(r)) is not None}
    pairs = [
        (first[r.prompt_id], t)
        for r in b
        if r.prompt_id in first and measured(r) and (t := thought(r)) is not None
    ]
    return [x for x, _ in pairs], [y for _, y in pairs]


# -- Pareto front and recommendation --------------------------------------------------------


def front(points: Iterable[Point]) -> list[Point]:
    """The points no other point beats (as cheap or cheaper and graded as well or better, one of
    them strictly), cheapest first."""
    ordered = sorted(points, key=lambda p: (p.x, -p.grade))
    out: list[Point] = []
    for p in ordered:
        if not out or p.grade > out[-1].grade or (p.x == out[-1].x and p.grade == out[-1].grade):
            out.append(p)
    return out


def choose(points: Iterable[Point], margin: float) -> tuple[Point, Point] | None:
    """(the cheapest point graded within ``margin`` of the best, the best); ties go to the
    higher grade, so the choice is always on the front."""
    points = list(points)
    if not points:
        return None
    best = max(points, key=lambda p: (p.grade, -p.x))
    near = [p for p in points if within(p.grade, best.grade, margin)]
    return min(near, key=lambda p: (p.x, -p.grade)), best


def within(grade: float, best: float, margin: float) -> bool:
    """``grade`` is at most ``margin`` below ``best`` (a float's last bit forgiven: 0.8 is
    within 0.05 of 0.85)."""
    return grade >= best - margin - 1e-9 * max(1.0, abs(best))


def measure_of(rows: Iterable[Row], measure: str = "auto") -> Measure:
    """``cost`` where every model x preset has a price, else ``tokens`` (``auto``)."""
    if measure in ("cost", "tokens"):
        return measure  # type: ignore[return-value]
    if measure != "auto":
        raise ValueError(f"measure must be 'auto', 'cost' or 'tokens', not {measure!r}.")
    groups = cells_of(rows).values()
    priced = all(any(r.cost_usd is not None for r in g) for g in groups)
    return "cost" if groups and priced else "tokens"


def points(
    rows: Iterable[Row], measure: str = "auto", prompts: set[int] | None = None
) -> list[Point]:
    """A point per graded model x preset (over ``prompts`` only, when given), with its mean
    cost or output tokens per measured run."""
    rows = list(rows)
    kind = measure_of(rows, measure)
    out = []
    for (model, preset), group in cells_of(rows).items():
        if prompts is not None:
            group = [r for r in group if r.prompt_id in prompts]
        grades = [r.grade for r in group if r.grade is not None]
        if kind == "cost":
            spent = [r.cost_usd for r in group if r.cost_usd is not None]
        else:
            spent = [r.output_tokens for r in group if measured(r) and r.output_tokens is not None]
        if grades and spent:
            out.append(Point(model, preset, fmean(spent), fmean(grades)))
    return out


def pareto(rows: Iterable[Row], measure: str = "auto") -> list[Point]:
    """The Pareto front of grade against cost (or tokens), cheapest first."""
    return front(points(rows, measure))


def compared_prompts(rows: list[Row]) -> set[int]:
    """The prompts graded under every model x preset of ``rows`` that has a grade at all."""
    graded = [
        {r.prompt_id for r in group if r.grade is not None} for group in cells_of(rows).values()
    ]
    graded = [g for g in graded if g]
    return set.intersection(*graded) if graded else set()


def recommend(
    rows: Iterable[Row], margin: float = MARGIN, measure: str = "auto"
) -> list[Recommendation]:
    """The cheapest preset within ``margin`` (grade units) of the best grade: one per model that
    has two graded presets or more, then one across every model x preset when there are two
    models or more. Each compares means over the prompts graded under all it compares."""
    if not (isinstance(margin, int | float) and margin >= 0):
        raise ValueError(f"margin must be a number of grade points, at least 0, not {margin!r}.")
    rows = list(rows)
    kind = measure_of(rows, measure)
    models = list(dict.fromkeys(r.model for r in rows))
    scopes: list[tuple[str | None, list[Row]]] = [
        (m, [r for r in rows if r.model == m]) for m in models
    ]
    if len(models) > 1:
        scopes.append((None, rows))
    out = []
    for scope, part in scopes:
        common = compared_prompts(part)
        found = points(part, kind, common)
        picked = choose(found, margin)
        if picked is not None and len(found) > 1:
            choice, best = picked
            out.append(Recommendation(scope, choice, best, margin, kind, len(common), len(found)))
    return out


__all__ = [
    "MARGIN",
    "Cell",
    "NoEffect",
    "Point",
    "Recommendation",
    "choose",
    "compared_prompts",
    "effort_changed",
    "front",
    "measure_of",
    "no_effect",
    "pareto",
    "points",
    "recommend",
    "summary",
    "summary_frame",
    "within",
    "within_noise",
]
