"""Google's Gemini API: budgets (2.5) or levels (3), thoughts asked for on every request."""

from __future__ import annotations

from typing import Any

from ...core.capabilities import Capabilities
from ...core.history import Replay
from ...core.presets import BUDGET, LEVEL, Row
from ..profile import Profile

_INCLUDE_THOUGHTS = {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}
BUDGETS = Row(
    budget={"generationConfig": {"thinkingConfig": {"thinkingBudget": BUDGET}}},
    budgets={"off": 0, "low": 2048, "medium": 8192, "high": 16000, "max": None},
    budget_ceiling=24576,
    always=_INCLUDE_THOUGHTS,
)
"""Gemini 2.5."""
LEVELS = Row(
    effort={"generationConfig": {"thinkingConfig": {"thinkingLevel": LEVEL}}},
    vocab=("minimal", "low", "medium", "high"),
    rename={"max": "high"},
    off=None,
    always=_INCLUDE_THOUGHTS,
)
"""Gemini 3."""


def row(caps: Capabilities) -> Row:
    """Levels where the model lists them or is a Gemini 3 (``thinkingLevel`` replaces the budget
    there: a budget still passes but is the legacy control, and Gemini 3.5 rejects it); budgets
    for Gemini 2.x and models known by a budget range."""
    name = caps.model.lower()
    if caps.efforts or "gemini-3" in name:
        return LEVELS
    budgeted = caps.budget_min is not None or caps.budget_max is not None
    return BUDGETS if budgeted or "gemini-2" in name else LEVELS


def _thought_text(part: dict[str, Any]) -> str:
    return str(part.get("text") or "") if part.get("thought") is True else ""


GEMINI = Profile(
    "gemini",
    "gemini",
    "https://generativelanguage.googleapis.com",
    row,
    key_envs=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    name="Gemini",
    example_model="gemini-2.5-flash",
    snapshot_id="google",  # priced so too, on output_tokens with the thoughts (providers/gemini.py)
    # the model's parts, ``thoughtSignature`` on the parts that carried it.
    replay=Replay("parts", "parts", _thought_text),
)
