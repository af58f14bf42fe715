"""A sweep's live progress in Jupyter: the widget kit's bar, the figures beside it, and Stop.

The engine calls ``update`` after every change (a token counted is one); that only keeps the
newest :class:`~reasoning_nb.sweep.progress.Progress`. ``tick`` (the runner's clock, as for a
single run's view) sends it when the :class:`~.pacing.Pacer` allows, so a 10,000-run sweep
costs the page a few updates a second, whatever the engine's pace. ``finish`` sends the last
state at once; the runner then puts the static result in the view's place.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from typing import Any

from ..sweep.bar import figures
from ..views.theme import lab
from .pacing import Pacer

MAX_RATE = 6.0
"""Messages a second at most: a bar and a line of figures need no more (each update is two)."""
UPDATE_COST = 2  # the bar's value and the figures, one message each
SWEEP_CLASS = "reasoning-nb-sweep-live"


def figures_html(progress: Any) -> str:
    """The figures as one quiet line; the failed count stands out. Every part is escaped."""
    parts = []
    for name, text in figures(progress):
        text = html.escape(text)
        parts.append(f"<b>{text}</b>" if name in ("done", "failed", "stopped") else text)
    style = f"color:{lab('ui-font-color2')};font-size:{lab('ui-font-size1')};line-height:28px"
    return f'<span style="{style}">{" · ".join(parts)}</span>'


class SweepWidget:
    """The live view of a sweep: ``update`` keeps, ``tick`` sends, ``finish`` ends it."""

    def __init__(
        self,
        *,
        on_stop: Callable[[], object] | None = None,
        max_rate: float = MAX_RATE,
        clock: Callable[[], float] = time.monotonic,
    ):
        import ipywidgets as W

        self.clock, self.on_stop = clock, on_stop
        self.pacer = Pacer(min(max_rate, MAX_RATE), clock)
        self.meter = self.pacer.meter
        self.bar = W.IntProgress(
            value=0, min=0, max=1, layout=W.Layout(width="16em", flex="0 0 auto")
        )
        self.figures = W.HTML(
            value="", layout=W.Layout(flex="1 1 auto", min_width="0", margin="0 0.8em")
        )
        self.stop_button = W.Button(
            description="Stop", icon="stop", tooltip="Stop the sweep (runs that ended are kept)",
            layout=W.Layout(width="auto", flex="0 0 auto"),
        )  # fmt: skip
        self.stop_button.on_click(self._on_stop)
        self.root = W.HBox(
            [self.bar, self.figures, self.stop_button],
            layout=W.Layout(align_items="center", flex_flow="row wrap"),
            _dom_classes=(SWEEP_CLASS,),
        )
        self.latest: Any = None  # the newest progress the engine told of...
        self.shown: Any = None  # ...and the one on the page

    def update(self, progress: Any) -> None:
        """The engine's ``on_progress``: constant work, nothing sent."""
        self.latest = progress

    def tick(self) -> int:
        """Send the newest progress if it is new and the budget allows; messages sent."""
        if self.latest is None or self.latest is self.shown:
            return 0
        now = self.clock()
        if not self.pacer.ready(UPDATE_COST, now):
            return 0
        sent = self._show(self.latest)
        self.pacer.sent(sent, now)
        return sent

    def finish(self, progress: Any | None = None) -> None:
        """The last state, at once; Stop goes (nothing runs any more)."""
        progress = progress if progress is not None else self.latest
        with self.pacer.unpaced():
            if progress is not None:
                self._show(progress)
            self.meter.set(self.stop_button, disabled=True)
            self.meter.set(self.stop_button.layout, display="none")

    def _show(self, progress: Any) -> int:
        self.shown = progress
        style = "danger" if progress.failed else ("success" if progress.finished else "")
        total = max(1, progress.total)
        sent = self.meter.set(self.bar, max=total, value=progress.done, bar_style=style)
        return sent + self.meter.set(self.figures, value=figures_html(progress))

    def _on_stop(self, _button) -> None:
        with self.pacer.unpaced():
            self.meter.set(self.stop_button, disabled=True, description="Stopping…")
        if self.on_stop is not None:
            self.on_stop()

    def close(self) -> None:
        from .run_view import close_tree

        close_tree(self.root)


__all__ = ["SweepWidget", "figures_html"]
