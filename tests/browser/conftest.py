"""What the browser tests share: one JupyterLab server and one wire server for the whole
session (Lab takes seconds to start), and a chromium page for each module (Playwright's sync
API runs an event loop of its own, which must end before another module's starts, or any
later test's ``asyncio.run``). A test gets the page through ``page``, with no notebook open
and no kernel running, and leaves it so; the helpers that drive Lab are in ``test_browser``.
Notebook 7's tests (``test_browser_notebook7``) run a server of their own.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator

import pytest
from test_browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    HELPERS,
    LONG,
    Lab,
    _free_port,
    close_all,
    jupyter_server,
    wait_for_lab,
)
from wire_server import WireServer


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("lab")
    root, settings, workspaces = base / "root", base / "settings", base / "workspaces"
    for folder in (root, workspaces):
        folder.mkdir()
    for plugin, values in {
        "@jupyter-widgets/jupyterlab-manager/plugin": {"saveState": True},
        "@jupyterlab/apputils-extension/notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = _free_port(), "browser-test-token"
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(workspaces),
    }
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
        f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
    ]  # fmt: skip
    server = Lab(f"http://127.0.0.1:{port}", token, root)
    with jupyter_server(cmd, env, base / "lab.log", server):
        yield server


@pytest.fixture(scope="session")
def wire() -> Iterator[WireServer]:
    with WireServer() as server:
        yield server
    assert not server.errors, f"wire_server hook errors: {server.errors!r}"


@pytest.fixture(scope="module")  # (Playwright's sync API runs a loop of its own: one a module)
def browser_page(lab):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_init_script(HELPERS)
        page = context.new_page()
        page.set_default_timeout(LONG)
        page.errors = []  # uncaught page errors, checked by the tests
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        page.goto(lab.url("lab") + "&reset")
        wait_for_lab(page)
        yield page
        context.close()
        browser.close()


@pytest.fixture
def page(browser_page, lab, wire):
    """The shared page, with no notebook open and no kernel running; same after the test."""
    wire.reset()
    close_all(browser_page)
    lab.shutdown_all_kernels()
    browser_page.errors.clear()
    yield browser_page
    close_all(browser_page)
    lab.shutdown_all_kernels()
    assert not wire.errors, f"wire_server hook errors: {wire.errors!r}"  # (this test's)
