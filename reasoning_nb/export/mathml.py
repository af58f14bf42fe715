r"""Math typeset when the page is exported: TeX → MathML, which browsers draw natively
(Chromium 109+, Firefox, Safari), so an exported page shows its math with no network.

The converter is ``math_core`` (MathML Core, the subset browsers implement). On the test
suite's 134 distinct math spans it converted every real formula; the 9 it refused are HTML,
regular expressions and markdown that the suite feeds the math rules on purpose, and they stay
TeX. ``latex2mathml`` accepted 133, but drew ``aligned`` as one run-on line, ``\sec\theta`` as
``secθ``, made ``href="javascript:…"`` of ``\href`` and typeset ``<img onerror=…>`` as letters.

What is math stays the package's decision: in a view (``views.render``, ``views.compare``) the
spans MathJax would typeset (``views.math_text``); in the notebook's own markdown, nbconvert's
markdown parser, as before. A span that does not convert stays as it was: offline its TeX reads
whole, online nbconvert's MathJax 2 still typesets it. MathJax never typesets the MathML twice:
its page config reads TeX only, and each ``<math>`` carries ``math_text.IGNORE``.

Model text is untrusted, and so is the converter's output: it is parsed and written again with
MathML elements only (and the few HTML ones ``\text{…}`` makes), attributes from a list, values
without ``(``, quotes or slashes (nothing can run or fetch), lengths a page can hold. Anything
else sends the span back to TeX. The converter recurses on nesting, so it runs on a thread with a
stack that the longest span it is given (:data:`MAX_TEX`) cannot exhaust.
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

from ..views.math_text import IGNORE, RENDERED

MAX_TEX = 20_000
"""Longer spans stay TeX. Nested 20,000 deep, the converter needs ~12 MB of stack (measured)."""
_STACK = 64 << 20


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_MATHML = _names(
    "math mrow mi mn mo mtext ms mspace mfrac msqrt mroot msub msup msubsup munder mover "
    "munderover mmultiscripts mprescripts none mtable mtr mtd mpadded mphantom mstyle menclose "
    "merror semantics"
)
_TEXT_HTML = _names("b i em strong code span")  # what \text{\textbf{…}} holds
_ATTRS = _names(
    "display displaystyle scriptlevel mathvariant mathsize dir stretchy fence separator form "
    "largeop movablelimits symmetric accent accentunder lspace rspace minsize maxsize width "
    "height depth voffset linethickness notation columnalign rowalign columnspan rowspan "
    "columnspacing rowspacing columnlines rowlines frame framespacing class style"
)
_STYLE = _names(
    "color background-color text-align justify-items vertical-align width margin-left "
    "margin-right padding-left padding-right padding-top padding-bottom border-top "
    "border-bottom border-left border-right font-weight font-style"
)
_VALUE = re.compile(r"[\w.%# ,-]*")  # no ( ' " / \ : nothing that can name a URL or a script
_CLASS = re.compile(r"(?:math-core|menclose)-[a-z-]+")
_LENGTH = re.compile(r"(-?\d*\.?\d+)(em|rem|ex|mu|px|pt|pc|cm|mm|in|%)?")
_EM = {"em": 1, "rem": 1, "ex": 0.5, "mu": 1 / 18, "px": 1 / 16, "pt": 1 / 12, "pc": 1}
_EM |= {"cm": 2.37, "mm": 0.237, "in": 6, "%": 0.2, None: 1}
_MAX_EM = 20.0  # \qquad is 2em: more is a page pushed aside or text moved over another's


_ROOT = f' class="{IGNORE}"'  # MathJax 2 and 3 leave it alone, when they load online
_ROOT_BLOCK = f'{_ROOT} style="margin:0.6em 0;overflow-x:auto;overflow-y:hidden"'
"""A display formula stands apart from the text around it, as MathJax sets it, and a wide one
scrolls instead of widening the page."""


class _Unsafe(Exception):
    """The converter's output holds something not on the lists: the span stays TeX."""


def convert(spans: list[tuple[str, bool]]) -> list[str | None]:
    """MathML for each ``(tex, display)``, or None where the span stays TeX."""
    if not spans:
        return []
    out: list[str | None] = []
    _on_big_stack(lambda: out.extend(_convert(spans)))
    return out if len(out) == len(spans) else [None] * len(spans)


def _convert(spans: list[tuple[str, bool]]) -> list[str | None]:
    try:
        from math_core import LatexToMathML

        converter = LatexToMathML(fancy_error=False)
    except Exception:  # an installation without it, or a changed API: math stays TeX
        return [None] * len(spans)
    return [_one(converter, tex, display) for tex, display in spans]


