"""Presets -> request fields: a ``spec/presets.md`` row (``Row``) and one resolver (``plan``).

``auto`` sends only what is needed to see reasoning, an explicit budget wins over the preset
(bucketed to a level where the provider has no budget), and every value changed to fit the
provider or the model leaves a warning naming both values.
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .capabilities import Capabilities

PRESETS = ("auto", "off", "low", "medium", "high", "max")
SCALE = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""Every effort value any provider takes, weakest first; clamping moves along this line."""

ANSWER_ROOM = 4096
"""Tokens kept for the answer when ``max_tokens`` must be raised above a thinking budget."""


class _Slot:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


LEVEL = _Slot("level")
BUDGET = _Slot("budget")


@dataclass(frozen=True)
class Row:
    """How one provider flavor spells the presets (one row of presets.md)."""

    effort: dict | None = None
    """Fields that send a level (``LEVEL`` marks the spot); None: the provider takes budgets."""
    vocab: tuple[str, ...] = ()
    """Levels the provider takes; others are clamped with a warning."""
    rename: dict[str, str] = field(default_factory=dict)
    """Preset -> level where the table maps without a warning (OpenAI ``max`` -> ``xhigh``)."""
    off: dict | str | None = None
    """Fields for ``off``; ``"none"``: send the level "none"; None: cannot switch off."""
    on: dict | None = None
    """Fields for any level when the model lists no levels, only on and off (``efforts == ()``,
    as Ollama's ``/api/show`` says); the level not sent is named in a warning."""
    budget: dict | None = None
    """Fields that send a token budget (``BUDGET``); None: a budget is bucketed to a level."""
    budgets: dict[str, int | None] | None = None
    """Preset -> budget (None: the model's maximum)."""
    budget_floor: int | None = None
    """Bounds when the model's own are unknown (the ceiling is ``max``)."""
    budget_ceiling: int | None = None
    always: dict = field(default_factory=dict)
    """Fields sent with every preset, ``auto`` included (needed to see reasoning at all)."""
    max_tokens_field: str | None = None
    """Budget rows whose output cap must exceed the budget (Anthropic ``max_tokens``)."""


@dataclass(frozen=True)
class ReasoningPlan:
    """What to send for one request, and why it differs from what was asked."""

    fields: dict
    """Request body fields to merge by key, e.g. ``{"think": "high"}``."""
    warnings: tuple[str, ...] = ()
    effort: str | None = None
    """After bucketing/clamping ("none" when off; None for auto/budgets)."""
    budget_tokens: int | None = None


def check(preset: Any, budget_tokens: Any) -> tuple[str, int | None]:
    name = "auto" if preset is None else preset
    if not isinstance(name, str) or name.strip().lower() not in PRESETS:
        raise ConfigError(f"Unknown preset {preset!r}; use one of: {', '.join(PRESETS)}.")
    if budget_tokens is not None and (
        isinstance(budget_tokens, bool)
        or not isinstance(budget_tokens, numbers.Integral)
        or budget_tokens <= 0
    ):
        raise ConfigError(
            f"budget_tokens must be a positive whole number of tokens, like 4096, "
            f"not {budget_tokens!r}."
        )
    return name.strip().lower(), None if budget_tokens is None else int(budget_tokens)


def bucket(budget_tokens: int) -> str:
    """The preset nearest a token budget: ≥16384 max, ≥8192 high, ≥2048 medium, else low."""
    for floor, level in ((16384, "max"), (8192, "high"), (2048, "medium")):
        if budget_tokens >= floor:
            return level
    return "low"


def nearest(level: str, accepted: tuple[str, ...] | list[str]) -> str:
    """The accepted level closest to ``level`` on ``SCALE`` (ties go to the stronger one)."""
    rank = {name: i for i, name in enumerate(SCALE)}
    options = [a for a in accepted if a in rank]
    if not options or level not in rank:
        return level
    return min(options, key=lambda a: (abs(rank[a] - rank[level]), -rank[a]))


def merge(body: dict, fields: dict) -> dict:
    """Deep-merge ``fields`` into ``body`` in place (dicts by key, anything else replaced)."""
    for key, value in fields.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            merge(body[key], value)
        else:
            body[key] = copy.deepcopy(value)
    return body


def plan(
    flavor: str,
    row: Row,
    preset: str,
    budget_tokens: int | None,
    caps: Capabilities,
    *,
    max_tokens: int | None = None,
) -> ReasoningPlan:
    """The request fields for ``preset`` / ``budget_tokens`` by ``row``; ``flavor`` names the
    provider in warnings."""
    preset, budget_tokens = check(preset, budget_tokens)
    return _Planner(flavor, row, caps, max_tokens).run(preset, budget_tokens)


