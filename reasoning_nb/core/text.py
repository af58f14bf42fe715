"""Untrusted text read as labels and times: a model id, a hint, a date may come from anyone
(a saved notebook, a log, a user's ``since``)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

# C0/C1 controls and bidi overrides (a "Trojan source" label could reorder what is shown).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+")
_FRACTION = re.compile(r"\.(\d+)")


def one_line(text: str) -> str:
    """Collapse whitespace and control characters: a label must stay one line."""
    return " ".join(_CONTROLS.sub(" ", text).split())


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis (a label part of sane
    length: a model id, a prompt, a warning)."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_time(text: str) -> datetime:
    """An ISO 8601 date or time (``started_at``, a recorded time, a user's ``since``) as an
    aware UTC datetime; an unmarked one is read as UTC. ValueError if it is none.
    (Python 3.10's ``fromisoformat`` takes no ``Z`` and only 3 or 6 digits of a fraction.)"""
    text = text.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text, count=1)
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def is_time(value: object) -> bool:
    """Whether ``value`` is text that :func:`parse_time` reads."""
    if not isinstance(value, str):
        return False
    try:
        parse_time(value)
    except ValueError:
        return False
    return True
