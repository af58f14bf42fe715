"""Frozen widgets in pages: ``box`` holds page boxes of at most ``page_size`` widgets each, then
the live ``tail``. Adding a widget sends one ``children`` update of its page (or of ``box`` when
a page is opened), so the update stays short however many widgets there are."""

from __future__ import annotations

import ipywidgets as W

from .throttle import Meter

ID_BYTES = 45
"""About the bytes one child takes in a ``children`` update (``"IPY_MODEL_<32 hex>", ``)."""


class Pages:
    def __init__(self, box: W.Box, tail: W.Widget, page_size: int, meter: Meter) -> None:
        self.box, self.tail, self.page_size, self.meter = box, tail, page_size, meter
        self._layout = W.Layout()  # shared by every page: a new page opens one comm, not two
        self.pages: list[W.VBox] = []

    def append_bytes(self) -> int:
        """About the state bytes of the update :meth:`append` sends."""
        fill = len(self.pages[-1].children) if self.pages else self.page_size
        ids = fill + 1 if fill < self.page_size else len(self.pages) + 2
        return ID_BYTES * ids + 20

    def append(self, widget: W.Widget) -> int:
        """Show ``widget`` after the others; returns the messages sent (1)."""
        if self.pages and len(self.pages[-1].children) < self.page_size:
            page = self.pages[-1]
            return self.meter.set(page, children=(*page.children, widget))
        self.pages.append(W.VBox([widget], layout=self._layout))
        return self.meter.set(self.box, children=(*self.pages, self.tail))

    def remove(self, widgets: list[W.Widget]) -> int:
        """Take ``widgets`` off (and close them); returns the messages sent."""
        gone, sent, kept_pages = {id(w) for w in widgets}, 0, []
        for page in self.pages:
            kept = tuple(c for c in page.children if id(c) not in gone)
            if kept:
                sent += self.meter.set(page, children=kept)
                kept_pages.append(page)
            else:
                page.close()
        if len(kept_pages) < len(self.pages):
            self.pages = kept_pages
            sent += self.meter.set(self.box, children=(*self.pages, self.tail))
        for widget in widgets:
            widget.close()
        return sent

    def clear(self, also: list[W.Widget]) -> int:
        """Drop every page (closing them and ``also``); returns the messages sent."""
        sent = self.meter.set(self.box, children=(self.tail,))
        for widget in (*self.pages, *also):
            widget.close()
        self.pages = []
        return sent
