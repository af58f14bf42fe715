"""The interface every wire-protocol module implements (``WireProtocol``), and the module a
profile names for its protocol."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError, ProviderError
from .base import EmbeddedServer, RequestContext, StreamParser
from .transport import HttpRequest


@runtime_checkable
class WireProtocol(Protocol):
    """One wire protocol, as a module: ``run`` reads nothing else of it."""

    FRAMING: str
    """How the response stream is cut into frames (``sse``, ``ndjson``)."""
    REASONING_KEYS: tuple[str, ...]
    """Request fields the module sets itself, besides the preset's, that the trace shows."""
    SERVER: EmbeddedServer | None
    """The server it starts itself; None: it speaks to one at a base URL."""

    def build_request(self, ctx: RequestContext) -> HttpRequest: ...

    def Parser(self, ctx: RequestContext) -> StreamParser:
        """The stream parser of one response (a class in each module)."""
        ...

    def fallback(
        self, error: ProviderError, body: dict[str, Any]
    ) -> tuple[dict[str, Any], str] | None:
        """One retry's body and its warning, when the server rejected what was sent."""
        ...

    def explain(self, error: ProviderError, ctx: RequestContext) -> str | None:
        """A clearer message for an HTTP error, or None to keep the server's."""
        ...


def protocol_module(protocol: str) -> WireProtocol:
    """The module of this package that speaks ``protocol`` (a profile names it), imported on
    first use: each pulls in its own."""
    try:
        module = import_module(f"{__package__}.{protocol}")
    except ModuleNotFoundError:
        raise ConfigError(
            f"The {protocol!r} protocol is not implemented yet; use a local provider "
            "(ollama, llamacpp, lmstudio, vllm, openai-compatible)."
        ) from None
    if not isinstance(module, WireProtocol):  # a module missing part of the interface
        raise TypeError(f"{module.__name__} does not implement WireProtocol.")
    return module
