"""``%think --search QUERY``: the runs of the log and of this notebook that match, as a table.

The flag is declared here (``SEARCH``); the magic adds it to its own. The rest of the line is
the query, as written: ``%think --search "sky is blue" scatter*`` asks for the phrase and the
prefix (the line is split as a shell splits it, so a quoted phrase comes back quoted). It
searches the run log (where there is one) and the traces saved in this notebook's file; a run
of this kernel, and any run saved in this notebook, links to its cell.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from ..options import Flag
from ..store.log import LOG
from ..views.search import NOTEBOOK, SearchResult, search
from .runners import CellError


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


def query_of(words: list[str]) -> str:
    """The query the line held: a word the shell's quotes kept together is a phrase again."""
    return " ".join(f'"{w}"' if " " in w.strip() and '"' not in w else w for w in words)


def run_search(words: list[str]) -> SearchResult:
    """The hits of the log and this notebook; a query that cannot be read: one line."""
    query = query_of(words)
    if not query.strip():
        raise CellError('%think: --search needs a query, e.g. %think --search "sky is blue".')
    try:
        return search(query, where=[LOG, NOTEBOOK])
    except (OSError, ValueError) as exc:  # QueryError; a log that is not one; not a notebook
        raise CellError(f"%think: {exc}") from None


def remember_cell(cells: dict[tuple, str], trace: Any, cell_id: str | None) -> None:
    """Note which cell ran ``trace`` (``Hit.key``), so a search links its logged run there."""
    if cell_id is not None:
        key = (trace.started_at, trace.model or trace.provider, trace.preset, trace.prompt)
        cells[key] = cell_id
