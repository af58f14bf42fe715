"""A plain-text view of a run: reasoning dimmed, then the answer, for terminals and consoles."""

from __future__ import annotations

import sys
from typing import TextIO

from ..core.events import Event, Notice, ReasoningDelta, Reclassify, TextDelta, Waiting
from ..core.trace import Trace
from .trace_labels import footer, reasoning_summary

DIM, RESET, ERASE_LINE = "\x1b[2m", "\x1b[0m", "\r\x1b[K"
# Model text is untrusted: a terminal obeys escape sequences in it (OSC 52 writes the clipboard),
# so every C0 and C1 control character but newline and tab is dropped, and DEL with them.
INERT = dict.fromkeys([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)])


def inert(text: str) -> str:
    return text.translate(INERT)


class TerminalView:
    """Writes deltas as they arrive; ``color=False`` gives plain text (nbconvert, logs)."""

    def __init__(
        self, out: TextIO | None = None, *, color: bool | None = None, show_reasoning=True
    ):
        self.out = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        self.show_reasoning = show_reasoning
        self._mode = ""

    def _switch(self, mode: str) -> None:
        if mode == self._mode:
            return
        if self._mode == "waiting":  # the status line gives way to what it waited for
            self.out.write(ERASE_LINE)
            self._mode = ""
        if self._mode == "reasoning" and self.color:
            self.out.write(RESET)
        if mode == "reasoning":
            self.out.write("\n" if self._mode else "")
            self.out.write(DIM + "Thinking…\n" if self.color else "Thinking…\n")
        elif mode == "answer" and self._mode == "reasoning":
            self.out.write("\n\n")
        self._mode = mode

    def on_event(self, event: Event) -> None:
        if isinstance(event, ReasoningDelta) and self.show_reasoning:
            self._switch("reasoning")
            self.out.write(inert(event.text))
        elif isinstance(event, TextDelta):
            self._switch("answer")
            self.out.write(inert(event.text))
        elif isinstance(event, Reclassify):
            self._switch("answer")
            self.out.write("\n(the text above was the model's reasoning)\n\n")
        elif isinstance(event, Waiting):
            if self.color and self._mode in ("", "waiting"):  # a terminal, before any text
                self.out.write(f"{ERASE_LINE}{DIM}{inert(event.text)}{RESET}")
                self._mode = "waiting"
        elif isinstance(event, Notice):
            self._switch("")
            self.out.write(f"\nwarning: {inert(event.text)}\n")
        self.out.flush()

    def finish(self, trace: Trace) -> None:
        self._switch("")
        if self.color:
            self.out.write(RESET)
        line = footer(trace)
        if trace.reasoning:
            line = f"{reasoning_summary(trace)} · {line}"
        self.out.write(f"\n\n({inert(line)})\n")
        self.out.flush()
