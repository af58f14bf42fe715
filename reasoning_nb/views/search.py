"""``reasoning_nb.search``: find the runs whose prompt, reasoning or answer say something.

    search("rayleigh")                          # the run log
    search('"sky is blue" scatter*', where="notebook", reasoning_first=True)
    search("loop", where="their.ipynb")         # or a .sqlite3 log

The log is searched through its full-text index (``store.search``); a notebook's saved traces
(read as ``stats()`` reads them, untrusted) through an index built in memory for the search.
Each hit says where its run is: ``log #id`` and, for a notebook, its cell (number and id), with
a link Lab follows (``NB.ipynb#cell-id=ID``) where the notebook is this kernel's or its path is
known from it. A run of this kernel found in the log links to the cell that ran it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..core.trace import Trace, read_trace
from ..store.log import LOG, is_log
from ..store.search import QueryError, search_log, search_texts
from .search_view import html_view, plain, text_view
from .stats import _load, _Reader

NOTEBOOK = "notebook"
LIMIT = 50
SESSION_NAMES = ("__session__", "__vsc_ipynb_file__")
"""Where a kernel holds its notebook's path: ipykernel sets ``__session__`` from the server's
``JPY_SESSION_NAME`` (jupyter_server 2, ipykernel 6.10+); VS Code sets its own."""
FRAME_COLUMNS = (
    "source",
    "started_at",
    "model",
    "preset",
    "status",
    "prompt",
    "found",
    "prompt_snippet",
    "reasoning_snippet",
    "answer_snippet",
    "cell",
    "cell_id",
)
NO_PANDAS = "A search's frame needs pandas: pip install pandas, then call .frame() again."


@dataclass(frozen=True)
class Hit:
    """One run that matched: what it was, where it is, and a snippet of each part the query
    matched in (``snippets``: ``(part, text)``, the match between ``store.search.MARK`` and
    ``END``; ``part`` is "prompt", "reasoning" or "answer")."""

    source: str
    prompt: str
    model: str
    preset: str
    started_at: str | None
    status: str
    snippets: tuple[tuple[str, str], ...]
    cell: int | None = None
    """The cell's number in its notebook (1-based), for a hit from a notebook."""
    cell_id: str | None = None
    link: str | None = None
    """Where Lab opens the cell (relative to this kernel's notebook), or None."""
    rank: float = 0.0

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(part for part, _ in self.snippets)

    def key(self) -> tuple:
        """What says two hits are one run (a logged run also saved in the notebook)."""
        return (self.started_at, self.model, self.preset, self.prompt)


class SearchResult(list):
    """The hits, best first, as a list; a table as text and HTML, ``.frame()`` for pandas.
    ``notes``: the sources that could not be read, one sentence each."""

    def __init__(self, query: str, hits: Iterable[Hit] = (), notes: Iterable[str] = ()):
        super().__init__(hits)
        self.query = query
        self.notes = list(notes)

    def frame(self) -> Any:
        """One row per hit (``FRAME_COLUMNS``), the snippets as plain text, the match between
        ``«`` and ``»``."""
        try:
            import pandas  # optional, as for a sweep's frame
        except ImportError:
            raise ImportError(NO_PANDAS) from None
        rows = []
        for hit in self:
            snippets = dict(hit.snippets)
            rows.append(
                {
                    "source": hit.source,
                    "started_at": hit.started_at,
                    "model": hit.model,
                    "preset": hit.preset,
                    "status": hit.status,
                    "prompt": hit.prompt,
                    "found": ", ".join(hit.parts),
                    "cell": hit.cell,
                    "cell_id": hit.cell_id,
                    **{
                        f"{p}_snippet": plain(snippets[p]) if p in snippets else None
                        for p in ("prompt", "reasoning", "answer")
                    },
                }
            )
        return pandas.DataFrame(rows, columns=list(FRAME_COLUMNS))

    def __str__(self) -> str:
        return text_view(self.query, list(self), self.notes)

    def __repr__(self) -> str:
        return f"<SearchResult {self.query!r}: {len(self)} run{'' if len(self) == 1 else 's'}>"

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        return html_view(self.query, list(self), self.notes)


