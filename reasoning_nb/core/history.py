"""Conversation turns for ``--chat``: each protocol's rule for sending reasoning back.

Local servers get the answer only: their templates either drop past reasoning or were never
trained to see it, and replaying it wastes context (llama.cpp replays it only for templates that
declare ``supports_preserve_reasoning``). Hosted providers that need reasoning back (signatures,
``reasoning_content`` on tool-call turns) get their rule here, keyed by flavour.

``--history answer`` sends every provider the answers only: no provider requires past reasoning
on turns without tool calls (wire-formats §6–8), and it saves the context the reasoning takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .tokens import estimate
from .trace import Trace

CHOICES = ("reasoning", "answer")
"""What earlier ``--chat`` turns send back: ``reasoning`` (the default, today's behaviour: the
reasoning too where ``REPLAY`` says the provider takes it) or ``answer`` (the answers only)."""

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


def assistant_turn(trace: Trace, flavor: str, *, reasoning: bool = True) -> dict[str, Any]:
    """The assistant message that represents ``trace`` in the next request to ``flavor``."""
    turn: dict[str, Any] = {"role": "assistant", "content": trace.answer}
    if not reasoning or flavor not in REPLAY or trace.provider != flavor:
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
    send: str = "reasoning"
    """One of ``CHOICES``: what the earlier turns send back (the cell's ``--history``)."""
    asked: bool = False
    """The cell asked for ``--history reasoning`` itself (the default stays quiet about it)."""
    told: set[str] = field(default_factory=set)
    """Flavours already told that they take the answers only (the notice comes once)."""

    def add(self, trace: Trace) -> None:
        if trace.answer:  # a failed or empty turn would only confuse the next one
            self.turns.append((trace.prompt, trace))

    def messages(self, flavor: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for prompt, trace in self.turns:
            out.append({"role": "user", "content": prompt})
            out.append(assistant_turn(trace, flavor, reasoning=self.send == "reasoning"))
        return out

    def notice(self, flavor: str, provider: str) -> str | None:
        """Once per flavour: ``--history reasoning`` asked of a provider that takes answers only."""
        if not self.asked or flavor in REPLAY or not self.turns or flavor in self.told:
            return None
        self.told.add(flavor)
        return (
            f"{provider} takes earlier turns back as answers only, so the chat history sent "
            "their answers without the reasoning."
        )


def size(messages: list[dict[str, Any]], model: str) -> dict[str, int]:
    """``{"history_turns", "history_tokens"}`` of history messages sent to ``model``: an
    estimate of the text the model reads again (prompts, answers, and the reasoning that
    ``REPLAY`` sends back to the model that made it). Signatures and encrypted reasoning are
    opaque, not text, and are not counted."""
    chars = 0
    for message in messages:
        chars += len(str(message.get("content") or ""))
        if message.get("replay_model") != model:  # the protocol sends the answer text only
            continue
        for _, key in REPLAY.values():
            items = message.get(key)
            if isinstance(items, list):
                chars += sum(len(_text(item)) for item in items if isinstance(item, dict))
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    return {"history_turns": turns, "history_tokens": estimate(chars)}


def _text(item: dict[str, Any]) -> str:
    """The reasoning text of one replayed block, part or detail (answer text is in ``content``)."""
    if item.get("type") == "thinking":  # Anthropic
        return str(item.get("thinking") or "")
    if item.get("thought") is True:  # Gemini thought summary part
        return str(item.get("text") or "")
    if item.get("type") in ("reasoning.text", "reasoning.summary"):  # OpenRouter
        return str(item.get("text") or item.get("summary") or "")
    return ""
