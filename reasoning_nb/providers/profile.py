"""A provider's facts (``ProviderInfo``) and a parsed model id (``ModelRef``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderInfo:
    id: str
    protocol: str
    """Wire protocol module: ``ollama``, ``chat`` (Chat Completions), ``responses``,
    ``anthropic``, ``gemini``."""
    flavor: str
    """Dialect inside a protocol (``llamacpp``, ``vllm``, ...); decides the preset row."""
    base_url: str | None
    base_url_env: str | None = None
    key_envs: tuple[str, ...] = ()
    key_required: bool = False
    local: bool = False
    loads_models: bool = False
    """The server loads the model a request names, if it is not loaded yet: the wait before
    its first byte can be a model load."""
    start_hint: str = ""
    """What to start when nothing listens at the base URL."""
    bare_host_port: int | None = None
    """The port of an address given with no scheme and no port (``OLLAMA_HOST=0.0.0.0``), where
    the server's own tools read it so; such a provider also reads a missing host as this
    machine (``:11434``)."""
    key_homes: tuple[str, ...] = ()
    """Addresses besides the default and the base-URL variable where the env key belongs."""
    own_server_key: bool = False
    """The key variables hold the key of the user's own server, wherever it runs: they go to any
    address of this provider (see the module docstring)."""



@dataclass(frozen=True)
class ModelRef:
    """A parsed ``PROVIDER:MODEL`` id."""

    full: str
    provider: ProviderInfo
    name: str
