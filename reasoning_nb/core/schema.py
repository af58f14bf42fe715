"""Read a saved trace (``output.metadata["reasoning_nb"]``, schema 1) as untrusted input.

A notebook may come from anyone, so nothing in it is taken on faith: every field is checked for
its type and range, a field that fails is skipped (its default is used) with a warning, unknown
fields are skipped with a warning, and nothing here raises. ``Trace.from_dict`` trusts its
input (it is the round trip of our own ``to_dict``); this module is the gate for everyone else's.

Warnings name the field and the *type* found, never the value: the value is attacker text and
warnings go to a terminal.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..store.recording import PACES
from ..views.cell_runs import recorded_at
from .continuation import ACTIONS
from .text import one_line
from .tokens import count
from .trace import CACHE_KEYS, SCHEMA, STATUSES, TIMING_KEYS, USAGE_KEYS, Trace

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)

METADATA_KEY = "reasoning_nb"
HISTORY_KEY = "reasoning_nb_history"
VARIANTS_KEY = "reasoning_nb_variants"
"""A ``--compare`` output: the traces of its variants after the first, which is the output's
own trace (``METADATA_KEY``): each trace is saved once. See :func:`saved_variants`."""
COMPARE_KEY = "reasoning_nb_compare"
"""An older ``--compare`` output: every variant's trace, the first also under ``METADATA_KEY``."""
PIN_KEY = "reasoning_nb_pin"
"""A pinned markdown cell's metadata (``notebook.pin``): where it came from (model, preset,
run, part). Its source is reasoning (or, with part ``answer``, answer) quoted under one head
line."""

