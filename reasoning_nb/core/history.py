"""Conversation turns for ``--chat``: each provider's rule for sending reasoning back.

``--history answer`` sends every provider the answers only: none requires past reasoning on
turns without tool calls (wire-formats §6–8). vLLM and llama.cpp take the reasoning text back,
and their profile names the template switch that keeps it in the prompt or drops it (Qwen 3.5+
``preserve_thinking``): the choice is sent both ways, as template defaults differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .capabilities import family_facts
from .tokens import estimate
from .trace import Trace

CHOICES = ("reasoning", "answer")
"""``reasoning`` (the default: the reasoning too where the provider's ``Replay`` rule takes it)
or ``answer``."""


@dataclass(frozen=True)
class Replay:
    """What a provider gets back from its own earlier turns, only when the next request goes to
    the same ``replay_model`` (signatures are model-specific); else the plain ``content``.

    Without a rule, the answer only. Other local servers: templates drop past reasoning or never
    saw it. DeepSeek: ``reasoning_content`` comes back only on tool-call turns; we make none.
    OpenAI's reasoning items go back with their encrypted content, so a turn needs no stored
    response (``store: false``, zero retention)."""

    saved: str
    """The key in the trace's saved ``provider_state`` (its list of blocks, parts, details), or
    ``TEXT``: the trace's reasoning text itself."""
    message: str
    """The key on the assistant message that carries that list back."""
    text: Callable[[dict[str, Any]], str]
    """The reasoning text of one item of the list (what a history costs in tokens)."""


TEXT = ""
"""``Replay.saved`` of servers whose chat templates read a past turn's reasoning as a plain text
field of its message (vLLM, llama.cpp): the trace's own text goes back, nothing extra is saved."""


FINAL_DROPS_REASONING = ("gpt-oss",)
"""Families whose format drops a turn's reasoning once it ended in a final answer, keeping it
only across the tool calls of a turn still under way: harmony (OpenAI's harmony guide; gpt-oss's
own chat template renders no analysis for earlier final turns). Every ``--chat`` turn ends in an
answer (the package makes no tool calls), so these get the answers only, on any provider."""


class Provider(Protocol):
    """The provider the next turn goes to (its profile)."""

    @property
    def id(self) -> str: ...

    @property
    def replay(self) -> Replay | None: ...


def assistant_turn(trace: Trace, to: Provider, *, reasoning: bool = True) -> dict[str, Any]:
    """The assistant message that represents ``trace`` in the next request to ``to``."""
    turn: dict[str, Any] = {"role": "assistant", "content": trace.answer}
    rule = to.replay
    if not reasoning or rule is None or trace.provider != to.id:
        return turn
    if rule.saved == TEXT:
        model = trace.model.partition(":")[2].strip()  # as ``ModelRef.name``
        if trace.reasoning and family_facts(model).get("family") not in FINAL_DROPS_REASONING:
            turn |= {rule.message: trace.reasoning, "replay_model": model}
        return turn
    state = trace.provider_state.get(to.id)
    if isinstance(state, dict) and state.get("model") and isinstance(state.get(rule.saved), list):
        if family_facts(str(state["model"])).get("family") in FINAL_DROPS_REASONING:
            return turn
        turn |= {rule.message: state[rule.saved], "replay_model": state["model"]}
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
    """Providers already told that they take the answers only (the notice comes once)."""

    def add(self, trace: Trace) -> None:
        if trace.answer:  # a failed or empty turn would only confuse the next one
            self.turns.append((trace.prompt, trace))

    def messages(self, to: Provider) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for prompt, trace in self.turns:
            out.append({"role": "user", "content": prompt})
            out.append(assistant_turn(trace, to, reasoning=self.send == "reasoning"))
        return out

    def notice(self, to: Provider) -> str | None:
        """Once per provider: ``--history reasoning`` asked of one that takes answers only."""
        if not self.asked or to.replay is not None or not self.turns or to.id in self.told:
            return None
        self.told.add(to.id)
        return (
            f"{to.id} takes earlier turns back as answers only, so the chat history sent "
            "their answers without the reasoning."
        )


def size(messages: list[dict[str, Any]], model: str, to: Provider) -> dict[str, int]:
    """``{"history_turns", "history_tokens"}``: an estimate of the text ``model`` reads again,
    replayed reasoning included. Signatures and encrypted reasoning are opaque and not counted."""
    chars = 0
    rule = to.replay
    for message in messages:
        chars += len(str(message.get("content") or ""))
        if rule is None or message.get("replay_model") != model:  # the answer text only
            continue
        items = message.get(rule.message)
        if isinstance(items, str):  # a ``TEXT`` rule's
            chars += len(items)
        elif isinstance(items, list):
            chars += sum(len(rule.text(item)) for item in items if isinstance(item, dict))
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    return {"history_turns": turns, "history_tokens": estimate(chars)}
