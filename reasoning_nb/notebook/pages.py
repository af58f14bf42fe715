"""Frozen widgets in pages: ``box`` holds page boxes of at most ``page_size`` frozen widgets each;
the live ``tail`` is the last child of the last page.

A block freezes in place: the tail widget itself becomes the frozen block (its value set to the
block's HTML first, by the owner) and a fresh tail is appended after it, to the same page or as
the first child of a new one. The front end only ever sees a value change and then an append,
so no text shows twice, even for the few milliseconds between two messages. Each freeze sends
one ``children`` update of one page (or of ``box`` when a page is opened), so the update stays
short however many widgets there are.
"""

from __future__ import annotations

import ipywidgets as W

from .throttle import Meter

ID_BYTES = 45
"""About the bytes one child takes in a ``children`` update (``"IPY_MODEL_<32 hex>", ``)."""


class Pages:
    def __init__(self, tail: W.Widget, page_size: int, meter: Meter) -> None:
        self.tail, self.page_size, self.meter = tail, page_size, meter
        self._layout = W.Layout()  # shared by every page: a new page opens one comm, not two
        self.pages: list[W.VBox] = [W.VBox([tail], layout=self._layout)]
        self.box: W.Box | None = None
        """The outer box, set by the owner once it is built around ``pages``."""

    def append_bytes(self) -> int:
        """About the state bytes of the update :meth:`freeze` sends."""
        fill = len(self.pages[-1].children)  # the frozen widgets once the tail froze
        ids = fill + 1 if fill < self.page_size else len(self.pages) + 1
        return ID_BYTES * ids + 20

    def freeze(self, tail: W.Widget) -> int:
        """The tail froze (its value already shows the frozen block): show ``tail``, the fresh
        tail, after it; returns the messages sent (1)."""
        self.tail, page = tail, self.pages[-1]
        if len(page.children) < self.page_size:
            return self.meter.set(page, children=(*page.children, tail))
        self.pages.append(W.VBox([tail], layout=self._layout))
        return self.meter.set(self.box, children=tuple(self.pages))

    def remove(self, widgets: list[W.Widget]) -> int:
        """Take frozen ``widgets`` off (and close them); returns the messages sent.

        Each page that loses widgets is updated, and ``box`` once if pages go. When the tail's
        page would keep the tail alone, the tail moves to the last page that keeps frozen
        widgets instead (in that page's update): one message less than updating both.
        """
        gone = {id(w) for w in widgets}
        kept = {id(p): tuple(c for c in p.children if id(c) not in gone) for p in self.pages}
        last = self.pages[-1]
        hosts = [p for p in self.pages[:-1] if kept[id(p)]]
        if kept[id(last)] == (self.tail,) and hosts and len(kept[id(hosts[-1])]) < self.page_size:
            kept[id(hosts[-1])] += (self.tail,)
            kept[id(last)] = ()
        sent, kept_pages = 0, []
        for page in self.pages:
            if kept[id(page)]:
                sent += self.meter.set(page, children=kept[id(page)])
                kept_pages.append(page)
            else:
                page.close()
        if len(kept_pages) < len(self.pages):
            self.pages = kept_pages
            sent += self.meter.set(self.box, children=tuple(self.pages))
        for widget in widgets:
            widget.close()
        return sent

    def clear(self, also: list[W.Widget]) -> int:
        """Drop every frozen widget (closing them, their pages and ``also``): the tail alone on
        a fresh page; returns the messages sent."""
        old, sent = self.pages, 0
        if old[-1].children != (self.tail,) or len(old) > 1:
            self.pages = [W.VBox([self.tail], layout=self._layout)]
            sent = self.meter.set(self.box, children=tuple(self.pages))
        else:
            old = []
        for widget in (*old, *also):
            widget.close()
        return sent
