"""Math-rich reasoning streamed into the live view shows the blocks a markdown cell would show:
no cut by force lands inside a math span or a word, and a blank line ends its paragraph
whatever the tokens look like (issue 22, item 0).

A reader sees each ``Output``'s markdown rendered by Lab: math found first (``math_spans``, a
port of Lab's ``removeMath``), then the markdown; a piece cut by force (``CONT_CLASS``) runs its
first paragraph on from the piece before. These tests compare that with the whole text rendered
as one markdown cell.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from scaling import assert_linear
from test_widget import wire  # noqa: F401  (the fixture)

from reasoning_nb.notebook.live_text import LiveText
from reasoning_nb.notebook.style import CONT_CLASS
from reasoning_nb.views.live_markdown import live_markdown, math_spans

_MD = MarkdownIt("commonmark").enable("table")

# -- what a reader sees --------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def math_of(markdown: str) -> tuple[str, ...]:
    """The math spans Lab typesets in one Output's markdown."""
    return tuple(markdown[a:b] for a, b in math_spans(markdown))


@lru_cache(maxsize=4096)
def blocks_of(markdown: str) -> tuple[tuple[str, str], ...]:
    """The top-level blocks Lab renders one Output's markdown as: (kind, text), math masked
    first as Lab masks it, spaces squashed (a hard break reads as a space)."""
    masked, pos = [], 0
    for a, b in math_spans(markdown):
        masked.append(markdown[pos:a] + "@@")
        pos = b
    masked.append(markdown[pos:])
    blocks: list[list[str]] = []
    for token in _MD.parse("".join(masked)):
        if token.level == 0 and token.nesting >= 0:
            blocks.append([token.type.removesuffix("_open"), ""])
        if token.content and blocks:
            blocks[-1][1] = " ".join(f"{blocks[-1][1]} {token.content}".split())
    return tuple((kind, text) for kind, text in blocks)


def pieces(live: LiveText) -> list[tuple[str, bool]]:
    """Each Output's markdown and whether it runs on from the one before, in order."""
    outs = [b.out for b in live._blocks] + [live.tail]
    return [
        (o.outputs[0]["data"]["text/markdown"] if o.outputs else "", CONT_CLASS in o._dom_classes)
        for o in outs
    ]


def seen(shown: list[tuple[str, bool]]) -> list[tuple[str, str]]:
    """The blocks a reader sees: a piece cut by force runs its first paragraph on."""
    out: list[tuple[str, str]] = []
    for markdown, cont in shown:
        blocks = list(blocks_of(markdown))
        if cont and blocks and out and out[-1][0] == blocks[0][0] == "paragraph":
            out[-1] = ("paragraph", f"{out[-1][1]} {blocks.pop(0)[1]}".strip())
        out += blocks
    return out


# -- math-rich reasoning, as tokens --------------------------------------------------------------

WORDS = ["the", "optical", "depth", "for", "zenith", "angle", "near", "horizon", "grows", "air"]
ODD = ["-", "+", "1.", "#", ">", "=", "5"]  # (mid-line: a piece opening so would be a block)
INLINE = [
    r"$\tau(\lambda) = \tau_0 \sec\theta$",
    r"$\Theta = 90^\circ$",
    r"\( a^2 + b^2 = c^2 \)",
    r"\(\frac{1}{2} m v^2\)",
    r"$I = I_0 e^{-\tau}$",
    r"$x$",
]
DISPLAY = [
    "$$\n\\int_0^1 f(x) \\, dx = F(1) - F(0)\n$$",
    "\\[\n\\tau = \\int \\kappa \\, \\rho \\, ds\n\\]",
    "$$ E = m c^2 $$",
    "\\begin{align}\nx &= 1 \\\\\ny &= 2\n\\end{align}",
]
word = st.sampled_from(WORDS)
part = st.one_of(
    word,
    word,
    word,
    word.map(lambda w: w + "."),
    st.sampled_from(ODD),
    st.sampled_from(INLINE),
    st.just("$5"),  # (a price: Lab pairs its dollar with the next one in the paragraph)
)
line = st.tuples(word, st.lists(part, max_size=40)).map(lambda t: " ".join([t[0], *t[1]]))
paragraph = st.lists(line, min_size=1, max_size=4).map("\n".join)
block = st.one_of(paragraph, paragraph, paragraph, st.sampled_from(DISPLAY))
texts = st.lists(block, min_size=1, max_size=6).map("\n\n".join)