def _one(converter: Any, tex: str, display: bool) -> str | None:
    if not tex.strip() or len(tex) > MAX_TEX:
        return None
    try:
        raw = converter.convert_with_local_state(tex, displaystyle=display)
        return clean(raw)
    except _Unsafe:
        return None
    except BaseException as exc:  # a Rust panic reaches Python as a BaseException (pyo3)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return None


def _on_big_stack(work: Callable[[], None]) -> None:
    """Run ``work`` on a thread whose stack ``MAX_TEX`` of nesting cannot overflow (a main
    thread may have 1 MB, a Jupyter server's worker 512 KB)."""
    try:
        old = threading.stack_size(_STACK)
    except (ValueError, RuntimeError):  # a platform that cannot set it: math stays TeX
        return
    try:
        thread = threading.Thread(target=work, name="reasoning-nb-mathml", daemon=True)
        thread.start()
    except RuntimeError:  # no thread to be had
        return
    finally:
        threading.stack_size(old)
    thread.join()


# -- the converter's output, written again from the lists --------------------------------------


class _Writer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _MATHML and not (tag in _TEXT_HTML and "mtext" in self.open):
            raise _Unsafe(tag)
        if (tag == "math") == bool(self.open) or self.done():  # one <math>, around all
            raise _Unsafe(tag)
        if tag == "math":  # (its class and look are the page's: see _ROOT)
            attrs = [(n, v) for n, v in attrs if n not in ("class", "style")]
        kept = "".join(_attribute(name, value) for name, value in attrs)
        if tag == "math":
            kept += _ROOT_BLOCK if 'display="block"' in kept else _ROOT
        self.out.append(f"<{tag}{kept}>")
        self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            raise _Unsafe(f"/{tag}")
        self.open.pop()
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if data.strip() and not self.open:
            raise _Unsafe("text outside <math>")
        self.out.append(html.escape(data, quote=False))

    def handle_comment(self, data: str) -> None:
        raise _Unsafe("comment")

    def handle_decl(self, decl: str) -> None:
        raise _Unsafe("declaration")

    handle_pi = unknown_decl = handle_decl

    def done(self) -> bool:
        return bool(self.out) and not self.open


def _attribute(name: str, value: str | None) -> str:
    """`` name="value"`` when both are on the lists, else nothing; an oversized length sends
    the whole span back to TeX."""
    if name not in _ATTRS or value is None:
        return ""
    if name == "class":
        value = " ".join(c for c in value.split() if _CLASS.fullmatch(c))
    elif name == "style":
        value = ";".join(d for d in map(_declaration, value.split(";")) if d)
    elif not _VALUE.fullmatch(value):
        return ""
    _check_lengths(value)
    return f' {name}="{value}"' if value else ""


def _declaration(text: str) -> str:
    prop, _, value = text.partition(":")
    prop, value = prop.strip().lower(), value.strip()
    return f"{prop}:{value}" if prop in _STYLE and value and _VALUE.fullmatch(value) else ""


def _check_lengths(value: str) -> None:
    for number, unit in _LENGTH.findall(value):
        if abs(float(number)) * _EM[unit or None] > _MAX_EM and unit:
            raise _Unsafe(f"length {number}{unit}")


def clean(mathml: str) -> str:
    """``mathml`` written again from the lists; raises :class:`_Unsafe` where it cannot be."""
    writer = _Writer()
    writer.feed(mathml)
    writer.close()
    if not writer.done():
        raise _Unsafe("unclosed")
    return "".join(writer.out)


# -- where the math is --------------------------------------------------------------------------

_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)([^>]*)>")
_CLASS_ATTR = re.compile(r'\bclass="([^"]*)"')
_SKIP = _names("code pre script style textarea")  # MathJax's skipTags, and code
_VOID = _names("br hr img input meta wbr col area base link source")


