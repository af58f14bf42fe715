"""Shared pytest fixtures. Helper modules next to this file (``wire_server``, ``wire_fixtures``)
import by bare name: pytest puts this directory on ``sys.path`` (no ``__init__.py`` here)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import anyio
import pytest
from wire_server import WireServer

from reasoning_nb.config import defaults
from reasoning_nb.providers.transport import Clock, Transport

PROVIDER_ENV = (
    "REASONING_NB_MODEL",
    "OLLAMA_HOST",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "LLAMACPP_API_KEY",
    "VLLM_API_KEY",
)
"""What the user's environment may say about models, keys and addresses."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def no_provider_env(monkeypatch) -> None:
    """No model, key or server address from the environment (nor a default model set by an
    earlier test): a test sets the ones it reads."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(defaults, "model", None)


@pytest.fixture
def fresh_discovery(monkeypatch) -> None:
    """Ollama's ``/api/show`` answers are cached per (base URL, model): a port the wire server
    reuses must not answer with an earlier test's."""
    from reasoning_nb.providers import discovery

    monkeypatch.setattr(discovery, "_show_cache", {})


class FakeClock:
    """Time that passes only when slept: ``slept`` lists every wait asked for, and ``now()`` is
    the wall clock it began at plus those waits."""

    def __init__(self, start: float = 1_767_225_600.0) -> None:  # 2026-01-01 00:00 UTC
        self.start, self.slept = start, []

    def now(self) -> float:
        return self.start + sum(self.slept)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        await anyio.sleep(0)  # still a checkpoint, as a real sleep is

    @property
    def clock(self) -> Clock:
        """The transport's clock made of this one."""
        return Clock(now=self.now, sleep=self.sleep)


@pytest.fixture
def fake_clock() -> FakeClock:
    """A clock for ``sleep=`` (a run waits its retries on it) or ``Transport(clock=...)``."""
    return FakeClock()


@pytest.fixture
def fast_backoff(monkeypatch):
    """Connect retries back off 0.5 + 1 + 2 s; the behaviour under test is the same without."""
    monkeypatch.setattr(Transport, "_backoff", lambda self, attempt: 0.001)


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A scripted HTTP/1.1 server on 127.0.0.1 (see ``wire_server.py``), stopped after the test."""
    with WireServer() as server:
        yield server
    # a hook that raised was answered with a 500; make sure the test hears about it
    assert not server.errors, f"wire_server hook errors: {server.errors!r}"


@pytest.fixture
def elsewhere(wire_server, monkeypatch) -> str:
    """An address on another machine (a colleague's server) that reaches ``wire_server``: the wire
    server stands in as the HTTP proxy the environment names, so the request crosses a real
    socket with the headers a request to another host would carry."""
    for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, wire_server.url)
    return "http://colleague.example:8080"


@pytest.fixture
def kernel():
    """A real IPython kernel of its own, with ``%load_ext reasoning_nb`` run (``KernelSession``)."""
    from kernel_session import KernelSession

    session = KernelSession()
    session.run("%load_ext reasoning_nb")
    yield session
    session.close()


@pytest.fixture
def ip():
    """The in-process IPython shell with ``reasoning_nb`` loaded and widgets off (the text
    path); what a test left in the magics' session, chats, stats and namespace goes after it."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()  # the second call returns None
    shell.run_line_magic("load_ext", "reasoning_nb")
    magics = shell.magics_manager.registry["ThinkMagics"]
    magics.widget = "never"
    magics.stats_rows.clear()
    yield shell
    for rows in (magics.stats_rows, magics.session, magics.chats):
        rows.clear()
    magics.widget = "auto"
    magics.chat_history = magics.trait_defaults("chat_history")
    for name in ("_think", "_compare"):
        shell.user_ns.pop(name, None)


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs of the test's own (``small_disk.SmallDisk``): ``.fill()`` it or make it
    ``.read_only()``; unmounted after the test."""
    from small_disk import mounted

    with mounted(tmp_path / "disk") as disk:
        yield disk


# -- the real llama-server (tests/providers/test_real_llamacpp.py) ---------------------------


def _start_real_llama_server(reasoning_format: str, binary: str):
    """Start a real ``llama-server`` + SmolLM2: ``chosen`` is the one ``local:`` picks by probing
    (what a user gets), ``built`` the one built for this CPU from source (every machine proves
    that path). Missing parts skip here and fail in CI; a server that fails is an error."""
    from needs import unavailable

    from reasoning_nb.errors import ConfigError
    from reasoning_nb.llama_server import build as llama_build
    from reasoning_nb.llama_server import choice as llama_choice
    from reasoning_nb.llama_server.process import LlamaServer

    try:
        if binary == "chosen":
            server, choice = llama_choice.start(reasoning_format=reasoning_format)
            server.choice = str(choice)
            return server
        path = llama_build.NATIVE.binary()
        if not path.exists():
            unavailable(f"no llama-server built for this CPU; run `{llama_build.BUILD_COMMAND}`")
        server = LlamaServer(binary=path, reasoning_format=reasoning_format).start()
        server.choice = f"{path} ({llama_build.NATIVE.label})"
        return server
    except ConfigError as exc:  # the model is not installed, or nothing runs here unbuilt
        unavailable(str(exc))


@pytest.fixture(
    scope="session",
    params=[(f, b) for b in ("chosen", "built") for f in ("deepseek", "none")],
    ids=lambda p: "-".join(p),
)
def real_llama_server(request):
    """A real ``llama-server`` per ``--reasoning-format`` (deepseek, none) and binary."""
    reasoning_format, binary = request.param
    server = _start_real_llama_server(reasoning_format, binary)
    server.reasoning_format = reasoning_format
    yield server
    server.stop()
