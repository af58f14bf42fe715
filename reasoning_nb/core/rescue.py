"""An answer lost to thinking: a run cut off at its token limit while it still reasoned.

Such a run returns an empty answer, which reads like a broken engine, while its reasoning may
already hold the answer. ``lost_answer`` says when it happened, ``warn_if_lost`` puts one plain
warning on the trace at finish (every view shows ``trace.warnings``), and two runs rescue it:

- Answer now: the reasoning so far goes back with an instruction to answer directly, with
  thinking off (``presets.plan`` falls back to the lowest level where it cannot be switched off),
  and room of its own for the answer (``answer_room``): the budget the thinking ate would cut
  the answer off in turn.
- More room: the same question with a larger ``max_tokens``: twice what was spent, capped at the
  model's output limit from the capability data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import loops, tokens
from .continuation import Continuation

if TYPE_CHECKING:
    from .trace import Trace

NEARLY_NONE = 20
"""An answer shorter than this many visible characters counts as none (a lone "The", "**")."""
ANSWER_NOW_PRESET = "off"
ANSWER_ROOM = 4_096
"""The least output budget an Answer-now run asks for: a direct answer with a code block or
two fits. Not the model's whole output limit: some servers (vLLM) refuse a ``max_tokens`` that,
with the prompt (the quoted reasoning), passes their context."""
TRY, TRY_NOW = "try Answer now or More room.", "try Answer now."
AT_LIMIT = "The run already had the most output tokens this model allows; use Answer now instead."
STREAM_ENDED = "The stream ended before the server said it was done; the answer may be incomplete."
"""The notice of a stream that stopped without the server's end: a dropped stream, not a model
out of tokens (``Run`` yields it)."""


def lost_answer(trace: Trace) -> bool:
    """The run hit its token limit after reasoning, with no answer (or nearly none)."""
    return (
        trace.status == "truncated"
        and bool(trace.reasoning.strip())
        and len(trace.answer.strip()) < NEARLY_NONE
        and STREAM_ENDED not in trace.warnings  # a dropped stream, not a model out of tokens
    )


def spent(trace: Trace) -> tuple[int, bool]:
    """``(tokens, estimated)``: what the run spent, from the server's counts if it sent any."""
    usage = trace.usage
    for key in ("output_tokens", "reasoning_tokens"):
        if usage.get(key):
            return int(usage[key]), False
    return tokens.estimate(len(trace.reasoning) + len(trace.answer)), True


def budget(trace: Trace, max_tokens: int | None = None) -> int:
    """The output budget ``trace``'s run had: ``max_tokens`` as the run was given it, else as
    sent, else what it spent."""
    sent = trace.request.get("max_tokens")
    return max_tokens or (sent if isinstance(sent, int) else None) or spent(trace)[0]


def room(trace: Trace, limit: int | None, max_tokens: int | None = None) -> int | None:
    """The ``max_tokens`` for More room: twice the :func:`budget` the run had, capped at the
    model's output ``limit`` (None: unknown; the providers know it: ``catalog.output_limit``);
    None when it already had that."""
    used = budget(trace, max_tokens)
    if limit is not None and used >= limit:
        return None
    return min(2 * used, limit) if limit is not None else 2 * used


def message(trace: Trace, limit: int | None) -> str:
    """The warning of a run that lost its answer to thinking (or to a loop its server stopped)."""
    at_limit = room(trace, limit) is None
    if trace.finish_reason == loops.REPETITION:  # lost to a loop the server stopped
        return loops.server_stopped(trace.warnings, False, TRY_NOW if at_limit else TRY)
    count, estimated = spent(trace)
    n = f"≈{count}" if estimated else str(count)
    lost = f"The model spent all {n} tokens thinking and gave no answer"
    return f"{lost}, at its output limit: {TRY_NOW}" if at_limit else f"{lost}: {TRY}"


def warn_if_lost(trace: Trace, limit: int | None) -> None:
    """At finish: say plainly that the answer was lost to thinking (not just "truncated"), or
    that the server stopped a loop; ``limit``: the model's output limit, as for :func:`room`."""
    if lost_answer(trace):
        trace.warn(message(trace, limit))
    elif trace.finish_reason == loops.REPETITION:
        trace.warn(loops.server_stopped(trace.warnings, bool(trace.answer.strip())))


def answer_room(trace: Trace, limit: int | None, max_tokens: int | None = None) -> int:
    """The ``max_tokens`` for Answer now: the larger of ``ANSWER_ROOM`` and the :func:`budget`
    the run had (which its thinking ate), capped at the model's output ``limit``."""
    wanted = max(ANSWER_ROOM, budget(trace, max_tokens))
    return min(wanted, limit) if limit is not None else wanted


def answer_now(trace: Trace, max_tokens: int, run: int | None = None) -> Continuation:
    """Re-ask with ``trace``'s reasoning and an instruction to answer directly (preset
    ``ANSWER_NOW_PRESET``), with ``max_tokens`` (from :func:`answer_room`): the trace says so."""
    return Continuation(trace.reasoning, "", run, action="answer_now", max_tokens=max_tokens)


def more_room(trace: Trace, max_tokens: int, run: int | None = None) -> Continuation:
    """Ask ``trace``'s question again with ``max_tokens`` (from :func:`room`)."""
    return Continuation("", "", run, action="more_room", max_tokens=max_tokens)
