"""What a model is thinking about now, in a few words, for the live status line.

The subject is the latest heading of the reasoning (OpenAI and Gemini reasoning summaries open
each part with a line like ``**Evaluating the options**``), or else the first sentence of the
current paragraph; cleared of markdown and math marks and shortened on a word boundary.

:class:`Subject` keeps only bounded heads, so a delta costs its own length plus a constant; its
:attr:`Subject.current` never depends on where the deltas split the text.
"""

from __future__ import annotations

import re

LIMIT = 64
"""Characters, before the ellipsis."""
_PARA_CAP = 4 * LIMIT  # enough of a paragraph to find a first sentence worth showing
_LINE_CAP = 200  # a longer line is prose, not a heading (only its tail is kept)

_HEADING = re.compile(r"\*\*([^*\n]+)\*\*:?|__([^_\n]+)__:?|#{1,6}[ \t]+(.+?)[ \t#]*")
# Summary parts glued with no newline between them ("...the options.**Checking**") still open
# with their heading; a bold phrase after a sentence's end, closing its line, is one.
_GLUED_HEADING = re.compile(r"[.!?…:][ \t]*\*\*([^*\n]+)\*\*:?\s*\Z")
_BLOCK_MARKS = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+|\d{1,3}[.)]\s+)+")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_NOISE = re.compile(r"\*+|_{2,}|~~|`+|\$+|\\[()\[\]]")
_SENTENCE_END = re.compile(r"[.!?…][\"”’')\]]*(?=\s)")
_NOT_AN_END = ("e.g.", "i.e.", "vs.", "etc.", "approx.", "cf.", "Dr.", "Mr.", "Mrs.", "Ms.")


class Subject:
    """Feed reasoning deltas; :attr:`current` names what the latest of it is about."""

    def __init__(self) -> None:
        self._heading = ""  # the latest heading line's text, cleaned
        self._line = ""  # the tail of the current line (up to _LINE_CAP chars)
        self._line_len = 0
        self._line_blank = True
        self._para = ""  # the head of the current paragraph, newlines as spaces
        self._prev = ""  # the head of the paragraph before it
        self._between = True  # after a blank line or a heading, before the next paragraph

    def feed(self, text: str) -> None:
        for i, piece in enumerate(text.split("\n")):
            if i:
                self._end_line()
            self._add(piece)

    def _add(self, piece: str) -> None:
        if not piece:
            return
        self._line = (self._line + piece[-_LINE_CAP:])[-_LINE_CAP:]
        self._line_len += len(piece)
        blank = not piece.strip()
        self._line_blank &= blank
        if self._between:
            if blank:
                return
            self._prev, self._para, self._between = self._para, "", False
            piece = piece.lstrip()
        self._para += piece[: _PARA_CAP - len(self._para)]

    def _end_line(self) -> None:
        heading = not self._line_blank and _heading_of(
            self._line, whole=self._line_len <= _LINE_CAP
        )
        if heading:
            self._heading = heading
        if heading or self._line_blank:
            self._between = True  # a heading is a block of its own, as a blank line ends one
        elif not self._between and len(self._para) < _PARA_CAP:
            self._para += " "
        self._line, self._line_len, self._line_blank = "", 0, True

    @property
    def current(self) -> str:
        """The latest heading, else the first sentence of the current paragraph (or of the one
        before, while the current one has no whole word yet); "" before any."""
        return self._heading or _first_sentence(self._para) or _first_sentence(self._prev)


def subject_of(text: str) -> str:
    """What ``text`` (a reasoning so far) is about now: see :class:`Subject`."""
    subject = Subject()
    subject.feed(text)
    return subject.current


def shorten(text: str, limit: int = LIMIT) -> str:
    """``text`` cut to whole words within ``limit`` characters, with "…" if cut; "" when even
    its first word is longer (half a word says nothing)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    if " " not in head:
        return ""
    return head[: head.rindex(" ")].rstrip(" ,;:–—-") + "…"


def _heading_of(line: str, *, whole: bool) -> str:
    """The heading ``line`` is or ends with (``whole``: it is the whole line, not its tail)."""
    match = (whole and _HEADING.fullmatch(line.strip())) or _GLUED_HEADING.search(line)
    if not match:
        return ""
    return shorten(_plain(next(g for g in match.groups() if g is not None)))


def _plain(text: str) -> str:
    """Markdown and math marks out, whitespace collapsed."""
    text = _BLOCK_MARKS.sub("", text.lstrip())
    text = _NOISE.sub("", _LINK.sub(r"\1", text))
    return " ".join(text.split())


def _first_sentence(para: str) -> str:
    if not para.strip() or (para.startswith("**") and "**" not in para[2:]):
        return ""  # (nothing yet, or maybe a heading still arriving: the heading will say it)
    text = _plain(para)
    for match in _SENTENCE_END.finditer(text + " " if para[-1].isspace() else text):
        if not text[: match.end()].endswith(_NOT_AN_END):
            return shorten(text[: match.end()])
    if not para[-1].isspace() and not para.endswith("**"):  # the last word may go on
        text = text.rsplit(" ", 1)[0] if " " in text else ""
    return shorten(text)
