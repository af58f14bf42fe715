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
    # No flavour implemented so far needs reasoning back; signatures would be checked here so
    # that one never crosses to another provider.
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
