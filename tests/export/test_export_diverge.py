"""Where two runs part, through the real ``jupyter nbconvert``: a ``--compare`` cell (run in a
real kernel against the wire server) and a cell run twice (its history saved as the widget saves
it) show the fold in the collapsible and inline exports, open in inline; ``strip`` leaves no fold
and none of the reasoning it quotes, in every format, also where ``reasoning_nb.diverge`` showed
it as a cell's value (no trace marks that output: ``redaction`` finds each sentence)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
from test_export import ARTIFACTS, CHROMIUM
from test_kernel_diverge import MEETING, SHARED_START, parted_notebook

from reasoning_nb.core.schema import HISTORY_KEY, METADATA_KEY
from reasoning_nb.core.trace import Trace
from reasoning_nb.views import render
from reasoning_nb.views.cell_runs import CellRuns
from reasoning_nb.views.diverge_view import TITLE

pytestmark = pytest.mark.kernel

RUN_1 = "We look at the sky. HISTORY-ONE goes one way. The end is near."
RUN_2 = "We look at the sky. HISTORY-TWO goes another way. The end is near."
MARKERS = ("PART-LOW", "PART-HIGH", "HISTORY-ONE", "HISTORY-TWO", MEETING.strip())
FORMATS = {"html": ".html", "markdown": ".md", "notebook": ".ipynb"}


def run_twice_cell() -> nbformat.NotebookNode:
    """A ``%%think`` cell re-run with another preset, its output as the widget saves it."""
    runs = []
    for preset, reasoning in (("low", RUN_1), ("high", RUN_2)):
        trace = Trace(model="llamacpp:m", provider="llamacpp", preset=preset, status="complete")
        trace.reasoning, trace.answer = reasoning, f"Blue ({preset})."
        runs.append(trace)
    line = "%%think --model llamacpp:m --preset low"
    data = render.cell_bundle(runs[1], CellRuns(line, (runs[0],)))
    meta = {METADATA_KEY: runs[1].to_dict(), HISTORY_KEY: [runs[0].to_dict()]}
    output = nbformat.v4.new_output("display_data", data=data, metadata=meta)
    return nbformat.v4.new_code_cell(f"{line}\nWhy?", outputs=[output])


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[tuple[str, str], str]:
    root = tmp_path_factory.mktemp("parted")
    nb = parted_notebook(root / "parted.ipynb")
    nb.cells.append(run_twice_cell())
    nbformat.write(nb, root / "parted.ipynb")

    def convert(job: tuple[str, str]) -> tuple[tuple[str, str], str]:
        mode, fmt = job
        target = root / f"{mode}-{fmt}"
        done = subprocess.run(
            [sys.executable, "-m", "jupyter", "nbconvert", f"--to=reasoning-{fmt}",
             str(root / "parted.ipynb"), f"--ReasoningPreprocessor.mode={mode}",
             f"--output-dir={target}"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "WARNING" not in done.stderr, done.stderr
        return job, (target / f"parted{FORMATS[fmt]}").read_text()

    jobs = [(mode, fmt) for mode in ("collapsible", "inline", "strip")
            for fmt in (FORMATS if mode != "inline" else ("html",))]  # fmt: skip
    with ThreadPoolExecutor(3) as pool:  # (as test_export's: 2 cores, more only thrashes)
        return dict(pool.map(convert, jobs))


@pytest.mark.parametrize("mode", ["collapsible", "inline"])
def test_html_exports_show_both_folds(exported, mode):
    page = exported[(mode, "html")]
    main = page[page.index("<main>") :]
    folds = main.split('<details class="reasoning-nb-parting ')[1:]
    assert len(folds) == 3  # the compare cell's, diverge()'s in a cell, the run history's
    compare, value, history = folds
    opened = mode == "inline"
    for fold, shown_open in ((compare, opened), (value, True), (history, opened)):
        attributes = fold.split(">", 1)[0]  # (nbconvert writes open="")
        assert (" open" in attributes) == shown_open, attributes
        start = fold.split('<details class="reasoning-nb-parting-start"', 1)[1].split(">", 1)[0]
        assert (" open" in start) == shown_open, start  # (print: nothing to click open)
    assert "low · llamacpp:m vs high · llamacpp:m — shared start: 2 sentences" in compare
    assert "PART-LOW" in compare and "PART-HIGH" in compare and MEETING.strip() in compare
    assert f"{TITLE}: Run 1 · preset low vs Run 2 · preset high" in history
    assert "<del " in history and "HISTORY-ONE goes one way." in history
    assert "They meet again (1 sentence):" in history
    # the history's fold is between the latest run and the one before
    cell = main[main.index("Run 2 of 2") :]
    assert cell.index("Blue (high).") < cell.index(TITLE) < cell.index("Earlier runs (1)")


def test_markdown_export_shows_the_fold_as_escaped_html(exported):
    text = exported[("collapsible", "markdown")]
    assert text.count(f"<summary>{TITLE}: ") == 3  # (diverge()'s value: its HTML)
    assert "PART-LOW" in text and "HISTORY-TWO goes another way." in text
    assert SHARED_START.split(".")[0] in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_strip_drops_the_fold_and_what_it_quotes(exported, fmt):
    text = exported[("strip", fmt)]
    if fmt == "notebook":
        traced = [
            o for c in json.loads(text)["cells"] for o in c.get("outputs", [])
            if METADATA_KEY in o.get("metadata", {})
        ]  # fmt: skip
        assert len(traced) == 2 and TITLE not in json.dumps(traced)
    else:  # only diverge()'s own output, as a cell showed it, its quotes removed
        assert text.count(f"{TITLE}: ") == 1
    for marker in MARKERS:
        assert marker not in text, marker
    assert "Blue, at low." in text and "Blue (high)." in text  # the answers stay
    if fmt != "notebook":
        assert "[reasoning removed]" in text  # what diverge() showed in a cell of its own


def test_the_inline_export_in_headless_chromium(exported, tmp_path):
    """The inline export as a reader sees it (every fold open), for looking at:
    ``test-artifacts/export-27-2-parting-inline.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "export-27-2-parting-inline.png"
    shot.unlink(missing_ok=True)
    page = exported[("inline", "html")]
    at = page.index('<details class="reasoning-nb-parting ')  # scrolled to the first fold
    page = page[:at] + '<a id="parting"></a>' + page[at:]
    (tmp_path / "inline.html").write_text(page)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    subprocess.run(
        [CHROMIUM, *flags, "--window-size=1000,1400", f"--screenshot={shot}",
         (tmp_path / "inline.html").as_uri() + "#parting"],
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert shot.exists() and shot.stat().st_size > 10_000, shot
