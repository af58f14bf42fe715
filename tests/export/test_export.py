"""The exporters through the real ``jupyter nbconvert`` command, on a notebook a real kernel
executed against the wire server, and on a hostile hand-built notebook; every mode x format.

All nine conversions (``collapsible|inline|strip`` x ``html|markdown|notebook``) run once per
session, side by side, each converting both notebooks; one of them goes through
``python -m reasoning_nb export`` instead. Goldens live in ``tests/golden/`` and are compared
after volatile fields (timings, dates, ports, widget and cell ids) are normalised; regenerate
them with ``REASONING_NB_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
import wire_fixtures as wf
from nbclient import NotebookClient
from needs import requires
from test_export_safety import PAYLOAD, hostile_notebook, live_document, live_markdown
from wire_server import Reply, WireServer

from reasoning_nb.core.schema import saved_variants

pytestmark = pytest.mark.kernel

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
ARTIFACTS = HERE.parents[1] / "test-artifacts"
UPDATE = os.environ.get("REASONING_NB_UPDATE_GOLDEN") == "1"
CHAT = "/v1/chat/completions"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MODES = ("collapsible", "inline", "strip")
FORMATS = {"html": ".html", "markdown": ".md", "notebook": ".ipynb"}

REASONING = (
    "MARKER-ONE: sunlight meets the air molecules <script>alert('r')</script>.\n"
    "MARKER-TWO: shorter wavelengths scatter more, as 1/λ⁴."
)
ANSWER = (
    "Because of **Rayleigh** scattering:\n\n"
    "- blue scatters about 5x more than red\n"
    "- so the sky looks blue\n\n"
    "```python\nratio = (700 / 450) ** 4  # < 6\n```"
)
SECOND = (
    "MARKER-THREE: the light's path is longer at sunset",
    "Red, since blue is scattered away.",
)
MARKERS = ("MARKER-ONE", "MARKER-TWO", "MARKER-THREE", "shorter wavelengths scatter")


def compare_reply(recorded) -> Reply:
    """Each variant thinks and answers its own words; every answer holds a script tag."""
    effort = recorded.json.get("reasoning_effort", "auto")
    reasoning = f"COMPARE-{effort.upper()}-REASONING: weighing the {effort} effort options."
    answer = f"Answer at {effort}.\n\nBoth agree here.\n\nAnd here.\n\n"
    answer += f"<script>alert('{effort}')</script>"
    return Reply.sse(wf.chat_sse(reasoning, answer, usage=True))


COMPARE_MARKERS = ("COMPARE-LOW-REASONING", "COMPARE-HIGH-REASONING", "weighing the")


def compare_notebook(
    path: Path, reply=compare_reply, then: str = "print(_compare[1].reasoning)"
) -> nbformat.NotebookNode:
    """``compare.ipynb`` (``path``): a real ``%%think --compare low,high`` run (the wire server
    answering with ``reply``), then a cell ``then`` (by default printing the second variant's
    reasoning); executed and written."""
    with WireServer() as server:
        server.route("POST", CHAT, reply)
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell("%load_ext reasoning_nb"),
            nbformat.v4.new_code_cell(
                f"%%think --model llamacpp:m --base-url {server.url} --compare low,high\nWhy?"
            ),
            nbformat.v4.new_code_cell(then),
        ]
        NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()
    nbformat.write(nb, path)
    return nb


@pytest.fixture(scope="session")
def notebooks(tmp_path_factory) -> Path:
    """``demo.ipynb`` and ``compare.ipynb`` (executed by a real kernel, widgets and all) and
    ``hostile.ipynb``."""
    root = tmp_path_factory.mktemp("export")
    compare_notebook(root / "compare.ipynb")
    with WireServer() as server:
        server.route(
            "POST",
            CHAT,
            Reply.sse(wf.chat_sse(REASONING, ANSWER, usage=wf.default_usage(40, 20, 23))),
            Reply.sse(wf.chat_sse(*SECOND, usage=True)),
        )
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_markdown_cell("# Why is the sky blue?"),
            nbformat.v4.new_code_cell("%load_ext reasoning_nb"),
            nbformat.v4.new_code_cell(
                f"%%think --model llamacpp:m --base-url {server.url} --preset high\n"
                "Why is the sky blue?"
            ),
            nbformat.v4.new_code_cell("print(_think.reasoning)  # printed reasoning"),
            nbformat.v4.new_code_cell(
                f"%%think --model llamacpp:m --base-url {server.url} --hide-reasoning\n"
                "And at sunset?"
            ),
        ]
        NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()
    nbformat.write(nb, root / "demo.ipynb")
    (root / "hostile.ipynb").write_text(json.dumps(hostile_notebook(), indent=1))
    return root


NOTEBOOKS = ("demo", "hostile", "compare")


def _command(mode: str, fmt: str, root: Path, out: Path) -> list[str]:
    sources = [str(root / f"{name}.ipynb") for name in NOTEBOOKS]
    if (mode, fmt) == ("inline", "markdown"):  # the convenience wrapper, once
        wrapper = [sys.executable, "-m", "reasoning_nb", "export", *sources, "--mode", mode]
        return [*wrapper, "--to", "md", "--output-dir", str(out)]
    return [
        *(sys.executable, "-m", "jupyter", "nbconvert", f"--to=reasoning-{fmt}", *sources),
        *(f"--ReasoningPreprocessor.mode={mode}", f"--output-dir={out}"),
    ]


@pytest.fixture(scope="session")
def exports(notebooks):
    """(mode, fmt) -> {"demo": path, "hostile": path, "compare": path, "log": {"demo": ...}}."""

    def run(job):
        mode, fmt = job
        out = notebooks / f"{mode}-{fmt}"
        done = subprocess.run(
            _command(mode, fmt, notebooks, out), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        logs = {}  # stderr per notebook: nbconvert announces each before converting it
        for chunk in done.stderr.split("[NbConvertApp] Converting notebook ")[1:]:
            logs[Path(chunk.split(" to ", 1)[0]).stem] = chunk
        # with --output-dir, a notebook keeps its name (no .nbconvert)
        return job, {name: out / f"{name}{FORMATS[fmt]}" for name in NOTEBOOKS} | {"log": logs}

    jobs = [(m, f) for m in MODES for f in FORMATS]
    with ThreadPoolExecutor(3) as pool:  # 2 cores: more at once only thrashes
        return dict(pool.map(run, jobs))


# -- goldens --------------------------------------------------------------------------------------

_VOLATILE = [
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
    (re.compile(r"(?:&lt;|<)?\b\d+\.\d s\b"), "N.N s"),  # "<0.1 s" too
    (re.compile(r"\b[0-9a-f]{32}\b"), "WIDGET-ID"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "DATE"),
    (re.compile(r'id="cell-id=[0-9a-f-]+"'), 'id="cell-id=ID"'),
]


def normalise(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def _normalise_notebook(text: str) -> str:
    nb = json.loads(text)
    nb["metadata"].pop("language_info", None)
    nb["metadata"].pop("kernelspec", None)
    if "widgets" in nb["metadata"]:
        nb["metadata"]["widgets"] = "(saved widget state: checked apart, not golden)"
    for cell in nb["cells"]:
        cell["id"] = "ID"
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {})
            for trace in [meta.get("reasoning_nb"), *meta.get("reasoning_nb_history", [])]:
                if isinstance(trace, dict):
                    trace["timing"] = {k: v and "MS" for k, v in trace["timing"].items()}
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def golden_text(path: Path, fmt: str) -> str:
    text = path.read_text()
    if fmt == "html":
        text = text[text.index("<main>") : text.index("</main>") + len("</main>")] + "\n"
    elif fmt == "notebook":
        text = _normalise_notebook(text)
    return normalise(text)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", MODES)
def test_golden(exports, mode, fmt):
    got = golden_text(exports[(mode, fmt)]["demo"], fmt)
    golden = GOLDEN / f"demo-{mode}{'.notebook.json' if fmt == 'notebook' else FORMATS[fmt]}"
    if UPDATE or not golden.exists():
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(got)
        if not UPDATE:
            pytest.fail(f"wrote the missing golden {golden.name}; check it and re-run")
    assert got == golden.read_text(), f"{golden.name} differs (REASONING_NB_UPDATE_GOLDEN=1)"


# -- what each mode promises ----------------------------------------------------------------------


def test_demo_exports_cleanly(exports):
    for job, result in exports.items():
        assert "WARNING" not in result["log"]["demo"], (job, result["log"]["demo"])


def test_collapsible_summary_line(exports):
    html = exports[("collapsible", "html")]["demo"].read_text()
    summary = r"Thought for (?:&lt;)?\d+\.\d s · 23 tokens</summary>"  # (who: in the footer)
    assert re.search(r'<details class="reasoning-nb-reasoning"><summary [^>]*>' + summary, html)
    markdown = exports[("collapsible", "markdown")]["demo"].read_text()
    assert re.search(r"<details>\n<summary>" + summary, markdown)


def test_markdown_prefers_text_markdown(exports):
    markdown = exports[("collapsible", "markdown")]["demo"].read_text()
    assert "Because of **Rayleigh** scattering:" in markdown  # markdown, not <strong>
    assert "```python\nratio = (700 / 450) ** 4  # < 6\n```" in markdown  # fenced code kept
    assert '<div class="reasoning-nb reasoning-nb-export' not in markdown


def test_inline_is_a_delimited_block(exports):
    html = exports[("inline", "html")]["demo"].read_text()
    assert "<details" not in html[html.index("<main>") :]
    assert re.search(r'<div class="reasoning-nb-reasoning" style="border:[^"]*">', html)
    markdown = exports[("inline", "markdown")]["demo"].read_text()
    head = r"\n> \*\*Thought for (?:&lt;|\\<|<)?\d+\.\d s · 23 tokens\*\*"
    assert re.search(head, markdown)


def test_reasoning_html_is_escaped_everywhere(exports):
    for mode in ("collapsible", "inline"):
        html = exports[(mode, "html")]["demo"].read_text()
        assert "&lt;script&gt;alert('r')&lt;/script&gt;" in html
        assert live_document(html) == []
        assert live_markdown(exports[(mode, "markdown")]["demo"].read_text()) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_strip_leaves_no_reasoning_anywhere(exports, fmt):
    text = exports[("strip", fmt)]["demo"].read_text()
    for marker in MARKERS:
        assert marker not in text
    assert "Rayleigh" in text and "Red, since blue is scattered away." in text  # answers stay
    if fmt != "notebook":
        assert "[reasoning removed]" in text  # what the print() cell showed


def test_strip_notebook_has_no_reasoning_in_metadata_or_widgets(exports, notebooks):
    nb = json.loads(exports[("strip", "notebook")]["demo"].read_text())
    assert "widgets" not in nb["metadata"]
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    traced = [o for o in outputs if "reasoning_nb" in o.get("metadata", {})]
    assert len(traced) == 2
    for output in traced:
        assert WIDGET_VIEW not in output["data"]
        assert output["metadata"]["reasoning_nb"]["reasoning"] == ""
        assert output["metadata"]["reasoning_nb"]["provider_state"] == {}
    assert traced[0]["metadata"]["reasoning_nb"]["answer"] == ANSWER
    nbformat.validate(nbformat.reads(json.dumps(nb), as_version=4))
    # ... while the source notebook still has them all
    source = (notebooks / "demo.ipynb").read_text()
    assert all(m in source for m in MARKERS)


def test_static_exports_drop_dead_widgets(exports):
    for mode in MODES:
        html = exports[(mode, "html")]["demo"].read_text()
        assert WIDGET_VIEW not in html
        assert "widget-state+json" not in html  # and no widget manager from a CDN
        assert "unpkg.com" not in html


def test_notebook_copy_keeps_live_widget_and_trace(exports):
    nb = json.loads(exports[("collapsible", "notebook")]["demo"].read_text())
    state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    live = [o for o in outputs if WIDGET_VIEW in o.get("data", {})]
    traced = [o for o in outputs if o.get("metadata")]
    assert live and all(o["data"][WIDGET_VIEW]["model_id"] in state for o in live)
    assert traced[0]["metadata"]["reasoning_nb"]["reasoning"] == REASONING


# -- a --compare output: the comparison, in every mode -------------------------------------------


def test_compare_exports_cleanly(exports):
    for job, result in exports.items():
        assert "WARNING" not in result["log"]["compare"], (job, result["log"]["compare"])


@pytest.mark.parametrize("mode", ["collapsible", "inline"])
def test_compare_html_shows_table_and_every_variant(exports, mode):
    html = exports[(mode, "html")]["compare"].read_text()
    main = html[html.index("<main>") :]
    assert main.count("reasoning-nb-compare-table") == 1 and "reasoning tokens" in main
    for effort in ("low", "high"):
        assert f'title="{effort} · llamacpp:m">{effort} · llamacpp:m</h4>' in main
        assert f"COMPARE-{effort.upper()}-REASONING" in main
        assert f"Answer at {effort}." in main
        assert f"&lt;script&gt;alert('{effort}')&lt;/script&gt;" in main  # escaped, as text
    assert "-Answer at low." in main and "+Answer at high." in main  # the diff
    assert live_document(html) == []
    details = main.count('<details class="reasoning-nb-reasoning">')
    assert details == (2 if mode == "collapsible" else 0)
    assert WIDGET_VIEW not in html


@pytest.mark.parametrize("mode", ["collapsible", "inline"])
def test_compare_markdown_shows_table_and_every_variant(exports, mode):
    markdown = exports[(mode, "markdown")]["compare"].read_text()
    assert "| variant | reasoning tokens |" in markdown
    assert '<div class="reasoning-nb-compare">' not in markdown  # text/markdown, not text/html
    for effort in ("low", "high"):
        assert f"#### {effort} · llamacpp:m" in markdown
        assert f"COMPARE-{effort.upper()}-REASONING" in markdown
        assert f"Answer at {effort}." in markdown
    assert live_markdown(markdown) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_compare_strip_leaves_no_reasoning_of_any_variant(exports, fmt):
    text = exports[("strip", fmt)]["compare"].read_text()
    for marker in COMPARE_MARKERS:
        assert marker not in text
    assert "Answer at low." in text and "Answer at high." in text
    if fmt != "notebook":
        assert "reasoning-nb-compare-table" in text or "| variant |" in text
        assert "[reasoning removed]" in text  # what the print() cell showed
        return
    nb = json.loads(text)
    assert "widgets" not in nb["metadata"]
    [traced] = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("metadata")]
    saved = saved_variants(traced["metadata"])
    assert [t["preset"] for t in saved] == ["low", "high"]
    assert all(t["reasoning"] == "" and t["provider_state"] == {} for t in saved)
    assert traced["metadata"]["reasoning_nb"]["reasoning"] == ""


def test_compare_notebook_copy_keeps_every_trace(exports):
    nb = json.loads(exports[("collapsible", "notebook")]["compare"].read_text())
    [traced] = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("metadata")]
    saved = saved_variants(traced["metadata"])
    assert [t["reasoning"].split(":")[0] for t in saved] == list(COMPARE_MARKERS[:2])
    titled = 'title="high · llamacpp:m">high · llamacpp:m</h4>'
    assert titled in "".join(traced["data"]["text/html"])
    assert "widgets" in nb["metadata"]


# -- the hostile notebook, through the same runs --------------------------------------------------

EXPECTED_WARNINGS = (
    "schema 2",
    "field 'usage' is str",
    "field 'timing' is list",
    "field 'status' is not one of",
    "field 'reasoning' is list",
    "field 'answer' is int",
    "saved trace is str, not an object",
    "but no reasoning_nb",
    "variant 2: field 'usage' is list",
    "variant 3: saved trace is str",
    "reasoning_nb_compare is str, not a list; shown as a single trace",
    "no variant in reasoning_nb_compare is readable; shown as a single trace",
)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", MODES)
def test_hostile_notebook_exports_with_warnings_and_nothing_live(exports, mode, fmt):
    result = exports[(mode, fmt)]
    log = result["log"]["hostile"]
    for expected in EXPECTED_WARNINGS:
        assert expected in log, expected
    assert "Traceback" not in log
    text = result["hostile"].read_text()
    if fmt == "html":
        assert live_document(text) == []
        assert "widget-state+json" not in text  # every hostile widget model was dropped
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # shown, as text
    elif fmt == "markdown":
        assert live_markdown(text) == []
    else:
        for cell in json.loads(text)["cells"]:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                assert live_document(f"<main>{''.join(data.get('text/html', ''))}</main>") == []
                assert live_markdown("".join(data.get("text/markdown", ""))) == []
    if mode == "strip":
        assert "HOSTILE-REASONING" not in text
        assert "hostile reasoning line" not in text


def test_hostile_notebook_copy_keeps_data_but_rebuilds_views(exports):
    nb = json.loads(exports[("collapsible", "notebook")]["hostile"].read_text())
    first = nb["cells"][1]["outputs"][0]
    assert WIDGET_VIEW in first["data"]  # a notebook copy keeps its widgets and data ...
    assert first["metadata"]["reasoning_nb"]["model"] == f"llamacpp:{PAYLOAD}"
    assert "<details" in "".join(first["data"]["text/html"])  # ... but never its saved HTML
    unreadable = nb["cells"][4]["outputs"][0]["data"]
    assert set(unreadable) == {WIDGET_VIEW, "text/plain"}


def test_hostile_strip_notebook_metadata_and_widgets(exports):
    nb = json.loads(exports[("strip", "notebook")]["hostile"].read_text())
    assert "widgets" not in nb["metadata"]
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    assert not any(WIDGET_VIEW in o.get("data", {}) for o in outputs)
    saved = outputs[1]["metadata"]
    assert saved["reasoning_nb"]["reasoning"] == "" and saved["reasoning_nb"]["schema"] == 1
    assert [h["reasoning"] for h in saved["reasoning_nb_history"]] == [""]
    assert PAYLOAD not in saved["reasoning_nb"]  # unknown keys are not carried over
    assert "".join(outputs[-1]["text"]) == "[reasoning removed]\n"  # printed by another cell


def test_hostile_compare_outputs_show_what_is_readable(exports):
    html = exports[("collapsible", "html")]["hostile"].read_text()
    assert html.count('<table class="reasoning-nb-compare-table"') == 1  # the others: single
    assert "answer E" in html and "answer F" in html and "answer G" in html
    nb = json.loads(exports[("strip", "notebook")]["hostile"].read_text())
    partly, not_a_list, unreadable = nb["cells"][7]["outputs"]
    variants = partly["metadata"]["reasoning_nb_compare"]
    assert [t["answer"][:8] for t in variants] == ["answer E", "answer F"]  # "x" skipped
    assert all(t["reasoning"] == "" and t["provider_state"] == {} for t in variants)
    for output in (not_a_list, unreadable):  # shown as their single (stripped) trace
        assert set(output["metadata"]) == {"reasoning_nb"}
        assert output["metadata"]["reasoning_nb"]["reasoning"] == ""


# -- a real browser -------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@requires(Path(CHROMIUM).exists(), "chromium is not installed")
def test_exported_html_in_headless_chromium(exports):
    ARTIFACTS.mkdir(exist_ok=True)

    def shoot(name: str) -> Path:
        shot = ARTIFACTS / f"export-{name}.png"
        shot.unlink(missing_ok=True)
        page = exports[(name.split("-")[0], "html")]["demo"]
        if name == "collapsible-open":  # as a reader sees it after a click on the summary
            opened = page.with_name("demo-open.html")
            opened.write_text(page.read_text().replace("<details ", "<details open "))
            page = opened
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        subprocess.run(
            [CHROMIUM, *flags, "--window-size=1000,1000", f"--screenshot={shot}", page.as_uri()],
            capture_output=True,
            timeout=60,
        )
        return shot

    with ThreadPoolExecutor(3) as pool:
        shots = list(pool.map(shoot, ("collapsible", "collapsible-open", "inline")))
    for shot in shots:
        assert shot.exists() and shot.stat().st_size > 10_000, shot
