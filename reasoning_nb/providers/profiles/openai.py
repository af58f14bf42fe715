"""OpenAI through its Responses API (reasoning summaries)."""

from __future__ import annotations

from typing import Any

from ...core.history import Replay
from ...core.presets import LEVEL, Row
from ..profile import Profile

LEVELS = ("none", "minimal", "low", "medium", "high", "xhigh")


def levels_row(effort: dict, **more: Any) -> Row:
    """A row of OpenAI's effort levels, as OpenAI and the relays of its models spell them:
    ``max`` is ``xhigh`` and ``off`` the level ``none``."""
    return Row(effort=effort, vocab=LEVELS, rename={"max": "xhigh"}, off="none", **more)


ENCRYPTED = "reasoning.encrypted_content"
"""The ``include`` value that puts the model's reasoning, encrypted, in each reasoning item: what
a stateless (``store: false`` or zero-retention) next turn needs to be given back."""


def _summary_text(item: dict[str, Any]) -> str:
    parts = item.get("summary") or ()
    return "".join(str(p.get("text") or "") for p in parts if isinstance(p, dict))


OPENAI = Profile(
    "openai",
    "openai_responses",
    "https://api.openai.com/v1",
    # summary "auto": without it no reasoning text comes at all; the include makes --chat's
    # history work whatever `store` is (only on reasoning models: the others reject it)
    levels_row(
        {"reasoning": {"effort": LEVEL}},
        always={"reasoning": {"summary": "auto"}, "include": [ENCRYPTED]},
    ),
    base_url_env="OPENAI_BASE_URL",
    key_envs=("OPENAI_API_KEY",),
    snapshot_id="openai",  # priced so too: output_tokens includes the reasoning tokens
    # its reasoning items with their encrypted content, to the same model only
    replay=Replay("reasoning_items", "reasoning_items", _summary_text),
    hints={
        429: (
            "OpenAI's rate limit or quota stopped the request (check the account's usage "
            "limits if it goes on): {message}"
        )
    },
)
