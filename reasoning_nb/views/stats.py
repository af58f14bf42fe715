"""Trace analytics: one row per run, from this session, anyone's saved notebook or the log.

Only the saved metadata is read, through :func:`~reasoning_nb.core.trace.read_trace`: a notebook
is untrusted input. Only complete runs are charted: cancelled, failed and truncated runs stopped
early, so their counts say where the run was cut, not what the preset spends, and replays repeat
a recorded run; all are listed. Answer tokens are output minus reasoning (every provider here
counts reasoning inside its output). The columns are described in the README.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.schema import HISTORY_KEY, METADATA_KEY, saved_variants, variants_key
from ..core.text import clip, one_line
from ..core.tokens import count, estimate, reasoning_tokens
from ..core.trace import Trace, read_trace
from ..store.log import is_log, read_log
from .markdown_safety import md_escape
from .stats_chart import chart_lines
from .stats_html import html_view
from .stats_table import (
    COLUMNS,
    PROMPT_CHARS,
    cell_text,
    is_number,
    laid_out,
    legend,
    markdown_lines,
    plain_lines,
    warning_lines,
)

BUFFERED_MS = 50.0
"""Reasoning that took less than this (ms) arrived in one piece."""
BUFFERED_RATE = 2000.0
"""Reasoning faster than this (tokens/s) was released by a buffer, not generated live."""
UNTIMED_CHARS = 200
"""Reasoning this long with no timing at all did not stream."""
MAX_NOTES = 50


def stats(source: Any = None, *, since: Any = None) -> TraceStats:
    """Tabulate traces from a ``.ipynb`` path, a notebook, a trace or a list of them, the trace
    log (``"log"`` or a ``.sqlite3``, ``.sqlite`` or ``.db`` path; ``since``: an ISO date or
    datetime, UTC unless it says otherwise), or None: this session's ``%%think`` runs."""
    reader = _Reader()
    is_path = isinstance(source, (str, os.PathLike))
    if since is not None and not (is_path and is_log(source)):
        raise TypeError("since= filters the trace log only: stats('log', since=...)")
    if source is None:
        rows = _session_rows()
        if rows is not None:
            return session_stats(rows)
        reader.add_note("no %think session here: %load_ext reasoning_nb, or pass a notebook")
    elif is_path and is_log(source):
        read_log(source, since, reader)
    elif is_path:
        reader.notebook(_load(Path(source)))
    elif isinstance(source, dict) and "cells" in source:
        reader.notebook(source)
    elif isinstance(source, (Trace, dict)):
        reader.items([source])
    elif isinstance(source, Iterable):
        reader.items(list(source))
    else:
        raise TypeError(f"stats() reads a notebook or traces, not {type(source).__name__}")
    more = [f"… and {reader.dropped} more notes"] if reader.dropped else []
    return TraceStats(reader.rows, reader.notes + more)


def session_stats(rows: Iterable[dict[str, Any]]) -> TraceStats:
    """A session's runs, numbered, from the rows ``%%think`` kept of them."""
    return TraceStats([{**r, "source": f"#{i}"} for i, r in enumerate(rows, 1)], [])


def _session_rows() -> Iterable[dict[str, Any]] | None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the package
        return None
    shell = get_ipython()
    magics = shell and shell.magics_manager.registry.get("ThinkMagics")
    return getattr(magics, "stats_rows", None)


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a notebook (not JSON: {exc})") from None
    except RecursionError:  # JSON nested past the parser's stack: no notebook is that deep
        raise ValueError(f"{path} is not a notebook (its JSON is nested too deeply)") from None


