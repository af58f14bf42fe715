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


def assistant_turn(trace: Trace, flavor: str) -> dict[str, Any]:
    """The assistant message that represents ``trace`` in the next request to ``flavor``."""
    if flavor == "anthropic":
        return _anthropic_turn(trace)
    if flavor == "gemini":
        return _gemini_turn(trace)
    if flavor == "openrouter":
        return _openrouter_turn(trace)
    if flavor in ("openai", "openai-chat", "deepseek"):
        return _text_only_turn(trace)
    # No flavour implemented so far needs reasoning back; signatures would be checked here so
    # that one never crosses to another provider.
    return {"role": "assistant", "content": trace.answer}


def _native_state(trace: Trace, flavor: str) -> dict[str, Any] | None:
    """The replay data a ``flavor`` turn saved, or None for a turn made elsewhere."""
    state = trace.provider_state.get(flavor) if trace.provider == flavor else None
    return state if isinstance(state, dict) and state.get("model") else None


def _anthropic_turn(trace: Trace) -> dict[str, Any]:
    """Anthropic: the thinking / redacted_thinking / text blocks with their signatures, in order,
    as ``blocks``; ``providers/anthropic.py`` sends them only to ``replay_model`` (signatures are
    model-specific) and the plain ``content`` to any other model."""
    turn: dict[str, Any] = {"role": "assistant", "content": trace.answer}
    state = _native_state(trace, "anthropic")
    if state and isinstance(state.get("content"), list):
        turn |= {"blocks": state["content"], "replay_model": state["model"]}
    return turn


def _gemini_turn(trace: Trace) -> dict[str, Any]:
    """Gemini: the model's parts with ``thoughtSignature`` on the parts that carried it, as
    ``parts``; ``providers/gemini.py`` sends them only to ``replay_model``."""
    turn: dict[str, Any] = {"role": "assistant", "content": trace.answer}
    state = _native_state(trace, "gemini")
    if state and isinstance(state.get("parts"), list):
        turn |= {"parts": state["parts"], "replay_model": state["model"]}
    return turn


def _openrouter_turn(trace: Trace) -> dict[str, Any]:
    """OpenRouter: the merged ``reasoning_details`` array, unmodified and in order, on the
    assistant message (Claude / Gemini 3 / DeepSeek upstreams need it for continuity);
    ``providers/openai_chat.py`` keeps it only when the next request goes to ``replay_model``."""
    turn: dict[str, Any] = {"role": "assistant", "content": trace.answer}
    state = _native_state(trace, "openrouter")
    if state and isinstance(state.get("reasoning_details"), list):
        turn |= {"reasoning_details": state["reasoning_details"], "replay_model": state["model"]}
    return turn


def _text_only_turn(trace: Trace) -> dict[str, Any]:
    """OpenAI (Responses and Chat Completions) and DeepSeek: the answer text only.

    OpenAI: requests keep ``store`` at its default and never ask for
    ``reasoning.encrypted_content``, so there is no reasoning item to replay; the model
    reasons afresh from the text of the conversation. DeepSeek: ``reasoning_content`` must come
    back only on assistant turns with tool calls (400 otherwise); between two user turns
    without tools it is ignored, and we make no tool calls, so plain turns send content only.
    """
    return {"role": "assistant", "content": trace.answer}


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
