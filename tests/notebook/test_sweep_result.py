"""A finished sweep as a cell's static output: escaped, bounded for a large sweep, and kept
whole by the exporters (nbconvert, in process)."""

from __future__ import annotations

import nbformat
from nbconvert.exporters import get_exporter

from reasoning_nb.notebook.sweep_result import SHOWN_ROWS, SWEEP_KEY, result_bundle
from reasoning_nb.sweep.progress import Progress
from reasoning_nb.sweep.result import Sweep
from reasoning_nb.sweep.rows import Row


def row(i: int, preset: str, prompt: str = "Is 391 prime?") -> Row:
    return Row(
        sweep_id="s1", prompt_id=i, prompt=prompt, model="llamacpp:m", preset=preset, sent={},
        status="complete", answer="No: 17 × 23.", reasoning="391 = 17 × 23", input_tokens=9,
        output_tokens=40, reasoning_tokens=31, cost_usd=0.0021, first_token_ms=80.0,
        total_ms=1250.0, grade=1.0,
    )  # fmt: skip


def sweep(rows: list[Row]) -> Sweep:
    return Sweep("s1", rows, Progress(total=len(rows), done=len(rows), elapsed_s=4.0))


def test_labels_from_the_prompt_set_are_text_never_markup():
    data, metadata = result_bundle(sweep([row(0, "low", "<img src=x onerror=alert(1)> why?")]))
    html = data["text/html"]
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt; why?" in html
    assert "$0.0021" in html and "1.2 s" in html and ">31<" in html
    assert metadata[SWEEP_KEY]["sweep_id"] == "s1"
    assert metadata[SWEEP_KEY]["progress"]["done"] == 1


def test_a_large_sweep_shows_its_first_rows_and_says_where_the_rest_are():
    rows = [row(i // 2, ("low", "high")[i % 2]) for i in range(2 * SHOWN_ROWS + 7)]
    data, metadata = result_bundle(sweep(rows))
    runs = data["text/html"].split("<details", 1)[1]  # the fold of every run
    assert runs.count("<tr>") == SHOWN_ROWS + 1
    assert f"{SHOWN_ROWS + 7} more rows: _sweep.frame() has them all." in data["text/plain"]
    assert len(str(metadata)) < 500  # a record of the sweep, never its rows


def test_the_exports_keep_the_result():
    data, metadata = result_bundle(sweep([row(0, "low", "Is <b>391</b> prime?")]))
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%think --sweep\nIs <b>391</b> prime?")
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=metadata)]
    nb.cells = [cell]
    for name in ("reasoning_html", "reasoning_markdown"):
        body, _ = get_exporter(name)().from_notebook_node(nb)
        assert "Sweep s1: 1/1 done" in body and "Is &lt;b&gt;391&lt;/b&gt; prime?" in body, name
