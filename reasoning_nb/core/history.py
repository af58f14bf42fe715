"""Conversation turns for ``--chat``: each protocol's rule for sending reasoning back.

Local servers get the answer only: their templates either drop past reasoning or were never
trained to see it, and replaying it wastes context (llama.cpp replays it only for templates that
declare ``supports_preserve_reasoning``). Hosted providers that need reasoning back (signatures,
``reasoning_content`` on tool-call turns) get their rule here, keyed by flavour.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .trace import Trace

REPLAY = {
    # flavour: (key in the saved provider_state, key on the assistant message)
    # Anthropic: thinking / redacted_thinking / text blocks with their signatures, in order.
    "anthropic": ("content", "blocks"),
    # Gemini: the model's parts, ``thoughtSignature`` on the parts that carried it.
    "gemini": ("parts", "parts"),
    # OpenRouter: the merged ``reasoning_details``, unmodified and in order (Claude / Gemini 3 /
    # DeepSeek upstreams need them for continuity).
    "openrouter": ("reasoning_details", "reasoning_details"),
}
"""What each provider gets back from its own earlier turns. The protocol module sends it only
when the next request goes to the same ``replay_model`` (signatures are model-specific) and the
plain ``content`` otherwise; a turn made with another provider never carries it.

Everyone else gets the answer text only. Local servers: their templates drop past reasoning or
never saw it. OpenAI: requests keep ``store`` at its default and never ask for
``reasoning.encrypted_content``, so there is no reasoning item to replay. DeepSeek:
``reasoning_content`` must come back only on turns with tool calls, and we make none."""


def assistant_turn(trace: Trace, flavor: str) -> dict[str, Any]:
    """The assistant message that represents ``trace`` in the next request to ``flavor``."""
    turn: dict[str, Any] = {"role": "assistant", "content": trace.answer}
    if flavor not in REPLAY or trace.provider != flavor:
        return turn
    saved_key, message_key = REPLAY[flavor]
    state = trace.provider_state.get(flavor)
    if isinstance(state, dict) and state.get("model") and isinstance(state.get(saved_key), list):
        turn |= {message_key: state[saved_key], "replay_model": state["model"]}
    return turn


@dataclass
class Conversation:
    """A named chat: the turns so far and the provider they were made with."""

    name: str
    turns: list[tuple[str, Trace]] = field(default_factory=list)

    def add(self, trace: Trace) -> None:
        if trace.answer:  # a failed or empty turn would only confuse the next one
            self.turns.append((trace.prompt, trace))

    def messages(self, flavor: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for prompt, trace in self.turns:
            out.append({"role": "user", "content": prompt})
            out.append(assistant_turn(trace, flavor))
        return out
