"""Pin maps a selection on the page back to the markdown it shows (issue 13, item 10).

The page reports (pane, Output index, index of the top-level rendered block in it); the kernel
finds the same blocks in each Output's source. ``DRAWN`` is what JupyterLab 4 drew from
``REASONING`` in a live reasoning pane (its ``.jp-RenderedMarkdown`` children, read in
test_browser.py's run of it): math lifted out before the markdown parser, so the display's
``- c`` line is no list.
"""

from __future__ import annotations

import pytest

from reasoning_nb.notebook.live_text import LiveText
from reasoning_nb.views.selection import Selection, selected_source, source_blocks

REASONING = (
    "Step one is $a^2$ and **bold**.\n\n"
    "$$\n\\begin{gathered}\na = b \\\\\n- c = d\n\\end{gathered}\n$$\n\n"
    "- item one\n- item two\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "```python\nx = 1\n```\n\n"
    "# Head\n\n"
    "> quoted\n\n"
    "---\n\n"
    "last para"
)
DRAWN = ["P", "P", "UL", "TABLE", "PRE", "H1", "BLOCKQUOTE", "HR", "P"]
DRAWN_STATIC = ["P", "DIV", "UL", "TABLE", "PRE", "H1", "BLOCKQUOTE", "HR", "P"]
"""...and the static twin (the kernel's HTML, once the run ended): display math in a div."""


def blocks_of(source: str, *, breaks: bool = False) -> list[str]:
    found = source_blocks(source, breaks=breaks)
    assert found is not None
    return [source[b.start : b.end] for b in found]


def pick(pane: str, start, end, counts, text: str = "") -> Selection:
    return Selection(pane, text, start, end, tuple(counts))


def test_source_blocks_are_the_blocks_lab_draws():
    found = blocks_of(REASONING, breaks=True)
    assert found == [
        "Step one is $a^2$ and **bold**.",
        "$$\n\\begin{gathered}\na = b \\\\\n- c = d\n\\end{gathered}\n$$",
        "- item one\n- item two",
        "| a | b |\n|---|---|\n| 1 | 2 |",
        "```python\nx = 1\n```",
        "# Head",
        "> quoted",
        "---",
        "last para",
    ]
    assert len(found) == len(DRAWN)
    static = source_blocks(REASONING, breaks=True, static=True)
    assert static is not None and [REASONING[b.start : b.end] for b in static] == found
    assert len(static) == len(DRAWN_STATIC)


def test_math_is_lifted_out_before_the_blocks_are_found():
    # A "#" or "-" opening a line of TeX makes no heading or list, nor does a "|" a table cell;
    # a "$" in code opens no math.
    text = "$$\nx\n# y\n$$\n\nthen `$` and $a|b$ | c\n\n```\n$\n- not math\n```"
    assert blocks_of(text) == [
        "$$\nx\n# y\n$$",
        "then `$` and $a|b$ | c",
        "```\n$\n- not math\n```",
    ]
    # \[ ... \] is shown as $$ ... $$: one paragraph too
    assert blocks_of("\\[\n- a\n\\]\n\nnext") == ["\\[\n- a\n\\]", "next"]


def test_blocks_across_outputs_are_pinned_as_their_source():
    sources = ["Intro with $x^2$ and **bold**.\n\n- one\n- two\n\n", "| a |\n|---|\n| 1 |\n\nend"]
    chosen = pick("answer", (0, 1), (1, 0), [2, 2], "one\ntwo\na\n1")
    assert selected_source(sources, chosen, breaks=False) == "- one\n- two\n\n| a |\n|---|\n| 1 |"
    whole_first = pick("answer", (0, 0), (0, 1), [2], "Intro with x2 and bold.\none")
    assert selected_source(sources, whole_first, breaks=False) == (
        "Intro with $x^2$ and **bold**.\n\n- one\n- two"
    )


