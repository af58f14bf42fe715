"""``%think --search`` in a real kernel, after real runs against the local wire server: the
runs of the log and of the notebook's saved file, each linked to its cell in the form
JupyterLab 4 follows (``NB.ipynb#cell-id=ID``), escaped, with a text/plain table too."""

from __future__ import annotations

import os

import pytest
import wire_fixtures as wf
from kernel_session import KernelSession
from test_search import notebook_file, trace
from wire_server import Reply

CHAT = "/v1/chat/completions"
pytestmark = pytest.mark.kernel


@pytest.fixture
def notebook_kernel(tmp_path):
    """A kernel as JupyterLab starts one for ``work.ipynb`` (``JPY_SESSION_NAME``), logging
    to a log of the test's own."""
    env = {
        **os.environ,
        "REASONING_NB_DB": str(tmp_path / "log.sqlite3"),
        "REASONING_NB_LOG": "1",
        "JPY_SESSION_NAME": str(tmp_path / "work.ipynb"),
    }
    env.pop("REASONING_NB_MODEL", None)
    session = KernelSession(env)
    session.run("%load_ext reasoning_nb")
    yield session
    session.close()


def shown(msgs) -> list[dict]:
    return [m["content"]["data"] for m in msgs if m["msg_type"] in ("display_data",)]


def errors(msgs) -> list[str]:
    return [m["content"]["evalue"] for m in msgs if m["msg_type"] == "error"]


def test_search_shows_the_log_s_and_the_notebook_s_hits_linked_to_their_cells(
    wire_server, tmp_path, notebook_kernel
):
    # the notebook as last saved: one run in a cell of its own, from an earlier session
    earlier = trace("Old question", "an old thought: zebras have stripes", "Old.")
    notebook_file(tmp_path / "work.ipynb", [("saved-cell", earlier)])
    wire_server.route(
        "POST",
        CHAT,
        Reply.sse(wf.chat_sse("Zebras have stripes <script>alert(1)</script> to", "Flies.")),
        Reply.sse(wf.chat_sse("Horses gallop on hooves", "Fast.")),
    )
    flags = f"--model llamacpp:m --base-url {wire_server.url}"
    for cell_id, prompt in (("cell-zebra", "Why stripes?"), ("cell-horse", "How fast?")):
        assert not errors(notebook_kernel.run(f"%%think {flags}\n{prompt}", cell_id=cell_id))
    msgs = notebook_kernel.run('%think --search "have stripes" zebra*', cell_id="cell-search")
    assert not errors(msgs)
    [table] = shown(msgs)
    page, text = table["text/html"], table["text/plain"]
    # this kernel's run, found in the log, links to the cell that ran it; the saved run to its
    assert 'href="work.ipynb#cell-id=cell-zebra"' in page
    assert 'href="work.ipynb#cell-id=saved-cell"' in page
    assert "cell-horse" not in page and "Horses" not in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<mark>have stripes</mark>" in page
    assert text.startswith("2 runs match '\"have stripes\" zebra*':")
    assert "«Zebras have stripes»" not in text and "«have stripes»" in text
    assert "log #1" in text and "cell 2" in text  # the log's id; the saved cell's number
    # the answer-only hit ("fast" in the prompt and the answer) ranks first, unless the runs
    # that match in the reasoning (this kernel's, the saved one) are asked for first
    for line in ("", "--reasoning-first "):
        [table] = shown(notebook_kernel.run(f"%think {line}--search fast OR zebras"))
        prompts = [
            row[11:] for row in table["text/plain"].splitlines() if row[:11] == "   prompt: "
        ]
        assert len(prompts) == 3 and (prompts[0] == "How «fast»?") == (not line), prompts
        if line:
            assert set(prompts[:2]) == {"Old question", "Why stripes?"}
    # a query FTS5 cannot read: one line, how to write one
    [error] = errors(notebook_kernel.run("%think --search foo:bar"))
    assert "cannot be read as a query" in error and "sqlite" not in error.lower()
    # the cell form is not a search
    [error] = errors(notebook_kernel.run(f"%%think {flags} --search x\nQ"))
    assert "--search is for the line form" in error
    [error] = errors(notebook_kernel.run("%think --reasoning-first"))
    assert "--reasoning-first is for --search" in error
