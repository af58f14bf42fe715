"""Is this model text safe to put into a markdown file verbatim?

A ``.md`` file is rendered later by a renderer we do not know: one may pass raw HTML through, or
read attribute lists (``{: onmouseover="…"}`` in Python-Markdown's ``attr_list`` and kramdown).
So model text goes in verbatim only when it is inert in *any* renderer (:func:`is_inert`), else
as its safe HTML rendering in one HTML block (:func:`html_block`).
"""

from __future__ import annotations

import html
import re

from ..core.text import one_line

# $: Jupyter reads "$0.02 ... $1" as math; {: an attribute list (see the module doc)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~${])")
_UNSAFE_SCHEME = re.compile(r"(javascript|vbscript|data|file):")
SAFE_LINK = re.compile(r"(?:https?:|mailto:|#)", re.I)
"""The only links model text may make, everywhere: web pages, mail and in-page anchors
(``ms-officecmd:``, ``vscode:`` and the like launch programs)."""
_LINK_DESTINATION = re.compile(r"\](?:\(|:)<?")  # inline link or reference definition
_FENCE_OPEN = re.compile(r"^(`{3,})[^`{]*$")  # ("```{.py onclick=…}" sets attributes: not strict)
# What an attribute list is made of (see _attribute_list): an escape, a brace, a line end, or a
# name that acts (an event handler, a style, a link) where a name in a list may start.
_ATTRIBUTE_PARTS = re.compile(r"\\.|\{:?|[}\n]|(?<![^\s{:])(?:on[a-z]{3}|style|href|src)", re.I)
_PRE = re.compile(r"<pre[\s>].*?</pre>", re.S)


def md_escape(text: str) -> str:
    """One line of literal text for markdown: entities for ``<>&``, backslashes for the rest."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(one_line(text), quote=False))


def html_label(text: str) -> str:
    """One line of literal text inside HTML in a markdown file (a ``<summary>``): entities for
    ``<>&"'`` and ``{`` (kramdown may read markdown there, attribute lists included)."""
    return html.escape(one_line(text)).replace("{", "&#123;")


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


def is_inert(text: str, *, allow_fences: bool) -> bool:
    """True when no markdown renderer can make HTML or an unsafe link out of ``text``.

    Raw HTML, autolinks and entities all need ``<`` or ``&``; images are refused, and so is a
    link (``](`` or a reference definition's ``]:``) to anything but :data:`SAFE_LINK` (browsers
    ignore tabs and newlines inside a scheme, so they are squeezed out first), and an attribute
    list (:func:`_attribute_list`; in code or math, where a ``\\{`` would show, it stays a brace).
    """
    lines = text.split("\n")
    if allow_fences:
        kept = _outside_fences(lines)
        if kept is None:
            return False
        lines = kept
    rest = "\n".join(lines)
    if "<" in rest or "&" in rest or _attribute_list(rest):
        return False
    squeezed = re.sub(r"[\x00-\x20\x7f]+", "", rest).lower()
    if "![" in squeezed or _UNSAFE_SCHEME.search(squeezed):
        return False  # an image loads by itself: rendered by us, it becomes a link
    return all(SAFE_LINK.match(squeezed, hit.end()) for hit in _LINK_DESTINATION.finditer(squeezed))


def _attribute_list(text: str) -> bool:
    """Could kramdown (``{: …}``) or Python-Markdown (``{name=value name}``, no colon needed) read
    attributes that act from ``text``: an unescaped ``{`` with such a name after it, before the
    ``}`` or the line end? TeX's groups (``x^{2}``, ``\\sum_{i=1}``, ``\\text{one}``) hold none.
    One pass: a long line of braces costs no more than its length."""
    opened = False
    for part in _ATTRIBUTE_PARTS.finditer(text):
        token = part.group()
        if token == "{:":
            return True
        if token in ("{", "}", "\n"):
            opened = token == "{"
        elif token[0] != "\\" and opened:
            return True
    return False


def html_block(fragment: str, css_class: str) -> str:
    """Safe HTML as one markdown HTML block: no blank line may end it early, so newlines
    inside ``<pre>`` become ``&#10;`` and empty lines go (HTML does not need them); ``{`` is a
    character reference, as a renderer may read markdown inside it (see :func:`html_label`)."""
    fragment = fragment.strip().replace("{", "&#123;")
    fragment = _PRE.sub(lambda m: m.group(0).replace("\n", "&#10;"), fragment)
    lines = [line for line in fragment.split("\n") if line.strip()]
    return f'<div class="{css_class}">\n' + "\n".join(lines) + "\n</div>"
