"""``%think --search QUERY``: the runs of the log and of this notebook that match, as a table.

The flags are declared here (``SEARCH_FLAGS``); the magic adds them to its own. The rest of
the line is the query, as written: ``%think --search "sky is blue" scatter*`` asks for the
phrase and the prefix (the line is split as a shell splits it, so a quoted phrase comes back
quoted); ``--reasoning-first`` goes before ``--search``. It searches the run log (where there
is one) and the traces saved in this notebook's file; a run of this kernel, and any run saved
in this notebook, links to its cell.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from ..options import Flag
from ..store.log import LOG
from ..views.search import NOTEBOOK, SearchResult, search
from .runners import CellError

MAX_RUN_CELLS = 10_000
"""Runs of this kernel whose cell a search can link to (as many as ``%think --stats`` keeps)."""


@dataclass(frozen=True)
class _Rest(Flag):
    """A flag that takes the rest of the line, whatever it holds."""

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "nargs": argparse.REMAINDER}


SEARCH = _Rest(
    ("--search",),
    "(line form) the runs of the log and of this notebook whose prompt, reasoning or answer "
    'match: words, `"a phrase"`, `prefix*`, `OR`; the rest of the line is the query',
    metavar="QUERY",
)
SEARCH_FLAGS = (
    Flag(
        ("--reasoning-first",),
        "with `--search`, before it: the runs that match in the reasoning come first",
        bool,
    ),
    SEARCH,
)
"""The search's flags (``--search`` last: it takes the rest of the line)."""


def query_of(words: list[str]) -> str:
    """The query the line held: a word the shell's quotes kept together is a phrase again."""
    return " ".join(f'"{w}"' if " " in w.strip() and '"' not in w else w for w in words)


def check_search(args: Any, cell: str | None) -> None:
    """``--search`` in the cell form, or ``--reasoning-first`` without it: one line."""
    if cell is not None and args.search is not None:
        raise CellError("%%think: --search is for the line form (%think --search QUERY).")
    if args.reasoning_first and args.search is None:
        raise CellError("%think: --reasoning-first is for --search; put it before --search.")


def run_search(words: list[str], reasoning_first: bool = False) -> SearchResult:
    """The hits of the log and this notebook; a query that cannot be read: one line."""
    query = query_of(words)
    if not query.strip():
        raise CellError('%think: --search needs a query, e.g. %think --search "sky is blue".')
    try:
        return search(query, where=[LOG, NOTEBOOK], reasoning_first=reasoning_first)
    except (OSError, ValueError) as exc:  # QueryError; a log that is not one; not a notebook
        raise CellError(f"%think: {exc}") from None


def remember_cell(cells: dict[tuple, str], trace: Any, cell_id: str) -> None:
    """Note which cell ran ``trace`` (``Hit.key``), so a search links its logged run there;
    ``cell_id`` "": the front end did not say."""
    if cell_id:
        key = (trace.started_at, trace.model or trace.provider, trace.preset, trace.prompt)
        cells[key] = cell_id
        if len(cells) > MAX_RUN_CELLS:  # the oldest first (a dict keeps its order)
            del cells[next(iter(cells))]
