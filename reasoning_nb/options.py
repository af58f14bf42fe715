"""The options of a run, and their checks."""

from __future__ import annotations

import math
from typing import Any

from .errors import ConfigError

MAX_CHARS = 10_000_000
"""The default ``max_chars``: far beyond any model's output limit (about 2.5M tokens)."""


def check_number(name, value, kind, *, minimum, exclusive=False, finite=False) -> None:
    """``finite``: infinity is refused too (JSON has no infinity; a timeout may be endless)."""
    if value is None:
        return
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if ok:
        ok = value > minimum if exclusive else value >= minimum
    if ok and finite:
        ok = math.isfinite(value)
    if not ok:
        bound = f"greater than {minimum}" if exclusive else f"at least {minimum}"
        what = "a finite number" if finite else "a number"
        raise ConfigError(f"{name} must be {what} {bound}, not {value!r}.")


def check_sendable(name: str, value: Any) -> None:
    """Text that UTF-8 can carry: a lone surrogate (``"\\ud800"``, from a bad decode or a JSON
    escape) cannot be encoded, and would fail the request as it is built."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConfigError(
                f"{name} holds a lone surrogate ({value[exc.start]!r} at character "
                f"{exc.start}), which cannot be sent: remove it, or decode the text with "
                "errors='replace'."
            ) from None
    elif isinstance(value, dict):
        for item in value.values():
            check_sendable(name, item)
    elif isinstance(value, list | tuple):
        for item in value:
            check_sendable(name, item)