class _Reader:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.dropped = 0
        self.cell_number: int | None = None  # of the notebook cell being read
        self.cell_id: str | None = None

    def add_note(self, text: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(one_line(text))
        else:
            self.dropped += 1

    def items(self, items: list[Any]) -> None:
        for i, item in enumerate(items, 1):
            self.add(item.to_dict() if isinstance(item, Trace) else item, f"#{i}")

    def add(self, data: Any, source: str, *, replay: bool = False) -> None:
        trace, problems = read_trace(data)
        for problem in problems:
            self.add_note(f"{source}: {problem}" + ("" if trace else "; skipped"))
        if trace is not None:
            found = row(trace, source)
            found["replay"] = found["replay"] or replay
            self.rows.append(found)

    def notebook(self, nb: Any) -> None:
        cells = nb.get("cells") if isinstance(nb, dict) else None
        if not isinstance(cells, list):
            self.add_note("not an nbformat 4 notebook (no list of cells); nothing read")
            return
        for n, cell in enumerate(cells, 1):
            outputs = cell.get("outputs") if isinstance(cell, dict) else None
            for output in outputs if isinstance(outputs, list) else []:
                meta = output.get("metadata") if isinstance(output, dict) else None
                if isinstance(meta, dict) and METADATA_KEY in meta:
                    found = cell.get("id")
                    self.cell_number, self.cell_id = n, found if isinstance(found, str) else None
                    self.output(meta, f"cell {n}")

    def output(self, meta: dict[str, Any], cell: str) -> None:
        """Earlier preset runs then the last, or every --compare variant."""
        variants = saved_variants(meta)
        if variants is not None:
            runs = self.listed(variants, variants_key(meta), cell)
            if runs:
                for k, data in enumerate(runs, 1):
                    self.add(data, f"{cell} variant {k}/{len(runs)}")
                return
        runs = [*self.listed(meta.get(HISTORY_KEY, []), HISTORY_KEY, cell), meta[METADATA_KEY]]
        for k, data in enumerate(runs, 1):
            self.add(data, cell if len(runs) == 1 else f"{cell} run {k}/{len(runs)}")

    def listed(self, found: Any, key: str, cell: str) -> list[Any]:
        """``found`` (saved under ``key``) if it is a list; else noted, and none."""
        if not isinstance(found, list):
            self.add_note(f"{cell}: {key} is {type(found).__name__}, not a list; skipped")
            return []
        return found


def _estimate(text: str) -> tuple[int, bool]:
    return (estimate(len(text)), True) if text else (0, False)


def is_buffered(reasoning: str, tokens: int, reasoning_ms: float | None) -> bool:
    """Reasoning present, but its timing cannot be a stream (a proxy or a non-streamed
    reasoning field sends it whole: the time says nothing about thinking)."""
    if not reasoning:
        return False
    if reasoning_ms is None:
        return len(reasoning) >= UNTIMED_CHARS
    return reasoning_ms < BUFFERED_MS or tokens / (reasoning_ms / 1000) > BUFFERED_RATE


def row(trace: Trace, source: str = "") -> dict[str, Any]:
    usage, timing = trace.usage, trace.timing
    said_reasoning = count(usage.get("reasoning_tokens"))  # (10**400 is valid JSON)
    said_output = count(usage.get("output_tokens"))
    chars_r, chars_a = len(trace.reasoning), len(trace.answer)
    counted, reasoning_est = reasoning_tokens(said_reasoning, said_output, chars_r, chars_a)
    reasoning = counted or 0
    if said_output is not None:
        answer, answer_est = max(0, said_output - reasoning), reasoning_est and chars_a > 0
        output, output_est = said_output, False
    else:
        answer, answer_est = _estimate(trace.answer)
        output, output_est = reasoning + answer, reasoning_est or answer_est
    first, total = timing.get("first_token_ms"), timing.get("total_ms")
    rate = None
    if first is not None and total is not None and total - first >= BUFFERED_MS and output:
        rate = round(output / ((total - first) / 1000), 1)
    return {
        "source": source,
        "model": trace.model or trace.provider,
        "provider": trace.provider,
        "preset": trace.preset,
        "budget_tokens": trace.budget_tokens,
        "status": trace.status,
        "continued": bool(trace.continued),  # re-asked after a stop (see core.continuation)
        "replay": bool(trace.replay),  # served from the replay cache: the recorded run's numbers
        "prompt": clip(trace.prompt, PROMPT_CHARS),
        "reasoning_tokens": reasoning,
        "reasoning_estimated": reasoning_est,
        "answer_tokens": answer,
        "answer_estimated": answer_est,
        "output_tokens": output,
        "output_estimated": output_est,
        "first_token_ms": first,
        "reasoning_ms": timing.get("reasoning_ms"),
        "total_ms": total,
        "buffered": is_buffered(trace.reasoning, reasoning, timing.get("reasoning_ms")),
        "tokens_per_s": rate,
        "tokens_per_s_estimated": rate is not None and output_est,
        "warnings": list(trace.warnings),
        "started_at": trace.started_at,
        "cost_usd": (trace.cost or {}).get("usd"),  # read_trace checked it; None: no cost known
        "prices_as_of": (trace.cost or {}).get("prices_as_of"),
    }


@dataclass
class TraceStats:
    """The table: ``rows`` (one dict per trace), ``notes`` (what was skipped and why), and
    HTML, markdown and plain-text views (each with a chart where one helps), and CSV."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def table(self, *, full: bool = False) -> list[list[str]]:
        """The head, then a row of text cells per run: the columns a row fills, each row's
        own warnings (:meth:`shared_warnings` are said once, not on every row)."""
        _, rows, columns = laid_out(self.rows)
        head = [title for _, title, _ in columns]
        return [head] + [[cell_text(r, key, full=full) for key, _, _ in columns] for r in rows]

    def _numbers(self) -> tuple[bool, ...]:
        return tuple(is_number(key) for key, _, _ in laid_out(self.rows)[2])

    def shared_warnings(self) -> list[str]:
        """The warnings every run has, shown once above the table."""
        return laid_out(self.rows)[0]

    def legend(self) -> list[str]:
        return legend(self.rows)

    def chart(self) -> list[str]:
        """Reasoning tokens by preset, a bar per model and preset, as lines of text; empty when
        a chart would not help (nothing to compare)."""
        return chart_lines(self.rows)

    def _above(self) -> list[str]:
        return warning_lines(self.rows)

    def __str__(self) -> str:
        if not self.rows:
            return "\n".join(["No traces.", *self.notes])
        lines = [*self._above(), *plain_lines(self.table(), rule=True, right=self._numbers())]
        chart = ["", *self.chart()] if self.chart() else []
        notes = (f"! {n}" for n in self.notes)
        return "\n".join([*lines, *chart, "", *self.legend(), *notes])

    def __repr__(self) -> str:
        return f"<TraceStats: {len(self.rows)} trace{'' if len(self.rows) == 1 else 's'}>"

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_markdown_(self) -> str:
        if not self.rows:
            return "\n\n".join(["*No traces.*", *(md_escape(n) for n in self.notes)])
        above = "  \n".join(map(md_escape, self._above()))
        lines = markdown_lines(self.table(), self._numbers())
        chart = _fenced(self.chart()) if self.chart() else ""
        notes = [*map(md_escape, self.legend()), *(f"⚠ {md_escape(n)}" for n in self.notes)]
        parts = [above, "\n".join(lines), chart, "  \n".join(notes)]
        return "\n\n".join(p for p in parts if p)

    def _repr_html_(self) -> str:
        return html_view(self.rows, self.notes)

    def to_csv(self, path: str | os.PathLike | None = None) -> str:
        """Every row key as a column (warnings joined by `` | ``); written to ``path`` if given.
        Text that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``) is quoted."""
        keys = list(self.rows[0]) if self.rows else [key for key, _, _ in COLUMNS]
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(keys)
        for r in self.rows:
            writer.writerow(_csv_cell(r.get(k)) for k in keys)
        text = buffer.getvalue()
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text


def _fenced(lines: list[str]) -> str:
    """A markdown code block no backticks in the labels can close."""
    longest = max((len(run) for run in re.findall("`+", "\n".join(lines))), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence, *lines, fence])


def _csv_cell(value: Any) -> Any:
    if isinstance(value, list):
        value = " | ".join(one_line(str(v)) for v in value)
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value


__all__ = ["TraceStats", "is_buffered", "row", "stats"]