def typeset_view(fragment: str) -> str:
    r"""A view's HTML with each span MathJax would typeset there (escaped TeX between ``\(…\)``
    or ``\[…\]``, inside a ``PROCESS`` element of an ``IGNORE`` container, never in code) as
    MathML; a span that does not convert stays as it was."""
    if "\\(" not in fragment and "\\[" not in fragment:
        return fragment
    pieces: list[str | int] = []  # text, or the index of a span
    spans: list[tuple[str, bool]] = []
    raws: list[str] = []
    reading = [True]  # does MathJax read math here? (one entry per open element)
    for token in _TOKEN.findall(fragment):
        tag = _TAG.fullmatch(token)
        if tag:
            _follow(tag, reading)
            pieces.append(token)
        elif reading[-1]:
            at = 0
            for m in RENDERED.finditer(token):
                pieces.append(token[at : m.start()])
                display = m.group("display") is not None
                tex = html.unescape(m.group("display" if display else "inline"))
                pieces.append(len(spans))
                spans.append((tex.strip(), display))
                raws.append(m.group())
                at = m.end()
            pieces.append(token[at:])
        else:
            pieces.append(token)
    done = convert(spans)
    return "".join(
        p if isinstance(p, str) else (done[p] if done[p] is not None else raws[p]) for p in pieces
    )


def _follow(tag: re.Match, reading: list[bool]) -> None:
    """Open or close an element on the ``reading`` stack, as MathJax's classes say."""
    closing, name, attrs = tag.group(1), tag.group(2).lower(), tag.group(3)
    if closing:
        if len(reading) > 1:
            reading.pop()
        return
    if name in _VOID or attrs.rstrip().endswith("/"):
        return
    classes = _CLASS_ATTR.search(attrs)
    names = set(classes.group(1).split()) if classes else set()
    if name in _SKIP or names & set(IGNORE.split()):
        reading.append(False)
    elif names & {"mathjax_process", "tex2jax_process"}:
        reading.append(True)
    else:
        reading.append(reading[-1])


# -- a notebook's outputs -----------------------------------------------------------------------

_FORMULA = re.compile(
    r"\$\$(?P<d1>[^$]+)\$\$|\$(?P<i1>[^$]+)\$|\\\[(?P<d2>.+)\\\]|\\\((?P<i2>.+)\\\)"
    r"|(?P<env>\\begin\{(?P<name>[A-Za-z]+\*?)\}.*\\end\{(?P=name)\})",
    re.S,
)


def typeset_outputs(nb: Any, views: tuple[str, ...]) -> None:
    """In place: the HTML of each output made by a view (its metadata holds one of ``views``),
    and each ``text/latex`` output that is one formula (IPython's ``Math``, SymPy), typeset.
    The rest keeps its TeX for MathJax."""
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data, meta = output.get("data"), output.get("metadata")
            if not isinstance(data, dict):
                continue
            view = isinstance(meta, dict) and any(key in meta for key in views)
            if view and isinstance(data.get("text/html"), str):
                data["text/html"] = typeset_view(data["text/html"])
            elif isinstance(data.get("text/latex"), str) and "text/html" not in data:
                formula = latex_formula(data["text/latex"])
                if formula is not None:
                    data["text/html"] = f'<div class="jp-RenderedLatex">{formula}</div>'


def latex_formula(latex: str) -> str | None:
    """MathML for a ``text/latex`` value that is a single formula, else None."""
    m = _FORMULA.fullmatch(latex.strip())
    if m is None:
        return None
    display = m.group("i1") is None and m.group("i2") is None
    tex = next(g for g in (m["d1"], m["i1"], m["d2"], m["i2"], m["env"]) if g is not None)
    return convert([(tex.strip(), display)])[0]


def markdown_html(exporter: Any, context: dict, source: str) -> str:
    """nbconvert's ``markdown2html`` filter (markdown cells, ``text/markdown`` outputs) with
    the math its parser finds as MathML. The renderer is built as nbconvert builds it (inside
    that method, so it cannot be swapped from outside); only its three math rules change."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class Renderer(IPythonRenderer):
        def block_math(self, body: str) -> str:
            return convert([(body.strip(), True)])[0] or super().block_math(body)

        def inline_math(self, body: str) -> str:
            return convert([(body.strip(), False)])[0] or super().inline_math(body)

        def latex_environment(self, name: str, body: str) -> str:
            tex = f"\\begin{{{name}}}{body}\\end{{{name}}}"
            return convert([(tex, True)])[0] or super().latex_environment(name, body)

    cell = context.get("cell", {})
    renderer = Renderer(
        escape=False,
        attachments=cell.get("attachments", {}),
        embed_images=exporter.embed_images,
        path=context.get("resources", {}).get("metadata", {}).get("path", ""),
        anchor_link_text=exporter.anchor_link_text,
        exclude_anchor_links=exporter.exclude_anchor_links,
        **exporter.lexer_options,
    )
    return MarkdownWithMath(renderer=renderer).render(source)
