"""The exporters as JupyterLab sees them: a real ``jupyter server`` lists them in
``/api/nbconvert`` (the list behind *File → Save and Export Notebook As*) and serves the
download the menu opens, ``/nbconvert/<name>/<path>?download=true``.

That route only matches ``\\w+`` names, so the menu uses ``reasoning_html`` (label
"Reasoning_html") and friends; inside a server the hyphenated CLI names are hidden, since their
menu entries could only answer 404.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import nbformat
import pytest

from reasoning_nb.core.trace import Trace

pytest.importorskip("jupyter_server", reason="jupyter_server (or jupyterlab) is not installed")

MENU_NAMES = {
    "reasoning_html": "text/html",
    "reasoning_markdown": "text/markdown",
    "reasoning_notebook": "application/json",
}
REASONING = "SERVER-REASONING: the menu export ran on the server"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _traced_notebook() -> nbformat.NotebookNode:
    trace = Trace(model="ollama:qwen3", provider="ollama", preset="high", status="complete")
    trace.reasoning, trace.answer = REASONING, "The **answer**."
    trace.timing.update(reasoning_ms=1200.0, total_ms=2000.0)
    output = nbformat.v4.new_output(
        "display_data",
        data={"text/plain": "old", "text/html": "<b>old saved html</b>"},
        metadata={"reasoning_nb": trace.to_dict()},
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%%think\nQ", outputs=[output])]
    return nb


class Server:
    def __init__(self, root, log) -> None:
        self.port, self.token = _free_port(), secrets.token_hex(12)
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(root / "config"),
            "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
        }
        cmd = [sys.executable, "-m", "jupyter", "server", "--no-browser", "--allow-root"]
        cmd += [f"--port={self.port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}"]
        cmd += [f"--IdentityProvider.token={self.token}", "--ReasoningPreprocessor.mode=inline"]
        self.proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)

    def get(self, path: str) -> tuple[int, str, bytes]:
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.headers["Content-Type"], response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("Content-Type", ""), exc.read()

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter server exited with {self.proc.returncode}")
            with contextlib.suppress(OSError):
                if self.get("/api/status")[0] == 200:
                    return
            time.sleep(0.1)
        raise TimeoutError("jupyter server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("server")
    nbformat.write(_traced_notebook(), root / "traced.ipynb")
    with open(root / "server.log", "wb") as log:
        server = Server(root, log)
        try:
            server.wait_ready()
            yield server
        finally:
            server.stop()


def test_api_nbconvert_lists_the_menu_names(server):
    status, _, body = server.get("/api/nbconvert")
    assert status == 200
    listed = json.loads(body)
    for name, mimetype in MENU_NAMES.items():
        assert listed[name] == {"output_mimetype": mimetype}
        assert name.replace("_", "-") not in listed  # hidden: its menu entry would be a 404
    # JupyterLab's label for a key it does not know: the first letter upper-cased
    labels = sorted(k[0].upper() + k[1:] for k in listed if k.startswith("reasoning"))
    assert labels == ["Reasoning_html", "Reasoning_markdown", "Reasoning_notebook"]


def test_menu_download_uses_the_server_config(server):
    status, mimetype, body = server.get("/nbconvert/reasoning_html/traced.ipynb?download=true")
    assert status == 200 and mimetype.startswith("text/html")
    page = body.decode()
    assert 'class="reasoning-nb reasoning-nb-export reasoning-nb-inline ' in page  # mode=inline
    assert "Thought for 1.2 s · ≈" in page and REASONING in page
    assert "old saved html" not in page  # rebuilt from the trace, never the saved HTML

    status, mimetype, body = server.get("/nbconvert/reasoning_markdown/traced.ipynb")
    assert status == 200 and mimetype.startswith("text/markdown")
    assert "> **Thought for 1.2 s" in body.decode()


def test_hyphenated_names_cannot_be_served(server):
    """Why the menu names exist: jupyter_server routes ``/nbconvert/(\\w+)/...``."""
    status, _, _ = server.get("/nbconvert/reasoning-html/traced.ipynb?download=true")
    assert status == 404
