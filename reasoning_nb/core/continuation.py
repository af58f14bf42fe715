"""Continue a stopped run: ask again, with the reasoning that arrived kept and an optional hint.

Resuming the reasoning block itself would take an assistant prefill that reopens the model's
own thinking markup, and no provider offers that reliably: Anthropic takes thinking blocks back
only with their signature, which a block cut short never got; OpenAI and Gemini return
summaries; a llama.cpp server does continue a final assistant message (checked against build
b10434), but the chat template's thinking markup is unseen by the client. So the partial
reasoning is quoted in the user turn, after the original prompt, with the hint. The trace keeps
the prompt as written and records the continuation beside it, so exports and ``stats()`` can
tell a continued run apart, and stripping reasoning from a notebook cannot miss a copy of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .trace import Trace

OPEN, CLOSE = "<partial_reasoning>", "</partial_reasoning>"
ANSWER_NOW = "Do not reason any further: answer directly now, from this reasoning."
_QUOTED = {
    "answer_now": (
        "You reasoned about this and ran out of room before you answered. Your reasoning:",
        ANSWER_NOW,
    ),
    "continue": (
        "You began reasoning about this and were stopped part-way. Your reasoning so far:",
        "Pick up from where it stops instead of starting over.",
    ),
}
"""What goes before and after the quoted reasoning, by action."""


@dataclass(frozen=True)
class Continuation:
    reasoning: str
    hint: str = ""
    """One line from the user, steering where the reasoning goes next."""
    run: int | None = None
    """The number of the run it continues, in its widget (1 = the first)."""
    action: str = "continue"
    """One of ``core.schema.ACTIONS``."""
    max_tokens: int | None = None
    """The output budget an "answer now" or "more room" run asks for (``core.rescue``)."""

    @classmethod
    def of(cls, trace: Trace, hint: str = "", run: int | None = None) -> Continuation:
        # A hint is one line: a pasted paragraph would drown the instruction around it.
        return cls(trace.reasoning, " ".join(hint.split()), run)

    def user_turn(self, prompt: str) -> str:
        """The user message sent instead of ``prompt``."""
        if self.action == "more_room":  # the same question, with more tokens
            return prompt
        parts = [prompt, ""]
        if self.action == "answer_now" or self.reasoning:
            head, then = _QUOTED[self.action]
            parts += [head, "", OPEN, self.reasoning, CLOSE, "", then]
        else:
            parts.append("You were stopped before you had reasoned about this; start again.")
        if self.hint:
            parts.append(f"A hint from the user: {self.hint}")
        return "\n".join(parts)

    def saved(self) -> dict[str, Any]:
        """What the trace records (the reasoning itself is in the earlier run's trace)."""
        saved = {"run": self.run, "hint": self.hint, "reasoning_chars": len(self.reasoning)}
        if self.action != "continue":  # (a plain Continue saves what it always saved)
            saved["action"] = self.action
        if self.max_tokens is not None:
            saved["max_tokens"] = self.max_tokens
        return saved
