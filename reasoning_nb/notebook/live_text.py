"""A growing markdown text shown live without resending it: frozen blocks plus one live tail.

Each widget ``update`` carries the whole value, so ``value += delta`` costs O(n²) bytes over a
stream. Instead, finished blocks (split at blank lines, never inside an open code fence) are
frozen into their own ``HTML`` widget, rendered and sent once; only the short live tail is
re-sent. Frozen widgets sit in pages of ``PAGE_SIZE`` so a ``children`` update stays short too.
A tail that grows past ``TAIL_LIMIT`` without a blank line is cut by force at a line end (a cut
inside a fence closes it in the frozen part and reopens it in the tail) or, in one long line,
after a sentence or at a space. When that block ends, its pieces are joined back into one
widget: one resend of the block, which the owner may put off while its byte budget is short
(``flush(merge=False)``). ``finalize`` joins what is left and checks the pieces against a render
of the whole text, sending the whole text as one block when they differ (a loose list split at
a blank line), so the end result is always exactly ``markdown_html(text)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

import ipywidgets as W
from ipywidgets.widgets.widget_string import HTMLStyle

from ..render import markdown_html
from .throttle import Meter

TAIL_LIMIT = 400
"""Force a cut when the live tail grows past this many characters."""
PAGE_SIZE = 8
"""Frozen blocks per page box; the outer box gains one child per page."""

_SENTENCE_END = re.compile(r"[.!?][\"')\]*_]* ")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")


def _fence_mark(opener: str) -> str:
    stripped = opener.lstrip(" ")
    return stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]


def _opens(line: str) -> str | None:
    """The opener line if ``line`` opens a code fence (CommonMark: no backtick in the info)."""
    m = _FENCE_OPEN.fullmatch(line)
    if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None
    return line


def _closes(line: str, opener: str) -> bool:
    m = _FENCE_CLOSE.fullmatch(line)
    mark = _fence_mark(opener)
    return m is not None and m.group(1)[0] == mark[0] and len(m.group(1)) >= len(mark)


class Cut(NamedTuple):
    at: int
    """``text[:at]`` may be frozen (0: nothing yet)."""
    fence: str | None
    """The opener line of a code fence still open at ``at``."""
    forced: bool
    """Cut inside a block (the tail grew too long), not at a block boundary."""


def find_cut(
    text: str,
    fence: str | None = None,
    *,
    tail_limit: int = TAIL_LIMIT,
) -> Cut:
    """Where the unfrozen ``text`` (starting at a line start) may be frozen.

    ``fence`` is the opener line of a code fence still open at the start of ``text`` (after a
    forced cut), else None.
    """
    natural, pos, prev_blank = 0, 0, True
    open_fence = fence
    last_end, fence_at_last_end = 0, fence
    while (nl := text.find("\n", pos)) >= 0:
        line, end = text[pos:nl], nl + 1
        if open_fence is not None:
            if _closes(line, open_fence):
                open_fence, natural, prev_blank = None, end, True  # a closed fence ends a block
        elif (opener := _opens(line)) is not None:
            open_fence, prev_blank = opener, False
        elif line.strip():
            prev_blank = False
        else:
            if not prev_blank:
                natural = end
            prev_blank = True
        last_end, fence_at_last_end = end, open_fence
        pos = end
    cut = Cut(natural, None, False) if natural else Cut(0, fence, False)
    if len(text) - cut.at > tail_limit:
        if last_end > cut.at:
            return Cut(last_end, fence_at_last_end, True)
        # One long line: cut after the last sentence in the newer half, else at a space.
        half = (cut.at + len(text)) // 2
        stop = max((m.end() for m in _SENTENCE_END.finditer(text, half, len(text) - 1)), default=0)
        space = stop - 1 if stop else text.rfind(" ", cut.at, len(text) - 1)
        if open_fence is None and space > cut.at:
            return Cut(space + 1, None, True)
    return cut


@dataclass
class _Block:
    src: str
    html: str
    widget: W.HTML
    forced: bool  # ends in a forced cut: the next block continues it


class LiveText:
    """One growing markdown text: ``append`` deltas, ``flush`` when the throttle allows."""

    def __init__(
        self,
        *,
        breaks: bool = False,
        layout: W.Layout | None = None,
        tail_limit: int = TAIL_LIMIT,
        page_size: int = PAGE_SIZE,
        meter: Meter | None = None,
    ) -> None:
        self.breaks, self.tail_limit, self.page_size = breaks, tail_limit, page_size
        self.meter = meter or Meter()
        # One Layout/Style shared by every block: a new block opens one comm, not three.
        self._layout, self._style = W.Layout(), HTMLStyle()
        self._page_layout = W.Layout()
        self.tail = W.HTML(layout=self._layout, style=self._style)
        self.box = W.VBox([self.tail], layout=layout or W.Layout())
        self._pages: list[W.VBox] = []
        self._blocks: list[_Block] = []
        self._open = ""  # unfrozen source already flushed into the tail
        self._fence: str | None = None  # fence open at the start of ``_open``
        self._pending: list[str] = []
        self._pending_chars = 0
        self._pending_newline = False
        self._stale: list[W.HTML] = []  # blocks dropped by ``clear``, closed at the next flush
        self._waiting: list[list[_Block]] = []  # ended chains of forced pieces, not merged yet
        self._chars = 0
        self._forced_run = 0  # how many of the last blocks end in a forced cut
        self._reset = self._settle = False
        self._inflation = 1.3  # update bytes per source char, as the last tail render cost

    # -- text ----------------------------------------------------------------------------------

    def append(self, text: str) -> None:
        if not self._chars:
            text = text.lstrip("\n")  # as Trace.finish strips it, so frozen text stays a prefix
        if text:
            self._pending.append(text)
            self._pending_chars += len(text)
            self._pending_newline = self._pending_newline or "\n" in text
            self._chars += len(text)

    def clear(self) -> None:
        """Forget the text; the widgets are emptied at the next ``flush``."""
        self._stale += [b.widget for b in self._blocks]
        self._blocks, self._open, self._fence, self._pending = [], "", None, []
        self._pending_chars, self._chars, self._forced_run, self._reset = 0, 0, 0, True
        self._settle, self._waiting = False, []

    @property
    def text(self) -> str:
        return "".join(b.src for b in self._blocks) + self._open + "".join(self._pending)

    @property
    def chars(self) -> int:
        return self._chars

    def settle(self) -> None:
        """The text paused (the answer began): at the next merging flush, finish its last block."""
        self._settle = bool(self._forced_run)

    @property
    def dirty(self) -> bool:
        """New text (or a reset) waits to be sent."""
        return bool(self._pending) or self._reset

    def max_cost(self, *, merge: bool = True) -> int:
        """An upper bound of the ``update`` messages the next ``flush(merge=merge)`` sends."""
        chain = self._next_join() if merge else []
        cost = 2 + len(chain) // self.page_size + self._settle if chain else 0
        if self.dirty:
            size = len(self._open) + self._pending_chars
            cost += 1 + self._reset + (self._pending_newline or size > self.tail_limit)
        return cost

    def byte_cost(self) -> int:
        """About how many state bytes the next ``flush(merge=False)`` sends: the live tail."""
        if not self.dirty:
            return 0
        chars = min(
            len(self._open) + self._pending_chars, self.tail_limit
        )  # a cut freezes the rest
        return round(chars * self._inflation) + 40

    def merge_cost(self) -> int:
        """About how many more state bytes ``flush(merge=True)`` sends: one join."""
        if self._waiting:
            return self._join_bytes(self._waiting[0])
        return self._join_bytes(self._next_join(), len(self._open) if self._settle else 0)

    def debt(self) -> int:
        """About how many state bytes all the joins still waiting will take."""
        settle = self._join_bytes(self._chain(), len(self._open)) if self._settle else 0
        return settle + sum(map(self._join_bytes, self._waiting))

    def _next_join(self) -> list[_Block]:
        """The chain of forced pieces that ``flush(merge=True)`` would join."""
        if self._waiting:
            return self._waiting[0]
        return self._chain() if self._settle or (self.dirty and self._pending_newline) else []

    def _join_bytes(self, chain: list[_Block], more: int = 0) -> int:
        chars = sum(len(b.src) for b in chain) + more
        return round(chars * self._inflation) + 50 * len(chain) if chain else 0

    @property
    def html(self) -> str:
        """What the widgets show now: frozen blocks then the tail, concatenated."""
        return "".join(b.widget.value for b in self._blocks) + self.tail.value

    # -- sending -------------------------------------------------------------------------------

    def flush(self, *, merge: bool = True) -> int:
        """Send what changed; returns the number of ``update`` messages sent.

        When a long block cut by force ends, its pieces are joined into one widget: one resend
        of the block. With ``merge=False`` (the byte budget cannot afford that yet) the pieces
        stay apart, each shown as its own paragraph, until later flushes with ``merge`` (one
        join each) or ``finalize``.
        """
        sent = self._empty_widgets() if self._reset else 0
        if merge and self._waiting:  # one join per flush: a chain ending now waits its turn
            chain = self._waiting.pop(0)
            sent += self._merge(chain, "", self._render(self._joined(chain, ""), None, None))
            merge = False
        elif merge and self._settle:
            self._settle = False
            return sent + self.finalize(self.text)
        if not self._pending:
            return sent
        self._open += "".join(self._pending)
        self._pending.clear()
        self._pending_chars, self._pending_newline = 0, False
        cut = find_cut(self._open, self._fence, tail_limit=self.tail_limit)
        if cut.at:
            src, chain = self._open[: cut.at], self._chain()
            if chain and not cut.forced and merge:  # a long block cut by force has ended
                sent += self._merge(chain, src, self._render(self._joined(chain, src), None, None))
                self._forced_run = 0
            else:
                sent += self._freeze(src, self._render(src, self._fence, cut.fence), cut.forced)
                if chain and not cut.forced:
                    self._waiting.append([*chain, self._blocks[-1]])
            self._open, self._fence = self._open[cut.at :], cut.fence
        self._settle = self._settle and bool(self._forced_run)
        tail = self._render(self._open, self._fence, None, live=True)
        return sent + self._set(self.tail, tail, self._open)

    def finalize(self, text: str) -> int:
        """Show exactly ``markdown_html(text)``, resending as little as possible.

        A block still cut by force is joined with the rest; if the pieces do not add up to
        the full render (a loose list split at a blank line...), the whole text goes out once.
        """
        sent = self._empty_widgets() if self._reset else self._merge_waiting()
        self._pending.clear()
        self._pending_chars, self._chars, self._settle = 0, len(text), False
        full = self._render(text, None, None)
        frozen = "".join(b.src for b in self._blocks)
        if text.startswith(frozen):
            rest, chain = text[len(frozen) :], self._chain()
            if chain:
                pieces = [b.html for b in self._blocks[: -len(chain)]]
                joined = self._render(self._joined(chain, rest), None, None)
                pieces, tail = [*pieces, joined], ""
            else:
                pieces, tail = [b.html for b in self._blocks], self._render(rest, None, None)
            if "".join(pieces) + tail == full:
                if chain:
                    sent += self._merge(chain, rest, joined)
                    self._forced_run = 0
                self._open, self._fence = ("" if chain else rest), None
                return sent + self._set(self.tail, tail)
        sent += self._empty_widgets(keep_tail=True)
        self._open, self._fence = text, None
        return sent + self._set(self.tail, full)

    # -- widgets -------------------------------------------------------------------------------

    def _chain(self) -> list[_Block]:
        """The last blocks, if cut by force: one block of the source, not yet ended."""
        n = self._forced_run
        return self._blocks[-n:] if n else []

    @staticmethod
    def _joined(chain: list[_Block], more: str) -> str:
        return "".join(b.src for b in chain) + more

    def _merge(self, chain: list[_Block], more: str, html: str) -> int:
        """Turn a chain of forced pieces (plus ``more`` source) into its first block."""
        first, drop = chain[0], chain[1:]
        first.src, first.html, first.forced = self._joined(chain, more), html, False
        sent = self._set(first.widget, html)
        if drop:
            gone = {id(b.widget) for b in drop}
            for page in self._pages:
                kept = tuple(c for c in page.children if id(c) not in gone)
                sent += self.meter.set(page, children=kept)
            for b in drop:
                b.widget.close()
            self._blocks = [b for b in self._blocks if id(b.widget) not in gone]
        return sent

    def _merge_waiting(self) -> int:
        waiting, self._waiting, sent = self._waiting, [], 0
        for chain in waiting:
            sent += self._merge(chain, "", self._render(self._joined(chain, ""), None, None))
        return sent

    def _render(
        self, src: str, fence_in: str | None, fence_out: str | None, *, live: bool = False
    ) -> str:
        if fence_in is not None:
            src = f"{fence_in}\n{src}"
        if fence_out is not None:
            src = f"{src}{_fence_mark(fence_out)}\n"
        # The live tail is resent often: no highlighting there (its styles are ~6x the code).
        return markdown_html(src, breaks=self.breaks, highlight=not live) if src else ""

    def _set(self, widget: W.HTML, html: str, src: str | None = None) -> int:
        before = self.meter.bytes
        sent = self.meter.set(widget, value=html)
        if sent and src and len(src) >= 40:  # the tail: learn the bytes a source char costs
            self._inflation = max(1.0, (self.meter.bytes - before - 20) / len(src))
        return sent

    def _freeze(self, src: str, html: str, forced: bool) -> int:
        block = _Block(
            src, html, W.HTML(value=html, layout=self._layout, style=self._style), forced
        )
        self._blocks.append(block)
        self._forced_run = self._forced_run + 1 if forced else 0
        if self._pages and len(self._pages[-1].children) < self.page_size:
            page = self._pages[-1]
            return self.meter.set(page, children=(*page.children, block.widget))
        self._pages.append(W.VBox([block.widget], layout=self._page_layout))
        return self.meter.set(self.box, children=(*self._pages, self.tail))

    def _empty_widgets(self, *, keep_tail: bool = False) -> int:
        """Drop every frozen block (and empty the tail unless ``keep_tail``)."""
        self._reset = False
        sent = self.meter.set(self.box, children=(self.tail,))
        for widget in (*self._pages, *self._stale, *(b.widget for b in self._blocks)):
            widget.close()
        self._pages, self._blocks, self._stale, self._forced_run = [], [], [], 0
        self._waiting = []
        if not keep_tail:
            sent += self._set(self.tail, "")
        return sent
