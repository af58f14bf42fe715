"""Split reasoning that arrives inline in the answer text (``<think>…</think>`` and kin).

Servers started without a reasoning parser (llama.cpp ``--reasoning-format none``, raw vLLM,
prompted models) leave the model's tags in ``content``. ``InlineSplitter`` turns that stream into
``ReasoningDelta`` / ``TextDelta`` events as it arrives; ``split_all`` does the same for a whole
string. The tags themselves are data (``DEFAULT_MARKERS``), never spelled out in the logic.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .events import Event, Notice, ReasoningDelta, Reclassify, TextDelta
from .trace import Trace, answer_start

UNCLOSED_WARNING = (
    "The reasoning block was never closed; the stream ended while the model was still thinking."
)


@dataclass(frozen=True, slots=True)
class Marker:
    """One tag as it appears in the text, and what it does."""

    text: str
    role: str
    """``open`` (reasoning starts), ``close`` (reasoning ends) or ``drop`` (never shown)."""
    family: str = ""
    """A closer only ends a block its own family opened; inside another family it is text."""
    reclassify: bool = False
    """A closer seen before any opener means the template pre-opened the block: the answer so
    far was reasoning. Otherwise a lone closer is dropped."""
    skip_until: str = ""
    """Drop the text after the marker up to and including this (a header such as harmony's)."""
    eat_newline: bool = False
    """Drop one newline right after the marker (a label line such as Gemma's ``thought``)."""


def _pair(open_: str, close: str, family: str, *, reclassify: bool = True) -> tuple[Marker, ...]:
    return (Marker(open_, "open", family), Marker(close, "close", family, reclassify))


_HARMONY = "harmony"


@dataclass(frozen=True)
class Markers:
    """A marker table, compiled once so a splitter per stream costs nothing."""

    items: tuple[Marker, ...]
    by_text: dict[str, Marker] = field(init=False, repr=False, compare=False)
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    prefixes: frozenset[str] = field(init=False, repr=False, compare=False)
    longest: int = field(init=False, repr=False, compare=False)
    first_chars: str = field(init=False, repr=False, compare=False)
    first: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        texts = sorted({m.text for m in self.items}, key=len, reverse=True)
        first_chars = "".join(sorted({t[0] for t in texts}))
        derived = {
            "by_text": {m.text: m for m in self.items},
            # Longest first, so a marker that extends another wins the alternation.
            "pattern": re.compile("|".join(map(re.escape, texts))),
            "prefixes": frozenset(t[:i] for t in texts for i in range(1, len(t))),
            "longest": len(texts[0]),
            "first_chars": first_chars,
            "first": re.compile(f"[{re.escape(first_chars)}]"),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)


DEFAULT_MARKERS = Markers(
    (
        *_pair("<think>", "</think>", "think"),
        *_pair("<thinking>", "</thinking>", "thinking"),
        *_pair("<reasoning>", "</reasoning>", "reasoning"),
        # vLLM's mistral parser keeps text before a lone [/THINK] as content.
        *_pair("[THINK]", "[/THINK]", "mistral", reclassify=False),
        *_pair("<|START_THINKING|>", "<|END_THINKING|>", "cohere"),
        Marker("<|channel>thought", "open", "gemma", eat_newline=True),
        Marker("<channel|>", "close", "gemma"),
        # gpt-oss harmony: every channel switch is a marker; only the analysis channel is shown
        # as reasoning, and the role/stop tokens never reach the answer.
        Marker("<|channel|>analysis<|message|>", "open", _HARMONY),
        Marker("<|end|>", "close", _HARMONY),
        Marker("<|channel|>final<|message|>", "close", _HARMONY),
        Marker("<|channel|>commentary", "close", _HARMONY, skip_until="<|message|>"),
        Marker("<|start|>assistant", "drop"),
        Marker("<|return|>", "drop"),
        Marker("<|call|>", "drop"),
    )
)


def _fast_maker(cls: type) -> Callable[[str], Event]:
    """A one-field event constructor that skips the dataclass ``__init__`` frame, most of the
    cost of an event per delta (the class itself if the event ever grows another field)."""
    names = [f.name for f in dataclasses.fields(cls)]
    slot = cls.__dict__.get("text")
    if names != ["text"] or not hasattr(slot, "__set__"):
        return cls
    new, set_text = object.__new__, slot.__set__

    def make(text: str) -> Event:
        event = new(cls)
        set_text(event, text)
        return event

    return make


_MAKE = {False: _fast_maker(TextDelta), True: _fast_maker(ReasoningDelta)}


class InlineSplitter:
    """Only a suffix that could still become a marker is held back, so the live view stays
    prompt. ``preopened``: the template put ``<think>`` in the prompt."""

    def __init__(self, *, preopened: bool = False, markers: Markers = DEFAULT_MARKERS) -> None:
        self._m = markers
        first = markers.first_chars
        self._c1, self._c2 = (first + first)[:2]
        self._cx = None if len(first) <= 2 else markers.first.search
        self._thinking = preopened
        self._opened = preopened  # once true, a lone closer can no longer mean "pre-opened"
        self._family: str | None = None  # None: a pre-opened block, closed by any closer
        self._lead = not preopened  # leading whitespace of the stream is not the answer
        self._held = ""
        self._answered = False  # some answer text was emitted
        self._tags_end_with_answer = False
        self._literal = False  # markers are plain text from here on
        self._buf = ""
        self._skip = ""
        self._eat_newline = False
        self._saw = False
        self._fed = False
        self._fast = False
        self._make = _MAKE[preopened]

    @property
    def saw_markers(self) -> bool:
        return self._saw

    @property
    def literal(self) -> bool:
        """True once markers are plain text: from here on only answer text comes out."""
        return self._literal

    def tags_end_with_answer(self) -> None:
        """From the first answer text on, markers are plain text. Set once a server sent its
        reasoning in a native field: then only an inline block at the very start of the content
        may still be reasoning, and an answer that quotes ``<think>`` or a lone ``</think>``
        keeps them as it wrote them."""
        self._tags_end_with_answer = True
        self._literal = self._literal or self._answered

    def feed(self, text: str) -> list[Event]:
        if not text:
            return []
        if self._literal:
            return [_MAKE[False](text)]
        if (
            self._fast
            and self._c1 not in text
            and self._c2 not in text
            and (self._cx is None or self._cx(text) is None)
        ):
            if not self._thinking:  # answer text, as _emit would count it
                self._answered, self._literal = True, self._tags_end_with_answer
            return [self._make(text)]
        out: list[Event] = []
        self._fed = True
        buf, self._buf = self._buf, ""
        self._run(buf + text, out, final=False)
        self._fast = not (self._buf or self._skip or self._eat_newline or self._lead)
        self._make = _MAKE[self._thinking]
        return out

    def close(self) -> list[Event]:
        """End of stream: flush held-back text and warn about a block left open."""
        out: list[Event] = []
        buf, self._buf = self._buf, ""
        self._run(buf, out, final=True)
        self._skip, self._eat_newline, self._fast = "", False, False
        if self._thinking and self._fed:
            out.append(Notice(UNCLOSED_WARNING))
        return out

    def _run(self, text: str, out: list[Event], *, final: bool) -> None:
        m = self._m
        n = len(text)
        pos = 0
        while pos < n:
            if self._literal:
                self._emit(out, text[pos:])
                return
            if self._skip:
                end = text.find(self._skip, pos)
                if end < 0:
                    if not final:
                        self._buf = text[max(pos, n - len(self._skip) + 1) :]
                    return
                pos, self._skip = end + len(self._skip), ""
                continue
            if self._eat_newline:
                self._eat_newline = False
                if text[pos] == "\n":
                    pos += 1
                    continue
            found = m.pattern.search(text, pos)
            # A complete marker at the very end may still be the start of a longer one.
            if found and not (final is False and found.end() == n and found.group() in m.prefixes):
                self._emit(out, text[pos : found.start()])
                pos = found.start()
                if self._literal:  # the answer began just now: the marker is its text
                    continue
                pos = found.end()
                self._apply(m.by_text[found.group()], out)
                continue
            cut = n if final else self._hold_point(text, pos)
            self._emit(out, text[pos:cut])
            if self._literal:
                self._emit(out, text[cut:])
                return
            self._buf = text[cut:]
            return

    def _hold_point(self, text: str, pos: int) -> int:
        """Where the longest tail that could still grow into a marker starts (``len`` if none)."""
        m = self._m
        for hit in m.first.finditer(text, max(pos, len(text) - m.longest + 1)):
            if text[hit.start() :] in m.prefixes:
                return hit.start()
        return len(text)

    def _emit(self, out: list[Event], text: str) -> None:
        if not text:
            return
        if self._lead:  # whitespace may precede <think>, or indent the answer's first line
            text, self._held = answer_start(self._held, text)
            if not text:
                return
            self._lead = False
        cls = ReasoningDelta if self._thinking else TextDelta
        if out and type(out[-1]) is cls:
            out[-1] = cls(out[-1].text + text)
        else:
            out.append(_MAKE[self._thinking](text))
        if not self._thinking:
            self._answered = True
            self._literal = self._tags_end_with_answer

    def _apply(self, marker: Marker, out: list[Event]) -> None:
        if marker.role == "close" and self._thinking and self._family not in (None, marker.family):
            self._emit(out, marker.text)  # another family's closer is just text here
            return
        self._saw = True
        self._skip = marker.skip_until
        self._eat_newline = marker.eat_newline
        if marker.role == "open" and not self._thinking:
            self._thinking, self._opened, self._lead, self._held = True, True, False, ""
            self._family = marker.family
        elif marker.role == "close" and self._thinking:
            self._thinking = False
        elif marker.role == "close" and marker.reclassify and not self._opened:
            # No block was ever open, so everything in ``out`` is answer text that was not.
            moved = "".join(e.text for e in out if isinstance(e, TextDelta))
            out[:] = [Reclassify()]
            self._opened, self._lead, self._thinking, self._held = True, False, True, ""
            self._emit(out, moved)
            self._thinking = False


def split_all(
    text: str, *, preopened: bool = False, markers: Markers = DEFAULT_MARKERS
) -> tuple[str, str, list[str]]:
    """Fold a whole string: ``(reasoning, answer, warnings)`` as a ``Trace`` would hold them."""
    splitter = InlineSplitter(preopened=preopened, markers=markers)
    trace = Trace()
    for event in [*splitter.feed(text), *splitter.close()]:
        trace.fold(event)
    trace.finish()
    return trace.reasoning, trace.answer, trace.warnings
