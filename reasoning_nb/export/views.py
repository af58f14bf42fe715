"""A validated trace -> the static bundle an export shows, in one of three modes.

* ``collapsible``: the reasoning in a closed ``<details>`` whose summary reads
  ``Reasoning · 12.4 s · 2,310 tokens · preset high · ollama:deepseek-r1``.
* ``inline``: the reasoning always visible, in a delimited, styled block (a blockquote in
  markdown), for print, PDF and LaTeX, where nothing can be clicked open.
* ``strip``: the answer only (the caller has already emptied ``trace.reasoning``).

Every string comes from an untrusted notebook. HTML is built from escaped text and from
``render.markdown_html`` (raw HTML off, unsafe link schemes dropped). Markdown is harder: a
``.md`` file is rendered later by a renderer we do not know, possibly one that passes raw HTML
through. So model text goes into markdown verbatim only when it cannot hold HTML or an unsafe
link in *any* renderer (see :func:`_is_inert`); otherwise its safe HTML rendering is embedded.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from .. import render

if TYPE_CHECKING:
    from ..core.trace import Trace

MODES = ("collapsible", "inline", "strip")
CSS = render.CSS_CLASS

_INLINE_BOX = (
    "border:1px solid #d0d7de;border-left:4px solid #8c6bc8;background:#f6f8fa;"
    "padding:0.5em 0.9em;margin:0.3em 0 0.6em 0;border-radius:4px"
)
_INLINE_HEAD = "font-weight:600;font-size:0.85em;color:#57606a;margin-bottom:0.3em"
_FOLDED_BODY = "opacity:0.85;border-left:3px solid #ccc;padding-left:0.8em"
_META = "font-size:0.85em;opacity:0.7"

# C0/C1 controls and bidi overrides (a "Trojan source" label could reorder what is shown).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_UNSAFE_SCHEME = re.compile(r"(javascript|vbscript|data|file):")
_FENCE_OPEN = re.compile(r"^(`{3,})[^`]*$")
_PRE = re.compile(r"<pre[\s>].*?</pre>", re.S)


def one_line(text: str) -> str:
    """Collapse whitespace and control characters: a label must stay one line."""
    return " ".join(_CONTROLS.sub(" ", text).split())


def _short(text: str, limit: int = 80) -> str:
    """A label part (model id, preset) of sane length."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summary(trace: Trace) -> str:
    """``Reasoning · 12.4 s · 2,310 tokens · preset high · ollama:deepseek-r1``."""
    parts = ["Reasoning", render.seconds_label(trace.timing.get("reasoning_ms"))]
    parts.append(render.tokens_label(trace.usage.get("reasoning_tokens"), len(trace.reasoning)))
    parts.append(f"preset {_short(trace.preset, 24)}" if trace.preset else "")
    if trace.budget_tokens:
        parts.append(f"budget {trace.budget_tokens:,}")
    parts.append(_short(trace.model or trace.provider))
    return one_line(" · ".join(p for p in parts if p))


def notes(trace: Trace) -> list[str]:
    """The lines under the answer: who/how (unless the summary said it), warnings, error."""
    if trace.reasoning:  # model and preset are in the summary already
        total = render.seconds_label(trace.timing.get("total_ms"))
        first = " · ".join(p for p in (trace.status, total) if p)
    else:
        first = render.footer(trace)
    lines = [first, *(f"⚠ {w}" for w in trace.warnings)]
    if trace.error:
        lines.append(f"✖ {trace.error}")
    return [one_line(n) for n in lines if one_line(n)]


# -- HTML -------------------------------------------------------------------------------------


def to_html(trace: Trace, mode: str) -> str:
    out = [f'<div class="{CSS} {CSS}-export {CSS}-{mode}">']
    if trace.reasoning and mode != "strip":
        head = html.escape(summary(trace))
        body = render.markdown_html(trace.reasoning, breaks=True)
        if mode == "inline":
            out.append(
                f'<div class="{CSS}-reasoning" style="{_INLINE_BOX}">'
                f'<div class="{CSS}-summary" style="{_INLINE_HEAD}">{head}</div>{body}</div>'
            )
        else:
            out.append(
                f'<details class="{CSS}-reasoning"><summary>{head}</summary>'
                f'<div style="{_FOLDED_BODY}">{body}</div></details>'
            )
    out.append(f'<div class="{CSS}-answer">{render.markdown_html(trace.answer)}</div>')
    meta = "<br>".join(html.escape(n) for n in notes(trace))
    out.append(f'<div class="{CSS}-meta" style="{_META}">{meta}</div></div>')
    return "".join(out)


