"""Frozen widgets in pages of at most ``page_size``; the live ``tail`` is the last child.

A block freezes in place: the tail itself becomes the block and a fresh tail is appended, so the
page only ever sees the tail grow, then an append (no text shows twice). Each freeze sends the
children of one page, not of all blocks (45 bytes a block each time: ~3x a 20 KB answer).
"""

from __future__ import annotations

import ipywidgets as W

from .pacing import UpdateMeter

ID_BYTES = 45  # about the bytes of one child in a ``children`` update


class Pages:
    def __init__(
        self, tail: W.Widget, page_size: int, meter: UpdateMeter, layout: W.Layout | None = None
    ) -> None:
        self.tail, self.page_size, self.meter = tail, page_size, meter
        self._layout = layout or W.Layout()  # every page's: a new page opens one comm, not two
        self.pages: list[W.VBox] = [W.VBox([tail], layout=self._layout)]
        self.box: W.Box | None = None  # set by the owner once built around ``pages``

    def append_bytes(self) -> int:
        """About the state bytes of the update :meth:`freeze` sends."""
        fill = len(self.pages[-1].children)  # the frozen widgets once the tail froze
        ids = fill + 1 if fill < self.page_size else len(self.pages) + 1
        return ID_BYTES * ids + 20

    def freeze(self, tail: W.Widget) -> int:
        """The tail froze (it shows its block): show the fresh ``tail`` after it."""
        self.tail, page = tail, self.pages[-1]
        if len(page.children) < self.page_size:
            return self.meter.set(page, children=(*page.children, tail))
        self.pages.append(W.VBox([tail], layout=self._layout))
        return self.meter.set(self.box, children=tuple(self.pages))

    def replace(self, swaps: list[tuple[list[W.Widget], W.Widget]]) -> int:
        """For each ``(widgets, new)``: ``new`` in place of ``widgets`` (closed). One message
        whatever the swaps, so the page never shows new and old at once."""
        into = {id(old[0]): new for old, new in swaps}
        gone = {id(w) for old, _ in swaps for w in old}
        touched = [p for p in self.pages if gone & {id(c) for c in p.children}]
        if not touched:
            return 0
        kids = {
            id(p): tuple(
                into.get(id(c), c) for c in p.children if id(c) in into or id(c) not in gone
            )
            for p in touched
        }
        if len(touched) == 1 and kids[id(touched[0])]:
            sent = self.meter.set(touched[0], children=kids[id(touched[0])])
        else:
            fresh = {
                id(p): W.VBox(kids[id(p)], layout=self._layout) for p in touched if kids[id(p)]
            }
            hit = {id(p) for p in touched}
            self.pages = [
                fresh.get(id(p), p) for p in self.pages if id(p) in fresh or id(p) not in hit
            ]
            sent = self.meter.set(self.box, children=tuple(self.pages))
            for page in touched:  # (closing a box leaves its children be: they live on)
                page.close()
        for old, new in swaps:
            if any(w is self.tail for w in old):
                self.tail = new
            for widget in old:
                widget.close()
        return sent

    def clear(self, also: list[W.Widget]) -> int:
        """Close every frozen widget, their pages and ``also``: the tail alone on a fresh page."""
        old, sent = self.pages, 0
        if old[-1].children != (self.tail,) or len(old) > 1:
            self.pages = [W.VBox([self.tail], layout=self._layout)]
            sent = self.meter.set(self.box, children=tuple(self.pages))
        else:
            old = []
        for widget in (*old, *also):
            widget.close()
        return sent
