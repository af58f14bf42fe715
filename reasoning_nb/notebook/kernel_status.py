"""The kernel's status reads Busy while any ``%%think`` stream runs, in its cell or after it.

A front end shows the newest IOPub ``status``, whatever request it is about, so an idle would
show while a model streams: after the comm message of a re-run or a Continue, and around the
subshell request JupyterLab (4.4+) sends when the first comm opens. So the first stream publishes
busy, each idle during a stream is followed by busy, and the last stream publishes idle (unless
a cell is executing: its idle is ipykernel's to send).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import host

_lock = threading.Lock()  # the kernel publishes from its shell, control and subshell threads
_streams = 0
_cells: set[str] = set()  # execute requests ipykernel published busy for, not yet idle
_publish: host.Publish | None = None  # set once install() follows the kernel


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