# -- markdown ---------------------------------------------------------------------------------


def md_escape(text: str) -> str:
    """One line of literal text for markdown: entities for ``<>&``, backslashes for the rest."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(one_line(text), quote=False))


def _outside_fences(lines: list[str]) -> list[str] | None:
    """Lines outside strict backtick fences, or None when a fence is not strict.

    Strict: column 0, closed by a line of exactly the same backticks, no backtick inside.
    Then CommonMark, GFM and Python-Markdown (with or without its fence extension, where such
    a block is one code span) all agree that the content is code. Anything looser is checked
    as ordinary text.
    """
    outside: list[str] = []
    i = 0
    while i < len(lines):
        opening = _FENCE_OPEN.match(lines[i])
        if opening:
            fence = opening.group(1)
            for j in range(i + 1, len(lines)):
                if lines[j].rstrip() == fence:
                    break
                if "`" in lines[j]:
                    return None
            else:
                return None  # unclosed: renderers disagree on where it ends
            i = j + 1
            continue
        outside.append(lines[i])
        i += 1
    return outside


def _is_inert(text: str, *, allow_fences: bool) -> bool:
    """True when no markdown renderer can make HTML or an unsafe link out of ``text``.

    Raw HTML, autolinks and entities all need ``<`` or ``&``; a link to a script needs a
    scheme (browsers ignore tabs and newlines inside one, so they are squeezed out first).
    """
    lines = text.split("\n")
    if allow_fences:
        kept = _outside_fences(lines)
        if kept is None:
            return False
        lines = kept
    rest = "\n".join(lines)
    if "<" in rest or "&" in rest:
        return False
    squeezed = re.sub(r"[\x00-\x20\x7f]+", "", rest).lower()
    return not _UNSAFE_SCHEME.search(squeezed)


def _html_block(fragment: str) -> str:
    """Safe HTML as one markdown HTML block: no blank line may end it early, so newlines
    inside ``<pre>`` become ``&#10;`` and empty lines go (HTML does not need them)."""
    fragment = _PRE.sub(lambda m: m.group(0).replace("\n", "&#10;"), fragment.strip())
    lines = [line for line in fragment.split("\n") if line.strip()]
    return f'<div class="{CSS}-md">\n' + "\n".join(lines) + "\n</div>"


def safe_markdown(text: str, *, breaks: bool = False, allow_fences: bool = True) -> str:
    """Model text for a markdown file: itself when inert, else its safe HTML rendering."""
    if _is_inert(text, allow_fences=allow_fences):
        return text
    return _html_block(render.markdown_html(text, breaks=breaks))


def _quote(block: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in block.split("\n"))


def to_markdown(trace: Trace, mode: str) -> str:
    parts = []
    if trace.reasoning and mode != "strip":
        # Quoted text: no fence exemption (fences in blockquotes are where renderers differ).
        body = _quote(safe_markdown(trace.reasoning, breaks=True, allow_fences=False))
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


# -- plain ------------------------------------------------------------------------------------


def to_plain(trace: Trace, mode: str) -> str:
    parts = []
    if trace.reasoning and mode != "strip":
        parts.append(f"[{summary(trace)}]\n{trace.reasoning}\n[/reasoning]")
    parts.append(trace.answer)
    parts.extend(f"({n})" if i == 0 else n for i, n in enumerate(notes(trace)))
    return "\n\n".join(p for p in parts if p)


def bundle(trace: Trace, mode: str) -> dict[str, str]:
    return {
        "text/html": to_html(trace, mode),
        "text/markdown": to_markdown(trace, mode),
        "text/plain": to_plain(trace, mode),
    }