def search(
    query: str,
    where: str | os.PathLike | Iterable[str | os.PathLike] = LOG,
    *,
    reasoning_first: bool = False,
    limit: int | None = LIMIT,
) -> SearchResult:
    """The runs whose prompt, reasoning or answer match ``query``, best first (``limit`` of
    them; None: all). ``where``: ``"log"`` (the run log), ``"notebook"`` (the traces saved in
    this kernel's notebook file, as last saved), a ``.ipynb`` or ``.sqlite3`` path, or a list
    of these (a source that cannot be read is then a note, not an error). The query is
    SQLite FTS5's: words, ``"a phrase"``, ``prefix*``, ``OR``; ``reasoning_first`` puts runs
    that match in the reasoning before the rest. A query FTS5 cannot read raises
    ``store.search.QueryError`` (a ValueError) saying how to write one."""
    many = not isinstance(where, (str, os.PathLike))
    hits: list[Hit] = []
    notes: list[str] = []
    seen: dict[tuple, int] = {}
    for source in list(where) if many else [where]:
        try:
            found = _search_one(query, source, reasoning_first, limit)
        except QueryError:
            raise
        except (OSError, LookupError, ValueError) as exc:  # no log, no notebook, not one
            if not many:
                raise
            notes.append(str(exc))
            continue
        for hit in found:
            if hit.key() in seen:  # a logged run also saved in the notebook: keep its cell
                if hit.cell_id is not None:
                    hits[seen[hit.key()]] = hit
                continue
            seen[hit.key()] = len(hits)
            hits.append(hit)
    if many:  # each source ranked its own; those in the reasoning first where asked
        hits.sort(key=lambda h: (reasoning_first and "reasoning" not in h.parts, h.rank))
    return SearchResult(query, hits[:limit] if limit is not None else hits, notes)


def _search_one(query: str, source: Any, reasoning_first: bool, limit: int | None) -> list[Hit]:
    if source == NOTEBOOK:
        source = current_notebook()
        if source is None:
            raise LookupError(
                "This is not a notebook kernel that names its file: pass the notebook's path, "
                "search(query, where='analysis.ipynb')."
            )
    if isinstance(source, (str, os.PathLike)) and is_log(source):
        return _log_hits(query, None if source == LOG else Path(source), reasoning_first, limit)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"where= names 'log', 'notebook' or a path, not {type(source).__name__}")
    return _notebook_hits(query, Path(source), reasoning_first, limit)


def _log_hits(query: str, path: Path | None, first: bool, limit: int | None) -> list[Hit]:
    cells = kernel_cells()
    hits = []
    for row, match in search_log(query, path, reasoning_first=first, limit=limit):
        hit = Hit(
            f"log #{row['id']}",
            row["prompt"] or "",
            row["model"] or row["provider"] or "",
            row["preset"] or "",
            row["started_at"],
            row["status"] or "",
            match.snippets,
            rank=match.rank,
        )
        cell_id = cells.get(hit.key())
        if cell_id is not None:
            hit = _in_cell(hit, None, cell_id, current_notebook())
        hits.append(hit)
    return hits


class _Traces(_Reader):
    """The stats reader, keeping each trace and its cell instead of a row of numbers."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[Trace, str, int | None, str | None]] = []

    def add(self, data: Any, source: str, *, replay: bool = False) -> None:
        trace, _ = read_trace(data)
        if trace is not None:
            self.found.append((trace, source, self.cell_number, self.cell_id))


def _notebook_hits(query: str, path: Path, first: bool, limit: int | None) -> list[Hit]:
    if not path.is_file():
        raise FileNotFoundError(f"No notebook at {path}: save it first, or check the path.")
    reader = _Traces()
    reader.notebook(_load(path))
    texts = [(t.prompt, t.reasoning, t.answer) for t, _, _, _ in reader.found]
    hits = []
    for match in search_texts(texts, query, reasoning_first=first, limit=limit):
        trace, source, number, cell_id = reader.found[match.rowid - 1]
        hit = Hit(
            source,
            trace.prompt,
            trace.model or trace.provider,
            trace.preset,
            trace.started_at,
            trace.status,
            match.snippets,
            rank=match.rank,
        )
        hits.append(_in_cell(hit, number, cell_id, path))
    return hits


def _in_cell(hit: Hit, number: int | None, cell_id: str | None, notebook: Path | None) -> Hit:
    link = None
    here = current_notebook()
    if cell_id and notebook is not None and here is not None:
        target = os.path.relpath(Path(notebook).resolve(), Path(here).resolve().parent)
        link = f"{quote(Path(target).as_posix())}#cell-id={quote(cell_id)}"
    return replace(hit, cell=number, cell_id=cell_id, link=link)


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the package
        return None
    return get_ipython()


def current_notebook() -> Path | None:
    """This kernel's notebook file, where the front end said which (None: a console, a plain
    Python, a front end that does not say)."""
    shell = _shell()
    names = getattr(shell, "user_ns", {}) if shell is not None else {}
    for name in SESSION_NAMES:
        found = names.get(name)
        if isinstance(found, str) and found.endswith(".ipynb"):
            return Path(found)
    found = os.environ.get("JPY_SESSION_NAME", "") if shell is not None else ""
    return Path(found) if found.endswith(".ipynb") else None


def kernel_cells() -> dict[tuple, str]:
    """Which cell ran each of this kernel's runs (``ThinkMagics.run_cells``), by ``Hit.key``."""
    shell = _shell()
    magics = shell and shell.magics_manager.registry.get("ThinkMagics")
    return dict(getattr(magics, "run_cells", None) or {})


__all__ = ["Hit", "SearchResult", "current_notebook", "search"]
