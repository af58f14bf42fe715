"""The one provider table: id -> protocol, flavour, default base URL, key env vars, start hint.

A new provider is one row here (plus a protocol module if it speaks a new wire format).
"""

from __future__ import annotations

from ..errors import ConfigError
from .profile import ModelRef, ProviderInfo

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
            # Ollama's own reading of OLLAMA_HOST (its envconfig.Host): no scheme means http, no
            # port 11434, no host 127.0.0.1. OLLAMA_API_KEY is an ollama.com key.
            bare_host_port=11434,
            key_homes=("https://ollama.com",),
        ),
        ProviderInfo(
            "llamacpp",
            "chat",
            "llamacpp",
            "http://127.0.0.1:8080/v1",
            key_envs=("LLAMACPP_API_KEY",),
            own_server_key=True,
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
            own_server_key=True,
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

