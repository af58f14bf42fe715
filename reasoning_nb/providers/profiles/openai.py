"""OpenAI through its Responses API (reasoning summaries)."""

from __future__ import annotations

from typing import Any

from ...core.presets import LEVEL, Row
from ..profile import Profile

LEVELS = ("none", "minimal", "low", "medium", "high", "xhigh")


def levels_row(effort: dict, **more: Any) -> Row:
    """A row of OpenAI's effort levels, as OpenAI and the relays of its models spell them:
    ``max`` is ``xhigh`` and ``off`` the level ``none``."""
    return Row(effort=effort, vocab=LEVELS, rename={"max": "xhigh"}, off="none", **more)


OPENAI = Profile(
    "openai",
    "openai_responses",
    "https://api.openai.com/v1",
    levels_row({"reasoning": {"effort": LEVEL}}, always={"reasoning": {"summary": "auto"}}),
    base_url_env="OPENAI_BASE_URL",
    key_envs=("OPENAI_API_KEY",),
    snapshot_id="openai",  # priced so too: output_tokens includes the reasoning tokens
    hints={
        429: (
            "OpenAI's rate limit or quota stopped the request (check the account's usage "
            "limits if it goes on): {message}"
        )
    },
)
