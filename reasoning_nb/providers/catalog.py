"""The one provider table: id -> protocol, flavour, default base URL, key env vars, start hint.

A new provider is one row here (plus a protocol module if it speaks a new wire format).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import ConfigError


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


PROVIDERS: dict[str, ProviderInfo] = {
    p.id: p
    for p in (
        ProviderInfo(
            "ollama",
            "ollama",
            "ollama",
            "http://127.0.0.1:11434",
            "OLLAMA_HOST",
            key_envs=("OLLAMA_API_KEY",),
            local=True,
            loads_models=True,
            start_hint="start it with `ollama serve`",
        ),
        ProviderInfo(
            "llamacpp",
            "chat",
            "llamacpp",
            "http://127.0.0.1:8080/v1",
            key_envs=("LLAMACPP_API_KEY",),
            local=True,
            loads_models=True,  # in router mode (--models-dir)
            start_hint="start it with `llama-server -m MODEL.gguf --jinja --port 8080`",
        ),
        ProviderInfo(
            "lmstudio",
            "chat",
            "lmstudio",
            "http://127.0.0.1:1234/v1",
            local=True,
            loads_models=True,  # just in time, by default
            start_hint="start LM Studio's server (Developer tab, or `lms server start`)",
        ),
        ProviderInfo(
            "vllm",
            "chat",
            "vllm",
            "http://127.0.0.1:8000/v1",
            key_envs=("VLLM_API_KEY",),
            local=True,
            start_hint="start it with `vllm serve MODEL --reasoning-parser PARSER`",
        ),
        ProviderInfo(
            "openai",
            "responses",
            "openai",
            "https://api.openai.com/v1",
            "OPENAI_BASE_URL",
            key_envs=("OPENAI_API_KEY",),
            key_required=True,
        ),
        # The same API through Chat Completions, for users who ask for it: reasoning text is
        # not returned there, only its token count.
        ProviderInfo(
            "openai-chat",
            "chat",
            "openai-chat",
            "https://api.openai.com/v1",
            "OPENAI_BASE_URL",
            key_envs=("OPENAI_API_KEY",),
            key_required=True,
        ),
        ProviderInfo(
            "anthropic",
            "anthropic",
            "anthropic",
            "https://api.anthropic.com",
            key_envs=("ANTHROPIC_API_KEY",),
            key_required=True,
        ),
        ProviderInfo(
            "gemini",
            "gemini",
            "gemini",
            "https://generativelanguage.googleapis.com",
            key_envs=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            key_required=True,
        ),
        ProviderInfo(
            "openrouter",
            "chat",
            "openrouter",
            "https://openrouter.ai/api/v1",
            key_envs=("OPENROUTER_API_KEY",),
            key_required=True,
        ),
        ProviderInfo(
            "deepseek",
            "chat",
            "deepseek",
            "https://api.deepseek.com",
            key_envs=("DEEPSEEK_API_KEY",),
            key_required=True,
        ),
        ProviderInfo(
            "local",
            "local",
            "local",
            None,
            local=True,
            start_hint="install it with `pip install 'reasoning_nb[local]'`",
        ),
        ProviderInfo(
            "openai-compatible",
            "chat",
            "openai-compatible",
            None,
            key_envs=("OPENAI_API_KEY",),
            local=True,
            start_hint="start your OpenAI-compatible server or fix `base_url`",
        ),
    )
}


@dataclass(frozen=True)
class ModelRef:
    """A parsed ``PROVIDER:MODEL`` id."""

    full: str
    provider: ProviderInfo
    name: str


def parse_model(model: str) -> ModelRef:
    """Split at the first colon: ``ollama:gpt-oss:20b`` is Ollama's ``gpt-oss:20b``."""
    if not isinstance(model, str) or ":" not in model:
        raise ConfigError(
            f"Model id {model!r} needs a provider prefix, like 'ollama:qwen3' or "
            f"'llamacpp:default'; providers are: {', '.join(PROVIDERS)}."
        )
    provider_id, name = model.split(":", 1)
    info = PROVIDERS.get(provider_id.strip().lower())
    if info is None:
        raise ConfigError(
            f"Unknown provider {provider_id!r} in model id {model!r}; use one of: "
            f"{', '.join(PROVIDERS)}."
        )
    if not name.strip():
        raise ConfigError(f"Model id {model!r} names no model after '{provider_id}:'.")
    return ModelRef(full=model, provider=info, name=name.strip())


def base_url_for(info: ProviderInfo, base_url: str | None = None) -> str:
    """The base URL to call: explicit > provider env var > default; normalised."""
    url = base_url or (os.environ.get(info.base_url_env) if info.base_url_env else None)
    url = url or info.base_url
    if not url:
        raise ConfigError(
            f"Provider {info.id!r} has no default address; pass base_url='http://HOST:PORT/v1' "
            "(or --base-url in the magic)."
        )
    url = check_base_url(url)
    parts = urlsplit(url)
    if parts.hostname == "0.0.0.0":  # a bind address, not somewhere to connect to
        url = url.replace("0.0.0.0", "127.0.0.1", 1)
    if info.protocol in ("chat", "local", "responses") and parts.path in ("", "/"):
        url += "/v1"
    return url


def check_base_url(url: str) -> str:
    """The URL normalised (no trailing slash; ``http://`` when it names no scheme, as
    OLLAMA_HOST's 'host:port' does), or a ConfigError naming what is wrong (before any I/O)."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        problem = str(exc).rstrip(".").lower()
    else:
        if parts.scheme not in ("http", "https"):
            problem = f"the scheme {parts.scheme!r} is not http or https"
        elif not parts.hostname:
            problem = "it names no host"
        else:
            return url
    shown = re.sub(r"//[^/@]*@", "//…@", url)  # never echo credentials
    raise ConfigError(
        f"The base URL {shown!r} cannot be used ({problem}); pass one like "
        "http://127.0.0.1:8080/v1."
    )


def api_key_for(info: ProviderInfo, api_key: str | None = None) -> str | None:
    """The key to send: explicit > the first provider env var that is set."""
    if api_key:
        return header_safe(api_key, "api_key=")
    for name in info.key_envs:
        value = os.environ.get(name)
        if value and value.strip():
            return header_safe(value, name)
    if info.key_required:
        raise ConfigError(
            f"No API key for {info.id}: set {' or '.join(info.key_envs)} in the environment "
            "or pass api_key=."
        )
    return None


def header_safe(key: str, source: str) -> str:
    """Keys read from files often end in a newline: strip it. A key no header can carry is
    refused here, naming where it came from and never its value (an HTTP library's own error
    would quote it)."""
    key = key.strip()
    if not (key.isascii() and key.isprintable()):
        raise ConfigError(
            f"The API key in {source} holds a control character or non-ASCII text, which no "
            "HTTP header can carry; set it to the key alone."
        )
    return key
