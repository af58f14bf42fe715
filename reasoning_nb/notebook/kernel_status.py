"""The kernel's status reads Busy while any ``%%think`` stream runs, in its cell or after it.

A front end shows the state of the newest IOPub ``status`` message, whatever request it is about,
so two kinds of idle would show while a model streams:

- A re-run from the preset dropdown, or a Continue, streams after ipykernel has handled the comm
  message that asked for it, and published idle for it.
- JupyterLab (4.4+) sends the comms of a target over a subshell that it asks for when the first
  comm opens: during the first ``%%think`` after a kernel start, ipykernel answers that control
  request with busy, then idle (and again when the last widget closes and Lab deletes it).

So the first stream to start publishes busy, each idle ipykernel publishes while a stream runs is
followed by busy, and the last stream to end publishes idle, unless a cell is executing: that
cell's idle is ipykernel's to send.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import host

_lock = threading.Lock()  # the kernel publishes from its shell, control and subshell threads
_streams = 0
_cells: set[str] = set()
"""The execute requests ipykernel is working on: it published busy for them, not yet idle."""
_publish: host.Publish | None = None
"""Publishes the kernel's status, once :func:`install` follows it."""


def install(shell: Any) -> None:
    """Follow what this shell's kernel publishes (once per kernel; nothing in a terminal)."""
    global _publish
    publish = host.follow_status(shell, _follow)
    if publish is not None:
        _publish = publish


def _follow(status: str, header: dict, again: host.Publish) -> None:
    with _lock:
        if header.get("msg_type") == "execute_request":
            (_cells.add if status == "busy" else _cells.discard)(header.get("msg_id"))
        if status == "idle" and _streams:
            again("busy")


@contextmanager
def busy() -> Iterator[None]:
    """While the block runs, the kernel's status reads busy (its idle goes to the request that
    started the block: a cell, or the comm message of a re-run)."""
    global _streams
    with _lock:
        _streams += 1
        if _streams == 1 and _publish is not None:
            _publish("busy")
    try:
        yield
    finally:
        with _lock:
            _streams -= 1
            if not _streams and not _cells and _publish is not None:
                _publish("idle")


__all__ = ["busy", "install"]
