"""One-line labels of a trace, shared by the static views, the live widget and the terminal:
``Thought for 12.4 s · 2,310 tokens``, the summary line of the folded reasoning, the notes under
the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import cost
from ..core.text import clip, one_line
from ..core.tokens import reasoning_tokens
from .cell_runs import continued_line, replay_line

if TYPE_CHECKING:
    from ..core.trace import Trace


LABEL_LIMIT = 120


def label(trace: Trace) -> str:
    """``high · ollama:qwen3``: a variant's name, on one line, of sane length (a saved trace is
    anyone's text)."""
    text = f"{one_line(trace.preset)} · {one_line(trace.model) or '(default model)'}"
    return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 1] + "…"


def tokens_label(
    count: int | None, chars: int, *, output: int | None = None, answer_chars: int = 0
) -> str:
    """``2,310 tokens`` from the server's count, else ``≈812 tokens`` (see
    ``core.tokens.reasoning_tokens``); ``1 token`` in the singular; empty with neither."""
    n, estimated = reasoning_tokens(count, output, chars, answer_chars)
    if n is None:
        return ""
    return f"{'≈' if estimated else ''}{n:,} token{'' if n == 1 else 's'}"


def seconds_label(ms: float | None) -> str:
    """``4.2 s``; ``<0.1 s`` for what would read ``0.0 s``."""
    if ms is None:
        return ""
    return "<0.1 s" if ms < 50 else f"{ms / 1000:.1f} s"


def thought_label(ms: float | None, tokens: str) -> str:
    """``Thought for 12.4 s · 2,310 tokens`` (``Reasoning · …`` when it was not timed), from a
    ``tokens_label``."""
    parts = [f"Thought for {seconds_label(ms)}" if ms is not None else "Reasoning"]
    if tokens:
        parts.append(tokens)
    return " · ".join(parts)


def reasoning_summary(trace: Trace) -> str:
    return thought_label(trace.timing.get("reasoning_ms"), trace_tokens_label(trace))


def trace_tokens_label(trace: Trace) -> str:
    """The reasoning tokens of a finished trace (its output total split when that is all the
    server said), as the stats table counts them."""
    usage = trace.usage
    return tokens_label(
        usage.get("reasoning_tokens"),
        len(trace.reasoning),
        output=usage.get("output_tokens"),
        answer_chars=len(trace.answer),
    )


def footer(trace: Trace, *, with_subject: bool = True) -> str:
    """``ollama:qwen3 · preset high · complete · 3.2 s``; without the model and preset
    (``with_subject=False``) where a title says them (a ``--compare`` column)."""
    parts = [clip(trace.model or trace.provider, 80), f"preset {clip(trace.preset, 24)}"]
    parts = parts if with_subject else []
    if trace.budget_tokens:
        parts.append(f"budget {trace.budget_tokens:,}")
    parts.append(trace.status)
    total = seconds_label(trace.timing.get("total_ms"))
    if total:
        parts.append(total)
    return " · ".join(p for p in parts if p)


def summary(trace: Trace) -> str:
    """The folded reasoning's one label, wherever a run shows (live, ended, picked again,
    reopened, exported): ``Thought for 12.4 s · 2,310 tokens``. Who ran it and how is the
    footer's to say (``notes``), or the widget's header."""
    return one_line(reasoning_summary(trace))


def notes(trace: Trace, *, with_subject: bool = True) -> list[str]:
    """The lines under the answer: who/how (``footer``), cost, warnings; the error is
    ``error_label``."""
    lines = [footer(trace, with_subject=with_subject), cost.note(trace.cost)]
    lines += [f"⚠ {w}" for w in trace.warnings]
    lines += [continued_line(trace.continued), replay_line(trace)]
    return [one_line(n) for n in lines if one_line(n)]


def error_label(trace: Trace) -> str:
    return f"✖ {one_line(trace.error)}" if trace.error else ""
