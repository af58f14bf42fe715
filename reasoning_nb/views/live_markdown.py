"""Model text as inert markdown for a trusted front end: what the live view puts in an ``Output``.

The front end renders the markdown (typeset math, themed code, styled tables), but an ``Output``
widget's ``text/markdown`` renders as *trusted*: raw HTML in it runs (``<img onerror>`` and
``<script>`` did, in a browser test). So :func:`live_markdown` makes model text into markdown
that cannot make HTML, load anything, or link anywhere but :data:`SAFE_LINK`, in any renderer:

* outside code and math every ``<`` becomes ``&lt;``: no raw HTML, no autolink;
* a link to anything but http, https, mailto or ``#`` stays text (its ``]`` becomes an entity);
  an image becomes a link, ``[image: alt](src)``, so nothing loads by itself;
* code stays as it is, but renderers may disagree on where code ends (a fence in a list item,
  a backtick in a link title in marked): an inline code span or a fence in a list or quote that
  would be unsafe read as text is sent as HTML, every character an entity. A top-level fence,
  where all renderers agree, is left alone;
* math stays TeX. Lab's markdown escapes what it takes for math (``removeMath`` in rendermime's
  ``latex.ts``, ported in :func:`math_spans`); for renderers that find math elsewhere, a ``<``
  before a letter gets a space and ``](``, ``]:``, ``![`` are spaced apart (TeX ignores spaces);
* ``\\(…\\)`` and ``\\[…\\]`` become ``$…$`` and ``$$…$$`` (Lab's markdown drops their
  backslashes): Lab then finds the spans the static view typesets (``math_text``; a test holds
  them equal). Where their rules part, Lab's win: ``$5 and $10`` and ``$ x $`` are math to Lab,
  prose to the static view (Pandoc's rule), and no spelling of a dollar keeps Lab from
  typesetting it; a backtick pair in TeX is code to Lab;
* with ``breaks`` (the reasoning), a line end inside a paragraph is a hard break, as in
  ``render.markdown_html(breaks=True)``.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from markdown_it import MarkdownIt

from .markdown_safety import SAFE_LINK

__all__ = ["live_markdown", "markdown_output", "math_spans", "opens_table", "parser"]

_RISKY = re.compile(r"<[A-Za-z/!?]|!\[|\]\(|^[ \t>]*\[[^\]\n]*\]:", re.M)
"""Code that would make HTML, an image or a link if a renderer read it as text."""
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_BACKTICKS = re.compile(r"`+")
_MAY_HOLD_CODE = re.compile(r"`|~~~|^(?: {4}|\t)", re.M)  # (else no code: spare the parse)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_MATH_SPLIT = re.compile(
    r"(\$\$?|\\(?:begin|end)\{[a-z]*\*?\}|\\[{}$]|[{}]|(?:\n\s*)+|@@\d+@@|\\\\[()\[\]])", re.I
)
"""Lab's ``MATHSPLIT``, as in @jupyterlab/rendermime ``latex.ts``."""
_PARAGRAPH_BREAK = re.compile(r"\n.*\n")
_DELIMITER = re.compile(r"\\+[(\[]")
_CLOSER = {"(": re.compile(r"\\+\)"), "[": re.compile(r"\\+\]")}
_BREAK_DOLLAR = re.compile(r"(?<!\\)((?:\\\\)+)(?=\$)")  # an even run of backslashes, a dollar
_DEST_JUNK = re.compile(r"[\x00-\x20\x7f]+")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def markdown_output(markdown: str) -> tuple[dict, ...]:
    """An ``Output`` widget's ``outputs``: one markdown display, or none for no text."""
    if not markdown:
        return ()
    return ({"output_type": "display_data", "data": {"text/markdown": markdown}, "metadata": {}},)


