"""Protocol id (from the catalog) -> the module that speaks it."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from ..errors import ConfigError

_MODULES = {
    "ollama": "ollama",
    "chat": "openai_chat",
    "responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "local": "local",
}


def protocol_module(protocol: str) -> ModuleType:
    name = _MODULES.get(protocol)
    try:
        if name is None:
            raise ModuleNotFoundError(protocol)
        return import_module(f"{__package__}.{name}")
    except ModuleNotFoundError:
        raise ConfigError(
            f"The {protocol!r} protocol is not implemented yet; use a local provider "
            "(ollama, llamacpp, lmstudio, vllm, openai-compatible)."
        ) from None