def tokens(text: str, shape: str) -> list[str]:
    """``text`` as a tokenizer sends it, in tokens of at most 4 characters: each word with the
    whitespace before it (`` word``, ``\\n\\nNext``) or after it (``axis.\\n\\n``)."""
    words = re.findall(r"\s*\S+|\s+" if shape == "before" else r"\S+\s*|\s+", text)
    return [w[i : i + 4] for w in words for i in range(0, len(w), 4)]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    texts,
    st.sampled_from(["before", "after"]),
    st.sampled_from([40, 120, 400]),
    st.lists(st.integers(1, 9), min_size=1, max_size=20),
    st.sets(st.integers(0, 400), max_size=12),
)
def test_math_reasoning_streams_as_a_markdown_cell_shows_it(wire, text, shape, limit, gaps, pauses):  # noqa: F811
    """Any math-rich text, in either token shape, flushed at any moments (pausing now and then,
    cut by force past any limit): after each flush every frozen block holds whole math spans,
    the same a markdown cell finds there, and the blocks a reader sees are the cell's; at the
    end the blocks and the tail hold the text, and show the cell's blocks."""
    want_math = math_of(live_markdown(text, breaks=True))
    want = seen([(live_markdown(text, breaks=True), False)])
    live = LiveText(tail_limit=limit, breaks=True)
    due, flushes = gaps[0], 0
    for k, token in enumerate(tokens(text, shape)):
        live.append(token)
        if k < due:
            continue
        flushes += 1
        due = k + gaps[flushes % len(gaps)]
        if flushes in pauses:
            live.settle()
        live.flush(join=flushes % 3 == 0)
        frozen = pieces(live)[:-1]
        math = [m for markdown, _ in frozen for m in math_of(markdown)]
        assert math == list(want_math[: len(math)]), [b.src for b in live._blocks][-2:]
        blocks = seen(frozen)[:-1]  # (the last may go on in the tail)
        assert blocks == want[: len(blocks)], [b.src for b in live._blocks][-2:]
    assert "".join(b.src for b in live._blocks) + live._take() == text
    live.settle()
    live.flush()
    assert seen(pieces(live)) == want
    assert wire.shown(live.box) == live.markdown
    live.finalize(text)
    assert wire.shown(live.box) == live_markdown(text, breaks=True)


# -- the two causes, one at a time ---------------------------------------------------------------


def stream(live: LiveText, text: str, size: int = 4) -> None:
    for i in range(0, len(text), size):
        live.append(text[i : i + size])
        live.flush()


def test_a_forced_cut_waits_for_the_math_span_to_close(wire):  # noqa: F811
    """A paragraph past the limit while a span is being written: the cut waits for it to
    close (it used to land at the last space inside it: each piece showed raw TeX, and the
    second paired its dollar with the next span's, typesetting "forzenithangle")."""
    text = (
        "The optical depth along the path is "
        r"$\tau(\lambda) = \tau_0 \sec\theta$ for zenith angle $\theta$, "
        r"and near the horizon $\Theta = 90^\circ$ it grows without bound."
    )
    live = LiveText(tail_limit=50)
    stream(live, text)
    frozen = [b.out.outputs[0]["data"]["text/markdown"] for b in live._blocks]
    assert frozen and all(b.forced for b in live._blocks)
    assert [m for md in frozen for m in math_of(md)] == [
        r"$\tau(\lambda) = \tau_0 \sec\theta$",
        r"$\theta$",
        r"$\Theta = 90^\circ$",
    ][: sum(len(math_of(md)) for md in frozen)]
    assert all(md.count("$") % 2 == 0 for md in frozen), frozen


