"""Search over a real SQLite log: the FTS5 index kept in step by its triggers, built once for a
log from before it, phrase and prefix queries, reasoning-first ranking, a bad query's one
sentence, a read-only log searched through an index in memory, and a saved notebook's traces
(cell number and id, escaped snippets)."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import nbformat
import pytest
from test_stats_log import run, write_log

from reasoning_nb import Trace, search
from reasoning_nb.store import db, fts
from reasoning_nb.store.search import MARK, QueryError


@pytest.fixture
def log(tmp_path, monkeypatch):
    """A log of the test's own, as ``"log"``; the kept connections are closed after."""
    path = tmp_path / "runs.sqlite3"
    monkeypatch.setenv("REASONING_NB_DB", str(path))
    yield path
    db._forget()


def trace(prompt: str, reasoning: str, answer: str, **kw) -> dict:
    return Trace(
        model=kw.pop("model", "llamacpp:m"), provider="llamacpp", preset=kw.pop("preset", "high"),
        prompt=prompt, reasoning=reasoning, answer=answer, status="complete",
        started_at=kw.pop("started_at", "2026-01-02T03:04:05Z"), **kw,
    ).to_dict()  # fmt: skip


def indexed(path) -> list[tuple]:
    """What the index holds, read through FTS5 itself (its own check of content and words)."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(f"INSERT INTO {fts.TABLE} ({fts.TABLE}) VALUES ('integrity-check')")
        return conn.execute(
            f"SELECT rowid FROM {fts.TABLE} WHERE {fts.TABLE} MATCH 'sky'"
        ).fetchall()


def sources(result) -> list[str]:
    return [hit.source for hit in result]


def test_the_triggers_keep_the_index_in_step(log):
    db.log_runs([trace("Why is the sky blue?", "Rayleigh scattering", "Short waves scatter.")])
    assert sources(search("rayleigh")) == ["log #1"]
    with closing(sqlite3.connect(log)) as conn, conn:  # another writer, plain SQL
        conn.execute("UPDATE runs SET reasoning = 'Mie scattering' WHERE id = 1")
        conn.execute(
            "INSERT INTO runs (prompt, reasoning, answer, trace) "
            "VALUES ('sky at dusk', 'red sky', 'Red.', '{}')"
        )
    assert sources(search("rayleigh")) == []
    assert sources(search("mie")) == ["log #1"]
    assert sorted(sources(search("sky"))) == ["log #1", "log #2"]
    with closing(sqlite3.connect(log)) as conn, conn:
        conn.execute("DELETE FROM runs WHERE id = 2")
    assert sources(search("sky")) == ["log #1"]
    assert indexed(log) == [(1,)]  # integrity-check passed: the index matches the rows
    db.clear(log=True)
    assert sources(search("sky")) == []


def test_a_log_from_before_the_index_gets_it_once(tmp_path, monkeypatch):
    path = write_log(tmp_path / "old.sqlite3", [run(prompt=f"sky {i}") for i in range(3)])
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("PRAGMA user_version = 2")  # the version of the sweep ids, no index
    assert not fts.has_index(sqlite3.connect(path))
    hits = search("sky", where=str(path))
    assert sorted(sources(hits)) == ["log #1", "log #2", "log #3"]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == db.SEARCH_INDEX
        assert fts.has_index(conn)
        [(rebuilt,)] = conn.execute(f"SELECT COUNT(*) FROM {fts.TABLE}_docsize").fetchall()
    assert rebuilt == 3  # built from the three rows already there
    # once: a second connection finds the version and builds nothing (a rebuild would fail on
    # a table that cannot be written, so make it one that FTS5 cannot write)
    db._forget()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(f"CREATE TRIGGER no_rebuild BEFORE INSERT ON {fts.TABLE}_data "
                     "BEGIN SELECT RAISE(ABORT, 'rebuilt again'); END")  # fmt: skip
    assert len(search("sky", where=str(path))) == 3
    db._forget()


def test_phrase_and_prefix_queries(log):
    db.log_runs([
        trace("a", "the sky is blue because light scatters", "blue"),
        trace("b", "blue is the sky over the sea", "sea"),
        trace("c", "reasonable reasoning", "none"),
    ])  # fmt: skip
    assert sources(search('"sky is blue"')) == ["log #1"]
    assert sorted(sources(search("sky blue"))) == ["log #1", "log #2"]  # words: any order
    assert sources(search("reason*")) == ["log #3"]
    [hit] = search("scatter*")
    assert hit.parts == ("reasoning",)
    assert f"{MARK}scatters" in hit.snippets[0][1]
    assert (hit.prompt, hit.model, hit.preset, hit.started_at) == (
        "a", "llamacpp:m", "high", "2026-01-02T03:04:05Z",
    )  # fmt: skip


def test_reasoning_first_puts_hits_in_the_reasoning_ahead(log):
    # the answer-only hits rank better on their own (short texts, the word twice)
    db.log_runs([
        trace("q1", "nothing here " * 50, "zebra zebra"),
        trace("q2", "a long thought that mentions zebra once " + "filler " * 200, "no"),
        trace("q3", "plain", "zebra zebra zebra"),
    ])  # fmt: skip
    assert sources(search("zebra"))[-1] == "log #2"
    first = search("zebra", reasoning_first=True)
    assert sources(first)[0] == "log #2"
    assert [h.parts for h in first] == [("reasoning",), ("answer",), ("answer",)]


@pytest.mark.parametrize("query", ['"unclosed', "AND", "gpt-4o", "foo:bar", "(", "*", "  "])
def test_a_bad_query_says_how_to_write_one(log, query):
    db.log_runs([trace("p", "r", "a")])
    with pytest.raises(QueryError) as caught:
        search(query)
    sentence = str(caught.value)
    assert "sqlite" not in sentence.lower() and "fts5" not in sentence.lower()
    assert '"exact words"' in sentence and "reason*" in sentence
    assert sentence.count(". ") == 0 and sentence.endswith(".")  # one sentence


def test_a_read_only_log_is_searched_in_memory(small_disk):
    path = write_log(small_disk.path / "ro.sqlite3", [run(prompt="sky"), run(prompt="sea")])
    small_disk.read_only()
    try:
        assert sources(search('"sky"', where=str(path))) == ["log #1"]
        with closing(sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)) as conn:
            assert not fts.has_index(conn)  # nothing was built, nor could be
    finally:
        db._forget()


def test_a_missing_or_foreign_log_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"No trace log at .*turn logging on"):
        search("x", where=str(tmp_path / "none.sqlite3"))
    assert not (tmp_path / "none.sqlite3").exists()  # the search created nothing
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(ValueError, match="is not a reasoning_nb trace log"):
        search("x", where=str(other))
    with closing(sqlite3.connect(other)) as conn:  # nor added the log's tables to it
        names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    assert names == {"t"}


def notebook_file(path, runs: list[tuple[str, dict]]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# notes")]
    for cell_id, saved in runs:
        cell = nbformat.v4.new_code_cell("%%think\nQ")
        cell.id = cell_id
        cell.outputs = [nbformat.v4.new_output(
            "display_data", data={"text/plain": "…"}, metadata={"reasoning_nb": saved},
        )]  # fmt: skip
        nb.cells.append(cell)
    nbformat.write(nb, path)


def test_a_notebook_file_names_each_hit_s_cell_and_escapes_its_snippet(tmp_path):
    path = tmp_path / "nb.ipynb"
    evil = "<script>alert(1)</script> the sky <b>is</b> blue"
    notebook_file(path, [
        ("first-cell", trace("Why?", "thinking about the sea", "The sea.")),
        ("second-cell", trace("Sky?", evil, "Blue </mark><img src=x onerror=alert(1)>")),
    ])  # fmt: skip
    result = search("sky blue", where=str(path))
    [hit] = result
    assert (hit.source, hit.cell, hit.cell_id) == ("cell 3", 3, "second-cell")
    assert hit.link is None  # no kernel here says which notebook links are relative to
    page = result._repr_html_()
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;" in page and "<mark>sky</mark>" in page
    assert page.count("<mark>") == page.count("</mark>")  # the answer's "</mark>" is text
    assert "reasoning: " in str(result) and "«sky»" in str(result)
    frame = result.frame()
    assert list(frame["cell_id"]) == ["second-cell"]
    assert frame["found"][0] == "prompt, reasoning, answer"  # "Sky?" too
    assert sources(search("sea", where=str(path))) == ["cell 2"]


def test_the_log_and_a_notebook_together_keep_one_hit_per_run(tmp_path, log):
    saved = trace("Why is the sky blue?", "Rayleigh", "Blue.")
    db.log_runs([saved, trace("Other", "Rayleigh again", "No.", started_at="2026-02-02T00:00:00Z")])
    path = tmp_path / "nb.ipynb"
    notebook_file(path, [("the-cell", saved)])
    result = search("rayleigh", where=["log", str(path), "notebook"])
    assert sorted(sources(result)) == ["cell 2", "log #2"]  # the logged run kept its cell
    [note] = result.notes  # no kernel here: "notebook" is a note, not an error
    assert "pass the notebook's path" in note
    with pytest.raises(LookupError, match="pass the notebook's path"):
        search("rayleigh", where="notebook")


def test_a_hit_links_to_its_cell_relative_to_this_kernel_s_notebook(tmp_path, ip, monkeypatch):
    path = tmp_path / "my notes #2.ipynb"
    notebook_file(path, [("the-cell", trace("Q", "Rayleigh", "A."))])
    (tmp_path / "sub").mkdir()
    session = str(tmp_path / "sub" / "here.ipynb")
    monkeypatch.setitem(ip.user_ns, "__session__", session)  # as ipykernel sets it
    [hit] = search("rayleigh", where=str(path))
    assert hit.link == "../my%20notes%20%232.ipynb#cell-id=the-cell"
    monkeypatch.setitem(ip.user_ns, "__session__", str(path))
    [hit] = search("rayleigh", where="notebook")  # this kernel's own notebook
    assert (hit.source, hit.link) == ("cell 2", "my%20notes%20%232.ipynb#cell-id=the-cell")
    assert (
        'href="my%20notes%20%232.ipynb#cell-id=the-cell"'
        in search("rayleigh", where="notebook")._repr_html_()
    )
