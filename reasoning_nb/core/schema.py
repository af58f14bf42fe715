"""The saved trace (``"schema": 1``): its fields, declared once, and the metadata keys.

Each field's kind says how it is written (``Trace.to_dict``), read back from our own save
(``Trace.from_dict``, which trusts it) and read from anyone (:func:`checked`: a field that fails
its type and range check is skipped with a warning, and nothing raises). Warnings name the field
and the *type* found, never the value: the value is attacker text and warnings go to a terminal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .text import is_time, one_line
from .tokens import count

SCHEMA = 1
STATUSES = ("running", "complete", "truncated", "cancelled", "error")
USAGE_KEYS = ("input_tokens", "output_tokens", "reasoning_tokens")
CACHE_KEYS = ("cache_read_tokens", "cache_write_tokens")
"""In ``usage`` only when the server reported some (the prices differ: see ``core.cost``)."""
TIMING_KEYS = ("first_token_ms", "reasoning_ms", "total_ms")
ACTIONS = ("continue", "answer_now", "more_room", "resume")
"""What a continued run does (``core.continuation``, ``core.rescue``)."""
PACES = ("instant", "recorded")
MAX_USD = 1e6

METADATA_KEY = "reasoning_nb"
"""Output metadata of a ``%%think`` run: its trace (the one ``stats()`` counts)."""
HISTORY_KEY = "reasoning_nb_history"
"""The earlier runs of a cell run more than once (a preset re-run, Continue), oldest first."""
VARIANTS_KEY = "reasoning_nb_variants"
"""A ``--compare`` output: the traces of its variants after the first, which is the output's
own trace (``METADATA_KEY``): each trace is saved once. See :func:`saved_variants`."""
COMPARE_KEY = "reasoning_nb_compare"
"""An older ``--compare`` output: every variant's trace, the first also under ``METADATA_KEY``."""
PIN_KEY = "reasoning_nb_pin"
"""A pinned markdown cell's metadata (``notebook.pin``): where it came from (model, preset,
run, part). Its source is reasoning (or, with part ``answer``, answer) quoted under one head
line."""
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
"""The mime type of a widget's view in an output (the live view writes it, exports prune it)."""
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
"""The key of the saved widget state in ``nb.metadata.widgets`` (pruned on save and export)."""
DISPLAY_KEY = "reasoning_nb_display"
"""Output metadata of a displayed trace (``_think`` as a cell's value): the trace itself, so an
export rebuilds that output and ``strip`` takes its reasoning out without matching text. Not
``METADATA_KEY``, which marks the run's own output."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


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
    """Milliseconds (or dollars): non-negative, and finite as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value) and value >= 0
    except OverflowError:  # an int past a float's range
        return False


