"""Continue a stopped run: ask again, with the reasoning that arrived kept and an optional hint.

Continue works with every provider, so the partial reasoning is quoted in the user turn, after
the original prompt, with the hint: a prefill of the model's own thinking is not something every
provider takes (Anthropic wants thinking blocks back only with their signature, which a block
cut short never got; OpenAI and Gemini return summaries). The trace keeps the prompt as written
and records the continuation beside it, so exports and ``stats()`` can tell a continued run
apart, and stripping reasoning from a notebook cannot miss a copy of it.

Where the provider takes prefilled reasoning (its profile's ``resume``), a run can instead go on
from a point in another run's reasoning: ``Continuation.resume`` keeps the reasoning up to that
point (or the user's edit of it) as the prefix the model continues, with the prompt as asked. The
new trace's reasoning starts with that prefix, and ``saved()`` records where it came from (the
run, the point ``at``, whether the text was edited): its first ``reasoning_chars`` characters
of reasoning are the prefix, so a view can tell the user's part from the model's.
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
    at: int | None = None
    """A resume: the point in the earlier run's reasoning it goes on from (characters)."""
    edited: bool = False
    """A resume: the text before that point is the user's edit, not the model's words."""
    source: str | None = None
    """A resume: when the run it goes on from started (its ``started_at``), which names that
    run where no run number does (``think()``, the run log)."""

    @classmethod
    def of(cls, trace: Trace, hint: str = "", run: int | None = None) -> Continuation:
        # A hint is one line: a pasted paragraph would drown the instruction around it.
        return cls(trace.reasoning, " ".join(hint.split()), run)

    @classmethod
    def resume(
        cls, trace: Trace, at: int | None = None, edit: str | None = None, run: int | None = None
    ) -> Continuation:
        """Go on from character ``at`` of ``trace``'s reasoning (its end by default), the text
        before it replaced by ``edit`` when given."""
        end = len(trace.reasoning)
        point = end if at is None else max(0, min(at, end))
        prefix = trace.reasoning[:point] if edit is None else edit
        edited = edit is not None and edit != trace.reasoning[:point]
        source = trace.started_at
        return cls(prefix, "", run, action="resume", at=point, edited=edited, source=source)

    @classmethod
    def edited_to(cls, trace: Trace, text: str, run: int | None = None) -> Continuation:
        """Go on from the end of ``text``: ``trace``'s reasoning as the user left it (cut, and
        perhaps changed); ``at`` is where it stops following the original."""
        pairs = enumerate(zip(trace.reasoning, text, strict=False))
        shared = next((i for i, (a, b) in pairs if a != b), min(len(trace.reasoning), len(text)))
        return cls.resume(trace, shared, None if shared == len(text) else text, run)

    @property
    def prefix(self) -> str | None:
        """The reasoning the model goes on from (a resume), else None."""
        return self.reasoning if self.action == "resume" else None

    def user_turn(self, prompt: str) -> str:
        """The user message sent instead of ``prompt``."""
        if self.action in ("more_room", "resume"):  # the same question (resume: prefilled)
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
        if self.action == "resume":
            saved |= {"at": self.at, "edited": self.edited}
            if self.source is not None:
                saved["from_started_at"] = self.source
        return saved
