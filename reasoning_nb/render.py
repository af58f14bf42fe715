"""Trace -> safe static views: ``text/html`` (reasoning in a collapsed ``<details>``),
``text/markdown`` and ``text/plain``. Shared by the notebook output and the exporters.

Model text is untrusted: markdown is rendered with raw HTML disabled (so ``<script>`` arrives as
text), markdown-it's link check drops ``javascript:``/``data:`` links, and every other string is
escaped.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt

if TYPE_CHECKING:
    from .core.trace import Trace

CSS_CLASS = "reasoning-nb"


@lru_cache(maxsize=4)
def _md(breaks: bool, highlight: bool) -> MarkdownIt:
    options = {"html": False, "breaks": breaks, "highlight": _highlight if highlight else None}
    md = MarkdownIt("commonmark", options)
    md.enable(["table", "strikethrough"])
    return md


def markdown_html(text: str, *, breaks: bool = False, highlight: bool = True) -> str:
    """Render untrusted markdown to HTML with raw HTML off.

    ``highlight=False`` leaves code plain: for text re-sent on every live update, where inline
    highlighting styles would multiply the bytes (the final render highlights).
    """
    return _md(breaks, highlight).render(text)


def _highlight(code: str, lang: str, attrs: str) -> str:
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - pygments comes with IPython
        return ""
    try:
        lexer = get_lexer_by_name(lang.strip() or "text")
    except ClassNotFound:
        return ""  # markdown-it escapes the code itself
    # Inline styles: the output must look right with no stylesheet (GitHub, exports, Lab).
    return highlight(code, lexer, HtmlFormatter(noclasses=True, nowrap=True))


def tokens_label(count: int | None, chars: int) -> str:
    """``2,310 tokens`` from the server's count, else ``≈812 tokens`` from about 4 chars a
    token; ``1 token`` in the singular; empty with neither."""
    if count is not None:
        return f"{count:,} token{'' if count == 1 else 's'}"
    if chars:
        guess = max(1, round(chars / 4))
        return f"≈{guess:,} token{'' if guess == 1 else 's'}"
    return ""


def seconds_label(ms: float | None) -> str:
    return "" if ms is None else f"{ms / 1000:.1f} s"


def reasoning_summary(trace: Trace) -> str:
    """One line, e.g. ``Thought for 12.4 s · 2,310 tokens``."""
    parts = [f"Thought for {seconds_label(trace.timing.get('reasoning_ms'))}".strip()]
    if parts[0] == "Thought for":
        parts[0] = "Reasoning"
    tokens = tokens_label(trace.usage.get("reasoning_tokens"), len(trace.reasoning))
    if tokens:
        parts.append(tokens)
    return " · ".join(parts)


def footer(trace: Trace) -> str:
    """``ollama:qwen3 · preset high · complete · 3.2 s``, plus warnings on their own."""
    parts = [trace.model or trace.provider, f"preset {trace.preset}"]
    if trace.budget_tokens:
        parts.append(f"budget {trace.budget_tokens:,}")
    parts.append(trace.status)
    total = seconds_label(trace.timing.get("total_ms"))
    if total:
        parts.append(total)
    return " · ".join(p for p in parts if p)


def to_html(trace: Trace, *, open_reasoning: bool = False) -> str:
    out = [f'<div class="{CSS_CLASS}">']
    if trace.reasoning:
        summary = html.escape(reasoning_summary(trace))
        body = markdown_html(trace.reasoning, breaks=True)
        out.append(
            f'<details class="{CSS_CLASS}-reasoning"{" open" if open_reasoning else ""}>'
            f"<summary>{summary}</summary>"
            f'<div style="opacity:0.8;border-left:3px solid #ccc;padding-left:0.8em">{body}</div>'
            "</details>"
        )
    out.append(f'<div class="{CSS_CLASS}-answer">{markdown_html(trace.answer)}</div>')
    notes = [footer(trace), *(f"⚠ {w}" for w in trace.warnings)]
    if trace.error:
        notes.append(f"✖ {trace.error}")
    out.append(
        f'<div class="{CSS_CLASS}-meta" style="font-size:0.85em;opacity:0.7">'
        + "<br>".join(html.escape(n) for n in notes)
        + "</div></div>"
    )
    return "".join(out)


def to_markdown(trace: Trace) -> str:
    parts = []
    if trace.reasoning:
        quoted = "\n".join(f"> {line}" if line else ">" for line in trace.reasoning.splitlines())
        parts.append(f"> **{reasoning_summary(trace)}**\n>\n{quoted}")
    parts.append(trace.answer)
    notes = [f"*{footer(trace)}*", *(f"*⚠ {w}*" for w in trace.warnings)]
    if trace.error:
        notes.append(f"*✖ {trace.error}*")
    parts.append("  \n".join(notes))
    return "\n\n".join(p for p in parts if p)


def to_plain(trace: Trace) -> str:
    parts = []
    if trace.reasoning:
        parts.append(f"[{reasoning_summary(trace)}]\n{trace.reasoning}\n[/reasoning]")
    parts.append(trace.answer)
    parts.append(f"({footer(trace)})")
    parts.extend(f"warning: {w}" for w in trace.warnings)
    if trace.error:
        parts.append(f"error: {trace.error}")
    return "\n\n".join(p for p in parts if p)


def bundle(trace: Trace) -> dict[str, Any]:
    """The static MIME bundle saved with every ``%%think`` output."""
    return {
        "text/html": to_html(trace),
        "text/markdown": to_markdown(trace),
        "text/plain": to_plain(trace),
    }
