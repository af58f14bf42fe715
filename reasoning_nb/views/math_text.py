r"""TeX in model text: ``$…$``, ``$$…$$``, ``\(…\)`` and ``\[…\]`` kept byte for byte.

Reasoning models write LaTeX all the time, and plain CommonMark eats it: ``\,`` becomes ``,``,
``\[ … \]`` becomes ``[ … ]``, ``$a*b*c$`` grows an ``<em>``. With :func:`math_plugin`,
markdown-it reads the four delimiters first, so a math span's TeX is never parsed as markdown; in
HTML it arrives escaped as ``\(…\)`` or ``\[…\]``, the defaults of every MathJax version. One
class on the view's container (:data:`IGNORE`), not one element of three classes a span: math
took ~70 bytes a span to save.

Dollars follow Pandoc's rule: an opening ``$`` has no space after it, the closing one no space
before it and no digit after it; TeX may hold ``\$``. Display math has no blank line inside
(neither has LaTeX), so a text still splits into blocks at its blank lines (``LiveText``).
Code spans and code blocks are code: their ``$`` and backslashes are never touched.

For markdown files (:func:`dollar_math`), ``\(…\)`` becomes ``$…$`` (JupyterLab's markdown, like
CommonMark, drops those backslashes), a ``{`` of prose is escaped (Python-Markdown and kramdown
could read an attribute list), and a ``$`` that is not math has no spelling that JupyterLab leaves
alone (it typesets ``\$5 and \$10``), so such a text goes as HTML.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline, backtick, escape

PROCESS = "mathjax_process tex2jax_process"
"""Classes of an element whose math MathJax 3 (JupyterLab) and MathJax 2 (nbconvert) typeset,
even inside an :data:`IGNORE` container."""
IGNORE = "mathjax_ignore tex2jax_ignore"
"""Classes for the container of a view: MathJax reads no math there but in :data:`PROCESS`."""
RUN_END = "<i></i>"
"""After a ``$`` or backslash of prose: ends MathJax's run of text (2 and 3 alike), so the
character pairs with nothing."""
_PROSE_DELIMITER = re.compile(r"[$\\]")

_OPEN_CLOSE = {"$$": "$$", "\\[": "\\]"}  # display block markers
_EDITS = "reasoning_nb_math_edits"  # env key: inline tokens, each then its (raw, new) edits
_ABSENT = "reasoning_nb_math_absent"  # env key: closers known to be absent (see _find, _block)


def _escaped(src: str, pos: int) -> bool:
    """Is ``src[pos]`` escaped by an odd run of backslashes before it?"""
    n = 0
    while pos - n - 1 >= 0 and src[pos - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _find(env: dict, src: str, marker: str, start: int, end: int) -> int:
    """The first unescaped ``marker`` in ``src[start:end]``, or -1. A search that finds none is
    noted in ``env``: one from further on finds none either, so a run of unclosed openers costs
    one scan, not one each (which was quadratic)."""
    absent = env.setdefault(_ABSENT, {})
    known = absent.get(marker)
    if known is not None and known[0] is src and known[1] <= start and end <= known[2]:
        return -1
    at = src.find(marker, start, end)
    while at != -1 and _escaped(src, at):  # "\\)": a TeX line break, then ")"
        at = src.find(marker, at + 1, end)
    if at == -1:
        absent[marker] = (src, start, end)
    return at


def _dollar(env: dict, src: str, pos: int, end: int) -> tuple[int, str, bool] | None:
    """Math at ``src[pos] == '$'``: (end of the span, TeX, display), or None."""
    if src.startswith("$$", pos):
        close = _find(env, src, "$$", pos + 2, end)
        tex = src[pos + 2 : close].strip() if close != -1 else ""
        return (close + 2, tex, True) if tex else None
    if pos + 1 >= end or src[pos + 1].isspace():
        return None
    close = _find(env, src, "$", pos + 1, end)
    if close == -1 or src[close - 1].isspace() or (close + 1 < end and src[close + 1].isdigit()):
        return None  # "$5 and $10": a price, not math
    return close + 1, src[pos + 1 : close], False


def _backslash(env: dict, src: str, pos: int, end: int) -> tuple[int, str, bool] | None:
    r"""Math at ``\(`` or ``\[``: (end of the span, TeX, display), or None."""
    kind = src[pos + 1 : pos + 2]
    if kind not in ("(", "["):
        return None
    close = _find(env, src, "\\)" if kind == "(" else "\\]", pos + 2, end)
    tex = src[pos + 2 : close].strip() if close != -1 else ""
    return (close + 2, tex, kind == "[") if tex else None


def _inline(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src[pos] not in "$\\":
        return False
    found = (_dollar if src[pos] == "$" else _backslash)(state.env, src, pos, state.posMax)
    edits = state.env.get(_EDITS)
    if found is None:
        if src[pos] != "$":
            return False  # the escape rule's turn
        if not silent:  # a dollar of prose: for a markdown file, escaped
            state.pending += "$"
            if edits is not None:
                edits.append(("$", None))
        state.pos += 1
        return True
    end, tex, display = found
    if not silent:
        token = state.push("math_display" if display else "math_inline", "", 0)
        token.content = tex
        if edits is not None:
            raw = src[pos:end]
            new = f"$${tex}$$" if display else f"${tex}$"
            if "$" in tex.replace("\\$", "") or (not display and src[end : end + 1].isdigit()):
                new = None  # no "$" spelling reads back as this math: the text goes as HTML
            edits.append((raw, new))
    state.pos = end
    return True


def _brace(state: StateInline, silent: bool) -> bool:
    """A ``{`` of prose, escaped when edits are collected (for a markdown file, see the module
    doc); code and math never reach here."""
    edits = state.env.get(_EDITS)
    if edits is None or state.src[state.pos] != "{":
        return False
    if not silent:
        state.pending += "{"
        edits.append(("{", "\\{"))
    state.pos += 1
    return True


def _block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """``$$`` or ``\\[`` opening a line, up to the line that ends with ``$$`` or ``\\]``."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False  # indented code
    first = state.bMarks[start] + state.tShift[start]
    line = state.src[first : state.eMarks[start]]
    opener, tail = line[:2], line.rstrip()
    closer = _OPEN_CLOSE.get(opener)
    if closer is None:
        return False
    last = start
    if len(tail) > 4 and tail.endswith(closer) and closer not in tail[2:-2]:
        body = tail[2:-2]
    elif closer in tail[2:]:
        return False  # "$$a$$ and $$b$$": the inline rule's
    else:
        # Lines with no closer up to one that ends the search: noted, as for inline math.
        unclosed = state.env.setdefault(_ABSENT, {})
        key = (closer, state.blkIndent, end)
        if key in unclosed and unclosed[key][0] <= start < unclosed[key][1]:
            return False
        parts = [line[2:]]
        while True:
            last += 1
            if last >= end:
                unclosed[key] = (start, last)
                return False
            indent = min(state.tShift[last], state.blkIndent)  # the container's, not the TeX's
            text = state.src[state.bMarks[last] + indent : state.eMarks[last]]
            tail = text.rstrip()
            if not tail or state.sCount[last] < state.blkIndent:
                unclosed[key] = (start, last)
                return False  # no blank line in display math
            if tail.endswith(closer) and not _escaped(tail, len(tail) - len(closer)):
                parts.append(tail[: -len(closer)])
                break
            parts.append(text)
        body = "\n".join(parts)
    if not body.strip():
        return False
    if silent:
        return True
    state.line = last + 1
    token = state.push("math_block", "", 0)
    token.block = True
    token.content = body.strip()
    token.markup = opener
    token.map = [start, state.line]
    return True


def _render(display: bool, block: bool = False) -> Callable:
    def render(renderer, tokens, idx, options, env) -> str:
        # (a line end as a reference: ``render.flat`` spaces the others, and a TeX ``%``
        # comment ends with its line)
        tex = html.escape(tokens[idx].content, quote=False).replace("\n", "&#10;")
        body = f"\\[{tex}\\]" if display else f"\\({tex}\\)"
        return f"<div>{body}</div>\n" if block else body

    return render


RENDERED = re.compile(
    r"\\\((?P<inline>(?:[^\\]|\\.)*?)\\\)|\\\[(?P<display>(?:[^\\]|\\.)*?)\\\]", re.S
)
"""A math span as :func:`_render` writes it, read as MathJax reads it (the first unescaped
closer ends it), for an export that typesets it (``export.mathml``)."""


def prose_html(text: str) -> str:
    """Text that is not math as HTML, escaped as markdown-it escapes it; MathJax reads no
    math in it (:data:`RUN_END`)."""
    return _PROSE_DELIMITER.sub(rf"\g<0>{RUN_END}", escapeHtml(text))


def _text(renderer, tokens, idx, options, env) -> str:
    return prose_html(tokens[idx].content)


def holds_math(fragment: str) -> bool:
    """Does ``fragment`` (rendered markdown) hold math, so that its element needs
    :data:`PROCESS`? Math renders as ``\\(`` or ``\\[``, a backslash of prose never (code may:
    MathJax skips code anyway)."""
    return "\\(" in fragment or "\\[" in fragment


def _recording(rule: Callable) -> Callable:
    """A rule that, when edits are collected, notes what it consumed (kept as it is): the
    search for an edit's text then starts after it."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start = state.pos
        ok = rule(state, silent)
        edits = state.env.get(_EDITS)
        if ok and not silent and edits is not None:
            raw = state.src[start : state.pos]
            edits.append((raw, None if raw == "\\$" else raw))  # "\$": a dollar of prose too
        return ok

    return wrapped


def _inline_core(state: StateCore) -> None:
    """markdown-it's ``inline`` core rule, noting each inline token before its edits."""
    edits = state.env.get(_EDITS)
    for token in state.tokens:
        if token.type == "inline":
            if edits is not None:
                edits.append(token)
            if token.children is None:
                token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)


def math_plugin(md: MarkdownIt) -> None:
    """Teach ``md`` the four delimiters; math renders as delimited, escaped TeX, and prose as
    :func:`prose_html`."""
    md.inline.ruler.before("escape", "math", _inline)
    md.inline.ruler.before("escape", "math_brace", _brace)
    md.inline.ruler.at("escape", _recording(escape))
    md.inline.ruler.at("backticks", _recording(backtick))
    md.core.ruler.at("inline", _inline_core)
    md.block.ruler.before(
        "fence", "math_block", _block, {"alt": ["paragraph", "reference", "blockquote", "list"]}
    )
    md.add_render_rule("math_inline", _render(False))
    md.add_render_rule("math_display", _render(True))
    md.add_render_rule("math_block", _render(True, block=True))
    md.add_render_rule("text", _text)


def _apply(region: str, edits: list[tuple[str, str]]) -> str:
    """Replace each edit's raw text, in order, each found after the one before."""
    out, at = [], 0
    for raw, new in edits:
        hit = region.find(raw, at)
        if hit == -1:
            continue  # spread over lines with a quote's ">" in between: left as it was
        out.append(region[at:hit])
        out.append(new)
        at = hit + len(raw)
    out.append(region[at:])
    return "".join(out)


def dollar_math(md: MarkdownIt, text: str) -> str | None:
    r"""``text`` for a markdown file: ``\(…\)`` → ``$…$``, ``\[…\]`` → ``$$…$$``, a ``{`` of prose
    → ``\{``; code, and everything else, as it was. None when it holds a dollar of prose (see
    the module doc). ``md`` has :func:`math_plugin`."""
    if "$" not in text and "\\" not in text and "{" not in text:
        return text
    text = re.sub(r"\r\n?", "\n", text)  # as markdown-it reads it: its line numbers
    env: dict = {_EDITS: []}
    tokens = md.parse(text, env)
    lines = text.split("\n")
    regions: dict[int, tuple[int, list[tuple[str, str]]]] = {}  # first line -> (stop, edits)
    for token in tokens:  # display blocks: only their markers change
        if token.type == "math_block" and token.markup == "\\[" and token.map:
            first, stop = token.map
            region = "\n".join(lines[first:stop])
            head, tail = region.find("\\["), region.rfind("\\]")
            new = f"{region[:head]}$${region[head + 2 : tail]}$$"
            regions[first] = (stop, [(region[: tail + 2], new)])
    first, mine = -1, []
    for item in env[_EDITS]:  # inline tokens, each followed by its edits
        if not isinstance(item, tuple):
            first, stop = item.map or (-1, -1)
            mine = regions.setdefault(first, (stop, []))[1]  # a table row: one region
        elif item[1] is None:
            return None
        elif first >= 0:
            mine.append(item)
    changed = {
        first: (stop, _apply("\n".join(lines[first:stop]), edits))
        for first, (stop, edits) in regions.items()
        if any(raw != new for raw, new in edits)
    }
    if not changed:
        return text
    out, i = [], 0
    while i < len(lines):
        if i in changed:
            stop, region = changed[i]
            out.append(region)
            i = stop
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)
