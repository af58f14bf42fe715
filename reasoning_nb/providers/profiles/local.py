"""``local:``: the embedded demo server (SmolLM2 under a grammar; ``providers/local.py``)."""

from __future__ import annotations

from ...core.presets import BUDGET, LEVEL, Row
from ..profile import Profile
from .chat import NO_THINKING

LOCAL = Profile(
    "local",
    "local",
    None,
    # Levels and budgets become a grammar's think length there.
    Row(
        effort={"reasoning_effort": LEVEL},
        vocab=("low", "medium", "high", "max"),
        off={**NO_THINKING, "reasoning_effort": "none"},
        budget={"thinking_budget_tokens": BUDGET},
    ),
    local=True,
    start_hint="install it with `pip install 'reasoning_nb[local]'`",
    notice=(
        "local: is a demo (SmolLM2-135M): its thinking is shaped by the server, not real reasoning."
    ),
)
