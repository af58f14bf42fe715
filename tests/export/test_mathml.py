r"""``export.mathml``: TeX → MathML for exported pages, safe whatever the TeX.

Every conversion's output is checked by :func:`assert_safe`, written apart from the module's own
lists: one ``<math>`` root, MathML elements only (and the HTML ``\text{…}`` makes, inside
``<mtext>``), no attribute that can run script or name a URL. Hostile and random TeX either gives
such output or stays as it was.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_math_text import math_in, prose_in

from reasoning_nb.core.trace import Trace
from reasoning_nb.export import mathml
from reasoning_nb.views import render
from reasoning_nb.views.math_text import IGNORE, PROCESS

_MATHML_NAMES = (
    "math mrow mi mn mo mtext ms mspace mfrac msqrt mroot msub msup msubsup munder mover "
    "munderover mmultiscripts mprescripts none mtable mtr mtd mpadded mphantom mstyle menclose "
    "merror semantics"
)
MATHML = set(_MATHML_NAMES.split())
BLOCK = "margin:0.6em 0;overflow-x:auto;overflow-y:hidden"  # a display formula's own look
RISKY_VALUE = re.compile(r"url\(|javascript:|expression\(|@import|[\"'<>\\]", re.I)


class _Check(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.roots = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if not self.stack:
            assert tag == "math", tag
            self.roots += 1
        assert tag in MATHML or (tag in {"b", "i", "em", "strong", "code", "span"}
                                 and "mtext" in self.stack), tag  # fmt: skip
        for name, value in attrs:
            assert not name.startswith("on"), name
            assert name not in {"href", "src", "xlink:href", "action", "srcdoc", "id"}, name
            assert value is None or not RISKY_VALUE.search(value), (name, value)
        self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.stack.pop()

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack)
        self.stack.pop()

    def handle_data(self, data):
        assert self.stack or not data.strip(), data
        self.text.append(data)


def assert_safe(mathml_text: str) -> str:
    """Check one converted span; its text content."""
    check = _Check()
    check.feed(mathml_text)
    check.close()
    assert check.roots == 1 and not check.stack, mathml_text
    return "".join(check.text)


def one(tex: str, display: bool = False) -> str | None:
    return mathml.convert([(tex, display)])[0]


# -- the suite's own math ------------------------------------------------------------------------

# From the tests' fixtures and the quickstart (see the module doc of export.mathml): TeX -> what
# a reader must see of it.
DISPLAYED = {
    r"I(\lambda) \propto \frac{1}{\lambda^4}": "I λ ∝ 1 λ 4",
    r"\sum_{i=1}^{n} i = \frac{n(n+1)}{2}": "∑ i = 1 n i = n ( n + 1 ) 2",
    r"\begin{aligned} a &= b \\ c &= d \end{aligned}": "a = b c = d",
    r"\begin{cases} a &= b \\ c \end{cases}": "a = b c",
    r"\frac{I_{blue}}{I_{red}} = \left(\frac{700}{450}\right)^4": "I blue I red 700 450",
}
INLINE = {
    r"\lambda_b = 450\,\mathrm{nm}": "λ b = 450 nm",
    r"\{x \mid x > 0\}": "{ x ∣ x > 0 }",
    r"a*b*c = \{1, 2\}": "a b c = { 1 , 2 }",
    r"50\%": "50 %",
    r"\sec\theta = 1 / \cos\theta": "sec θ = 1 / cos θ",
}
FORMULAS = [(t, True, r) for t, r in DISPLAYED.items()] + [(t, False, r) for t, r in INLINE.items()]


@pytest.mark.parametrize(("tex", "display", "reads"), FORMULAS)
def test_the_suites_formulas_convert_whole(tex, display, reads):
    got = one(tex, display)
    assert got is not None, tex
    text = assert_safe(got)
    for word in reads.split():  # every symbol a reader must see is there
        assert word in text, (word, text)
    assert ('display="block"' in got) == display
    assert f'class="{IGNORE}"' in got  # MathJax, when it loads online, leaves it alone


# -- hostile TeX ----------------------------------------------------------------------------------

HOSTILE = [
    r"\href{javascript:alert(1)}{x}",
    r"\style{background:url(https://example.invalid/x)}{x}",
    r"\class{jp-Cell}{x}",
    r"\url{https://example.invalid}",
    r"\htmlId{x}{y}",
    r"\eqref{eq}",  # the converter makes an HTML <a href> of it
    r"\unicode{x41}",
    r"\color{red; background: url(https://example.invalid/)} x",
    r"\kern 100000em x",  # a page pushed a kilometre wide
    r"\raisebox{9999pt}{x}",  # text moved over someone else's
    r"\def\a{\a\a}\a",
    r"\newcommand{\x}[1]{#1#1}" + r"\x{" * 40 + "y" + "}" * 40,
    "<img src=x onerror=alert(1)>",
    "</math><script>alert(1)</script>",
]


@pytest.mark.parametrize("tex", HOSTILE)
def test_hostile_tex_stays_tex_or_converts_safely(tex):
    got = one(tex)
    if got is not None:
        assert_safe(got)
    view = f'<div class="{IGNORE}"><p class="{PROCESS}">\\({html.escape(tex)}\\)</p></div>'
    out = mathml.typeset_view(view)
    assert out == view or "<math" in out
    assert "<script" not in out.replace("&lt;script", "")


def test_links_and_styles_are_never_converted():
    for tex in HOSTILE[:5]:
        assert one(tex) is None, tex


def test_huge_and_deep_input_stays_tex_without_crashing():
    # The converter recurses per level: 5,000 braces overflow an 8 MB stack (measured).
    deep = "{" * 9_999 + "x" + "}" * 9_999
    assert one(deep) is not None  # on its own thread's stack
    assert one("\\frac{" * 1_800 + "1}{2}" * 1_800) is not None
    assert one("x+" * (mathml.MAX_TEX // 2 + 1)) is None  # too long: TeX
    assert one("   ") is None


def test_clean_keeps_only_the_lists():
    kept = mathml.clean(
        '<math display="block" onclick="x()" id="a"><mi href="javascript:x" mathvariant="bold">'
        'x</mi><mrow style="color:#FF0000;background:url(https://e.invalid/);width:50%">'
        "<mn>1</mn></mrow></math>"
    )
    assert kept == (
        f'<math display="block" class="{IGNORE}" style="{BLOCK}"><mi mathvariant="bold">x</mi>'
        '<mrow style="color:#FF0000;width:50%"><mn>1</mn></mrow></math>'
    )
    for bad in (
        "<math><a href='#x'>1</a></math>",  # HTML outside <mtext>
        "<math><script>alert(1)</script></math>",
        "<math><mi>x</mi></math><math></math>",  # two roots
        "<mi>x</mi>",
        "<math><mi>x</math>",
        "<math><!-- x --></math>",
        '<math><mspace width="1000em"/></math>',
    ):
        with pytest.raises(mathml._Unsafe):
            mathml.clean(bad)


# -- views --------------------------------------------------------------------------------------


def test_a_view_keeps_its_prose_code_and_unconvertible_spans():
    trace = Trace(model="m", preset="high", prompt="Q")
    trace.reasoning = (
        "Let \\(x<y\\) be real; then $x^2 \\ge 0$.\n\n\\[\n\\sum_{i=1}^{n} i\n\\]\n\n"
        "The tickets cost $5 and $10; see $\\href{javascript:alert(1)}{here}$."
    )
    trace.answer = "So $a*b*c$, and `\\(code\\)` stays code.\n\n```\n\\[x\\]\n```"
    trace.finish()
    view = render.bundle(trace, "inline")["text/html"]
    out = mathml.typeset_view(view)
    assert out.count("<math") == 4
    assert math_in(out) == [r"\href{javascript:alert(1)}{here}"]  # left for MathJax, as it was
    assert "The tickets cost $5 and $10" in prose_in(out)
    assert "<code>\\(code\\)</code>" in out and "\\[x\\]\n</code></pre>" in out
    for span in re.findall(r"<math.*?</math>", out, re.S):
        assert_safe(span)


def test_outside_process_elements_nothing_changes():
    code = "<code>\\(y\\)</code>"
    view = f'<div class="{IGNORE}"><p>\\(x\\)</p><p class="{PROCESS}">{code}</p></div>'
    assert mathml.typeset_view(view) == view
    assert "<math" in mathml.typeset_view("<p>\\(x\\)</p>")  # outside any view: MathJax's rules


def test_a_latex_output_that_is_one_formula():
    assert "<msup>" in mathml.latex_formula("$\\displaystyle x^{2}$")
    assert 'display="block"' in mathml.latex_formula("$$\\frac12$$")
    assert 'display="block"' in mathml.latex_formula("\\begin{equation}a\\end{equation}")
    assert mathml.latex_formula("where $a$ and $b$ are real") is None
    assert mathml.latex_formula("$\\href{javascript:x}{y}$") is None


# -- any TeX --------------------------------------------------------------------------------------

_PIECES = (
    r"\ { } ^ _ $ & # % < > ' \" ( ) [ ] a x 1 2 = + - ~ , ;"
    r" \frac \sqrt \text{ \mathrm{ \href{ \url{ \style{ \class{ \color{ \kern \raisebox{"
    r" \begin{matrix} \end{matrix} \begin{aligned} \end{aligned} \left( \right) \\"
    r" \alpha \sum \int \eqref{ \label{ \newcommand \def \mathbb{ javascript: url("
    r" onerror= <script> </math>"
)
PIECES = st.sampled_from([*_PIECES.split(), " ", "\n"])
TEX = st.lists(PIECES, max_size=40).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tex=TEX, display=st.booleans())
def test_any_tex_gives_safe_mathml_or_none(tex, display):
    got = one(tex, display)
    if got is not None:
        assert_safe(got)


DELIMITERS = st.sampled_from(["$", "$$", "\\(", "\\)", "\\[", "\\]", "`", "\n\n", " "])
MODEL_TEXT = st.lists(st.one_of(PIECES, DELIMITERS), max_size=50).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=MODEL_TEXT)
def test_any_model_text_keeps_each_span_typeset_safely_or_as_it_was(text):
    """What MathJax would read in a view is, span by span, MathML or the same TeX."""
    view = f'<div class="{IGNORE}"><div class="{PROCESS}">{render.markdown_html(text)}</div></div>'
    out = mathml.typeset_view(view)
    converted = re.findall(r"<math.*?</math>", out, re.S)
    for span in converted:
        assert_safe(span)
    before, after = math_in(view), math_in(out)
    assert len(before) == len(after) + len(converted)
    left = iter(before)
    assert all(any(tex == b for b in left) for tex in after)  # the rest, in order, unchanged
    assert prose_in(re.sub(r"<math.*?</math>", "", out, flags=re.S)) == prose_in(view)
