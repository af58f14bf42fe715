"""``strip``'s search, best effort, for reasoning printed where no trace marks it (other outputs,
tracebacks, markdown cells, widget state). Pieces shorter than ``MIN`` are too common to remove
safely; text a program transformed cannot be recognised. The pieces are not compiled into one
pattern (a regex of a 2 MB reasoning took 1.1 GB to build): each is filed under its first ``MIN``
characters, and a text is read once, looking its next ``MIN`` characters up at each position.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

from ..core.diverge import units
from ..views import render
from ..views.live_markdown import live_markdown
from ..views.selection import pinned, source_blocks

REMOVED = "[reasoning removed]"
MIN = 12
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_TAG = re.compile(r"<[^>]*>")


class Redactor:
    """Find the reasoning ``texts`` elsewhere, and put :data:`REMOVED` in their place."""

    def __init__(self, texts: list[str]):
        pieces: set[str] = set()
        for text in texts:
            whole = text.strip()
            for line in {whole, *text.splitlines()}:
                line = line.strip()
                if len(line) >= MIN:
                    pieces |= {line, html.escape(line), html.escape(line, False), repr(line)[1:-1]}
            if len(whole) >= MIN:
                pieces |= {p for p in _rendered(whole) | _pinned(whole) if len(p) >= MIN}
            for start, end in units(text):  # each sentence alone: where two runs part quotes it
                unit = text[start:end].strip()
                if len(unit) >= MIN:
                    pieces |= {unit, html.escape(unit), html.escape(unit, False)}
        self._by_head: dict[str, list[str]] = {}
        for piece in sorted(pieces, key=len, reverse=True):  # the whole before its parts
            self._by_head.setdefault(piece[:MIN], []).append(piece)

    def _spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where pieces are in ``text``, left to right, the longest at each place."""
        by_head, at, last = self._by_head, 0, len(text) - MIN
        while at <= last:
            for piece in by_head.get(text[at : at + MIN], ()):
                if text.startswith(piece, at):
                    yield at, at + len(piece)
                    at += len(piece)
                    break
            else:
                at += 1

    def found(self, text: str) -> bool:
        """Whether ``text`` (colour codes aside, as in a traceback) holds any of it."""
        return next(self._spans(_ANSI.sub("", text)), None) is not None

    def scrub(self, value: Any) -> Any:
        """``value`` (a string, or JSON of them) with each piece found replaced by the marker."""
        if isinstance(value, str):
            out, at = [], 0
            for start, end in self._spans(value):
                out += [value[at:start], REMOVED]
                at = end
            return "".join(out) + value[at:] if out else value
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        if isinstance(value, dict):
            for key in list(value):
                value[key] = self.scrub(value[key])
        return value


def _rendered(text: str) -> set[str]:
    """``text`` as the package writes it: repr-escaped (a trace's ``repr``), as HTML (the
    static output), as quoted markdown (``_think``'s markdown view), and as the live view's
    inert markdown, line by line (each block of it is an Output in the saved widget state)."""
    quoted = render.safe_markdown(text, breaks=True, allow_fences=False)
    inert = live_markdown(text, breaks=True)
    plain = render.markdown_html(text, breaks=True, highlight=False)
    classed = render.markdown_html(text, breaks=True, code_classes=True)  # the static view
    highlighted = (  # (only code is highlighted)
        [
            render.markdown_html(text, breaks=True).strip(),
            classed.strip(),
            render.flat(classed).strip(),  # as a cell saves it
        ]
        if "<pre" in plain
        else []
    )
    return {
        repr(text)[1:-1],
        plain.strip(),
        *highlighted,
        render.flat(plain).strip(),  # as a cell saves it
        quoted,
        render.quote(quoted),
        *(line.strip() for line in inert.splitlines()),
    }


def _pinned(text: str) -> set[str]:
    """The lines Pin's copy of any of ``text``'s blocks holds: in markdown, or in HTML where
    the selection as a whole needs it (a line of tags alone names no reasoning)."""
    lines = set()
    for block in source_blocks(text, breaks=True, static=True) or ():
        source = text[block.start : block.end]
        for form in (pinned(source, breaks=True), render.safe_html(source, breaks=True)):
            lines |= {line.strip() for line in form.split("\n") if len(_TAG.sub("", line)) >= MIN}
    return lines
