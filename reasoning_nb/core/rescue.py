"""An answer lost to thinking: a run cut off at its token limit while it still reasoned.

Such a run returns an empty answer, which reads like a broken engine, while its reasoning may
already hold the answer. ``lost_answer`` says when it happened, ``note`` puts one plain warning
on the trace at finish (every view shows ``trace.warnings``), and two runs rescue it:

- Answer now: the reasoning so far goes back with an instruction to answer directly, with
  thinking off (``presets.plan`` falls back to the lowest level where it cannot be switched off).
- More room: the same question with a larger ``max_tokens``: twice what was spent, capped at the
  model's output limit from the capability data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from . import tokens
from .continuation import Continuation

if TYPE_CHECKING:
    from .trace import Trace

NEARLY_NONE = 20
"""An answer shorter than this many visible characters counts as none (a lone "The", "**")."""
ANSWER_NOW_PRESET = "off"
TRY, TRY_NOW = "try Answer now or More room.", "try Answer now."
AT_LIMIT = "The run already had the most output tokens this model allows; use Answer now instead."
STREAM_ENDED = "The stream ended before the server said it was done; the answer may be incomplete."
"""The notice of a stream that stopped without the server's end: a dropped stream, not a model
out of tokens (``Run`` yields it)."""

OUTPUT_LIMITS: dict[str, Callable[[str], int | None]] = {}
"""Provider id -> the most output tokens a model of it gives per request (None: unknown). The
capability data that knows it sits with the providers, above core: the provider registry
(``providers/catalog.py``) fills this as it registers each profile."""


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


def output_limit(trace: Trace) -> int | None:
    """The model's most output tokens per request, from the capability data (None: unknown, or
    an odd saved model id)."""
    provider, _, name = trace.model.partition(":") if isinstance(trace.model, str) else ("",) * 3
    limit = OUTPUT_LIMITS.get(provider.strip().lower())
    try:
        return limit(name.strip()) if limit is not None and name.strip() else None
    except Exception:  # an odd saved model id: the limit is simply unknown
        return None


def room(trace: Trace, max_tokens: int | None = None) -> int | None:
    """The ``max_tokens`` for More room: twice the budget the run had (``max_tokens`` as sent,
    else what it spent), capped at the model's output limit; None when it already had that."""
    sent = trace.request.get("max_tokens")
    used = max_tokens or (sent if isinstance(sent, int) else None) or spent(trace)[0]
    limit = output_limit(trace)
    if limit is not None and used >= limit:
        return None
    return min(2 * used, limit) if limit is not None else 2 * used


def message(trace: Trace) -> str:
    """The warning of a run that lost its answer to thinking."""
    count, estimated = spent(trace)
    n = f"≈{count}" if estimated else str(count)
    lost = f"The model spent all {n} tokens thinking and gave no answer"
    return f"{lost}, at its output limit: {TRY_NOW}" if room(trace) is None else f"{lost}: {TRY}"


def note(trace: Trace) -> None:
    """At finish: say plainly that the answer was lost to thinking (not just "truncated")."""
    if lost_answer(trace):
        trace.warn(message(trace))


def answer_now(trace: Trace, run: int | None = None) -> Continuation:
    """Re-ask with ``trace``'s reasoning and an instruction to answer directly (preset
    ``ANSWER_NOW_PRESET``)."""
    return Continuation(trace.reasoning, "", run, action="answer_now")


def more_room(trace: Trace, max_tokens: int, run: int | None = None) -> Continuation:
    """Ask ``trace``'s question again with ``max_tokens`` (from :func:`room`)."""
    return Continuation("", "", run, action="more_room", max_tokens=max_tokens)
