"""A selection in the live view, mapped back to the markdown source it shows (for Pin).

Only the page knows what the reader selected, and it only sees rendered HTML: pinning that text
would lose the math and the formatting. So the page says *where* the selection lies (see
``static/pin.js``): in which pane, from which top-level rendered block of which ``Output`` to
which, counting ``Output`` widgets in the pane's order and the children of each one's rendered
markdown. The kernel holds the model text each ``Output`` shows (``LiveText.sources``) and
finds its top-level blocks as the front end draws them: it parses what the ``Output`` shows
(``live_markdown``) with each math span blanked first, as Lab lifts math out before its
markdown parser runs. Block k of the parse is then child k on the page, and its lines are those
of the model text (``live_markdown`` keeps every line in place, or the mapping is given up).

Honest fallbacks: an ``Output`` whose block count differs from the page's is pinned whole; a
selection whose places fit no ``Output``, or that the page could not place (a front end that
draws markdown otherwise), is pinned as the text the page showed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

from . import render
from .live_markdown import live_markdown, math_spans

__all__ = [
    "PANES",
    "Block",
    "Selection",
    "lab_math",
    "pinned",
    "selected_source",
    "source_blocks",
]

PANES = ("reasoning", "answer")

_CODE = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}(?P=fence)[`~]*[ \t]*$|\Z)"
    r"|(?P<ticks>`+).+?(?<!`)(?P=ticks)(?!`)",
    re.M | re.S,
)
"""Code fences and code spans, roughly as Lab finds them before it looks for math (a ``$`` in
code opens no math)."""
_TEX_COMMENT = re.compile(r"(?<!\\)%")


@dataclass(frozen=True)
class Block:
    """One top-level block of a source: ``source[start:end]``; a code block's fence."""

    start: int
    end: int
    fence: str = ""
    """For code: the fence that opens (with ``info``) and closes a part of it."""
    info: str = ""


@dataclass(frozen=True)
class Selection:
    """Where a selection lies in one pane, as the page reports it."""

    pane: str
    """``reasoning`` or ``answer``."""
    text: str
    """The selected text as the page shows it."""
    start: tuple[int, int] | None = None
    """(``Output`` index in the pane, index of the top-level rendered block in it); None where
    the page draws markdown in a way it does not know (another front end)."""
    end: tuple[int, int] | None = None
    counts: tuple[int, ...] = ()
    """The top-level rendered blocks of each ``Output`` from ``start``'s to ``end``'s."""
    static: bool = False
    """In the static twin (the kernel's HTML of the whole text: one "Output"), not the widget."""

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
    """The markdown source of the blocks ``selection`` meets, given the source each ``Output``
    of its pane shows; within one block, just the selected text if the source holds it as it
    reads (in its code fence, for code)."""
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
    """The top-level blocks the front end draws from ``source`` (shown by ``live_markdown``),
    or, ``static``, that the kernel's own HTML has (``render.markdown_html``), in order; None
    when they cannot be placed in ``source``."""
    if static:
        tokens = render.markdown_tokens(source, breaks=breaks)
    else:
        shown = live_markdown(source, breaks=breaks)
        if shown.count("\n") != source.count("\n"):  # (code as one line of HTML: lines moved)
            return None
        tokens = _parser().parse(_math_blanked(shown))
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


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # As live_markdown's: its output holds no raw HTML outside code (nested code aside, which
    # stays inside its block).
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def lab_math(markdown: str) -> list[tuple[int, int]]:
    """The math spans Lab lifts out of ``markdown`` before its markdown parser runs (a ``$`` in
    code opens none)."""
    return math_spans(_CODE.sub(lambda m: m.group(0).replace("$", "~"), markdown))


def _math_blanked(markdown: str) -> str:
    """``markdown`` with each math span's characters but line ends replaced by ``x``: what
    Lab's markdown parser sees in its place is one word, not block structure."""
    out = list(markdown)
    for start, end in lab_math(markdown):
        for i in range(start, end):
            if out[i] != "\n":
                out[i] = "x"
    return "".join(out)


def pinned(text: str, *, breaks: bool) -> str:
    """Selected ``text`` as a pinned cell quotes it: safe markdown (``render.safe_markdown``, a
    strict fence or HTML), each math span on one line. An export's ``strip`` looks for each
    block of a reasoning in this form (``export.redaction``)."""
    return _math_on_one_line(render.safe_markdown(text, breaks=breaks, allow_fences=False))


def _math_on_one_line(markdown: str) -> str:
    """Each math span of ``markdown`` on one line (TeX reads a line end as a space): quoted,
    its lines would take the quote's ``> `` into the TeX, since Lab lifts math out before it
    reads the quote. A span with a ``%`` comment (to the line end) keeps its lines."""
    out, at = [], 0
    for start, end in lab_math(markdown):
        tex = markdown[start:end]
        out += [markdown[at:start], tex if _TEX_COMMENT.search(tex) else " ".join(tex.split("\n"))]
        at = end
    return "".join(out) + markdown[at:]
