r"""TeX in model text survives the static views: markdown_html (text/html), safe_markdown
(text/markdown, exports, Pin) and the markdown files, with ``$…$``, ``$$…$$``, ``\(…\)`` and
``\[…\]``; prices stay prices and code stays code. Colours of the static views read on light
and dark backgrounds (the browser measures them in Lab: ``test_browser_static.py``)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import mistune
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from test_export_safety import live_html, live_markdown

from reasoning_nb.core.trace import Trace
from reasoning_nb.views import code_look, render
from reasoning_nb.views import compare as compare_view
from reasoning_nb.views import stats_chart as chart_view
from reasoning_nb.views.math_text import IGNORE, PROCESS, RUN_END, holds_math

# -- what the HTML holds -----------------------------------------------------------------------


class _Math(HTMLParser):
    """What MathJax reads as math in HTML, as JupyterLab sets it up (``$``, ``$$``, ``\\(``,
    ``\\[``, environments, ``\\$`` escapes): it searches each run of text (any tag but ``<br>``
    ends one) outside code and outside :data:`IGNORE` (unless in :data:`PROCESS`); and the text
    outside math."""

    SKIP = frozenset(("pre", "code", "script", "style", "textarea"))
    VOID = frozenset(("hr", "img", "input", "meta", "link"))

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.spans: list[str] = []
        self.prose: list[str] = []
        self._run = ""
        self._read = [True]  # per open element: does MathJax read its text?

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "wbr"):  # (MathJax reads these as part of the run)
            self._run += "\n" if tag == "br" else ""
            return
        self._end_run()
        if tag in self.VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        read = self._read[-1] or "mathjax_process" in classes
        if "mathjax_ignore" in classes and "mathjax_process" not in classes:
            read = False
        self._read.append(read and tag not in self.SKIP)

    def handle_endtag(self, tag):
        if tag not in self.VOID | {"br", "wbr"}:
            self._end_run()
            if len(self._read) > 1:
                self._read.pop()

    def handle_data(self, data):
        if self._read[-1]:
            self._run += data
        else:
            self.prose.append(data)

    def close(self) -> None:
        super().close()
        self._end_run()

    def _end_run(self) -> None:
        run, self._run, at = self._run, "", 0
        for start, end, tex in _found(run):
            self.prose.append(run[at:start])
            self.spans.append(tex)
            at = end
        self.prose.append(run[at:])


_OPENING = re.compile(r"\$\$|\$|\\\(|\\\[|\\begin\{([^}]*)\}|\\[\\$]")
_CLOSING = {"$$": "$$", "$": "$", "\\(": "\\)", "\\[": "\\]"}


def _found(run: str):
    """(start, end, TeX) of each math span MathJax finds in one run of text: the first opening
    delimiter, then its closing one, a backslash escaping the next character. (MathJax also
    wants braces balanced before the closing delimiter: not modelled, the TeX here may not be.)"""
    at = 0
    while opening := _OPENING.search(run, at):
        at = opening.end()
        if opening.group() in ("\\\\", "\\$"):  # an escape: a literal character
            continue
        closing = _CLOSING.get(opening.group(), f"\\end{{{opening.group(1)}}}")
        m = next((m for m in _closings(closing, run, at) if m.group() == closing), None)
        if m is None:
            continue
        tex = (
            run[at : at + m.start()]
            if opening.group(1) is None
            else run[opening.start() : at + m.end()]
        )
        yield opening.start(), at + m.end(), tex  # (an environment: typeset whole)
        at += m.end()


def _closings(closing: str, run: str, at: int):
    return re.finditer(re.escape(closing) + r"|\\.", run[at:], re.S)


def math_in(fragment: str) -> list[str]:
    """The TeX of each math span MathJax reads in ``fragment``."""
    parser = _Math()
    parser.feed(fragment)
    parser.close()
    return parser.spans


def prose_in(fragment: str) -> str:
    parser = _Math()
    parser.feed(fragment)
    parser.close()
    return "".join(parser.prose)


# -- the corruptions issue 13 lists ----------------------------------------------------------

CORRUPTED = [  # (model text, the TeX that must arrive whole)
    (r"thin space $a\,b$ here", r"a\,b"),
    (r"a set $\{x \mid x > 0\}$ here", r"\{x \mid x > 0\}"),
    ("display:\n\n\\[ \\sum_{i=1}^n i = \\frac{n}{2} \\]\n\nend", r"\sum_{i=1}^n i = \frac{n}{2}"),
    (r"product $a*b*c$ and $x_1 * y_2$", r"a*b*c"),
    (r"percent $50\%$ of it", r"50\%"),
    (r"inline \(x^2 + y^2\) too", r"x^2 + y^2"),
    ("$$\n\\begin{cases} a &= b \\\\ c \\end{cases}\n$$", r"\begin{cases} a &= b \\ c \end{cases}"),
    (r"a link-like $[a](b)$ span", r"[a](b)"),
    (r"emphasis-like $_a_ \_b$ span", r"_a_ \_b"),
]  # fmt: skip


def test_the_listed_corruptions_are_gone():
    for text, tex in CORRUPTED:
        got = render.markdown_html(text)
        assert tex in math_in(got), (text, got)
        assert "<em>" not in got and "<a " not in got


def test_tex_is_escaped_in_html_and_read_back_whole():
    got = render.markdown_html(r"$a<b \& c>d$")
    assert r"\(a&lt;b \&amp; c&gt;d\)" in got
    assert math_in(got) == [r"a<b \& c>d"]


def test_display_math_is_a_block_and_inline_math_is_delimited_in_its_text():
    """No element of its own: math costs its delimiters (one class on the element that holds
    the markdown lets MathJax read it: ``holds_math``)."""
    got = render.markdown_html("Hence\n$$\nx = 1\n$$\nand $y$.")
    assert "<div>\\[x = 1\\]</div>" in got and "<p>and \\(y\\).</p>" in got
    assert holds_math(got) and not holds_math(render.markdown_html("It costs $5, or \\(."))
    got = render.markdown_html("Then \\[x=1\\] inline, and $$y$$ too.")
    assert math_in(got) == ["x=1", "y"]


def test_a_display_block_may_hold_lines_that_look_like_markdown():
    text = "So\n\\[\na\n+ b\n# c\n\\]\ndone"
    got = render.markdown_html(text)
    assert math_in(got) == ["a\n+ b\n# c"] and "<ul>" not in got and "<h1>" not in got


def test_prices_are_not_math():
    """Not to MathJax either, which reads any two dollars as math: each dollar of prose ends
    its run of text (``RUN_END``), beside math too."""
    for text in ("It costs $5 and $10.", "$5, or $ 6 $", "between $3.50 and $4", "US$5 vs $6"):
        got = render.markdown_html(text)
        assert math_in(got) == [], got
        assert "$" in prose_in(got) and got.count(RUN_END) == text.count("$")
    got = render.markdown_html(
        "$x$ costs $5, \\(y\\) $10 and \\\\(z\\\\) \\$3, \\begin{a}b\\end{a}"
    )
    assert math_in(got) == ["x", "y"], got
    assert math_in(render.markdown_html("$x$ costs 5")) == ["x"]  # not a price: math


def test_dollars_in_code_are_code():
    text = "`$x$` and\n\n```python\nprint('$a$', r'\\(b\\)')\n```\n\n    $c$ \\[d\\]\n"
    got = render.markdown_html(text)
    assert math_in(got) == []
    assert render.safe_markdown(text) == text  # a markdown file keeps its code as it was
    assert "<code>$x$</code>" in got


def test_a_lone_backslash_delimiter_is_text():
    got = render.markdown_html(r"an open \( with no close, and \\(x\\) escaped")
    assert math_in(got) == []
    assert "an open ( with no close, and \\(x\\) escaped" in prose_in(got)


# -- markdown files -----------------------------------------------------------------------------


def test_markdown_files_get_dollar_delimiters():
    text = "Let \\( x \\) be real and\n\\[\nx^2 \\ge 0\n\\]\nso $y$ holds.\n\n> \\(z\\)"
    got = render.safe_markdown(text)
    assert got == "Let $x$ be real and\n$$\nx^2 \\ge 0\n$$\nso $y$ holds.\n\n> $z$"
    assert render.safe_markdown(got) == got  # stable


def test_markdown_files_keep_tex_in_tables_and_lists():
    text = "| a | b |\n| - | - |\n| \\(x\\) | `$` |\n\n- item \\[y\\]\n- $$z$$"
    got = render.safe_markdown(text)
    assert got == "| a | b |\n| - | - |\n| $x$ | `$` |\n\n- item $$y$$\n- $$z$$"


def test_math_with_no_dollar_spelling_goes_to_markdown_as_html():
    for text, tex in ((r"\(n\)5 times", "n"), (r"\(\text{a$b}\) here", r"\text{a$b}")):
        got = render.safe_markdown(text)
        assert got.startswith('<div class="reasoning-nb-md ') and math_in(got) == [tex]


def test_a_dollar_of_prose_goes_to_markdown_as_html():
    """JupyterLab's markdown typesets ``$5 and $10`` (and ``\\$5 and \\$10``: the backslashes
    go before MathJax looks), so such text goes as HTML, where the dollars are prose."""
    for text in ("It costs $5 and $10 for $x$.", "It costs \\$5 and \\$10."):
        got = render.safe_markdown(text)
        math = PROCESS if "$x$" in text else IGNORE
        assert got.startswith(f'<div class="reasoning-nb-md {math}">') and "$" not in got
        assert "It costs $5 and $10" in prose_in(got)
        assert math_in(got) == (["x"] if "$x$" in text else [])


def test_markdown_tex_with_html_characters_goes_as_html_lab_can_read():
    """Text with ``<`` or ``&`` is embedded as HTML; there every ``$`` and backslash is a
    character reference, which JupyterLab's markdown math pass cannot see, and the browser
    reads back as the TeX."""
    text = "So $$\\begin{aligned} a &= b \\\\ c &< d \\end{aligned}$$ and $5 < $10."
    got = render.safe_markdown(text)
    assert got.startswith(f'<div class="reasoning-nb-md {PROCESS}">')
    assert "$" not in got and "\\" not in got
    assert math_in(got) == [r"\begin{aligned} a &= b \\ c &< d \end{aligned}"]
    for renderer in (MarkdownIt("commonmark", {"html": True}).render, mistune.html):
        assert math_in(renderer(got)) == math_in(got)


def test_pinned_and_quoted_markdown_keeps_tex():
    text = "step: \\(a_1 * b_1\\), then $a_2*b_2$"
    got = render.safe_markdown(text, breaks=True, allow_fences=False)
    assert got == "step: $a_1 * b_1$, then $a_2*b_2$"


# -- properties ---------------------------------------------------------------------------------

TEX = (
    st.lists(
        st.sampled_from([*"abcxyz019 _^{}*+-=<>&|,;%~#!`'\"()[]", "\\", "\\\\", "\n"]),
        min_size=1,
        max_size=24,
    )
    .map("".join)
    .map(str.strip)
    .filter(lambda t: t and all(line.strip() for line in t.split("\n")))
    .filter(lambda t: (len(t) - len(t.rstrip("\\"))) % 2 == 0)
)  # no "$" (a markdown file delimits with it), no blank line, no odd backslash run at the end
PROSE = st.text(alphabet=st.sampled_from(list("ab .,*_\n")), max_size=12).map(
    lambda t: re.sub(r"\s*\n\s*", "\n", t).strip()
)
FORMS = {  # kind -> (opening, closing, on lines of their own)
    "$": ("$", "$", False),
    "$$": ("$$", "$$", False),
    "(": ("\\(", "\\)", False),
    "[": ("\\[", "\\]", False),
    "$$ block": ("$$", "$$", True),
    "[ block": ("\\[", "\\]", True),
}


@settings(max_examples=400, deadline=None)
@given(PROSE, TEX, st.sampled_from(sorted(FORMS)), PROSE)
def test_math_round_trips(before, tex, kind, after):
    """In a paragraph, TeX is one line (a line of it could open a quote or a list there); a
    display block takes any lines."""
    opening, closing, block = FORMS[kind]
    assume(closing not in tex and (block or "\n" not in tex))
    # (the static view writes math as \(…\) or \[…\], whatever its delimiters were: TeX
    # holding one of those closers ends early in MathJax, a limit of that form)
    assume("\\)" not in tex and "\\]" not in tex)
    # (after a list item, a display block's lines continue the item, and a TeX line that is a
    # list marker ("*") starts a new item: markdown's rule, in Jupyter's renderer too)
    in_list = re.match(r"[*+-]( |$)", before.rsplit("\n", 1)[-1])
    assume(not (block and in_list and any(re.match(r"[*+-]( |$)", t) for t in tex.split("\n"))))
    if block:
        text = f"{before}\n{opening}\n{tex}\n{closing}\n{after}"
    else:
        text = f"{before} {opening}{tex}{closing} {after}"
    assert math_in(render.markdown_html(text)) == [tex], text
    md = render.safe_markdown(text)
    assert math_in(render.markdown_html(md) if not md.startswith("<div") else md) == [tex], md


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "$",
                "$$",
                "\\(",
                "\\)",
                "\\[",
                "\\]",
                "\\",
                "`",
                "```",
                "\n",
                "\n\n",
                "<script>alert(1)</script>",
                "<img src=x onerror=alert(1)>",
                "[l](javascript:alert(1))",
                "![i](https://x.example/i.png)",
                "&#106;avascript:",
                "x",
                "5",
                " ",
                "*",
                "> ",
                "    ",
                "| a |",
                "\\begin{aligned}",
            ]
        ),
        max_size=14,
    ).map("".join)
)
def test_any_text_stays_inert(text):
    """Math never opens a door: no raw HTML, no unsafe link, whatever the delimiters do."""
    assert live_html(render.markdown_html(text)) == []
    assert live_html(render.markdown_html(text, breaks=True, code_classes=True)) == []
    for fences in (True, False):
        out = render.safe_markdown(text, allow_fences=fences)
        assert live_markdown(out) == [] and live_markdown(render.quote(out)) == []


# -- the views that hold math -------------------------------------------------------------------


def finished(reasoning: str, answer: str, **kw) -> Trace:
    trace = Trace(**{"model": "llamacpp:m", "preset": "high", "prompt": "Q", **kw})
    trace.reasoning, trace.answer = reasoning, answer
    trace.finish()
    return trace


def test_views_mark_their_prose_as_not_math():
    trace = finished("costs $5 and $10, so \\(x\\)", "$y$ at $3 each", model="llamacpp:$m$")
    for mode in render.MODES:
        page = render.to_html(trace, mode)
        assert page.startswith('<div class="reasoning-nb ') and IGNORE in page.split(">")[0]
        assert math_in(page) == (["y"] if mode == "strip" else ["x", "y"])
    page = compare_view.bundle([trace, trace])["text/html"]
    assert IGNORE in page.split(">")[0]


# -- colours ------------------------------------------------------------------------------------


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(fg: str, bg: str, alpha: float = 1.0) -> float:
    """WCAG contrast of ``fg`` drawn at ``alpha`` over ``bg``."""
    mixed = "#" + "".join(
        f"{round(alpha * int(fg[i : i + 2], 16) + (1 - alpha) * int(bg[i : i + 2], 16)):02x}"
        for i in (1, 3, 5)
    )
    a, b = sorted((_luminance(mixed), _luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def test_code_colours_read_on_light_and_dark_backgrounds():
    """Every token colour: 4.5:1 on white, GitHub's and Lab's greys, and on Lab Dark's
    backgrounds, at the 0.85 opacity of a folded reasoning body."""
    for _, _, _, light, dark, _ in code_look.COLOURS:
        for bg in ("#ffffff", "#f6f8fa", "#eeeeee"):
            assert contrast(light, bg, 0.85) >= 4.5, (light, bg)
        for bg in ("#111111", "#212121"):
            assert contrast(dark, bg, 0.85) >= 4.5, (dark, bg)


def test_highlighted_code_has_classes_and_its_stylesheet_once():
    trace = finished("plan:\n```python\nx = 1  # one\n```", "```python\nif x:\n    pass\n```")
    page = render.to_html(trace, "inline")
    assert 'style="color' not in page.split("<style>")[0] + page.split("</style>")[1]
    assert page.count(code_look.CODE_STYLE) == 1
    assert f'<span class="{code_look.CODE_PREFIX}k">if</span>' in page
    assert code_look.CODE_STYLE not in render.to_html(finished("no code", "none"))
    assert "[data-jp-theme-light=false]" in code_look.CODE_STYLE


def test_static_backgrounds_come_with_their_text_colour():
    """A background without a text colour is white on light grey in JupyterLab Dark."""
    trace = finished("r", "a")
    other = finished("r", "b\nc")
    pages = [render.to_html(trace, "inline"), compare_view.bundle([trace, other])["text/html"]]
    for page in pages:
        for style in re.findall(r'style="([^"]*)"', page):
            if "background:" in style and "rgba(" not in style:
                assert "color:var(--jp-content-font-color1" in style, style


def test_the_diff_colours_its_lines():
    a, b = finished("r", "same\nold line"), finished("r", "same\nnew <line>")
    page = compare_view.diff_html([a, b])
    assert "<del>-old line\n</del>" in page and "<ins>+new &lt;line&gt;\n</ins>" in page
    for tag, tint in (("ins", "46,160,67"), ("del", "248,81,73")):
        assert f".reasoning-nb-compare-diff {tag}{{background:rgba({tint}," in compare_view.STYLE
    text = html.unescape(re.sub(r"<[^>]+>", "\n", page.split("<pre")[1].split(">", 1)[1]))
    assert [line for line in text.split("\n") if line] == compare_view.answer_diff([a, b]).split(
        "\n"
    )


def test_chart_text_follows_the_theme():
    rows = [
        {"model": "m", "preset": p, "status": "complete", "reasoning_tokens": n}
        | {"reasoning_estimated": est}
        for p, n, est in (("low", 100, False), ("high", 900, True))
    ]
    page = chart_view.chart_html(rows)
    cells = re.findall(r"<td ([^>]*)>", page)
    bars = [c for c in cells if "reasoning-nb-bar" in c]
    assert len(bars) == 2 and all("color:#" in c for c in bars)  # the series colour
    labels = [c for c in cells if c not in bars]
    assert labels and not any("color" in c for c in labels)  # the theme's text colour