def test_a_blank_line_after_a_forced_cut_ends_the_paragraph(wire):  # noqa: F811
    """A tail cut by force where it ends, at a line end: the blank line that comes next
    (the second half of ``axis.\\n\\n``) used to open the next piece, which could not see it,
    so the next paragraph ran on as part of this one."""
    first = "The light crosses more air near the horizon, along the axis.\n"
    live = LiveText(tail_limit=40)
    live.append(first)
    live.flush()
    stream(live, "\nSo the sky near the horizon is paler.\n\nEnd.")
    live.settle()
    live.flush()
    assert seen(pieces(live)) == [
        ("paragraph", "The light crosses more air near the horizon, along the axis."),
        ("paragraph", "So the sky near the horizon is paler."),
        ("paragraph", "End."),
    ]


def test_a_piece_never_opens_as_a_block_of_its_own(wire):  # noqa: F811
    """A cut by force before ``- 3`` or ``+ b`` mid-line would make the next piece a list."""
    text = "so the sum is 7 - 3 + 2 = 6 and then 9 - 4 = 5 " * 6
    live = LiveText(tail_limit=40)
    stream(live, text)
    live.settle()
    live.flush()
    assert seen(pieces(live)) == [("paragraph", " ".join(text.split()))]


def test_an_unclosed_dollar_holds_the_cut_only_so_long(wire):  # noqa: F811
    """A lone ``$`` (a price) opens a span no closer ends: the tail waits past its limit, but
    no further than ``MATH_WAIT`` past it, then is cut as before."""
    from reasoning_nb.views.markdown_blocks import MATH_WAIT

    text = "It costs $5 and " + "then more words follow " * 200
    live = LiveText(tail_limit=100)
    stream(live, text)
    assert live._blocks
    assert all(len(b.src) <= 100 + MATH_WAIT + 4 for b in live._blocks)
    assert len(live._open) <= 100 + MATH_WAIT + 4


@pytest.mark.parametrize("indent", ["  ", "\t"])
def test_a_table_of_indented_rows_is_still_cut_by_force(wire, indent):  # noqa: F811
    """Rows that start with a space or a tab: a cut before one is a cut before a row (the rule
    "not before whitespace" is for the middle of a line), so the tail stays near its limit."""
    rows = "".join(f"{indent}| row {i} cell | value {i} |\n" for i in range(150))
    text = f"Intro.\n\n{indent}| a | b |\n{indent}|---|---|\n{rows}"
    live = LiveText(tail_limit=400)
    longest = 0
    for i in range(0, len(text), 4):
        live.append(text[i : i + 4])
        live.flush()
        longest = max(longest, len(live._open))
    assert len(live._blocks) > 5 and longest < 400 + 40
    assert all(b.src.startswith(indent + "|") for b in live._blocks[2:])


def test_an_indented_code_block_is_cut_between_its_lines(wire):  # noqa: F811
    """Each piece of an indented code block starts with a whole line, its indent kept (a cut
    after the indent, or inside a line, makes the rest a paragraph)."""
    code = "".join(f"    x{i} = compute(alpha, beta) + other  # note\n" for i in range(40))
    live = LiveText(tail_limit=400)
    stream(live, f"Some code:\n\n{code}")
    pieces = [b.src for b in live._blocks[1:]] + [live._open]
    assert len(pieces) > 2 and "".join(pieces) == code
    assert all(re.match(r"    x\d+ = ", piece) for piece in pieces), [p[:12] for p in pieces]


def test_streaming_unclosed_math_costs_linear_time(wire):  # noqa: F811
    """A run of ``\\(`` that never close, streamed and shown whole at the end, costs time
    linear in the text (each render of it was quadratic)."""

    def work(n: int) -> None:
        text = "so \\( x " * n
        live = LiveText()
        for i in range(0, len(text), 512):
            live.append(text[i : i + 512])
            live.flush()
        live.finalize(text)

    assert_linear(work, 800)
