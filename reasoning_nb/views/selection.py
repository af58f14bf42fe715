"""A selection in the live view, mapped back to the markdown source it shows (for Pin).

The page sees only rendered HTML: pinning its text would lose the math and the formatting. So
the page says *where* the selection lies (``static/pin.js``): in which pane, from which top-level
rendered block of which ``Output`` to which. The kernel holds the model text each ``Output`` shows
and parses what it shows (``live_markdown``) with math blanked first, as Lab lifts math out
before its markdown parser runs: block k of the parse is child k on the page, and its lines are
the model text's (``live_markdown`` keeps every line in place, or the mapping is given up).

Honest fallbacks: an ``Output`` whose block count differs from the page's is pinned whole; a
selection whose places fit no ``Output``, or that the page could not place (a front end that
draws markdown otherwise), is pinned as the text the page showed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import render
from .live_markdown import live_markdown, math_spans, parser

__all__ = ["PANES", "Block", "Selection", "lab_math", "pinned", "selected_source", "source_blocks"]

PANES = ("reasoning", "answer")

_CODE = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}(?P=fence)[`~]*[ \t]*$|\Z)"
    r"|(?P<ticks>`+).+?(?<!`)(?P=ticks)(?!`)",
    re.M | re.S,
)
"""Code fences and spans, roughly as Lab finds them before it looks for math."""
_TEX_COMMENT = re.compile(r"(?<!\\)%")


@dataclass(frozen=True)
class Block:
    """One top-level block of a source: ``source[start:end]``; a code block's fence."""

    start: int
    end: int
    fence: str = ""  # for code: the fence that opens (with ``info``) and closes a part of it
    info: str = ""


@dataclass(frozen=True)
class Selection:
    """Where a selection lies in one pane, as the page reports it."""

    pane: str  # ``reasoning`` or ``answer``
    text: str  # the selected text as the page shows it
    # (``Output`` in the pane, top-level block in it); None: a front end that draws otherwise
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None
    counts: tuple[int, ...] = ()  # the top-level rendered blocks of each Output from start to end
    static: bool = False  # in the static twin (the kernel's HTML of the whole text: one Output)

    @classmethod
    def read(cls, data: Any) -> Selection | None:
        """A selection from the page's message, or None if it is not one."""
        if not isinstance(data, dict) or data.get("pane") not in PANES:
            return None
        text = data.get("text")
        if not isinstance(text, str):
            return None
        if "from" not in data:
            return cls(data["pane"], text)
        start, end, counts = (data.get(k) for k in ("from", "to", "counts"))
        if not (_place(start) and _place(end) and isinstance(counts, list)):
            return None
        if not all(_count(n) for n in counts):
            return None
        static = data.get("static") is True
        return cls(data["pane"], text, tuple(start), tuple(end), tuple(counts), static)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _place(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_count(v) for v in value)


def selected_source(sources: Sequence[str], selection: Selection, *, breaks: bool) -> str:
    """The markdown source of the blocks ``selection`` meets in ``sources`` (each ``Output``'s);
    within one block, just the selected text if the source holds it verbatim."""
    start, end = selection.start, selection.end
    if start is None or end is None or not start <= end < (len(sources), 0):
        return selection.text.strip()  # (not placed, or in no Output the kernel knows)
    (first, a), (last, b) = start, end
    if len(selection.counts) != last - first + 1:
        return selection.text.strip()
    pieces = []
    for o in range(first, last + 1):
        source = sources[o]
        blocks = source_blocks(source, breaks=breaks, static=selection.static)
        if blocks is None or len(blocks) != selection.counts[o - first]:
            pieces.append(source.strip("\n"))  # the page drew it otherwise: all of it
            continue
        picked = blocks[a if o == first else 0 : b + 1 if o == last else len(blocks)]
        if len(picked) == 1 and first == last:
            return _within(source, picked[0], selection.text.strip())
        if picked:
            pieces.append(source[picked[0].start : picked[-1].end])
    return "\n\n".join(pieces)


def _within(source: str, block: Block, text: str) -> str:
    """The selected ``text`` of one ``block`` if its source holds it verbatim, else the block."""
    whole = source[block.start : block.end]
    if not text or text not in whole:
        return whole
    if not block.fence:
        return text
    return f"{block.fence}{block.info}\n{text}\n{block.fence}"


def source_blocks(source: str, *, breaks: bool = False, static: bool = False) -> list[Block] | None:
    """The top-level blocks the front end draws from ``source`` (or, ``static``, the kernel's
    ``render.markdown_html``), in order; None when they cannot be placed in ``source``."""
    if static:
        tokens = render.markdown_tokens(source, breaks=breaks)
    else:
        shown = live_markdown(source, breaks=breaks)
        if shown.count("\n") != source.count("\n"):  # (code as one line of HTML: lines moved)
            return None
        blanked = list(shown)  # math as x but its line ends: one word to Lab's markdown parser
        for a, b in lab_math(shown):
            for i in range(a, b):
                if blanked[i] != "\n":
                    blanked[i] = "x"
        tokens = parser().parse("".join(blanked))
    starts = [0]
    for line in source.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    blocks = []
    for token in tokens:
        if token.level or token.nesting < 0 or token.map is None:
            continue
        first, last = token.map
        start, end = starts[first], min(starts[last] - 1, len(source))  # (the last line's end)
        while end > start and source[end - 1] == "\n":  # (a list's map takes the blank after it)
            end -= 1
        fence, info = "", ""
        if token.type == "fence":
            fence, info = token.markup, token.info
        elif token.type == "code_block":
            fence = "`" * max(3, 1 + max(map(len, re.findall("`+", token.content)), default=0))
        blocks.append(Block(start, end, fence, info))
    return blocks


def lab_math(markdown: str) -> list[tuple[int, int]]:
    """The math spans Lab lifts out of ``markdown`` before its markdown parser runs."""
    return math_spans(_CODE.sub(lambda m: m.group(0).replace("$", "~"), markdown))


def pinned(text: str, *, breaks: bool) -> str:
    """Selected ``text`` as a pinned cell quotes it: ``render.safe_markdown``, each math span on
    one line (TeX reads a line end as a space): quoted, its lines would take the quote's ``> ``
    into the TeX, as Lab lifts math out before it reads the quote. A span with a ``%`` comment
    keeps its lines. An export's ``strip`` looks for reasoning blocks in this form."""
    markdown = render.safe_markdown(text, breaks=breaks, allow_fences=False)
    out, at = [], 0
    for start, end in lab_math(markdown):
        tex = markdown[start:end]
        out += [markdown[at:start], tex if _TEX_COMMENT.search(tex) else " ".join(tex.split("\n"))]
        at = end
    return "".join(out) + markdown[at:]
