"""Anthropic's Messages API: which preset row a Claude model takes (budgets, or adaptive thinking
with an effort), and which models must ask to see their thinking."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ...core.capabilities import Capabilities
from ...core.history import Replay
from ...core.presets import BUDGET, LEVEL, Row
from ..profile import Profile

MANUAL = Row(
    off={},
    budget={"thinking": {"type": "enabled", "budget_tokens": BUDGET}},
    budgets={"low": 2048, "medium": 8192, "high": 16000, "max": 31999},
    budget_floor=1024,
    max_tokens_field="max_tokens",
)
ADAPTIVE = Row(
    effort={"thinking": {"type": "adaptive"}, "output_config": {"effort": LEVEL}},
    vocab=("low", "medium", "high", "xhigh", "max"),
    off={},
)
SUMMARIZED = {"type": "adaptive", "display": "summarized"}
"""Adaptive thinking with its text shown: Opus 4.7+, Mythos and Claude 5 default to
``display: "omitted"`` (empty thinking blocks), older models to a summary."""
HIDDEN = replace(ADAPTIVE, effort={"thinking": SUMMARIZED, "output_config": {"effort": LEVEL}})
THINKS_UNASKED = replace(HIDDEN, always={"thinking": SUMMARIZED}, off=None)
"""Mythos and Fable think adaptively when ``thinking`` is unset and reject ``disabled``: ``auto``
asks to see it, ``off`` cannot be (the planner sends the lowest effort and says so)."""
_THINKS_UNASKED = re.compile(r"claude-(mythos|fable)", re.IGNORECASE)


def row(caps: Capabilities) -> Row:
    # Adaptive models list efforts and either no budget (4.7+) or "max" (4.6); Opus 4.5 has
    # effort and budget but no adaptive mode. Models newer than the snapshot are adaptive, and
    # hide their thinking unless asked like every model without a budget mode.
    if _THINKS_UNASKED.search(caps.model):
        return THINKS_UNASKED
    if caps.efforts:
        adaptive = caps.budget_min is None or "max" in caps.efforts
    else:
        adaptive = caps.budget_min is None and caps.budget_max is None
    if not adaptive:
        return MANUAL
    return ADAPTIVE if caps.budget_min is not None else HIDDEN


def _thinking_text(block: dict[str, Any]) -> str:
    return str(block.get("thinking") or "") if block.get("type") == "thinking" else ""


ANTHROPIC = Profile(
    "anthropic",
    "anthropic",
    "https://api.anthropic.com",
    row,
    key_envs=("ANTHROPIC_API_KEY",),
    name="Anthropic",
    example_model="claude-sonnet-4-5",
    snapshot_id="anthropic",  # priced so too: output_tokens includes the thinking blocks
    # thinking / redacted_thinking / text blocks with their signatures, in order.
    replay=Replay("content", "blocks", _thinking_text),
)
