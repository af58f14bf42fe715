"""Shared pytest fixtures. Helper modules next to this file (``wire_server``, ``wire_fixtures``)
import by bare name: pytest puts this directory on ``sys.path`` (no ``__init__.py`` here)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from wire_server import WireServer


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A scripted HTTP/1.1 server on 127.0.0.1 (see ``wire_server.py``), stopped after the test."""
    with WireServer() as server:
        yield server
    # a hook that raised was answered with a 500; make sure the test hears about it
    assert not server.errors, f"wire_server hook errors: {server.errors!r}"


# -- the real llama-server (tests/test_real_llamacpp.py) ----------------------------------------


def _start_real_llama_server(reasoning_format: str):
    """Start the embedded ``llama-server`` + SmolLM2; skip only when it is not installed or the
    CPU cannot run the prebuilt binary (SIGILL: no AVX-512). Any other failure is an error."""
    from reasoning_nb.errors import ConfigError, ProviderError
    from reasoning_nb.providers.embedded import INSTALL_HINT, LlamaServer

    try:
        server = LlamaServer(reasoning_format=reasoning_format)
    except ConfigError as exc:
        pytest.skip(f"real llama-server or model not installed ({exc})")
    for what, path in (("llama-server binary", server.binary), ("model file", server.model)):
        if not path.exists():
            pytest.skip(f"{what} {path} is missing; install with `{INSTALL_HINT}`")
    try:
        return server.start()
    except ProviderError as exc:
        if "AVX-512" in str(exc):
            pytest.skip(f"the prebuilt llama-server cannot run on this CPU: {exc}")
        raise


@pytest.fixture(scope="session", params=["deepseek", "none"])
def real_llama_server(request):
    """A real ``llama-server`` per ``--reasoning-format`` (deepseek, none), one per session."""
    server = _start_real_llama_server(request.param)
    server.reasoning_format = request.param
    yield server
    server.stop()
