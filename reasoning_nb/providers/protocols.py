"""Protocol id (from the catalog) -> the module that speaks it."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from ..errors import ConfigError

_MODULES = {
    "ollama": "ollama",
    "chat": "openai_chat",
}


def protocol_module(protocol: str) -> ModuleType:
    name = _MODULES.get(protocol)
    if name is None:
        raise ConfigError(
            f"The {protocol!r} protocol is not implemented yet; use a local provider "
            "(ollama, llamacpp, lmstudio, vllm, openai-compatible)."
        )
    return import_module(f"{__package__}.{name}")
