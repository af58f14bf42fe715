"""Batch services: a sweep sent through OpenAI's Batch API or Anthropic's Message Batches, at
half the price, collected into the same rows as a live sweep (issue 26, item 4).

    rows = await run_batch(prompts, models=..., presets=..., options=..., sweep_id=..., tally=...)
    reasoning_nb.sweep.resume("batch_abc")      # after a kernel restart: by batch or sweep id

``jobs`` makes each request with the provider protocol's own ``build_request`` and reads each
result with its ``read_body``; ``openai_batches`` and ``message_batches`` speak the two services
(``service`` is what they share), ``http`` is their plain JSON path, ``runner`` makes and
submits the requests (and resumes), ``collect`` waits on the batches and reads their results;
``store.batches`` keeps what a restart must not lose.
"""

from __future__ import annotations

from typing import Any

from ...api import call_blocking
from ..result import Rows
from .runner import POLL_S, aresume, run_batch, supports

__all__ = ["POLL_S", "aresume", "resume", "run_batch", "supports"]


def resume(batch_or_sweep_id: str, **options: Any) -> Any:
    """``aresume`` from synchronous code, a notebook cell too (same options): the rows as a
    pandas DataFrame, or as ``Rows`` where pandas is not installed."""
    result = call_blocking(lambda: aresume(batch_or_sweep_id, **options))
    try:
        return result.frame()
    except ImportError:
        return Rows(result.rows, result.sweep_id)
