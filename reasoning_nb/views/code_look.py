"""How code looks in the package's saved HTML: highlighted by class (:data:`CODE_PREFIX`),
coloured by :data:`CODE_STYLE` for JupyterLab Light and Dark (Pygments' inline colours are
unreadable on Lab Dark), in a calm box (:func:`code_box_css`) where Lab shows an output."""

from __future__ import annotations

import html
from functools import lru_cache

from pygments.token import Comment, Generic, Keyword, Name, Number, Operator, String

from .theme import lab

CODE_PREFIX = "rnb-hl-"
"""Highlighted code's classes: ``rnb-hl-k`` (keyword), ``rnb-hl-s`` (string)..."""
# (class, token types, Lab's variable, light, dark, font): in JupyterLab the colours are the
# theme's own (the variables its markdown highlighter uses, so a run's code looks the same live,
# ended and reopened); elsewhere (GitHub, an export with no Lab theme) the fallbacks, >= 4.5:1 on
# white and on Lab Dark's #111, even at 0.85 opacity. The first that holds a token's type gives
# its class. Lab leaves brackets, commas, builtins and self in the text colour: so do we.
COLOURS = (
    ("k", (Keyword, Operator.Word), "keyword", "#a40e26", "#ff9492", "font-weight:bold"),
    ("s", (String,), "string", "#0a3069", "#a5d6ff", ""),
    ("c", (Comment,), "", "#424a53", "#b1bac4", "font-style:italic"),  # (Lab Dark's: 4.15:1)
    ("m", (Number,), "number", "#044289", "#79c0ff", ""),
    ("f", (Name.Function, Name.Class), "def", "#5a32a3", "#d2a8ff", ""),
    ("o", (Operator,), "operator", "#5a32a3", "#d2a8ff", "font-weight:bold"),
    ("p", (Name.Attribute, Name.Property), "property", "#0550ae", "#79c0ff", ""),
    ("t", (Name.Decorator, Comment.Preproc), "", "#5a32a3", "#d2a8ff", ""),  # (Lab's: 3.9:1)
    ("d", (Generic.Deleted,), "", "#82071e", "#ffa198", ""),  # diff: removed
    ("i", (Generic.Inserted,), "", "#0f5323", "#7ee787", ""),  # diff: added
)
OURS = {"c": "comment", "t": "meta"}
"""Classes in our colours, not Lab's (which read under 4.5:1 in Lab Dark), and the variable of
Lab's highlighter that the live view sets to them (``notebook.style``), for one look."""
_DOT = "."  # a member access: no operator to Lab's highlighter, and the name after it a property


def code_html(code_classes: bool, code: str, lang: str, attrs: str) -> str:
    """A fence's code as HTML (markdown-it's ``highlight``): classed tokens, or Pygments'
    inline colours; "" for a language Pygments does not know (markdown-it escapes it)."""
    from pygments import highlight as pygments_html  # (with IPython; its lexers load slowly)
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(lang.strip() or "text")
    except ClassNotFound:
        return ""  # markdown-it escapes the code itself
    if code_classes:
        return _coloured(lexer.get_tokens(code))
    return pygments_html(code, lexer, HtmlFormatter(noclasses=True, nowrap=True))


def _coloured(tokens) -> str:
    """Code as HTML with a class (:data:`CODE_PREFIX` and a letter) on the tokens that
    :data:`CODE_STYLE` colours, and no markup on the rest: Pygments' own formatter wraps every
    token, names and spaces included, which made code ~4x its size in a saved notebook. Tokens
    of one colour with only spaces between them share a span."""
    out: list[str] = []
    run, run_class, spaces, last = "", "", "", ""
    for ttype, value in tokens:
        if not value.strip():
            spaces += value
            continue
        cls = "" if value == _DOT else _code_class(ttype)
        if last == _DOT and ttype is Name:
            cls = "p"
        last = value
        if cls == run_class:
            run += spaces + value
        else:
            out += [_span(run_class, run), _span("", spaces)]
            run, run_class = value, cls
        spaces = ""
    return "".join([*out, _span(run_class, run), _span("", spaces)])


def _span(cls: str, text: str) -> str:
    text = html.escape(text, quote=False)
    return f'<span class="{CODE_PREFIX}{cls}">{text}</span>' if cls and text else text


@lru_cache(maxsize=512)
def _code_class(ttype) -> str:
    return next((cls for cls, kinds, *_ in COLOURS if any(ttype in k for k in kinds)), "")


# JupyterLab marks a dark theme on <body>; VS Code's notebook outputs have .vscode-dark.
_DARK = "[data-jp-theme-light=false],.vscode-dark"


def _code_rules() -> str:
    """Each class's colour: Lab's variable, else ours (``--rnb-<class>``, set again for a dark
    page in one rule: the stylesheet is saved with every output that shows code)."""
    rules, dark_values = [], []
    for cls, _, variable, light, dark, font in COLOURS:
        ours = f"var(--rnb-{cls},{light})"
        colour = f"var(--jp-mirror-editor-{variable}-color,{ours})" if variable else ours
        rules.append(f".{CODE_PREFIX}{cls}{{color:{colour}{';' * bool(font)}{font}}}")
        dark_values.append(f"--rnb-{cls}:{dark}")
    return "".join(rules) + f"{_DARK}{{{';'.join(dark_values)}}}"


CODE_STYLE = f"<style>{_code_rules()}</style>"
"""The colours of highlighted code, for a page or an output that shows it (a constant: no model
text reaches it). JupyterLab drops ``<style>`` from untrusted outputs: code then shows in the
text colour, still readable."""


_CODE_BOX = (
    f"background:{lab('layout-color2')};color:{lab('content-font-color1')};"
    "padding:.5em .8em;border-radius:4px;overflow-x:auto;margin:0 0 1em"
)


def code_box_css(scope: str) -> str:
    """CSS for code blocks inside ``scope`` (two classes: as specific as Lab's rules for a
    ``pre`` and its ``code`` in HTML output, and later): a calm box, and no box of the
    ``code`` inside it (Lab's gives every line the page's own background)."""
    return f"{scope} pre{{{_CODE_BOX}}}{scope} pre code{{background:none}}"
