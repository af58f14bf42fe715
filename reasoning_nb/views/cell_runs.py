"""Which run a ``%%think`` cell's saved output shows, and the cell line that asks for it.

A cell's runs after the first come from the widget (a dropdown re-run, Continue), not from its
line: the line may say ``--preset low`` while the output shows the ``medium`` run. The line is
cell text and the traces may come from a saved notebook: callers escape what this returns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.subject import LIMIT, shorten
from ..core.text import one_line, parse_time

if TYPE_CHECKING:
    from ..core.trace import Trace

# --preset X, --preset=X, -p X, -pX (argparse takes the last one given)
_PRESET_FLAG = re.compile(r"(?<=\s)(--preset(?:=|\s+)|-p\s*)(\S+)")
_PRESET_VALUE = re.compile(r"[\w.-]{1,24}")
"""A preset name that may go into a line (a saved trace's preset is attacker text)."""
LINE_LIMIT = 400
"""A longer first line is not offered back (it is not a ``%%think`` line anyone typed)."""


def line_preset(line: str) -> str | None:
    found = _PRESET_FLAG.findall(line)
    return found[-1][1] if found else None


def with_preset(line: str, preset: str) -> str:
    """``line`` asking for ``preset``: its preset flags replaced, or ``--preset`` added."""
    if _PRESET_FLAG.search(line):
        return _PRESET_FLAG.sub(lambda m: m.group(1) + preset, line)
    return f"{line.rstrip()} --preset {preset}"


def first_line(source: str) -> str:
    """A cell's ``%%think`` line, or "" when its source does not start with one."""
    line = source.lstrip("\n").split("\n", 1)[0].rstrip("\r")
    ok = line.startswith("%%think") and len(line) <= LINE_LIMIT
    return line if ok and line == one_line(line) else ""


@dataclass(frozen=True)
class CellRuns:
    """A cell's ``%%think`` line and its earlier runs, oldest first (the shown run is the last:
    the saved output always shows a cell's newest run)."""

    line: str = ""
    earlier: tuple[Trace, ...] = ()

    def matching_line(self, trace: Trace) -> str:
        """The line that asks for ``trace``'s preset, when the cell's line asks another; ""."""
        first = (self.earlier[0] if self.earlier else trace).preset
        return line_for(self.line, trace, first)

    def label(self, trace: Trace) -> str:
        """``Run 2 of 2 · preset medium · continues run 1`` for a cell run more than once."""
        if not self.earlier:
            return ""
        total = len(self.earlier) + 1
        return run_label(total, trace, total)


def line_for(line: str, trace: Trace, first: str) -> str:
    """The cell line that asks for ``trace`` (see :func:`matching_line`); "" for a run that
    continued another (Continue, Answer now, More room): no line asks for that again."""
    return "" if trace.continued else matching_line(line, trace.preset, first)


def matching_line(line: str, preset: str, first: str) -> str:
    """``line`` asking for ``preset``, when it asks for another; "". A line with no preset
    flag asks for what the cell's ``first`` run used (the session's default then)."""
    if not line or preset == (line_preset(line) or first):
        return ""
    return with_preset(line, preset) if _PRESET_VALUE.fullmatch(preset) else ""


def run_label(number: int, trace: Trace, total: int | None = None) -> str:
    """``Run 2 of 3 · preset medium · continues run 1`` (``Run 2 · …`` without a total)."""
    parts = [f"Run {number}" + (f" of {total}" if total else "")]
    parts.append(f"preset {one_line(trace.preset)[:24]}")
    parts.append(origin(trace.continued))
    parts.append("replay" if trace.replay else "")
    return " · ".join(p for p in parts if p)


def replay_line(trace: Trace) -> str:
    """``replay of a run recorded 2026-11-25 05:10 UTC, at its recorded pace``, or ""."""
    if not trace.replay:
        return ""
    when = recorded_at(trace.replay.get("recorded_at"))
    pace = "at its recorded pace" if trace.replay.get("pace") == "recorded" else "instantly"
    of = f"a run recorded {when}" if when else "a recorded run"
    return f"replay of {of}, played back {pace}"


ACTION_NOTES = {"answer_now": "answer now", "more_room": "more room"}


def continued_line(continued: dict | None, *, short: bool = False) -> str:
    """``continues run 1 · hint: think about the ocean`` for a run that continues a stopped one
    (see ``core.continuation``); ``short``: the hint cut to a status line's length."""
    if not continued:
        return ""
    note = origin(continued)
    action = ACTION_NOTES.get(continued.get("action"))
    if action:
        note += f" · {action}"
        if isinstance(continued.get("max_tokens"), int):
            note += f" ({continued['max_tokens']} tokens)"
    hint = " ".join(str(continued.get("hint") or "").split())
    if short and hint:  # (one word longer than a line: its start)
        hint = shorten(hint) or hint[:LIMIT] + "…"
    return f"{note} · hint: {hint}" if hint else note


def origin(continued: dict | None) -> str:
    """Where a continued run came from: ``continues run 1``, or for a run that went on from a
    point in another's reasoning ``continued from run 2 at char 120, edited``; "" for none."""
    if not continued:
        return ""
    run = continued.get("run")
    if continued.get("action") != "resume":
        return f"continues run {run}" if run else "continues a stopped run"
    at = continued.get("at")
    where = f" at char {at:,}" if isinstance(at, int) else ""
    edited = ", edited" if continued.get("edited") is True else ""
    return f"continued from {f'run {run}' if run else 'an earlier run'}{where}{edited}"


def recorded_at(value: object) -> str:
    """An ISO 8601 time as ``2026-11-25 05:10 UTC``; "" when it is not one."""
    if not isinstance(value, str):
        return ""
    try:
        return parse_time(value).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return ""
