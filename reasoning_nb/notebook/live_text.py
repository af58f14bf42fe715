"""A growing markdown text shown live without resending it: frozen blocks plus one live tail.

Each widget ``update`` carries the whole value, so ``value += delta`` costs O(n²) bytes over a
stream. Instead, finished blocks (split at blank lines, never inside an open code fence) are
frozen, each in its own ``HTML`` widget (see :mod:`.pages`): the tail widget becomes the block
and a fresh tail takes its place after it, so nothing shows twice; only the short live tail is
re-sent. A tail that grows past ``tail_limit`` without a blank line is cut by
force (see :mod:`.fences`); the owner may lower the limit while text arrives slowly, so each
tail update stays cheap. The forced pieces of a block are sent plain (no highlighting) and shown
apart, each its own widget; once the block ends they are joined back into one widget,
highlighted: one resend of the block, which the owner may put off (``flush(merge=False)``).
Blocks that render differently apart than together (the items of a loose list) are chained and
joined the same way. ``finalize`` joins what is left and checks the pieces against a render of
the whole text, resending from the first piece that differs when they do not add up, so the end
result is always exactly ``markdown_html(text)``. ``debt`` tells the owner about how much the
joins and the final render will send.

The work per delta does not grow with the text, whatever its shape: block ends are looked for
from where the last look stopped (:class:`.fences.Scanner`), a new block is checked against the
first and the last block of the unit before it (not the whole loose list), a chain that a later
block continued is joined once it has ended (not again as each item ends), and the sizes the
owner asks for are running totals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ipywidgets as W
from ipywidgets.widgets.widget_string import HTMLStyle

from ..render import markdown_html
from .fences import TAIL_LIMIT, Cut, Scanner, bare_opener, cut_at, fence_mark, find_cut, has_fence
from .pages import Pages
from .throttle import Meter, state_bytes

__all__ = ["PAGE_SIZE", "TAIL_LIMIT", "LiveText", "find_cut"]

PAGE_SIZE = 8
"""Frozen blocks per page box; the outer box gains one child per page."""
HIGHLIGHT_INFLATION = 7.0
"""About the state bytes per source char of highlighted code (inline styles)."""


@dataclass
class _Block:
    src: str
    html: str
    widget: W.HTML
    forced: bool  # the next block continues it (a forced cut, or they only render together)
    final: int  # about the state bytes this block's source takes in the final render
    head: bool = True  # it begins a block (not a piece after a forced cut)


@dataclass(eq=False)
class _Chain:
    """Blocks shown apart that render as one block, to be joined into its first."""

    blocks: list[_Block] = field(default_factory=list)
    join: int = 0  # about the state bytes the join sends (kept as blocks are added: no sums)
    goes_on: bool = False  # a later block continued it once (a loose list): it may go on again


class LiveText:
    """One growing markdown text: ``append`` deltas, ``flush`` when the throttle allows.

    ``tail_limit`` may change between flushes: the live tail is cut by force past it. ``tight``
    (the owner's byte budget binds) may too: then a cut never resends what the tail shows. The
    text is frozen where the tail ends (a line end or a space, or the end of a block), or the
    tail is first shown up to the cut, the text after it held back for the next flush.
    """

    def __init__(
        self,
        *,
        breaks: bool = False,
        layout: W.Layout | None = None,
        tail_limit: int = TAIL_LIMIT,
        page_size: int = PAGE_SIZE,
        meter: Meter | None = None,
        classes: tuple[str, ...] = (),
    ) -> None:
        self.breaks, self.tail_limit, self.tight = breaks, tail_limit, False
        self.meter = meter = meter or Meter()
        # One Layout/Style shared by every block: a new block opens one comm, not three.
        self._layout, self._style = W.Layout(), HTMLStyle()
        self.tail = W.HTML(layout=self._layout, style=self._style)
        self._pages = Pages(self.tail, page_size, meter)
        self.box = W.VBox(self._pages.pages, layout=layout or W.Layout(), _dom_classes=classes)
        self._pages.box = self.box
        self._blocks: list[_Block] = []
        self._open = ""  # unfrozen source already flushed into the tail
        self._fence: str | None = None  # fence open at the start of ``_open``
        self._pending: list[str] = []
        self._pending_chars = 0
        self._pending_newline = False
        self._pending_code = False  # a fence mark may be in the pending text
        self._stale: list[W.HTML] = []  # blocks dropped by ``clear``, closed at the next flush
        self._waiting: list[_Chain] = []  # ended chains, not joined yet
        self._chars = 0
        self._run = _Chain()  # the last blocks, if the next one continues them
        self._head = True  # the unfrozen text begins a block (the last cut was not forced)
        self._reset = self._settle = False
        self._inflation = 1.1  # update bytes per source char, as the last tail render cost
        self._cost_key: tuple[int, ...] | None = None  # byte_cost's last question and answer
        self._cost = 0
        self._scanner = Scanner()  # block ends in the unfrozen text, found as it grows
        self._free_key: tuple[str, str | None] | None = None  # _plan's cut where the tail ends
        self._free: Cut | None = None

    # -- text ----------------------------------------------------------------------------------

    def append(self, text: str) -> None:
        if not self._chars:
            text = text.lstrip("\n")  # as Trace.finish strips it, so frozen text stays a prefix
        if text:
            self._pending.append(text)
            self._pending_chars += len(text)
            self._pending_newline = self._pending_newline or "\n" in text
            before = self._pending[-2][-2:] if len(self._pending) > 1 else self._open[-2:]
            self._pending_code = self._pending_code or has_fence(before + text)
            self._chars += len(text)

    def clear(self) -> None:
        """Forget the text; the widgets are emptied at the next ``flush``."""
        self._stale += [b.widget for b in self._blocks]
        self._blocks, self._open, self._fence, self._pending = [], "", None, []
        self._pending_chars, self._chars, self._reset = 0, 0, True
        self._run, self._pending_code, self._head = _Chain(), False, True
        self._settle, self._waiting = False, []

    @property
    def text(self) -> str:
        return "".join(b.src for b in self._blocks) + self._open + "".join(self._pending)

    @property
    def chars(self) -> int:
        return self._chars

    def settle(self) -> None:
        """The text paused (the answer began): at the next merging flush, finish its last block."""
        self._settle = bool(self._run.blocks or self._waiting)

    @property
    def dirty(self) -> bool:
        """New text (or a reset) waits to be sent."""
        return bool(self._pending) or self._reset

    @property
    def html(self) -> str:
        """What the widgets show now: frozen blocks then the tail, concatenated."""
        return "".join(b.widget.value for b in self._blocks) + self.tail.value

    # -- costs, for the owner's budget ---------------------------------------------------------

    def max_cost(self, *, merge: bool = True) -> int:
        """An upper bound of the ``update`` messages the next ``flush(merge=merge)`` sends."""
        cost, per_page = 0, self._pages.page_size
        if merge and self._settle:  # every chain joined (the last with the tail)
            cost = sum(3 + len(c.blocks) // per_page for c in [*self._waiting, self._run]) + 1
        elif merge and (self._waiting or (self.dirty and self._pending_newline)):
            chain = self._waiting[0].blocks if self._waiting else self._last_unit()
            n = len(chain) + (0 if self._waiting else len(self._run.blocks))
            cost = 3 + n // per_page  # the value, pages (and the box) it leaves
        if self.dirty:
            size = len(self._open) + self._pending_chars
            cost += 1 + self._reset + (self._pending_newline or size > self.tail_limit)
        return cost

    def byte_cost(self) -> int:
        """About how many state bytes the next ``flush(merge=False)`` sends: the live tail, or
        after a cut the frozen block (if it shows more than the tail did) and a ``children``
        update."""
        if not self.dirty:
            return 0
        size = len(self._open) + self._pending_chars
        if not self._pending_newline and size <= self.tail_limit:
            return round(size * self._inflation) + 40
        key = (self._chars, self.tail_limit, self.tight, len(self._open), len(self._blocks))
        if self._cost_key != key:  # a cut: see ``_plan``
            shown, text = len(self._open), self._open + "".join(self._pending)
            cut, show = self._plan(text, shown)
            if not cut.at:  # the tail shows the text up to ``show`` (all of it, or a cut)
                cost = round(show * self._inflation) + 40
            else:  # the tail widget takes the block's HTML if it shows more than the tail did
                # (a natural block's highlighting is in ``debt`` already), a fresh tail with the
                # rest is opened after it (not an update)
                moved = cut.at < shown or bool(text[shown : cut.at].strip())
                cost = round(cut.at * self._inflation * moved) + 40 + self._pages.append_bytes()
            self._cost_key, self._cost = key, cost
        return self._cost

    def merge_cost(self, *, hold_last: bool = False) -> int:
        """About how many more state bytes ``flush(merge=True, hold_last=...)`` sends: one
        join of an ended chain (0: none to join)."""
        if self._settle:
            return self.debt()
        chain = self._next_join(hold_last)
        return chain.join if chain else 0

    def debt(self) -> int:
        """About how many state bytes the joins and the final render will still send: the
        ended chains, and the last block with the live tail, highlighted."""
        rest = self._estimate(self._open, self._fence, self._pending_chars) + 40
        if self._pending_code:  # hidden reasoning is all pending: assume it is all code
            rest = round((len(self._open) + self._pending_chars) * HIGHLIGHT_INFLATION) + 40
        return self._run.join + rest + sum(c.join for c in self._waiting)

    def _next_join(self, hold_last: bool) -> _Chain | None:
        """The ended chain a merging flush joins: the oldest; not the last block's if the next
        block may still continue it: with ``hold_last``, or once a block did (a loose list...:
        joined each time an item ended, it would be resent whole for every item)."""
        last = self._blocks[-1] if self._blocks else None
        for chain in self._waiting:
            if chain.blocks[-1] is not last or not (hold_last or chain.goes_on):
                return chain
        return None

    def _estimate(self, src: str, fence: str | None, more: int = 0) -> int:
        """About the state bytes of ``src`` (and ``more`` chars) rendered for good."""
        code = fence is not None or has_fence(src)
        return round((len(src) + more) * (HIGHLIGHT_INFLATION if code else self._inflation))

    # -- sending -------------------------------------------------------------------------------

    def flush(self, *, merge: bool = True, hold_last: bool = False) -> int:
        """Send what changed; returns the number of ``update`` messages sent.

        The pieces of a long block cut by force (or of a loose list) stay apart, each shown as
        its own paragraph, until a flush with ``merge`` joins them into one widget once the
        block ended (one join per flush; with ``hold_last`` only once another block began, so
        a join is not undone by the next block), or ``finalize`` does.
        """
        sent = self._empty_widgets() if self._reset else 0
        if merge and self._settle:
            self._settle = False
            return sent + self.finalize(self.text)
        if self._pending:
            sent += self._take()
        if merge and (chain := self._next_join(hold_last)):
            self._waiting.remove(chain)
            sent += self._merge(chain.blocks, "")
        return sent

    def _plan(self, text: str, shown: int) -> tuple[Cut, int]:
        """The cut the next flush makes in the unfrozen ``text`` (the tail shows ``shown``
        chars of it), and how much of the text the tail shows then (the rest is held back for
        the next flush).

        The tail widget becomes the frozen block: a cut past what the tail shows resends the
        block. So while the byte budget binds, the tail is frozen where it ends if a block ends
        there (or a forced cut may go there and no block ends later, or the tail is long
        already), and shows the rest up to the cut; else nothing is frozen and the tail shows
        the text up to the cut, which the next flush then makes for free. (Shown up to the cut
        again and again while blocks keep ending past it, as the items of a loose list do, the
        tail would grow without end.)
        """
        fence, scanner, end = self._fence, self._scanner, len(text)
        cut = find_cut(text, fence, tail_limit=self.tail_limit, keep=shown, scanner=scanner)
        if not self.tight or cut.at <= shown or not text[shown : cut.at].strip():
            return cut, end  # (only blank space past the tail: the block shows the same)
        if self._free_key != (key := (text[:shown], fence)):  # (the same until the tail moves)
            self._free_key, self._free = key, cut_at(text, fence, shown)
        free = self._free
        if free is not None and not free.forced:
            return free, cut.at
        natural = find_cut(text, fence, tail_limit=end, scanner=scanner).at
        if free is not None and natural <= shown:
            return free, end
        if free is not None and shown > self.tail_limit:  # (a tail held back before)
            return free, cut.at
        return Cut(0, fence, False), cut.at

    def _take(self) -> int:
        """Move the pending text into the tail, freezing what is finished; returns messages."""
        shown = len(self._open)  # what the tail shows already
        text = self._open + "".join(self._pending)
        self._pending.clear()
        self._pending_chars, self._pending_newline, self._pending_code = 0, False, False
        cut, show = self._plan(text, shown)
        self._open = text[:show]
        if show < len(text):  # held back for the next flush, which freezes the tail at ``show``
            rest = text[show:]
            self._pending = [rest]
            self._pending_chars, self._pending_newline = len(rest), "\n" in rest
            self._pending_code = has_fence(text[max(0, show - 2) :])
        if not cut.at:
            tail = self._render(self._open, self._fence, None, highlight=False)
            return self._set(self.tail, tail, self._open)
        src, chained, html = self._open[: cut.at], bool(self._run.blocks), None
        if not (chained or cut.forced):
            html = self._render(src, self._fence, None)
            if not self._composes(src, html):  # the last block goes on (a loose list...)
                self._reopen()
                chained, html = True, None
        elif (
            not chained
            and self._fence is None
            and cut.fence is None
            and not self._composes(src, self._render(src, None, None))
        ):  # the first piece of a long block goes on the last unit (a long list item...)
            self._reopen()
            chained = True
        defer = False  # code highlighted: while the budget binds, a paced join does that
        if html is not None and self.tight and (self._fence is not None or has_fence(src)):
            defer = html != self._render(src, self._fence, None, highlight=False)
            html = None if defer else html
        rest = self._open[cut.at :]
        tail = self._render(rest, cut.fence, None, highlight=False)
        sent = self._freeze(src, cut, plain=chained or defer, html=html, tail=tail)
        if not cut.forced:  # a block ended
            if chained or defer:  # ...that was cut (or chained): its pieces wait for a join
                self._waiting.append(self._run)
            self._run = _Chain()
        self._open, self._fence = rest, cut.fence
        return sent

    def finalize(self, text: str) -> int:
        """Show exactly ``markdown_html(text)``, resending as little as possible.

        The chains still apart are joined (the last one with the rest of the text, also one
        that ended but may go on: the rest of a loose list); if the blocks then do not add up to
        the full render (a link defined further down...), the text goes out again as one block
        from the first block that differs.
        """
        sent = self._empty_widgets() if self._reset else 0
        if not self._run.blocks and (last := self._last_chain()) and last.goes_on:
            self._waiting.remove(last)
            self._run = last
        sent += sum(self._merge(chain.blocks, "") for chain in self._waiting)
        self._waiting, self._settle = [], False
        self._pending.clear()
        self._pending_chars, self._chars, self._pending_code = 0, len(text), False
        full = self._render(text, None, None)
        frozen = "".join(b.src for b in self._blocks)
        rest, chain = text[len(frozen) :], self._run.blocks
        if text.startswith(frozen) and chain:
            joined = self._render(self._joined(chain, rest), None, None)
            if "".join(b.html for b in self._blocks[: -len(chain)]) + joined == full:
                sent += self._merge(chain, rest, joined)
                self._open, self._fence = "", None
                return sent + self._set(self.tail, "")
        elif text.startswith(frozen):
            tail = self._render(rest, None, None)
            if "".join(b.html for b in self._blocks) + tail == full:
                self._open, self._fence = rest, None
                return sent + self._set(self.tail, tail)
        keep, at, shown = self._matching(text, full)
        self._run = _Chain()
        sent += self._pages.remove([b.widget for b in self._blocks[keep:]])
        del self._blocks[keep:]
        self._open, self._fence = text[at:], None
        return sent + self._set(self.tail, full[len(shown) :])

    def _matching(self, text: str, full: str) -> tuple[int, int, str]:
        """How many blocks to keep when the rest of ``text`` is sent as one block: the most
        (trying a few) whose sources and render start ``text`` and ``full``, and after which the
        rest renders as the rest of ``full``. Also the source length and the HTML they hold."""
        starts, at, shown = [(0, 0, "")], 0, ""
        for i, block in enumerate(self._blocks[: len(self._blocks) - len(self._run.blocks)]):
            at, shown = at + len(block.src), shown + block.html
            if not (text.startswith(block.src, at - len(block.src)) and full.startswith(shown)):
                break
            starts.append((i + 1, at, shown))
        for keep, at, shown in starts[:-5:-1]:
            if self._render(text[at:], None, None) == full[len(shown) :]:
                return keep, at, shown
        return 0, 0, ""

    # -- widgets -------------------------------------------------------------------------------

    def _last_chain(self) -> _Chain | None:
        """The ended chain the last block ends, if it has not been joined yet."""
        last = self._blocks[-1] if self._blocks else None
        return next((c for c in reversed(self._waiting) if c.blocks[-1] is last), None)

    def _last_unit(self) -> list[_Block]:
        """The blocks that end with the last one and will show as one: an ended chain, or it."""
        if not self._blocks:
            return []
        chain = self._last_chain()
        return chain.blocks if chain else self._blocks[-1:]

    def _composes(self, src: str, html: str) -> bool:
        """Does the new block ``src`` (``html`` alone) render the same after the last unit?

        The unit stands in as its first block (which opens the list, the quote...) and its last
        (where it stands now), each with all its pieces: rendering the whole unit for each block
        that follows it would cost O(n²) over a loose list of n items.
        """
        unit = self._last_unit()
        if not unit:
            return True
        first = 1  # the pieces of the first block, then those of the last
        while first < len(unit) and not unit[first].head:
            first += 1
        last = len(unit) - 1
        while last > first and not unit[last].head:
            last -= 1
        before = self._joined(unit[:first], "") + self._joined(unit[max(first, last) :], "")
        return self._render(before + src, None, None) == self._render(before, None, None) + html

    def _reopen(self) -> None:
        """The last unit goes on: it becomes the run the next block joins."""
        chain = self._last_chain()
        if chain is not None:
            self._waiting.remove(chain)
        else:
            last = self._blocks[-1]
            chain = _Chain([last], last.final + 50)
        chain.goes_on = True
        chain.blocks[-1].forced = True  # (the blocks before it in a chain are already)
        self._run = chain

    @staticmethod
    def _joined(chain: list[_Block], more: str) -> str:
        return "".join(b.src for b in chain) + more

    def _merge(self, chain: list[_Block], more: str, html: str | None = None) -> int:
        """Turn a chain (plus ``more`` source) into its first block."""
        src = self._joined(chain, more)
        html = self._render(src, None, None) if html is None else html
        first, drop = chain[0], chain[1:]
        first.src, first.html, first.forced = src, html, False
        first.final = state_bytes({"value": html})
        if chain[-1] is self._blocks[-1]:
            self._run = _Chain()
        sent = self._set(first.widget, html)
        if drop:
            gone = {id(b) for b in drop}
            self._blocks = [b for b in self._blocks if id(b) not in gone]
            sent += self._pages.remove([b.widget for b in drop])
        return sent

    def _render(
        self, src: str, fence_in: str | None, fence_out: str | None, *, highlight: bool = True
    ) -> str:
        if fence_in is not None:  # plain: no info string, no ``class`` (it only styles code)
            src = f"{fence_in if highlight else bare_opener(fence_in)}\n{src}"
        if fence_out is not None:
            src = f"{src}{fence_mark(fence_out)}\n"
        # Text that is resent (the live tail) or joined later (chained pieces) goes out plain:
        # highlighting styles cost ~6x the code.
        return markdown_html(src, breaks=self.breaks, highlight=highlight) if src else ""

    def _set(self, widget: W.HTML, html: str, src: str | None = None) -> int:
        before = self.meter.bytes
        sent = self.meter.set(widget, value=html)
        if sent and src and len(src) >= 40:  # the tail: learn the bytes a source char costs
            self._inflation = max(1.0, (self.meter.bytes - before - 20) / len(src))
        return sent

    def _freeze(
        self, src: str, cut: Cut, *, plain: bool, tail: str, html: str | None = None
    ) -> int:
        """Freeze ``src`` (up to ``cut``) into a block, plain if it will be joined later: the tail
        widget shows it, then a fresh tail showing ``tail`` goes after it (in that order: the
        front end never shows a piece of text twice)."""
        plain = plain or cut.forced
        if html is None:
            html = self._render(src, self._fence, cut.fence, highlight=not plain)
        final = html
        if plain and (self._fence is not None or cut.fence is not None or has_fence(src)):
            final = self._render(src, self._fence, cut.fence)  # to learn what a join costs
        widget = self.tail
        sent = self._set(widget, html)
        self.tail = W.HTML(value=tail, layout=self._layout, style=self._style)
        block = _Block(src, html, widget, cut.forced, state_bytes({"value": final}), self._head)
        self._head = not cut.forced
        self._blocks.append(block)
        self._run.blocks.append(block)  # (the owner ends the run if the block ended)
        self._run.join += block.final + 50
        return sent + self._pages.freeze(self.tail)

    def _empty_widgets(self) -> int:
        """Drop every frozen block and empty the tail."""
        self._reset = False
        sent = self._pages.clear([*self._stale, *(b.widget for b in self._blocks)])
        self._blocks, self._stale, self._waiting, self._run = [], [], [], _Chain()
        self._head = True
        return sent + self._set(self.tail, "")