def live_markdown(text: str, *, breaks: bool = False) -> str:
    """``text`` as inert markdown that renders like ``text`` (see the module docstring)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    # 1. code, as a CommonMark parser sees it; the text around it gets its math delimiters
    pieces: list[tuple[str, str]] = []  # ("text" | "code", source after step 1)
    pos = 0
    for start, end, replacement in _code(text):
        if start > pos:
            pieces.append(("text", _delimiters(text[pos:start])))
        pieces.append(("code", replacement))
        pos = end
    if pos < len(text):
        pieces.append(("text", _delimiters(text[pos:])))
    # 2. math, as Lab finds it (code masked as Lab masks it: no dollar in it counts)
    joined = "".join(s if kind == "text" else s.replace("$", "~") for kind, s in pieces)
    math = math_spans(joined)
    # 3. each text piece, split into math and the rest
    out: list[str] = []
    at, m = 0, 0
    for kind, s in pieces:
        end = at + len(s)
        if kind == "code":
            out.append(s)
        else:
            cursor = at
            while cursor < end:
                while m < len(math) and math[m][1] <= cursor:
                    m += 1
                if m < len(math) and math[m][0] <= cursor:
                    stop = min(end, math[m][1])
                    out.append(_math(joined[cursor:stop]))
                else:
                    stop = min(end, math[m][0]) if m < len(math) else end
                    out.append(_text(joined, cursor, stop, breaks))
                cursor = stop
        at = end
    return "".join(out)


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """The structure renderers see in live_markdown's output (it has no raw HTML outside code)."""
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def opens_table(header: str, delimiter: str) -> bool:
    """Do these two lines open a table (a header row, then a delimiter row that fits it)?"""
    return any(t.type == "table_open" for t in parser().parse(f"{header}\n{delimiter}\n"))


def _code(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, replacement)`` of each code block and code span, in order."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def line_at(n: int) -> int:
        return starts[min(n, len(starts) - 1)]

    found: list[tuple[int, int, str]] = []
    inline: list[tuple[int, int]] = []
    for token in parser().parse(text):
        if token.map is None:
            continue
        first, last = token.map
        if token.type in ("fence", "code_block"):
            start, end = line_at(first), min(len(text), line_at(last))
            source = text[start:end]
            if token.level and _RISKY.search(token.content):
                source = _html_block(text[start : line_at(first + 1)], token)
            found.append((start, end, source))
        elif token.type == "inline" and (not inline or inline[-1] != (first, last)):
            inline.append((first, last))
    for first, last in inline:
        found += _spans(text, line_at(first), min(len(text), line_at(last)))
    return sorted(found)


def _html_block(opener: str, token) -> str:
    """Risky code in a list or quote as one line of HTML, every character an entity."""
    if token.type == "fence":
        prefix = opener[: opener.index(token.markup)]
    else:
        prefix = opener[: len(opener) - len(opener.lstrip(" \t>"))]
    lang = re.match(r"[\w+#.-]*", token.info.strip()).group(0)
    cls = f' class="language-{lang}"' if lang else ""
    return f"{prefix}<pre><code{cls}>{_entities(token.content)}</code></pre>\n"


