"""A growing markdown text shown live as ``Output`` widgets: frozen blocks, then one live tail.

Each ``Output`` holds one display of inert markdown (``views.live_markdown``), so the front end
renders it (math, code, tables). Only the tail changes. A finished block (``markdown_blocks``)
freezes in place and a fresh tail is appended after it (:mod:`.pages`): nothing is ever copied
into another widget while it shows, so the page re-renders nothing and never shows a block twice.

So that a freeze never takes back text the tail showed, the tail stops where a cut may come:
after a blank line that may end a list, before a word not whole yet (unless the text paused:
``settle``), before a table row not whole. A tail past ``tail_limit`` with no block end is cut
by force (``markdown_blocks.may_cut``); the next piece carries ``CONT_CLASS``, so the stylesheet
runs the two on as one. ``flush(join=True)`` later swaps one ``Output`` in for the pieces of an
ended block, and ``finalize`` one for the whole text: a saved notebook keeps one per text.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as W

from ..views.live_markdown import live_markdown, markdown_output
from ..views.markdown_blocks import TAIL_LIMIT, Cut, Scanner, closing, cut_at, find_cut, table_hold
from .pacing import UpdateMeter
from .pages import ID_BYTES, Pages
from .style import CONT_CLASS

__all__ = ["OUTPUT_BYTES", "LiveText"]

PAGE_SIZE = 4  # frozen blocks per page box (each freeze sends the children of one page)
WORD = 24  # the tail shows a word (up to this long) once the space after it arrived
OUTPUT_BYTES = 95  # the bytes of an ``outputs`` update around its markdown


@dataclass(eq=False)
class _Block:
    src: str  # its part of the text
    out: W.Output
    reopen: str | None  # what is open at its start: a code fence or a table (a forced cut)
    forced: bool  # cut by force: the next block goes on with it


class LiveText:
    """One growing markdown text: ``append`` deltas, ``flush`` when the owner's pacing allows,
    ``finalize`` with the whole text at the end."""

    def __init__(
        self,
        *,
        breaks: bool = False,
        meter: UpdateMeter | None = None,
        classes: tuple[str, ...] = (),
        layout: W.Layout | None = None,
        tail_limit: int = TAIL_LIMIT,
        page_size: int = PAGE_SIZE,
    ) -> None:
        self.breaks, self.tail_limit = breaks, tail_limit
        self.meter = meter = meter or UpdateMeter()
        self._layout = layout or W.Layout()  # one for every widget: a block opens one comm
        self.tail = W.Output(layout=self._layout)
        self._pages = Pages(self.tail, page_size, meter, self._layout)
        self.box = W.VBox(self._pages.pages, layout=self._layout, _dom_classes=classes)
        self._pages.box = self.box
        self._blocks: list[_Block] = []
        self._ended: list[list[_Block]] = []  # blocks cut by force, ended: to be joined
        self._open = ""  # the text not frozen yet, taken from ``_pending``
        self._reopen: str | None = None  # what is open at the start of ``_open``
        self._shown = 0  # how much of ``_open`` the tail shows
        self._pending: list[str] = []
        self._chars = 0
        self._scanner = Scanner()  # block ends in ``_open``, found as it grows
        self._settled = False  # the text paused: hold nothing back
        self._reset = False
        self._stale: list[W.Output] = []  # blocks dropped by ``clear``, closed at the next flush
        self._plan_key: tuple | None = None  # _plan's last question and answer
        self._plan_value: tuple[Cut, int] = (Cut(0, None, False), 0)
        self._here: tuple[str | None, str, Cut | None] = (None, "", None)  # see _cut_where_shown

    # -- text ----------------------------------------------------------------------------------

    def append(self, text: str) -> None:
        if not self._chars:
            text = text.lstrip("\n")  # as Trace.finish strips it, so frozen text stays a prefix
        if text:
            self._pending.append(text)
            self._chars += len(text)
            self._settled = False

    def clear(self) -> None:
        """Forget the text; the widgets are emptied at the next ``flush``."""
        self._stale += [b.out for b in self._blocks]
        self._blocks, self._open, self._reopen, self._shown = [], "", None, 0
        self._ended, self._plan_key = [], None
        self._pending, self._chars, self._reset = [], 0, True

    def settle(self) -> None:
        """The text paused (the answer began): the next flush shows all of it."""
        self._settled = True

    @property
    def chars(self) -> int:
        return self._chars

    @property
    def dirty(self) -> bool:
        """Something waits to be sent (text held back for a moment does not)."""
        if self._reset:
            return True
        cut, show = self._plan(self._take())
        return bool(cut.at) or show != self._shown

    @property
    def markdown(self) -> str:
        """What the widgets show: each block's markdown, then the tail's."""
        outs = [b.out for b in self._blocks] + [self.tail]
        return "".join(o.outputs[0]["data"]["text/markdown"] for o in outs if o.outputs)

    @property
    def sources(self) -> list[str]:
        """The text each ``Output`` shows, in order: what Pin maps a selection back to."""
        shown = [(b.src, b.reopen) for b in self._blocks]
        shown.append((self._open[: self._shown], self._reopen))
        open_out = [reopen for _, reopen in shown[1:]] + [None]  # (a cut inside a fence closes it)
        return [
            self._source(src, reopen, out) if src.strip() else ""
            for (src, reopen), out in zip(shown, open_out, strict=True)
        ]

    # -- costs, for the owner's pacing ---------------------------------------------------------

    def max_cost(self) -> int:
        """An upper bound of the ``update`` messages the next ``flush`` sends."""
        if not self.dirty:
            return 0
        cut, _ = self._plan(self._take())
        # the tail shows the block, its page (or the box) takes a fresh tail showing the rest
        return 2 * self._reset + (2 if cut.at else 1)

    def join_cost(self) -> int:
        """About the bytes ``flush(join=True)`` adds: one chain of pieces joined (0: none)."""
        if not self._ended:
            return 0
        return sum(len(b.src) for b in self._ended[0]) + OUTPUT_BYTES + ID_BYTES * PAGE_SIZE

    def byte_cost(self) -> int:
        """About how many state bytes the next ``flush`` sends."""
        if not self.dirty:
            return 0
        text = self._take()
        cut, show = self._plan(text)
        if not cut.at:
            return show + OUTPUT_BYTES
        block = (cut.at + OUTPUT_BYTES) if cut.at != self._shown else 0
        return block + self._pages.append_bytes() + (show - cut.at) + OUTPUT_BYTES

    # -- sending -------------------------------------------------------------------------------

    def flush(self, *, join: bool = False) -> int:
        """Send what changed; returns the messages sent. ``join``: also join the pieces of one
        ended block cut by force."""
        sent = self._empty() if self._reset else 0
        if join and self._ended:
            sent += self._join([(self._ended.pop(0), None)])
        if not self.dirty:
            return sent
        text = self._take()
        cut, show = self._plan(text)
        if cut.at:
            if cut.at != self._shown:  # the tail shows the block (it only grows: see _plan)
                sent += self._show(self.tail, text[: cut.at], self._reopen, cut.reopen)
            sent += self._freeze(text[: cut.at], cut, text[cut.at : show])
            text, show = text[cut.at :], show - cut.at
            self._reopen, self._shown = cut.reopen, show
        self._open = text
        if show != self._shown:
            sent += self._show(self.tail, text[:show], self._reopen)
            self._shown = show
        return sent

    def finalize(self, text: str) -> int:
        """Show all of ``text`` in one ``Output``, swapped in for the blocks (one message)."""
        sent = self._empty() if self._reset else 0
        self._pending.clear()
        self._chars = len(text)
        frozen = "".join(b.src for b in self._blocks)
        if not text.startswith(frozen):  # (folded otherwise than the deltas said: start over)
            self.clear()
            sent += self._empty()
            frozen = ""
        rest = text[len(frozen) :]
        self._open, self._shown, self._settled, self._ended = rest, len(rest), True, []
        if self._blocks:
            return sent + self._join([(self._blocks[:], rest)])
        return sent + self._show(self.tail, rest, self._reopen)

    # -- inside --------------------------------------------------------------------------------

    def _take(self) -> str:
        """The unfrozen text, with what arrived since the last flush."""
        if self._pending:
            self._open += "".join(self._pending)
            self._pending.clear()
        return self._open

    def _plan(self, text: str) -> tuple[Cut, int]:
        """The cut the next flush makes in the unfrozen ``text`` (at 0: none), and how much of
        ``text`` the tail shows after it. A forced cut goes where the tail ends if it can."""
        key = (len(text), self._reopen, self._shown, self.tail_limit, self._settled)
        if key == self._plan_key:
            return self._plan_value
        reopen, shown = self._reopen, self._shown
        cut = find_cut(
            text,
            reopen,
            tail_limit=self.tail_limit,
            keep=shown,
            scanner=self._scanner,
            at_keep=lambda: self._cut_where_shown(text),
        )
        scan = self._scanner(text, reopen)
        hold = table_hold(text, scan)
        if cut.at and cut.at < shown:  # (cannot happen: the tail never passes a cut)
            cut = Cut(0, reopen, False)
        show = len(text)
        if not self._settled:
            if scan.candidate > cut.at:
                show = scan.candidate
            elif not text[-1:].isspace():  # a word shows once whole: a forced cut can go there
                space = max(text.rfind(" ", -WORD), text.rfind("\n", -WORD))
                show = space + 1 if space >= cut.at else show
            # nor the indent of a line not begun: a forced cut may still go before that line
            # (in an indented code block, the only place one may go)
            line = text.rfind("\n", cut.at, show) + 1
            if line > cut.at and not text[line:show].strip(" \t"):
                show = line
        # a table shows only as one (a pause too: a lone header reads as a line of pipes)
        if hold is not None:
            show = min(show, max(hold, shown, cut.at))
        self._plan_key, self._plan_value = key, (cut, show)
        return cut, show

    def _cut_where_shown(self, text: str) -> Cut | None:
        """``cut_at`` where the tail ends, kept until a flush (a cut may wait many deltas)."""
        reopen, shown = self._reopen, self._shown
        if self._here[:2] != (reopen, text[:shown]):
            self._here = (reopen, text[:shown], cut_at(text, reopen, shown))
        return self._here[2]

    @staticmethod
    def _source(src: str, reopen: str | None, open_out: str | None = None) -> str:
        """One Output's text: reopening a fence or table it is inside, closing one left open."""
        if reopen is not None:
            src = f"{reopen}\n{src}"
        if open_out is not None and (close := closing(open_out)):
            src = f"{src}{'' if src.endswith(chr(10)) else chr(10)}{close}\n"
        return src

    def _markdown(self, src: str, reopen: str | None, open_out: str | None = None) -> str:
        if not src.strip():
            return ""
        return live_markdown(self._source(src, reopen, open_out), breaks=self.breaks)

    def _show(self, out: W.Output, src: str, reopen: str | None, open_out: str | None = None):
        return self.meter.set(out, outputs=markdown_output(self._markdown(src, reopen, open_out)))

    def _freeze(self, src: str, cut: Cut, rest: str) -> int:
        """The tail (showing ``src``) becomes a block; a fresh tail showing ``rest`` follows."""
        self._blocks.append(_Block(src, self.tail, self._reopen, cut.forced))
        if not cut.forced and len(self._blocks) > 1 and self._blocks[-2].forced:
            first = len(self._blocks) - 1  # the chain of forced cuts this block ends
            while first and self._blocks[first - 1].forced:
                first -= 1
            self._ended.append(self._blocks[first:])
        markdown = self._markdown(rest, cut.reopen)
        self.tail = W.Output(
            layout=self._layout,
            outputs=markdown_output(markdown),
            _dom_classes=(CONT_CLASS,) if cut.forced else (),
        )
        self.meter.opened(self.tail, markdown)
        self._scanner, self._plan_key = Scanner(), None
        return self._pages.freeze(self.tail)

    def _join(self, chains: list[tuple[list[_Block], str | None]]) -> int:
        """Each chain of blocks cut by force (with ``more``: and the tail) as one new block, all
        in one message."""
        swaps = []
        for chain, more in chains:
            src = "".join(b.src for b in chain) + (more or "")
            reopen = chain[0].reopen
            markdown = self._markdown(src, reopen)
            out = W.Output(layout=self._layout, outputs=markdown_output(markdown))
            self.meter.opened(out, markdown)
            at = next(i for i, b in enumerate(self._blocks) if b is chain[0])
            self._blocks[at : at + len(chain)] = (
                [] if more is not None else [_Block(src, out, reopen, False)]
            )
            swaps.append(([b.out for b in chain] + ([self.tail] if more is not None else []), out))
            if more is not None:  # the joined block is the tail now: the text is over
                self._reopen, self._open, self._shown = reopen, src, len(src)
        sent = self._pages.replace(swaps)
        self.tail = self._pages.tail
        return sent

    def _empty(self) -> int:
        """Drop every frozen block and empty the tail."""
        self._reset = False
        sent = self._pages.clear(self._stale)
        self._stale = []
        return sent + self._show(self.tail, "", None)
