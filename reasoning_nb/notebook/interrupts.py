"""A kernel interrupt stops every run this kernel is streaming, in a cell or not.

Re-runs and Continue may stream after their cell ended, where ipykernel 7.4 ignores SIGINT. So
every stream registers its stop here (:func:`streaming`), and both an interrupt that ends any
cell (``post_run_cell``) and a SIGINT while the kernel is idle (``host``) stop them all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import host

_streams: dict[int, tuple[Callable[[], object], asyncio.AbstractEventLoop | None]] = {}


@contextmanager
def streaming(stop: Callable[[], object]) -> Iterator[None]:
    """While the block runs, an interrupt calls ``stop`` (on the loop the block runs on)."""
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    key = id(stop)
    _streams[key] = (stop, loop)
    try:
        yield
    finally:
        _streams.pop(key, None)


def stop_all() -> int:
    """Stop every registered stream; returns how many there were."""
    live = list(_streams.values())
    for stop, loop in live:
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(stop)  # safe from a signal handler and from other threads
        else:
            stop()
    return len(live)


def interrupted(exc: BaseException | None) -> bool:
    """Whether a cell ended by an interrupt (the exception its run left, if any): a
    ``%%think`` cell's ``CellError.stopped()``, or any other cell's KeyboardInterrupt."""
    if getattr(exc, "interrupt", False):
        return True
    return isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))


def install(shell: Any) -> None:
    """Hook this IPython shell's interrupts (once per shell)."""
    if getattr(shell, "_reasoning_nb_interrupts", False):
        return
    shell._reasoning_nb_interrupts = True
    shell.events.register("post_run_cell", _after_cell)
    host.on_idle_sigint(shell, stop_all)


def _after_cell(result: Any) -> None:
    if interrupted(getattr(result, "error_in_exec", None)):
        stop_all()


__all__ = ["install", "interrupted", "stop_all", "streaming"]