def _spans(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """CommonMark code spans in ``text[start:end]`` (one block's lines); a risky one as HTML."""
    runs = []
    for m in _BACKTICKS.finditer(text, start, end):
        a = m.start() + _escaped(text, m.start())  # an escaped backtick opens nothing
        if a < m.end():
            runs.append((a, m.end()))
    found = []
    k = 0
    while k < len(runs):
        a, b = runs[k]
        j = next((j for j in range(k + 1, len(runs)) if runs[j][1] - runs[j][0] == b - a), None)
        if j is None:
            k += 1
            continue
        close, after = runs[j]
        source = text[a:after]
        if _RISKY.search(source):
            content = text[b:close].replace("\n", " ")
            if content.startswith(" ") and content.endswith(" ") and content.strip():
                content = content[1:-1]
            source = f"<code>{_entities(content)}</code>"
        found.append((a, after, source))
        k = j + 1
    return found


def _entities(code: str) -> str:
    """Every character a markdown or math parser could act on, as an entity."""
    return "".join(c if c.isalnum() or c == " " else f"&#{ord(c)};" for c in code)


def _pairs(text: str) -> list[tuple[int, int]]:
    """The ``\\(…\\)`` and ``\\[…\\]`` pairs that become dollars, in order: from the opener's last
    backslash to the end of the next closer of its kind before a blank line. Linear, closers and
    blank lines found once (an opener with no closer used to search the rest of the text again)."""
    closers = {
        kind: [c.end() for c in pattern.finditer(text) if len(c.group(0)) % 2 == 0]
        for kind, pattern in _CLOSER.items()
    }
    blanks = [b.end() for b in _BLANK_LINE.finditer(text)]
    nxt = {kind: 0 for kind in closers}
    pairs, pos, blank = [], 0, 0
    for m in _DELIMITER.finditer(text):
        if m.start() < pos or len(m.group(0)) % 2:  # (backslashes: one less)
            continue
        kind = m.group(0)[-1]
        ends, k = closers[kind], nxt[kind]
        while k < len(ends) and ends[k] - 2 < m.end():
            k += 1
        nxt[kind] = k
        while blank < len(blanks) and blanks[blank] <= m.end():
            blank += 1
        # (a blank line inside: one that ends before the closer's backslash)
        if k < len(ends) and not (blank < len(blanks) and blanks[blank] <= ends[k] - 2):
            pairs.append((m.end() - 2, ends[k]))
            pos = ends[k]
    return pairs


def _delimiters(text: str) -> str:
    """:func:`_pairs` as dollars; a dollar after a TeX line break (``\\\\$``) gets a space
    before it, or Lab reads the break's second backslash and the dollar as an escaped dollar."""
    out, pos = [], 0
    for start, end in _pairs(text):
        inner = text[start + 2 : end - 2]
        dollars, body = ("$", inner.strip()) if text[start + 1] == "(" else ("$$", inner)
        out.append(f"{text[pos:start]}{dollars}{body}{dollars}")
        pos = end
    out.append(text[pos:])
    return _BREAK_DOLLAR.sub(r"\1 ", "".join(out))


def math_extent(text: str) -> list[tuple[int, int | None]]:
    """Where :func:`live_markdown` shows math in ``text`` (offsets in ``text``), in order, apart;
    a span opened with no closer or blank line after it yet is ``(start, None)``."""
    if "$" not in text and "\\" not in text:
        return []  # (no delimiter: spare the parse of the code)
    chars, pairs = list(text), []
    pos = 0
    code = _code(text) if _MAY_HOLD_CODE.search(text) else []
    for start, end, _ in [*code, (len(text), len(text), "")]:
        piece = text[pos:start]
        for a, b in _pairs(piece):  # as dollars, in place: the offsets stay the text's
            pairs.append((pos + a, pos + b))  # (math or not, one pair: it turns to dollars whole)
            wide = piece[a + 1] == "["
            chars[pos + a : pos + a + 2] = "$$" if wide else "$ "
            chars[pos + b - 2 : pos + b] = "$$" if wide else " $"
        for m in _BREAK_DOLLAR.finditer(piece):  # (the space _delimiters puts before the $)
            chars[pos + m.end() - 1] = " "
        chars[start:end] = text[start:end].replace("$", "~")
        pos = end
    masked = "".join(chars)
    spans = math_spans(masked, open_end=True)
    if not spans or spans[-1][1] is not None:
        for start, end, _ in code:  # (a ``\\(`` in code opens nothing)
            chars[start:end] = re.sub(r"[^\n]", "~", text[start:end])
        masked = "".join(chars) if code else masked
        if (opener := _open_delimiter(masked, spans[-1][1] if spans else 0)) is not None:
            spans.append((opener, None))
    return _merged(spans + pairs)


def _merged(spans: list[tuple[int, int | None]]) -> list[tuple[int, int | None]]:
    """``spans`` in order, those that overlap made one (an end of None: open, the last)."""
    out: list[tuple[int, int | None]] = []
    for a, b in sorted(spans, key=lambda span: span[0]):
        if out and (out[-1][1] is None or a < out[-1][1]):
            end = out[-1][1]
            out[-1] = (out[-1][0], None if end is None or b is None else max(end, b))
        else:
            out.append((a, b))
    return out


def _open_delimiter(text: str, start: int) -> int | None:
    """The first ``\\(`` or ``\\[`` after ``start`` with no blank line after it, if any."""
    last_blank = max((b.end() for b in _BLANK_LINE.finditer(text, start)), default=start)
    for m in _DELIMITER.finditer(text, last_blank):
        if len(m.group(0)) % 2 == 0:
            return m.end() - 2
    return None


def math_spans(text: str, *, open_end: bool = False) -> list[tuple[int, int | None]]:
    """Where Lab's markdown finds math in ``text``, in order (a port of ``removeMath``, see
    ``_MATH_SPLIT``). ``open_end``: a span still open at the end is ``(start, None)``."""
    parts = _MATH_SPLIT.split(text)
    offsets, at = [], 0
    for part in parts:
        offsets.append(at)
        at += len(part)
    spans: list[tuple[int, int]] = []
    start = end = last = None
    braces = 0
    i = 1
    while i < len(parts):
        block = parts[i]
        if block.startswith("@"):
            pass
        elif start is not None:
            if block == end:
                if braces:
                    last = i
                else:
                    spans.append((offsets[start], offsets[i] + len(block)))
                    start = end = last = None
            elif _PARAGRAPH_BREAK.search(block):
                if last is not None:
                    spans.append((offsets[start], offsets[last] + len(parts[last])))
                    i = last
                start = end = last = None
                braces = 0
            elif block == "{":
                braces += 1
            elif block == "}" and braces:
                braces -= 1
        elif block in ("$", "$$"):
            start, end, braces = i, block, 0
        elif block in ("\\\\(", "\\\\["):
            start, end, braces = i, "\\\\)" if block.endswith("(") else "\\\\]", 0
        elif block[1:6] == "begin":
            start, end, braces = i, "\\end" + block[6:], 0
        i += 2
    if start is not None and open_end:
        spans.append((offsets[start], None))
    elif start is not None and last is not None:
        spans.append((offsets[start], offsets[last] + len(parts[last])))
    return spans


def _math(tex: str) -> str:
    """TeX as it is, but for spaces that no renderer can read as a tag or a link."""
    tex = _TAG_START.sub("< ", tex)
    return tex.replace("](", "] (").replace("]:", "] :").replace("![", "! [")


def _text(full: str, start: int, end: int, breaks: bool) -> str:
    """``full[start:end]``, text outside code and math, made inert."""
    s = full[start:end]
    if breaks and "\n" in s:  # a line end between two lines of text is a hard break
        lines = s.split("\n")
        at = start
        for k in range(len(lines) - 1):
            at += len(lines[k])  # the line end's index in ``full``
            line_start = full.rfind("\n", 0, at) + 1
            line_end = full.find("\n", at + 1)
            line_end = len(full) if line_end < 0 else line_end
            if full[line_start:at].strip() and full[at + 1 : line_end].strip():
                lines[k] += "  "
            at += 1
        s = "\n".join(lines)
    return _links(s).replace("<", "&lt;")


def _links(s: str) -> str:
    """Links to anything but :data:`SAFE_LINK` stay text; images become links."""
    if "]" not in s:
        return s
    out = list(s)
    for m in re.finditer(r"\]", s):
        i = m.start()
        if _escaped(s, i) or s[i + 1 : i + 2] not in ("(", ":"):
            continue
        if not _safe(s[i + 2 :]):
            out[i] = "&#93;"
    for m in re.finditer(r"!\[", s):
        i = m.start()
        if _escaped(s, i):
            continue
        close = _matching(s, i + 1)
        if close is not None and s[close + 1 : close + 2] == "(" and out[close] == "]":
            out[i], out[i + 1] = "", "[image: "
        else:
            out[i] = "&#33;"
    return "".join(out)


def _escaped(s: str, i: int) -> bool:
    """Is ``s[i]`` escaped by an odd run of backslashes?"""
    k = i
    while k > 0 and s[k - 1] == "\\":
        k -= 1
    return (i - k) % 2 == 1


def _matching(s: str, i: int) -> int | None:
    """The ``]`` that closes the ``[`` at ``i`` (nested brackets counted), or None."""
    depth = 0
    for k in range(i, len(s)):
        if s[k] in "[]" and not _escaped(s, k):
            depth += 1 if s[k] == "[" else -1
            if depth == 0:
                return k
    return None


def _safe(dest: str) -> bool:
    """Does a link destination (and what follows it) start with a safe scheme, read as a
    browser would (escapes and entities decoded, blanks and controls dropped)?"""
    head = _DEST_JUNK.sub("", html.unescape(_ESCAPED.sub(r"\1", dest[:80]))).lstrip("<")
    return SAFE_LINK.match(head) is not None
