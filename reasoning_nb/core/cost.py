"""What a run cost: an estimate from published prices, never a bill.

Prices come from the snapshot bundled in ``genai-prices`` (dated changes, cache rates), read
offline: its ``UpdatePrices`` thread is never started, so a run does no network I/O for a price.
Reasoning tokens are billed as output tokens by every provider here; the bug to avoid is billing
them twice (wire-formats.md). Local providers have no rule: their cost is None, not ``$0``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .text import parse_time
from .trace import CACHE_KEYS, Trace


@dataclass(frozen=True)
class CostRule:
    prices: str
    """The provider's id in genai-prices."""
    reasoning_in_output: bool = True
    """Whether ``output_tokens`` already counts reasoning (else it is added once)."""


PRICES_AS_OF: dict[str, str] = {"0.2.3": "2026-11-01"}
"""genai-prices release → the date of its prices. The package carries no data date of its own,
so each pinned release is entered here by its PyPI release (month)."""


@functools.cache
def source() -> tuple[str, str | None]:
    """The price source's name and its prices' date (None for a release not listed); read
    once: the installed release's metadata takes ~9 ms to read, more than the price itself."""
    try:
        release = version("genai-prices")
    except PackageNotFoundError:  # pragma: no cover - a dependency; a broken install only
        return "genai-prices (missing)", None
    return f"genai-prices {release}", PRICES_AS_OF.get(release)


def billed_tokens(rule: CostRule | None, usage: dict[str, Any]) -> dict[str, int] | None:
    """The tokens a provider bills by its ``rule``, reasoning counted once; None if unknown (no
    rule: a local provider). Cache reads and writes are parts of ``input_tokens`` (every parser
    sums them in, as genai-prices expects)."""
    inp, out, rsn = (usage.get(k) for k in ("input_tokens", "output_tokens", "reasoning_tokens"))
    if rule is None or not _count(out):
        return None
    if not rule.reasoning_in_output and _count(rsn):
        out += rsn
    billed = {"input_tokens": inp if _count(inp) else 0, "output_tokens": out}
    left = billed["input_tokens"]
    for key in CACHE_KEYS:  # a cache count larger than the input it is part of is not believed
        if _count(n := usage.get(key)) and 0 < n <= left:
            billed[key], left = n, left - n
    return billed


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def estimate(trace: Trace, rule: CostRule | None) -> dict[str, Any] | None:
    """``trace.cost``: a dict marked as an estimate, or None (local model, no usage, a model the
    price snapshot does not know)."""
    if rule is None:
        return None
    billed = billed_tokens(rule, trace.usage)
    if billed is None:
        return None
    # imported here: 150 ms of price tables, loaded only when a cloud run ends
    from genai_prices import Usage, calc_price

    name = trace.model.split(":", 1)[1] if ":" in trace.model else trace.model
    try:
        price = calc_price(
            Usage(**billed),
            name,
            provider_id=rule.prices,
            genai_request_timestamp=_when(trace.started_at),
        )
    except (LookupError, ValueError):
        return None
    src, as_of = source()
    return {
        "usd": float(price.total_price),
        "estimate": True,
        "prices_as_of": as_of,
        "source": src,
        "input_usd": float(price.input_price),
        "output_usd": float(price.output_price),
        **billed,
    }


def _when(started_at: str | None) -> datetime | None:
    """The run's start, to pick the price in force then (the snapshot holds dated changes)."""
    try:
        return parse_time(started_at or "")
    except ValueError:
        return None


def label(cost: dict[str, Any] | None) -> str:
    """``≈ $0.0123``; empty for no cost (a local model shows nothing, never ``$0``)."""
    if not cost or not isinstance(cost.get("usd"), int | float):
        return ""
    usd = float(cost["usd"])
    if usd >= 1:
        return f"≈ ${usd:,.2f}"
    return f"≈ ${usd:.4f}" if usd >= 0.0001 else "< $0.0001"


def note(cost: dict[str, Any] | None) -> str:
    """The static view's line: ``≈ $0.0123, estimate, prices of 2026-11-01`` (or ``prices from
    genai-prices 0.1.13``, a release whose date is not listed in ``PRICES_AS_OF``)."""
    text = label(cost)
    if not text:
        return ""
    as_of = cost.get("prices_as_of") if cost else None
    if as_of:
        return f"{text}, estimate, prices of {as_of}"
    source = cost.get("source") if cost else None  # (views make it one escaped line)
    return f"{text}, estimate" + (f", prices from {source}" if source else "")
