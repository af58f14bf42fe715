"""``%think --list``: the providers we know, and what the local servers offer right now."""

from __future__ import annotations

import os

import anyio

from ..errors import ReasoningNBError
from ..llama_server.process import INSTALL_HINT
from ..providers import local
from ..providers.address import base_url_for
from ..providers.catalog import PROVIDERS
from ..providers.discovery import embedded_installed, local_servers, resolve_default
from ..providers.profile import Profile
from ..providers.protocols import protocol_module


async def list_text() -> str:
    lines = ["Providers (model id = PROVIDER:MODEL):"]
    for info in PROVIDERS.values():
        where = _address(info)
        key = ""
        if info.key_envs:
            have = any(os.environ.get(k) for k in info.key_envs)
            key = f"  key {' or '.join(info.key_envs)}: {'set' if have else 'not set'}"
        lines.append(f"  {info.id:<18} {where}{key}")
    servers = await local_servers()
    lines.append("")
    if not servers:
        lines.append("No local server answered (ollama serve, llama-server, LM Studio, vLLM).")
    for server in servers:
        lines.append(f"{server.provider} at {server.base_url}:")
        for name in server.models or ["(no models)"]:
            mark = "  thinks" if name in server.thinking else ""
            lines.append(f"  {server.provider}:{name}{mark}")
    lines.append(f"Embedded demo (local:smollm2): {await embedded_text()}")
    try:
        model, why = await resolve_default(servers)
        lines.append(f"\nDefault model: {model} ({why})")
    except ReasoningNBError as exc:
        lines.append(f"\nDefault model: none. {exc}")
    return "\n".join(lines)


def _address(info: Profile) -> str:
    """Where a call with no base_url goes: the address a run would use (OLLAMA_HOST read as a
    run reads it), or why there is none."""
    if not info.base_url:
        started = protocol_module(info.protocol).SERVER is not None
        return "started on demand" if started else "base_url required"
    try:
        return base_url_for(info)
    except ReasoningNBError as exc:
        return f"unusable: {exc}"


async def embedded_text() -> str:
    if not embedded_installed():
        return f"not installed (`{INSTALL_HINT}`)"
    try:
        return f"runs {await anyio.to_thread.run_sync(local.describe)}"
    except ReasoningNBError as exc:
        return f"cannot start. {exc}"
