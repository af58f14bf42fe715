"""A streamed body's bytes in, its frames out: SSE events or NDJSON lines, one read at a time."""

from __future__ import annotations

import codecs

from ..errors import ProviderError

MAX_LINE = 16 * 2**20
"""Bytes one line of a stream may hold: a frame carries a token or two, and the longest a
server sends (the Responses API's last event, the whole output again) stays far below this."""

Frame = tuple[str, str | None]
"""One framed payload, ``(data, event)``: an SSE event's data with its ``event:`` name, or one
NDJSON line with ``None``. A plain tuple, as one is made per token."""


class Framer:
    """A response body's bytes in, its frames out: ``feed()`` each read, ``close()`` at the end.

    Lines end at ``\n``, ``\r\n`` and ``\r`` only: ``aiter_lines()`` also splits on U+2028,
    U+2029 and U+0085, which JSON allows raw inside strings (llama.cpp and vLLM send them so),
    and a frame cut there is no longer JSON. The bytes go through an incremental decoder, so a
    multi-byte character that the network cut in two waits for its end; a trailing ``\r`` waits
    too, as the next read may start with its ``\n``. (JSON escapes ``\r`` in strings, so a raw
    one only ends a line.)

    SSE: ``data:`` lines are joined until a blank line; ``:`` lines are comments.
    """

    def __init__(self, framing: str, max_line: int = MAX_LINE) -> None:
        self._sse = framing == "sse"
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._max_line = max_line
        self._rest = ""  # the unfinished line, or its start when _pieces hold the rest
        self._pieces: list[str] = []
        self._held = 0  # the bytes in _pieces
        self._data: list[str] = []  # SSE: the data lines of the event being read
        self._event: str | None = None

    def feed(self, chunk: bytes) -> list[Frame]:
        return self._frames(self.lines(chunk))

    def close(self) -> list[Frame]:
        """The frames left at the end of the body: a last line without its line end, a last
        event without its blank line."""
        lines = self.lines(b"", final=True)
        return self._frames([*lines, ""] if self._sse else lines)

    def lines(self, chunk: bytes, *, final: bool = False) -> list[str]:
        """The lines that ``chunk`` completes; the unfinished one waits for the next read, or
        is the last line if the body ends here (``final``)."""
        text = self._decode(chunk, final)
        if "\n" not in text and "\r" not in text and not final and not self._rest.endswith("\r"):
            # No line ends here: the piece waits and is joined once, when its line ends, so a
            # long line costs its length, not its length times its reads.
            self._pieces.append(text)
            self._held += len(chunk)
            if self._held > self._max_line:
                self._too_long()
            return []
        if self._pieces:
            text = "".join((self._rest, *self._pieces, text))
            self._pieces.clear()
            self._held = 0
        else:
            text = self._rest + text
        if "\r" in text:
            held = "\r" if text.endswith("\r") and not final else ""
            text = text.removesuffix(held).replace("\r\n", "\n").replace("\r", "\n") + held
        lines = text.split("\n")
        self._rest = lines.pop()  # "" after a line end
        if final and self._rest:
            lines.append(self._rest)
            self._rest = ""
        return lines

    def _too_long(self) -> None:
        raise ProviderError(
            f"The server sent a line of over {self._max_line // 2**20} MiB without a line end, "
            "far longer than any frame of a model stream; what arrived before it is kept in the "
            "trace: check that the base URL points at a model server."
        )

    def _frames(self, lines: list[str]) -> list[Frame]:
        if not self._sse:
            return [(line, None) for line in lines if line.strip()]
        frames: list[Frame] = []
        data = self._data
        for line in lines:
            if line.startswith("data: "):  # the common case first: this runs once per token
                data.append(line[6:])
            elif not line:
                if data:
                    frames.append((data[0] if len(data) == 1 else "\n".join(data), self._event))
                    data.clear()
                self._event = None
            elif line.startswith("data:"):
                data.append(line[5:])
            elif line.startswith("event:"):
                self._event = line[6:].strip()
            # anything else: a ":" keep-alive comment (llama.cpp ping, OpenRouter PROCESSING),
            # or a field this client does not use (id:, retry:)
        return frames
