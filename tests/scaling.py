"""How a cost grows with its input, as a ratio of CPU times measured in one run: a test of
"linear, not quadratic" that holds on a slow or busy machine (no absolute seconds).

``assert_linear(work, n)`` times ``work(n)`` and ``work(factor * n)`` (the best of a few tries
each, in this process's CPU time, so other processes' load does not count) and fails when the
larger input costs more than ``slack`` times ``factor`` as much: linear work grows about
``factor`` times, quadratic work ``factor ** 2`` times.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def cpu_time(work: Callable[[], object], tries: int = 3) -> float:
    """The least CPU time of ``tries`` calls of ``work`` (seconds)."""
    best = float("inf")
    for _ in range(tries):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def growth(work: Callable[[int], object], n: int, factor: int = 8, tries: int = 3) -> float:
    """CPU time of ``work(factor * n)`` over that of ``work(n)``."""
    small = cpu_time(lambda: work(n), tries)
    large = cpu_time(lambda: work(factor * n), tries)
    return large / max(small, 1e-4)


def assert_linear(
    work: Callable[[int], object], n: int, *, factor: int = 8, slack: float = 3.0, tries: int = 3
) -> None:
    """Fail when ``work`` grows faster than about linearly from ``n`` to ``factor * n``
    (``n`` should make ``work(n)`` take some milliseconds, so timer noise does not count)."""
    ratio = growth(work, n, factor, tries)
    assert ratio < slack * factor, (
        f"{factor}x the input cost {ratio:.1f}x the CPU time (linear: about {factor}x, "
        f"quadratic: about {factor * factor}x)"
    )