def _json_copy(value: Any) -> Any:
    """A deep copy limited to JSON types, so a saved trace never holds live objects."""
    if isinstance(value, dict):
        return {str(k): _json_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_copy(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


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


# -- the kinds of field: save (to_dict), load (from_dict), check (anyone's), default ------------


@dataclass(frozen=True)
class Text:
    fallback: str | None = ""

    def default(self) -> Any:
        return self.fallback

    def save(self, value: Any) -> Any:
        return value

    def load(self, value: Any) -> Any:
        return value if self.fallback is None else str(value)

    def check(self, value: Any, name: str, warn: list[str]) -> Any:
        if isinstance(value, str) or (value is None and self.fallback is None):
            return value
        warn.append(f"field {name!r} is {_kind(value)}, not text; skipped")
        return self.fallback


MAYBE_TEXT = Text(None)


class Budget:
    """A positive token count, or None."""

    def default(self) -> None:
        return None

    def save(self, value: Any) -> Any:
        return value

    def load(self, value: Any) -> Any:
        return value

    def check(self, value: Any, name: str, warn: list[str]) -> Any:
        if value is None or (_count(value) and value > 0):
            return value
        warn.append(f"field {name!r} is not a positive integer ({_kind(value)}); skipped")
        return None


@dataclass(frozen=True)
class Status(Text):
    def check(self, value: Any, name: str, warn: list[str]) -> Any:
        if value in STATUSES:
            return value
        warn.append(f"field {name!r} is not one of {', '.join(STATUSES)}; shown as 'unknown'")
        return "unknown"


@dataclass(frozen=True)
class Numbers:
    """A dict of numbers: ``keys`` always there (None: not reported), ``extra`` only when set."""

    keys: tuple[str, ...]
    ok: Callable[[Any], bool]
    extra: tuple[str, ...] = ()

    def default(self) -> dict[str, Any]:
        return dict.fromkeys(self.keys)

    def save(self, value: Any) -> Any:
        return dict(value)

    def load(self, value: Any) -> Any:
        known = self.keys + self.extra
        return self.default() | {k: v for k, v in (value or {}).items() if k in known}

    def check(self, value: Any, name: str, warn: list[str]) -> Any:
        if not isinstance(value, dict):
            if value is not None:
                warn.append(f"field {name!r} is {_kind(value)}, not an object; skipped")
            return self.default()
        out = dict.fromkeys(self.keys + self.extra)
        for key, number in value.items():
            if key not in out:
                warn.append(f"unknown field {name}.{_name(key)} skipped")
            elif number is not None and not self.ok(number):
                problem = f"is out of range or not a number ({_kind(number)})"
                warn.append(f"field {name}.{key} {problem}; skipped")
            else:
                out[key] = number
        return {k: v for k, v in out.items() if k in self.keys or v}


class TextList:
    def default(self) -> list[str]:
        return []

    def save(self, value: Any) -> Any:
        return list(value)

    def load(self, value: Any) -> Any:
        return [str(w) for w in value or []]

    def check(self, value: Any, name: str, warn: list[str]) -> Any:
        if not isinstance(value, list):
            if value is not None:
                warn.append(f"field {name!r} is {_kind(value)}, not a list; skipped")
            return []
        if not all(isinstance(w, str) for w in value):
            warn.append(f"field {name!r} holds items that are not text; those are skipped")
        return [w for w in value if isinstance(w, str)]


class Blob:
    """A provider's JSON object (the request sent, signatures): kept, never rendered."""

    def default(self) -> dict[str, Any]:
        return {}

    def save(self, value: Any) -> Any:
        return _json_copy(value)

    def load(self, value: Any) -> Any:
        return dict(value or {})

    def check(self, value: Any, name: str, warn: list[str]) -> Any:
        if not isinstance(value or {}, dict):
            warn.append(f"field {name!r} is {_kind(value)}, not an object; skipped")
            return {}
        return _json_only(value or {})


@dataclass(frozen=True)
class Record:
    """A small object saved only when set (``continued``, ``replay``, ``cost``): ``valid`` reads
    what it may hold through its ``get``; None when it is not ``what`` it should be."""

    valid: Callable[[Callable[[str], Any]], dict[str, Any] | None]
    what: str

    def default(self) -> None:
        return None

    def save(self, value: Any) -> Any:
        return _json_copy(value)

    def load(self, value: Any) -> Any:
        return dict(value) if value else None

    def check(self, value: Any, name: str, warn: list[str]) -> Any:
        if value is None:
            return None
        get = value.get if isinstance(value, dict) else lambda _key: ...  # (... fails every check)
        kept = self.valid(get)
        if kept is None:
            warn.append(f"field {name!r} is not {self.what} ({_kind(value)}); skipped")
        return kept


def _continued(get: Callable[[str], Any]) -> dict[str, Any] | None:
    """``continued`` (see ``core.continuation``): a run number, a one-line hint, a count, and
    Answer now or More room's action and tokens (``core.rescue``), or a resume's point and
    whether its prefix was edited."""
    run, hint, chars = get("run"), get("hint"), get("reasoning_chars")
    if not ((run is None or (_count(run) and run > 0)) and isinstance(hint, str) and _count(chars)):
        return None
    kept = {"run": run, "hint": one_line(hint), "reasoning_chars": chars}
    action, room = get("action"), get("max_tokens")
    if action in ACTIONS[1:]:
        kept["action"] = action
    if _count(room) and room > 0:
        kept["max_tokens"] = room
    at, edited = get("at"), get("edited")
    if action == "resume" and _count(at) and isinstance(edited, bool):
        kept |= {"at": at, "edited": edited}  # (its prefix: the first reasoning_chars)
        if is_time(source := get("from_started_at")):
            kept["from_started_at"] = source
    return kept


def _replay(get: Callable[[str], Any]) -> dict[str, Any] | None:
    """``replay`` (see ``Trace.replay``): an ISO 8601 time and a pace."""
    when, pace = get("recorded_at"), get("pace")
    return {"recorded_at": when, "pace": pace} if is_time(when) and pace in PACES else None


_COST_USD = ("usd", "input_usd", "output_usd")
_COST_COUNTS = ("input_tokens", "output_tokens")


def _cost(get: Callable[[str], Any]) -> dict[str, Any] | None:
    """``cost`` (see ``core.cost``): dollars, an estimate mark, a price date and source; only
    these keys are kept, the source as one short line (it is shown in the views)."""
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
        return None
    kept = {k: get(k) for k in (*_COST_USD, *_COST_COUNTS) if get(k) is not None}
    return kept | {"estimate": True, "prices_as_of": as_of, "source": one_line(source)[:80]}


# -- the fields -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    name: str
    kind: Any
    when_set: bool = False
    """Saved only when set (a later field: older traces have none)."""


USAGE = Numbers(USAGE_KEYS, _count, extra=CACHE_KEYS)
TIMING = Numbers(TIMING_KEYS, _duration)
FIELDS = (
    Field("model", Text()),
    Field("provider", Text()),
    Field("preset", Text("auto")),
    Field("budget_tokens", Budget()),
    Field("prompt", Text()),
    Field("reasoning", Text()),
    Field("answer", Text()),
    Field("usage", USAGE),
    Field("timing", TIMING),
    Field("status", Status("complete")),
    Field("finish_reason", MAYBE_TEXT),
    Field("warnings", TextList()),
    Field("error", MAYBE_TEXT),
    Field("request", Blob()),
    Field("provider_state", Blob()),
    Field("started_at", MAYBE_TEXT),
    Field("continued", Record(_continued, "a valid continuation"), when_set=True),
    Field("replay", Record(_replay, "a valid replay"), when_set=True),
    Field("cost", Record(_cost, "a valid cost estimate"), when_set=True),
)
"""Every saved field, in the order ``to_dict`` writes them."""
TEXT_FIELDS = ("reasoning", "answer")
"""Left out of a replay recording's trace (its timeline holds the text)."""
KNOWN_FIELDS = frozenset({"schema", *(f.name for f in FIELDS)})


def saved(trace: Any, *, text: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": SCHEMA}
    for f in FIELDS:
        value = getattr(trace, f.name)
        if (text or f.name not in TEXT_FIELDS) and (value or not f.when_set):
            out[f.name] = f.kind.save(value)
    return out


def loaded(data: Any) -> dict[str, Any]:
    """The fields of our own saved form (unknown keys are ignored)."""
    if not isinstance(data, dict):
        raise TypeError("a saved trace must be a dict")
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise ValueError(f"saved trace has schema {schema!r}; this version reads schema 1")
    return {f.name: f.kind.load(data.get(f.name, f.kind.default())) for f in FIELDS}


def checked(data: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """The fields of a saved trace from anyone, and warnings: ``(fields, warnings)``; ``fields``
    is None when it cannot be read at all (see ``core.trace.read_trace``)."""
    if not isinstance(data, dict):
        return None, [f"saved trace is {_kind(data)}, not an object; it cannot be read"]
    warn: list[str] = []
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA or isinstance(schema, bool):
        shown = schema if _count(schema) else _kind(schema)
        warn.append(
            f"saved trace has schema {shown}; this version reads schema {SCHEMA} "
            "and keeps only the fields it knows"
        )
    warn += [f"unknown field {_name(key)} skipped" for key in data if key not in KNOWN_FIELDS]
    fields = {}
    for f in FIELDS:
        fields[f.name] = f.kind.check(data.get(f.name, f.kind.default()), f.name, warn)
    return fields, warn


def saved_variants(meta: dict[str, Any]) -> Any:
    """A ``--compare`` output's saved variants, first to last, as saved (unchecked); what its
    metadata holds instead of a list, for the caller to report; None for any other output."""
    if VARIANTS_KEY in meta:
        rest = meta[VARIANTS_KEY]
        return [meta.get(METADATA_KEY), *rest] if isinstance(rest, list) else rest
    return meta.get(COMPARE_KEY)


def variants_key(meta: dict[str, Any]) -> str:
    return VARIANTS_KEY if VARIANTS_KEY in meta else COMPARE_KEY


def stripped(trace: Any) -> dict[str, Any]:
    """The saved form with no reasoning: its text and the provider state (signatures,
    encrypted reasoning) are gone; counts and timings stay; ``schema`` stays 1."""
    data = trace.to_dict()
    data["reasoning"] = ""
    data["provider_state"] = {}
    return data
