"""``strip`` through the real ``jupyter nbconvert``: the reasoning leaves everything the package
wrote, recognised by the marker in its metadata rather than by its text (issue 12, item 17).

One notebook holds each former leak. A real kernel runs the cells a user runs: a ``%%think``
whose reasoning has markdown formatting, ``_think`` as a cell's value, ``display(_think)``, and
a ``%%think`` in the text view (its reasoning streams to stdout). Then come the cells made
elsewhere or by earlier versions, as they are saved: pinned cells (the page inserts them), a
``_think`` shown before displayed traces carried a marker, and two interrupt tracebacks that
hold partial reasoning (one of a ``%%think`` cell, one of a ``think()`` call).
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
import wire_fixtures as wf
from nbclient import NotebookClient
from wire_server import Reply, WireServer

from reasoning_nb.core.trace import Trace
from reasoning_nb.notebook.pin import PIN_KEY, pin_markdown
from reasoning_nb.views import render

pytestmark = pytest.mark.kernel

CHAT = "/v1/chat/completions"
FORMATS = {"html": ".html", "markdown": ".md", "notebook": ".ipynb"}
REMOVED = "[reasoning removed]"
TRACEBACK_REMOVED = "[traceback removed: it may hold reasoning]"

# Markdown formatting throughout: rendered, no line of it reads as it was written.
REASONING = (
    "LEAK-A: the **key** step & the rest:\n\n"
    "- LEAK-B list item with *emphasis*\n"
    "- LEAK-E\n\n"
    "1. LEAK-C numbered `code` point\n\n"
    "> LEAK-D quoted line of thought"
)
ANSWER = "The answer is 42."
TEXT_VIEW = ("LEAK-F: short.\nLEAK-G\nok", "Plain answer.")
SELECTED = "LEAK-A: the key step & the rest:"  # a selection as older versions pinned it
PARTIAL = REASONING[: REASONING.index("`code`") + 3]  # interrupted mid-line
RED, YELLOW, RESET = "\x1b[0;31m", "\x1b[0;33m", "\x1b[0m"


def _first_trace() -> Trace:
    trace = Trace(model="llamacpp:m", provider="llamacpp", preset="high", status="complete")
    trace.reasoning, trace.answer = REASONING, ANSWER
    return trace


def _later_cells() -> list:
    """The cells made by the page or by earlier versions, as a notebook saves them."""
    trace = _first_trace()
    origin = {PIN_KEY: {"model": "llamacpp:m", "preset": "high", "run": 1}}
    pinned = nbformat.v4.new_markdown_cell(pin_markdown(trace), metadata=origin)  # (no part: older)
    selection = nbformat.v4.new_markdown_cell(
        pin_markdown(trace, SELECTED), metadata={PIN_KEY: {**origin[PIN_KEY], "part": "reasoning"}}
    )
    answer = nbformat.v4.new_markdown_cell(
        pin_markdown(trace, ANSWER, "answer"),
        metadata={PIN_KEY: {**origin[PIN_KEY], "part": "answer"}},
    )

    # _think's output before a displayed trace carried its marker: no metadata at all.
    legacy = nbformat.v4.new_code_cell(
        "_think",
        outputs=[
            nbformat.v4.new_output(
                "execute_result",
                data={"text/markdown": render.to_markdown(trace), "text/plain": repr(trace)},
                execution_count=9,
            )
        ],
    )

    partial = Trace(model="llamacpp:m", provider="llamacpp", preset="high")
    partial.reasoning, partial.status = PARTIAL, "cancelled"
    static = nbformat.v4.new_output(
        "display_data", data=render.bundle(partial), metadata={"reasoning_nb": partial.to_dict()}
    )
    last_line = PARTIAL.rsplit("\n", 1)[1]
    interrupted = nbformat.v4.new_code_cell(
        "%%think --model llamacpp:m --preset high\nWhy?",
        outputs=[
            static,
            nbformat.v4.new_output(
                "error",
                ename="CancelledError",
                evalue="",
                traceback=[
                    f"{RED}{'-' * 75}{RESET}",
                    f"{RED}CancelledError{RESET}    Traceback (most recent call last)",
                    f"reasoning so far: {YELLOW}{last_line}{RESET}",
                    f"{RED}CancelledError{RESET}: ",
                ],
            ),
        ],
    )
    in_python = nbformat.v4.new_code_cell(
        "trace = think('Why?', model='llamacpp:m')",
        outputs=[
            nbformat.v4.new_output(
                "error",
                ename="KeyboardInterrupt",
                evalue="",
                traceback=[
                    f"{RED}KeyboardInterrupt{RESET}    Traceback (most recent call last)",
                    f"    reasoning = {YELLOW}'- LEAK-B list item{RESET} with *emphasis*'",
                    f"{RED}KeyboardInterrupt{RESET}: ",
                ],
            )
        ],
    )
    return [pinned, selection, answer, legacy, interrupted, in_python]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict:
    """fmt -> the stripped export's text, plus ``"nb"``: the stripped notebook, parsed."""
    root = tmp_path_factory.mktemp("strip")
    with WireServer() as server:
        server.route(
            "POST",
            CHAT,
            Reply.sse(wf.chat_sse(REASONING, ANSWER, usage=True)),
            Reply.sse(wf.chat_sse(*TEXT_VIEW, usage=True)),
        )
        think = f"%%think --model llamacpp:m --base-url {server.url} --preset high\n"
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell("%load_ext reasoning_nb"),
            nbformat.v4.new_code_cell(think + "Why?"),
            nbformat.v4.new_code_cell("_think"),
            nbformat.v4.new_code_cell("display(_think)"),
            nbformat.v4.new_code_cell("%config ThinkMagics.widget = 'never'"),
            nbformat.v4.new_code_cell(think + "And then?"),
        ]
        NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()
    nb.cells += _later_cells()
    source = root / "leaks.ipynb"
    nbformat.write(nb, source)
    assert all(f"LEAK-{c}" in source.read_text() for c in "ABCDEFG")

    def run(fmt: str) -> tuple[str, str]:
        out = root / fmt
        command = [sys.executable, "-m", "jupyter", "nbconvert", f"--to=reasoning-{fmt}"]
        command += [str(source), "--ReasoningPreprocessor.mode=strip", f"--output-dir={out}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return fmt, (out / f"leaks{FORMATS[fmt]}").read_text()

    with ThreadPoolExecutor(3) as pool:
        texts = dict(pool.map(run, FORMATS))
    return texts | {"nb": nbformat.reads(texts["notebook"], as_version=4)}


def _cell(nb: dict, source: str) -> dict:
    return next(c for c in nb["cells"] if "".join(c["source"]) == source)


def _text(value) -> str:
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("fmt", FORMATS)
def test_strip_leaves_no_reasoning_and_keeps_the_answers(exported, fmt):
    text = exported[fmt]
    assert "LEAK-" not in text
    assert ANSWER in text and TEXT_VIEW[1] in text
    assert TRACEBACK_REMOVED in text


def test_a_displayed_think_is_marked_and_rebuilt_without_reasoning(exported):
    """``_think`` as a cell's value and ``display(_think)`` carry the trace as their marker;
    strip rebuilds them from it: the answer stays, the formatted reasoning goes."""
    nb = exported["nb"]
    for source in ("_think", "display(_think)"):
        [output] = _cell(nb, source)["outputs"]
        assert "LEAK-" not in _text(output), source
        assert ANSWER in "".join(output["data"]["text/markdown"])
        saved = output["metadata"]["reasoning_nb_display"]
        assert saved["reasoning"] == "" and saved["answer"] == ANSWER
    # ... and one saved before displayed traces were marked is found by its rendered form
    legacy = [c for c in nb["cells"] if "".join(c["source"]) == "_think"][1]
    assert "LEAK-" not in _text(legacy["outputs"])
    assert REMOVED in "".join(legacy["outputs"][0]["data"]["text/markdown"])
    nbformat.validate(nbformat.reads(exported["notebook"], as_version=4))


def test_pinned_reasoning_keeps_its_head_line_only_and_a_pinned_answer_stays(exported):
    pinned = [c for c in exported["nb"]["cells"] if PIN_KEY in c["metadata"]]
    assert len(pinned) == 3  # all of the reasoning, a selection of it, a part of the answer
    for cell in pinned[:2]:
        head = "> **Reasoning of llamacpp:m · preset high**"
        assert "".join(cell["source"]) == f"{head}\n>\n> {REMOVED}"
        assert cell["metadata"][PIN_KEY]["model"] == "llamacpp:m"
    answer = f"> **Answer of llamacpp:m · preset high**\n>\n> {ANSWER}"
    assert "".join(pinned[2]["source"]) == answer


def test_interrupt_tracebacks_are_replaced_by_a_marker_line(exported):
    nb = exported["nb"]
    think_cell = _cell(nb, "%%think --model llamacpp:m --preset high\nWhy?")
    static, error = think_cell["outputs"]
    assert static["metadata"]["reasoning_nb"]["reasoning"] == ""
    assert error["ename"] == "CancelledError"
    assert error["traceback"] == [f"CancelledError: {TRACEBACK_REMOVED}"]
    [error] = _cell(nb, "trace = think('Why?', model='llamacpp:m')")["outputs"]
    assert error["traceback"] == [f"KeyboardInterrupt: {TRACEBACK_REMOVED}"]


def test_a_think_cells_streamed_text_is_replaced_by_a_marker_line(exported):
    """The text view streams the reasoning to stdout (short lines too); the answer stays in
    the traced output below it."""
    cell = next(c for c in exported["nb"]["cells"] if "".join(c["source"]).endswith("And then?"))
    streams = [o for o in cell["outputs"] if o["output_type"] == "stream"]
    assert streams == [{"output_type": "stream", "name": "stdout", "text": REMOVED + "\n"}]
    [traced] = [o for o in cell["outputs"] if "reasoning_nb" in o.get("metadata", {})]
    assert "".join(traced["data"]["text/plain"]).startswith(TEXT_VIEW[1])


def test_reasoning_is_recognised_as_the_static_view_shows_it():
    """The static view highlights code with classes, the live pane with inline colours: strip
    looks for both."""
    from reasoning_nb.export.redaction import _rendered

    trace = _first_trace()
    trace.reasoning = "Plan:\n\n```python\nx = 1  # LEAK-H\n```"
    static = render.to_html(trace, "inline")
    assert any(form in static for form in _rendered(trace.reasoning) if "LEAK-H" in form)
    # ...and as a %%think cell saves it: code highlighted by class, on as few lines as it can (a
    # copy of that output elsewhere is found whole, its formatting with it)
    trace.reasoning = "Plan: **first** the *sum*,\nthen the rest.\n\n```python\nx = 1\n```"
    saved = render.cell_bundle(trace)["text/html"]
    assert any(form in saved for form in _rendered(trace.reasoning) if "<strong>" in form)


# Paragraphs with math and bold: Pin rewrites the math and puts it on one line, and a selection
# with a "<" in it is pinned as HTML. A paste of either is still found (issue 22, item 28).
PIN_REASONING = (
    "First we look at the setup of the problem.\n\n"
    "LEAK-P the energy \\(E = mc^2\\) and **this bold fact** hold when x < 3.\n\n"
    "LEAK-Q then $$\n\\int_0^1 x\\,dx\n$$ gives the **hidden** result, via \\(u = x^2\\).\n\n"
    "LEAK-R one more step with \\(a+b\\) and **more bold** in it.\n\n"
    "The last paragraph of the thinking."
)


def _pin_clipboard(trace: Trace, first: int, last: int) -> str:
    """What Pin puts on the clipboard for the reasoning's blocks ``first`` to ``last`` selected
    in a run's static view: the page's message, answered by the real button, joined as the
    page joins the cells it copies (``static/pin.js``)."""
    from reasoning_nb.notebook.pin import PinButton
    from reasoning_nb.notebook.run_view import RunView

    run = RunView(trace, 1, 0.0, hide_reasoning=False)
    button, replies = PinButton(lambda: run), []
    button.send = replies.append
    where = {"from": [0, first], "to": [0, last], "counts": [5], "static": True}
    button._on_msg(
        button, {"type": "pin", "parts": [{"pane": "reasoning", "text": "x", **where}]}, []
    )
    return "\n\n".join(cell["markdown"] for cell in replies[0]["cells"])


def test_a_pasted_pin_selection_with_math_and_bold_is_stripped(tmp_path):
    trace = _first_trace()
    trace.reasoning = PIN_REASONING
    as_html = _pin_clipboard(trace, 1, 2)  # (LEAK-P holds a "<": the selection goes as HTML)
    as_markdown = _pin_clipboard(trace, 2, 3)
    assert "<strong>this bold fact</strong>" in as_html and "&#92;(E = mc^2&#92;)" in as_html
    assert "$u = x^2$" in as_markdown and "$$\\int_0^1 x\\,dx$$" in as_markdown
    output = nbformat.v4.new_output(
        "display_data", data=render.bundle(trace), metadata={"reasoning_nb": trace.to_dict()}
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%%think --model llamacpp:m\nWhy?", outputs=[output]),
        nbformat.v4.new_markdown_cell(f"My notes.\n\n{as_html}\n\nand\n\n{as_markdown}"),
    ]
    source = tmp_path / "pasted.ipynb"
    nbformat.write(nb, source)
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to=reasoning-markdown"]
    command += [str(source), "--ReasoningPreprocessor.mode=strip", f"--output-dir={tmp_path}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    exported = (tmp_path / "pasted.md").read_text()
    assert "My notes." in exported and exported.count(REMOVED) >= 4
    assert "LEAK-" not in exported and "bold" not in exported and "int_0" not in exported
