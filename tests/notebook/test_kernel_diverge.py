"""Where two runs part, in a real kernel: ``%%think --compare low,high`` against the local wire
server saves the "Where the reasoning parts" fold in its static output, beside the answer diff.
``parted_notebook`` is that notebook, for the export tests too."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import wire_fixtures as wf
from test_export import compare_notebook
from wire_server import Reply

from reasoning_nb.core.schema import METADATA_KEY, saved_variants
from reasoning_nb.views.diverge_view import TITLE

pytestmark = pytest.mark.kernel

CHAT = "/v1/chat/completions"
SHARED_START = "First I read the question. Light from the sun holds every colour. "
FORK = {
    "low": "Blue scatters more, <b>so</b> PART-LOW the sky looks blue. ",
    "high": "Rayleigh scattering goes as one over the wavelength to the fourth, PART-HIGH. ",
}
MEETING = "Air molecules are small next to visible light. "
ENDS = {
    "low": "That is enough <b>here</b>.",
    "high": "Violet scatters more still; eyes see less of it.",
}


def parted_reply(recorded) -> Reply:
    """Both variants start alike, part, meet again, and end apart; answers too."""
    effort = recorded.json.get("reasoning_effort", "auto")
    reasoning = SHARED_START + FORK[effort] + MEETING + ENDS[effort]
    return Reply.sse(wf.chat_sse(reasoning, f"Blue, at {effort}.", usage=True))


def parted_notebook(path: Path) -> nbformat.NotebookNode:
    """A real ``%%think --compare low,high`` run, then ``reasoning_nb.diverge`` of its two
    traces as a cell's value, executed and written to ``path``."""
    return compare_notebook(
        path, parted_reply, "import reasoning_nb\nreasoning_nb.diverge(*_compare)"
    )


def test_compare_saves_where_the_reasoning_parts(tmp_path):
    nb = parted_notebook(tmp_path / "parted.ipynb")
    output = nb.cells[1].outputs[-1]
    saved = saved_variants(output.metadata)
    assert METADATA_KEY in output.metadata
    assert [t["reasoning"].startswith(SHARED_START) for t in saved] == [True, True]
    page = output.data["text/html"]
    fold = page[page.index('<details class="reasoning-nb-parting ') :]
    assert page.index("Answer diff") < page.index(TITLE)  # beside the answer diff, after it
    summary = re.search(r"<summary[^>]*>([^<]*)</summary>", fold).group(1)
    assert summary == (
        f"{TITLE}: low · llamacpp:m vs high · llamacpp:m — shared start: 2 sentences "
        f"({len(SHARED_START):,} characters) · parts at sentence 3 · meets again once"
    )
    assert " open" not in fold[:80]  # one click opens it
    assert "Shared start: 2 sentences" in fold
    low = r"Blue scatters more, &lt;b&gt;so&lt;/b&gt; PART-LOW the sky looks blue\."
    assert re.search(rf"<del [^>]*>{low}</del>", fold) and "<b>so" not in page  # text, escaped
    assert re.search(r"<ins [^>]*>Rayleigh scattering goes as[^<]*PART-HIGH\.</ins>", fold)
    assert "They meet again (1 sentence):" in fold and MEETING.strip() in fold
    assert "… and 1 more fork (every one: an export, or reasoning_nb.diverge)" in fold
    assert "enough" not in fold  # (the second fork: in the exports)


def test_diverge_in_a_cell_shows_the_fold_open(tmp_path):
    nb = parted_notebook(tmp_path / "parted.ipynb")
    [value] = nb.cells[2].outputs
    page = value.data["text/html"]
    assert page.startswith('<details class="reasoning-nb-parting ') and " open>" in page[:90]
    assert "They part here" in page and "PART-HIGH" in page
    assert value.data["text/plain"].startswith(f"== {TITLE.lower()}: low · llamacpp:m vs high")