_TEXT_FIELDS = {
    "model": "",
    "provider": "",
    "preset": "auto",
    "prompt": "",
    "reasoning": "",
    "answer": "",
}
_OPTIONAL_TEXT_FIELDS = ("finish_reason", "error", "started_at")
_DICT_FIELDS = ("request", "provider_state")
KNOWN_FIELDS = frozenset(
    {
        "schema",
        *_TEXT_FIELDS,
        *_OPTIONAL_TEXT_FIELDS,
        *_DICT_FIELDS,
        "budget_tokens",
        "usage",
        "timing",
        "status",
        "warnings",
        "continued",
        "replay",
        "cost",
    }
)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _name(key: Any) -> str:
    """A printable, bounded name for an unknown key (keys are attacker text too)."""
    text = ascii(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _count(value: Any) -> bool:
    """A token count as we save it: an int that ``tokens.count`` believes (not a bool, not
    negative, not ``10**400``, which is valid JSON and past any float)."""
    return isinstance(value, int) and count(value) is not None


def _duration(value: Any) -> bool:
    """Milliseconds: a non-negative int or float that is a finite float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value) and value >= 0
    except OverflowError:  # an int past a float's range
        return False


def _numbers(raw: Any, field: str, keys: tuple[str, ...], ok, warn: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(keys)
    if raw is None:
        return out
    if not isinstance(raw, dict):
        warn.append(f"field {field!r} is {_kind(raw)}, not an object; skipped")
        return out
    for key, value in raw.items():
        if key not in keys:
            warn.append(f"unknown field {field}.{_name(key)} skipped")
        elif value is not None and not ok(value):
            problem = f"is out of range or not a number ({_kind(value)})"
            warn.append(f"field {field}.{key} {problem}; skipped")
        else:
            out[key] = value
    return out


def _json_only(value: Any, depth: int = 0) -> Any:
    """Keep JSON types only (the ``request`` / ``provider_state`` blobs are never rendered)."""
    if depth > 20:
        return None
    if isinstance(value, dict):
        return {str(k): _json_only(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_only(v, depth + 1) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return None


def read_trace(data: Any) -> tuple[Trace | None, list[str]]:
    """Validate one saved trace: ``(trace, warnings)``; ``trace`` is None when unreadable."""
    warn: list[str] = []
    if not isinstance(data, dict):
        return None, [f"saved trace is {_kind(data)}, not an object; it cannot be read"]
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA or isinstance(schema, bool):
        shown = schema if _count(schema) else _kind(schema)
        warn.append(
            f"saved trace has schema {shown}; this version reads schema {SCHEMA} "
            "and keeps only the fields it knows"
        )
    for key in data:
        if key not in KNOWN_FIELDS:
            warn.append(f"unknown field {_name(key)} skipped")

    fields: dict[str, Any] = {}
    for key, default in _TEXT_FIELDS.items():
        value = data.get(key, default)
        if not isinstance(value, str):
            warn.append(f"field {key!r} is {_kind(value)}, not text; skipped")
            value = default
        fields[key] = value
    for key in _OPTIONAL_TEXT_FIELDS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            warn.append(f"field {key!r} is {_kind(value)}, not text; skipped")
            value = None
        fields[key] = value

    budget = data.get("budget_tokens")
    if budget is not None and not (_count(budget) and budget > 0):
        warn.append(f"field 'budget_tokens' is not a positive integer ({_kind(budget)}); skipped")
        budget = None
    fields["budget_tokens"] = budget

    usage = _numbers(data.get("usage"), "usage", USAGE_KEYS + CACHE_KEYS, _count, warn)
    fields["usage"] = {k: v for k, v in usage.items() if k in USAGE_KEYS or v}
    fields["timing"] = _numbers(data.get("timing"), "timing", TIMING_KEYS, _duration, warn)

    status = data.get("status", "complete")
    if status not in STATUSES:
        warn.append(f"field 'status' is not one of {', '.join(STATUSES)}; shown as 'unknown'")
        status = "unknown"
    fields["status"] = status

    warnings = data.get("warnings")
    if warnings is None:
        warnings = []
    elif not isinstance(warnings, list):
        warn.append(f"field 'warnings' is {_kind(warnings)}, not a list; skipped")
        warnings = []
    elif not all(isinstance(w, str) for w in warnings):
        warn.append("field 'warnings' holds items that are not text; those are skipped")
        warnings = [w for w in warnings if isinstance(w, str)]
    fields["warnings"] = list(warnings)

    for key in _DICT_FIELDS:
        value = data.get(key) or {}
        if not isinstance(value, dict):
            warn.append(f"field {key!r} is {_kind(value)}, not an object; skipped")
            value = {}
        fields[key] = _json_only(value)
    fields["continued"] = _continued(data.get("continued"), warn)
    fields["replay"] = _replay(data.get("replay"), warn)
    fields["cost"] = _cost(data.get("cost"), warn)
    return Trace(**fields), warn


def _continued(raw: Any, warn: list[str]) -> dict[str, Any] | None:
    """``continued`` (see ``core.steering``): a run number, a one-line hint, a count."""
    if raw is None:
        return None
    get = raw.get if isinstance(raw, dict) else lambda _key: ...  # (... fails every check)
    run, hint, chars = get("run"), get("hint"), get("reasoning_chars")
    if not ((run is None or (_count(run) and run > 0)) and isinstance(hint, str) and _count(chars)):
        warn.append(f"field 'continued' is not a valid continuation ({_kind(raw)}); skipped")
        return None
    kept = {"run": run, "hint": one_line(hint), "reasoning_chars": chars}
    action, room = get("action"), get("max_tokens")  # Answer now / More room (core.rescue)
    if action in ACTIONS[1:]:
        kept["action"] = action
    if _count(room) and room > 0:
        kept["max_tokens"] = room
    return kept


def _replay(raw: Any, warn: list[str]) -> dict[str, Any] | None:
    """``replay`` (see ``Trace.replay``): an ISO 8601 time and a pace."""
    if raw is None:
        return None
    get = raw.get if isinstance(raw, dict) else lambda _key: ...  # (... fails every check)
    when, pace = get("recorded_at"), get("pace")
    if not (recorded_at(when) and pace in PACES):
        warn.append(f"field 'replay' is not a valid replay ({_kind(raw)}); skipped")
        return None
    return {"recorded_at": when, "pace": pace}


_COST_USD = ("usd", "input_usd", "output_usd")
_COST_COUNTS = ("input_tokens", "output_tokens")
MAX_USD = 1e6


def _cost(raw: Any, warn: list[str]) -> dict[str, Any] | None:
    """``cost`` (see ``core.cost``): dollars, an estimate mark, a price date and source; only
    these keys are kept, the source as one short line (it is shown in the views)."""
    if raw is None:
        return None
    get = raw.get if isinstance(raw, dict) else lambda _key: ...  # (... fails every check)
    usd, as_of, source = get("usd"), get("prices_as_of"), get("source")
    amounts = [get(k) for k in _COST_USD if k != "usd" and get(k) is not None]
    counts = [get(k) for k in _COST_COUNTS if get(k) is not None]
    if not (
        all(_duration(v) and v <= MAX_USD for v in (usd, *amounts))
        and get("estimate") is True
        and (as_of is None or (isinstance(as_of, str) and _DATE.fullmatch(as_of)))
        and isinstance(source, str)
        and all(_count(c) for c in counts)
    ):
        warn.append(f"field 'cost' is not a valid cost estimate ({_kind(raw)}); skipped")
        return None
    kept = {k: get(k) for k in (*_COST_USD, *_COST_COUNTS) if get(k) is not None}
    return kept | {"estimate": True, "prices_as_of": as_of, "source": one_line(source)[:80]}


def saved_variants(meta: dict[str, Any]) -> Any:
    """A ``--compare`` output's saved variants, first to last, as saved (unchecked); what its
    metadata holds instead of a list, for the caller to report; None for any other output."""
    if VARIANTS_KEY in meta:
        rest = meta[VARIANTS_KEY]
        return [meta.get(METADATA_KEY), *rest] if isinstance(rest, list) else rest
    return meta.get(COMPARE_KEY)


def variants_key(meta: dict[str, Any]) -> str:
    """The key a ``--compare`` output saves its variants under (for messages about them)."""
    return VARIANTS_KEY if VARIANTS_KEY in meta else COMPARE_KEY


def stripped(trace: Trace) -> dict[str, Any]:
    """The saved form with no reasoning: its text and the provider state (signatures,
    encrypted reasoning) are gone; counts and timings stay; ``schema`` stays 1."""
    data = trace.to_dict()
    data["reasoning"] = ""
    data["provider_state"] = {}
    return data
