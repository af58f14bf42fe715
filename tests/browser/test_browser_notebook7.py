"""``%%think`` in Notebook 7, the other front end users run it in, driven like the Lab tests.

Notebook 7 is built from Lab's parts, so the page helpers of ``test_browser`` work in it (its
app is exposed as ``window.jupyterapp`` too). What is checked here is what could differ: that
the widget's markdown is typeset by the notebook's own MathJax while it streams and after, and
that the live widget keeps its contrast in Notebook 7's light and dark themes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
import test_browser as tb

pytestmark = tb.BROWSER


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory) -> Iterator[tb.Lab]:
    base = tmp_path_factory.mktemp("nb7")
    root, settings = base / "root", base / "settings"
    root.mkdir()
    plugin = settings / "@jupyterlab/apputils-extension/notification.jupyterlab-settings"
    plugin.parent.mkdir(parents=True)
    plugin.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    port, token = tb._free_port(), "nb7-test-token"
    cmd = [
        sys.executable, "-m", "notebook", "--no-browser", "--allow-root", "--ip=127.0.0.1",
        f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--JupyterNotebookApp.expose_app_in_browser=True",
    ]  # fmt: skip
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    server = tb.Lab(f"http://127.0.0.1:{port}", token, root)
    with tb.jupyter_server(cmd, env, base / "server.log", server):
        yield server


@pytest.fixture(scope="module")
def wire():
    from wire_server import WireServer

    with WireServer() as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    tb.ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=tb.CHROMIUM, headless=True, args=tb.CHROMIUM_ARGS
        )
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        context.add_init_script(tb.HELPERS)
        yield context
        context.close()
        chromium.close()


def open_in_notebook7(browser, server: tb.Lab, name: str):
    """A page showing notebook ``name`` in Notebook 7, its kernel ready."""
    page = browser.new_page()
    page.set_default_timeout(tb.LONG)
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(f"{exc}\n{exc.stack}"))
    page.goto(server.url(f"notebooks/{name}"))
    page.wait_for_function(
        "() => window.jupyterapp && window.__rn && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
    )
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.ready")
    # Notebook 7.6's own shortcuts plugin throws once while the page loads (it reads the schema
    # of a plugin it has not loaded) before any cell runs: only later errors count.
    page.errors.clear()
    return page


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_math_is_typeset_by_notebook7_while_it_streams_and_after(browser, notebook7, wire, theme):
    wire.route("POST", tb.CHAT, tb.stream(tb.MATH_REASONING, tb.MATH_ANSWER, pause=0.01))
    name = f"math-{theme.split()[-1].lower()}.ipynb"
    tb.think_notebook(notebook7, wire, name)
    page = open_in_notebook7(browser, notebook7, name)
    try:
        tb.set_theme(page, theme)
        tb.start_recording(page)
        tb.run_all(page)
        seen = tb.recorded(page)
        live_math = [s["math"] for s in seen if not s["status"].startswith("done")]
        assert max(live_math) >= 4, live_math  # typeset as it streamed, not only at the end
        tb.wait_cell_done(page)
        widget, run = tb.live(page), tb.ended(page)  # (the run ended: its twin shows it)
        tb.pane_title(run).click()
        tb.wait_state(page, "s.paneOpen && s.twin")
        page.wait_for_function(
            f"() => window.__rn.state(1).math >= {tb.MATH_SPANS}", timeout=tb.LONG
        )
        typeset = run.evaluate(tb.TYPESET)
        assert typeset["reasoning"] == 6 and typeset["answer"] == 5, typeset
        assert not typeset["raw"] and typeset["em"] == 0, typeset
        worst = min(
            widget.evaluate(tb.CONTRAST), run.evaluate(tb.CONTRAST), key=lambda w: w["ratio"]
        )
        tb.shot(page, f"13-notebook7-math-{theme.split()[-1].lower()}", tb.cell(page))
        print(
            f"\n[browser] Notebook 7, {theme}: {tb.state(page)['math']} of {tb.MATH_SPANS} math "
            f"spans typeset; lowest text contrast {worst['ratio']:.2f}:1"
        )
        assert worst["ratio"] >= 4.5, worst
        assert not page.errors, page.errors
    finally:
        page.close()
        notebook7.shutdown_all_kernels()
