"""Short questions to a running server: what models it has, what it says about one, what it
holds in memory. The profiles name which a provider answers (``Profile.probes``); a probe that
fails tells nothing (an empty list or None), never an error."""

from __future__ import annotations

from typing import Any

import httpx

from .profile import Listing
from .transport import ssl_context

PROBE_TIMEOUT = 0.5
SHOW_TIMEOUT = 2.0
FAILED = (httpx.HTTPError, ValueError, AttributeError, TypeError)
"""What a listing probe may raise (``discovery`` reads it as "nothing found")."""


def _client(timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=timeout, trust_env=False, verify=ssl_context())


async def _answer(method: str, url: str, timeout: float, **options: Any) -> Any:
    """The JSON of a 200 answer; None for anything else."""
    try:
        async with _client(timeout) as client:
            response = await client.request(method, url, **options)
            return response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


async def openai_models(base_url: str) -> Listing:
    """``GET /models`` (Chat Completions servers): ids only; they say nothing of thinking."""
    async with _client(PROBE_TIMEOUT) as client:
        data = (await client.get(f"{base_url}/models")).json()
    return [(m.get("id"), False) for m in data.get("data") or []]


async def ollama_models(base_url: str) -> Listing:
    """``GET /api/tags``: names, and the ``thinking`` capability newer servers list."""
    async with _client(PROBE_TIMEOUT) as client:
        data = (await client.get(f"{base_url}/api/tags")).json()
    return [
        (m.get("name") or m.get("model"), "thinking" in (m.get("capabilities") or ()))
        for m in data.get("models") or []
    ]


async def ollama_show(base_url: str, model: str) -> dict[str, Any] | None:
    """``POST /api/show``: whether the model thinks, and the ``think`` values it takes, for the
    capability registry."""
    data = await _answer("POST", f"{base_url}/api/show", SHOW_TIMEOUT, json={"model": model})
    caps = data.get("capabilities") if isinstance(data, dict) else None
    if not isinstance(caps, list):
        return None
    return {"reasoning": "thinking" in caps, **_think_values(data.get("thinking"))}


def _think_values(thinking: Any) -> dict[str, Any]:
    """Ollama's ``thinking: {"values": [...], "default": ...}`` (ollama PR #18473, v0.31+): a
    level it does not list falls back to the model's default without a word, so the planner
    clamps to these. Levels -> ``efforts``; booleans only -> ``()``, on or off with no levels;
    ``false`` listed -> it can be switched off."""
    values = thinking.get("values") if isinstance(thinking, dict) else None
    if not isinstance(values, list) or not values:
        return {}
    levels = tuple(v.lower() for v in values if isinstance(v, str))
    return {"efforts": levels, "can_disable": any(v is False for v in values)}


async def ollama_loaded(base_url: str, model: str) -> bool | None:
    """``GET /api/ps``: whether Ollama holds ``model`` in memory, so a request waits for its
    first token, not for a model load; None where it cannot say."""
    data = await _answer("GET", f"{base_url}/api/ps", PROBE_TIMEOUT)
    running = data.get("models") if isinstance(data, dict) else None
    if not isinstance(running, list):
        return None
    names = {
        _untagged(entry[key])
        for entry in running
        if isinstance(entry, dict)
        for key in ("name", "model")
        if isinstance(entry.get(key), str)
    }
    return _untagged(model) in names


def _untagged(name: str) -> str:
    return name.removesuffix(":latest")  # (Ollama's default tag, which names may leave out)