def test_within_one_block_the_selected_text_if_the_source_holds_it():
    sources = ["Plain words here.\n\nSee $x^2$ and **bold** now.\n\n```py\na = 1\nb = 2\n```"]
    words = pick("reasoning", (0, 0), (0, 0), [3], " words here ")
    assert selected_source(sources, words, breaks=True) == "words here"
    rendered = pick("reasoning", (0, 1), (0, 1), [3], "x2 and bold")  # not as the source reads
    assert selected_source(sources, rendered, breaks=True) == "See $x^2$ and **bold** now."
    code = pick("reasoning", (0, 2), (0, 2), [3], "b = 2")  # a part of code stays code
    assert selected_source(sources, code, breaks=True) == "```py\nb = 2\n```"


def test_indented_code_keeps_its_lines():
    source = "para\n\n    x = 1\n    y = 2"
    assert blocks_of(source) == ["para", "    x = 1\n    y = 2"]
    part = pick("answer", (0, 1), (0, 1), [2], "y = 2")
    assert selected_source([source], part, breaks=False) == "```\ny = 2\n```"


@pytest.mark.parametrize(
    "selection, expected",
    [
        # the page drew another number of blocks: all of that Output, honestly
        (pick("answer", (0, 0), (0, 0), [1], "one"), "one\n\ntwo"),
        # places that fit no Output: the text the page showed
        (pick("answer", (3, 0), (3, 0), [1], " shown text "), "shown text"),
        (pick("answer", (0, 1), (0, 0), [2], "backwards"), "backwards"),
        (pick("answer", (0, 0), (0, 1), [2, 2], "counts"), "counts"),
        # the page could not place it (a front end that draws markdown otherwise)
        (Selection("answer", " as drawn "), "as drawn"),
    ],
)
def test_honest_fallbacks(selection, expected):
    assert selected_source(["one\n\ntwo"], selection, breaks=False) == expected


@pytest.mark.parametrize(
    "data",
    [
        None,
        {"pane": "header", "from": [0, 0], "to": [0, 0], "counts": [1], "text": ""},
        {"pane": "answer", "from": [0], "to": [0, 0], "counts": [1], "text": ""},
        {"pane": "answer", "from": [0, -1], "to": [0, 0], "counts": [1], "text": ""},
        {"pane": "answer", "from": [0, True], "to": [0, 0], "counts": [1], "text": ""},
        {"pane": "answer", "from": [0, 0], "to": [0, 0], "counts": "1", "text": ""},
        {"pane": "answer", "from": [0, 0], "to": [0, 0], "counts": [1], "text": 3},
        {"pane": "answer", "from": [0, 0], "counts": [1], "text": ""},
        {"pane": "answer", "from": [0, 0], "to": [0, 0], "counts": [-1], "text": ""},
    ],
)
def test_a_malformed_selection_is_none(data):
    assert Selection.read(data) is None


def test_a_selection_is_read_from_the_page_message():
    data = {"pane": "answer", "from": [0, 1], "to": [2, 0], "counts": [3, 1, 1], "text": "t"}
    assert Selection.read(data) == Selection("answer", "t", (0, 1), (2, 0), (3, 1, 1))
    assert Selection.read({"pane": "reasoning", "text": "t"}) == Selection("reasoning", "t")


def _check_sources(live: LiveText) -> list[str]:
    sources = live.sources
    outs = [b.out for b in live._blocks] + [live.tail]
    assert len(sources) == len(outs)
    for source, out in zip(sources, outs, strict=True):
        shown = out.outputs[0]["data"]["text/markdown"] if out.outputs else ""
        assert shown == (LiveText(breaks=False)._markdown(source, None))
    return sources


def test_live_text_sources_are_what_each_output_shows():
    live = LiveText(tail_limit=40)
    text = "First paragraph.\n\n" + "word " * 30 + "\n\n```\n" + "code line\n" * 12 + "```\n\nEnd."
    for k in range(0, len(text), 7):
        live.append(text[k : k + 7])
        live.flush()
    assert len(_check_sources(live)) > 1  # while it streams: a block per Output, and the tail
    live.finalize(text)
    assert _check_sources(live) == [text]  # at the end: one Output holds the whole text


