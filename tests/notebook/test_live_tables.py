"""A table streamed into the live view shows only as a table: no header row as a paragraph of
pipes before its delimiter row, no half-written last row, and no raw rows after a cut by force
(each piece of a long table opens with the table's head again)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from test_widget import wire  # noqa: F401  (the fixture)

from reasoning_nb.notebook.live_text import LiveText
from reasoning_nb.views.live_markdown import live_markdown
from reasoning_nb.views.markdown_blocks import TAIL_LIMIT

_GFM = MarkdownIt("commonmark").enable("table")


def shown_outputs(models: dict[str, dict], model_id: str) -> list[str]:
    """The markdown of each Output under ``model_id`` in a replayed front end, in order."""
    state = models[model_id]
    if "children" in state:
        return [
            md
            for child in state["children"]
            for md in shown_outputs(models, child.removeprefix("IPY_MODEL_"))
        ]
    if state["_model_name"] != "OutputModel" or not state["outputs"]:
        return []
    return [state["outputs"][0]["data"]["text/markdown"]]


def cells(row: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in row.strip().strip("|").split("|"))


def what_shows_wrong(markdown: str, rows: set[tuple[str, ...]]) -> list[str]:
    """Text outside a table holding a pipe, and table rows that are not whole rows of the
    source, as one Output's markdown renders (each Output renders on its own)."""
    wrong, row, in_table = [], None, 0
    for token in _GFM.parse(markdown):
        if token.type in ("table_open", "table_close"):
            in_table += 1 if token.type == "table_open" else -1
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            if tuple(row) not in rows:
                wrong.append(f"a row not whole: {row}")
            row = None
        elif token.type == "inline" and row is not None:
            row.append(token.content.strip())
        elif token.type == "inline" and not in_table and "|" in token.content:
            wrong.append(f"raw pipes: {token.content!r}")
    return wrong


WORD = st.sampled_from(["sky", "blue", "$x^2$", "**red**", "450 nm", "a b c", "`f()`", "7"])
ALIGN = st.sampled_from(["---", ":---", "---:", ":-:", "-"])


@st.composite
def tables(draw) -> str:
    columns = draw(st.integers(1, 4))
    rows = draw(st.lists(st.lists(WORD, min_size=columns, max_size=columns), max_size=8))
    header = [f"h{i}" for i in range(columns)]
    delimiter = [draw(ALIGN) for _ in range(columns)]
    lines = [header, delimiter, *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


PROSE = st.lists(WORD, min_size=1, max_size=30).map(" ".join)
BLOCK = st.one_of(
    PROSE,
    tables(),
    st.tuples(PROSE, tables()).map("\n".join),  # a table right after a paragraph's line
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # (the test clears its wire)
)
@given(
    st.lists(BLOCK, min_size=1, max_size=6).map("\n\n".join),
    st.lists(st.integers(1, 12), min_size=1, max_size=40),
    st.sampled_from([40, 120, TAIL_LIMIT]),
    st.sets(st.integers(0, 200), max_size=10),
    st.booleans(),
)
def test_a_streamed_table_shows_only_as_a_table(wire, text, steps, limit, pauses, breaks):  # noqa: F811
    """Streamed in deltas of any size, pausing now and then, cut by force past any limit, in
    either pane: no Output shows a pipe outside a table, and every row shown is a whole row."""
    wire.msgs.clear()
    rows = {cells(line) for line in text.split("\n") if line.startswith("|")}
    live = LiveText(tail_limit=limit, breaks=breaks)
    at, k = 0, 0
    while at < len(text):
        step = steps[k % len(steps)]
        live.append(text[at : at + step])
        at, k = at + step, k + 1
        if k in pauses:
            live.settle()
        live.flush(join=k % 3 == 0)
        shown = shown_outputs(wire.front_end(), live.box.model_id)
        wrong = [w for md in shown for w in what_shows_wrong(md, rows)]
        assert not wrong, (text[:at], shown)
    live.finalize(text)
    assert wire.shown(live.box) == live.markdown == live_markdown(text, breaks=breaks)


def test_a_table_shows_row_by_row(wire):  # noqa: F811
    """The head shows once its delimiter row is whole, then each row once its line ends."""
    text = "| n | square |\n|---|---:|\n| 2 | 4 |\n| 3 | 9 |\n"
    live = LiveText()
    seen = []
    for ch in text:
        live.append(ch)
        live.flush()
        if live.markdown and (not seen or seen[-1] != live.markdown):
            seen.append(live.markdown)
    assert seen == [
        "| n | square |\n|---|---:|\n",
        "| n | square |\n|---|---:|\n| 2 | 4 |\n",
        "| n | square |\n|---|---:|\n| 2 | 4 |\n| 3 | 9 |\n",
    ]


def test_a_long_table_is_cut_between_rows_and_each_piece_opens_with_its_head(wire):  # noqa: F811
    """Past the tail's limit a table is cut by force at a row's end, never inside a row, after
    an even number of rows; the piece after the cut opens with the table's head (the stylesheet
    hides it: the head above stands for it), and the end joins the pieces into one table."""
    head = "| n | name | square |\n|---|:---:|---:|\n"
    text = head + "".join(f"| {i} | value {i} | {i * i} |\n" for i in range(40)) + "\nAfter."
    live = LiveText()
    for i in range(0, len(text), 4):
        live.append(text[i : i + 4])
        live.flush()
    pieces = [b for b in live._blocks if b.forced]
    assert len(pieces) >= 2 and all(b.src.endswith("|\n") for b in pieces)
    body_rows = [b.src.count("\n") for b in pieces]
    body_rows[0] -= 2  # (the head)
    assert all(n % 2 == 0 for n in body_rows), body_rows  # the stripes go on piece to piece
    for block in live._blocks:  # (the tail shows the paragraph after the table)
        md = block.out.outputs[0]["data"]["text/markdown"]
        assert md.startswith(head), md
    live.flush(join=True)
    live.finalize(text)
    assert wire.shown(live.box) == live_markdown(text)
    assert _GFM.render(wire.shown(live.box)).count("<table>") == 1
