"""Session defaults shared by ``think()`` and the magic (``%think --model ... --preset ...``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Defaults:
    model: str | None = None
    """Used when a call names no model (after the REASONING_NB_MODEL env var)."""
    cache_max_mb: float = 200.0
    """Size cap of the replay cache; least recently used entries go first
    (``c.ThinkMagics.cache_max_mb``)."""


defaults = Defaults()