class _Planner:
    def __init__(self, flavor: str, row: Row, caps: Capabilities, max_tokens: int | None):
        self.flavor, self.row, self.caps, self.max_tokens = flavor, row, caps, max_tokens
        self.who = f"Model {caps.model!r}" if caps.model else "This model"
        self.warnings: list[str] = []

    def run(self, preset: str, budget: int | None) -> ReasoningPlan:
        row, caps = self.row, self.caps
        asked = f"budget_tokens={budget}" if budget is not None else f"preset {preset!r}"
        if caps.reasoning is False:
            if budget is not None or preset not in ("auto", "off"):
                self.warn(
                    f"{self.who} does not support reasoning controls, so {asked} sent "
                    "nothing (any reasoning it emits is still shown)."
                )
            return self.done({})
        if budget is not None:
            if preset == "off":
                self.warn(f"budget_tokens={budget} overrides preset 'off', so reasoning stays on.")
            if row.budget is not None:
                return self.send_budget(budget)
            level = bucket(budget)
            level = row.rename.get(level, level)
            self.warn(
                f"budget_tokens={budget} was sent as effort {level!r}, because "
                f"{self.flavor} takes an effort level, not a token budget."
            )
            return self.send_level(level)
        if preset == "auto":
            return self.done({})
        if preset == "off":
            return self.send_off()
        if row.effort is None:
            return self.send_budget(self.preset_budget(preset), asked_by_preset=True)
        return self.send_level(row.rename.get(preset, preset))

    def send_off(self) -> ReasoningPlan:
        row, caps = self.row, self.caps
        if row.budgets is not None and "off" in row.budgets:
            if caps.can_disable:  # Gemini Flash-Lite: 0 switches off though its range is 512+
                return self.done(_fill(row.budget, 0), effort="none", budget=0)
            return self.send_budget(row.budgets["off"] or 0, asked_by_preset=True, off=True)
        # Omitting the field ({}: Anthropic) always works; otherwise "cannot" means the lowest
        # level the model (or, for a row with no off at all, the provider) takes.
        if row.off is None or (caps.can_disable is False and row.off != {}):
            choices = caps.efforts or (row.vocab if row.off is None else ())
            lowest = [e for e in choices if e in SCALE and e != "none"]
            if row.effort is not None and lowest:
                level = min(lowest, key=SCALE.index)
                self.warn(f"{self.who} cannot switch reasoning off; sent effort {level!r} instead.")
                return self.send_level(level, checked=True)
            self.warn(f"{self.who} cannot switch reasoning off; no reasoning control was sent.")
            return self.done({})
        if row.off == "none":
            return self.send_level("none")
        return self.done(row.off, effort="none")

    def send_level(self, level: str, *, checked: bool = False) -> ReasoningPlan:
        row, caps = self.row, self.caps
        if not checked and row.vocab and level not in row.vocab:
            new = nearest(level, row.vocab)
            self.warn(f"{self.flavor} has no effort {level!r}; sent {new!r} instead.")
            level = new
        efforts = caps.efforts
        if row.on is not None and efforts == () and level != "none":
            self.warn(
                f"{self.who} takes no reasoning levels, only on or off, so thinking was "
                f"switched on instead of effort {level!r}."
            )
            return self.done(dict(row.on), effort=level)
        keep_none = level == "none" and caps.can_disable is True
        if not checked and efforts and level not in efforts and not keep_none:
            new = nearest(level, [e for e in efforts if e != "none" or level == "none"])
            if level == "none":
                self.warn(f"{self.who} cannot switch reasoning off; sent effort {new!r} instead.")
            else:
                self.warn(
                    f"{self.who} does not accept effort {level!r} (it takes "
                    f"{', '.join(efforts)}); sent {new!r} instead."
                )
            level = new
        assert row.effort is not None
        return self.done(_fill(row.effort, level), effort=level)

    def preset_budget(self, preset: str) -> int:
        assert self.row.budgets is not None
        value = self.row.budgets[preset]
        if value is None:
            value = self.caps.budget_max or self.row.budget_ceiling or 0
        return value

    def send_budget(
        self, n: int, *, asked_by_preset: bool = False, off: bool = False
    ) -> ReasoningPlan:
        row, caps = self.row, self.caps
        low = caps.budget_min if caps.budget_min is not None else row.budget_floor
        high = caps.budget_max
        if row.max_tokens_field and caps.max_output:
            high = min(high or caps.max_output, caps.max_output - 1)
        sent = n
        if low is not None and n < low:
            sent = low
        elif high is not None and n > high:
            sent = high
        if sent != n:
            what = "thinking budget" if asked_by_preset else f"budget_tokens={n}"
            if off:
                self.warn(
                    f"{self.who} cannot switch reasoning off; sent its minimum thinking "
                    f"budget {sent} instead of 0."
                )
            else:
                bound = "minimum" if sent > n else "maximum"
                self.warn(
                    f"{self.who} takes a thinking budget of {low}–{high or '?'} tokens, so "
                    f"the {what} {n} was sent as its {bound} {sent}."
                )
        assert row.budget is not None
        fields = _fill(row.budget, sent)
        if row.max_tokens_field:
            self.fit_max_tokens(fields, sent)
        return self.done(fields, budget=sent)

    def fit_max_tokens(self, fields: dict, budget: int) -> None:
        if self.max_tokens is not None and self.max_tokens > budget:
            return
        need = budget + ANSWER_ROOM
        if self.caps.max_output:
            need = min(need, self.caps.max_output)
        if self.max_tokens is not None:
            self.warn(
                f"max_tokens={self.max_tokens} must exceed the thinking budget {budget}, "
                f"so {need} was sent."
            )
        fields[self.row.max_tokens_field] = need

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def done(
        self, fields: dict, *, effort: str | None = None, budget: int | None = None
    ) -> ReasoningPlan:
        body = merge({}, self.row.always) if self.caps.reasoning is not False else {}
        merge(body, fields)
        return ReasoningPlan(body, tuple(self.warnings), effort, budget)


def _fill(template: Any, value: Any) -> Any:
    """A copy of ``template`` with ``LEVEL`` / ``BUDGET`` replaced by ``value``."""
    if isinstance(template, dict):
        return {key: _fill(item, value) for key, item in template.items()}
    if template is LEVEL or template is BUDGET:
        return value
    return copy.deepcopy(template)