def test_the_assets_are_sent_by_message_and_only_their_loader_is_saved():
    """The stylesheet and Pin's script go to the page by message (never saved), the script
    with the selectors of ``style`` before it; a widget's state holds only the loader, without
    comments or indentation."""
    import json
    from pathlib import Path

    from reasoning_nb.notebook import assets, pin
    from reasoning_nb.notebook.style import IDLE_CLASS, PAGE_CSS, STYLE

    static = Path(assets.__file__).parent / "static"
    source = "\n".join((static / f).read_text(encoding="utf-8") for f in ("session.js", "pin.js"))
    sent = assets.assets()
    consts = f"const CSS = {json.dumps(PAGE_CSS)};\nconst SESSION = {json.dumps(assets.SESSION)};"
    assert sent["js"] == f"{consts}\n{source}"
    assert sent["css"] == STYLE + assets.DEAD_STYLE
    assert "export function pin(" in sent["js"]
    assert f'"{IDLE_CLASS}"' in sent["js"]  # (the script sets it: Pin not offered, hidden)
    button = pin.PinButton(lambda: None)
    state = button.get_state()
    assert state["part"] == "pin" and state["version"] == sent["version"]
    saved = state["_esm"]
    assert "//" not in saved and not any(line != line.strip() for line in saved.splitlines())
    assert len(saved) < 1_500 and sent["css"] not in saved and "function pin" not in saved
    replies = []
    button.send = replies.append
    button._on_assets_msg(button, {"type": "assets"}, [])
    assert replies == [sent]
    button.close()


def test_the_page_script_takes_every_class_of_ours_from_the_style_module():
    """The page's script names no class or key of the live or static view itself: each comes
    from ``style.PAGE_CSS`` or ``assets.SESSION`` (Lab's and ipywidgets' own it may name)."""
    import re
    from pathlib import Path

    from reasoning_nb.notebook import assets

    for name in ("pin.js", "session.js"):
        source = (Path(assets.__file__).parent / "static" / name).read_text(encoding="utf-8")
        assert not re.findall(r"reasoning-nb-[a-z]", source), name
    assert not re.findall(r"reasoning_nb|widget-(view|state)", source)  # (session.js)


def test_in_the_static_twin_a_block_is_a_top_level_element_of_the_kernels_html():
    """Once a run ended its static twin shows it: the page counts the children of a pane's
    container in the kernel's HTML, whose blocks (math lifted out by the renderer's own
    parser) are those of ``render.markdown_html``."""
    from html.parser import HTMLParser

    from reasoning_nb.views import render

    text = (
        "# Head\n\nSome $a*b*c$ and **bold**.\n\n$$\nx^2\n$$\n\n- one\n- two\n\n"
        "```py\nx = 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n\\[ y \\]\n\nend"
    )
    top: list[str] = []

    class Top(HTMLParser):
        depth = 0

        def handle_starttag(self, tag, attrs):
            top.append(tag) if self.depth == 0 else None
            self.depth += tag not in ("hr", "br", "img")

        def handle_startendtag(self, tag, attrs):  # (<hr />)
            top.append(tag) if self.depth == 0 else None

        def handle_endtag(self, tag):
            self.depth -= 1

    for breaks in (False, True):
        top.clear()
        Top().feed(render.markdown_html(text, breaks=breaks))
        blocks = source_blocks(text, breaks=breaks, static=True)
        assert len(blocks) == len(top) == 9
        picked = [text[b.start : b.end] for b in blocks]
        assert picked[1] == "Some $a*b*c$ and **bold**." and picked[2] == "$$\nx^2\n$$"
    where = {"pane": "answer", "text": "Some", "from": [0, 1], "to": [0, 2], "counts": [9]}
    selection = Selection.read({**where, "static": True})
    assert selection is not None and selection.static
    both = "Some $a*b*c$ and **bold**.\n\n$$\nx^2\n$$"
    assert selected_source([text], selection, breaks=False) == both
    assert not Selection.read(where).static  # (the widget's Outputs: the default)
