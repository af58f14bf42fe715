"""The provider registry: every provider's profile, by id, in the order lists show them.

A new provider is one ``Profile`` in ``providers/profiles/`` and one ``register`` line here.
"""

from __future__ import annotations

from ..errors import ConfigError
from .profile import ModelRef, Profile
from .profiles import anthropic, chat, gemini, local, ollama, openai

PROVIDERS: dict[str, Profile] = {}


def register(profile: Profile) -> None:
    """Make ``profile`` a provider: its model ids parse and its facts are found by its id."""
    PROVIDERS[profile.id] = profile


register(ollama.OLLAMA)
register(chat.LLAMACPP)
register(chat.LMSTUDIO)
register(chat.VLLM)
register(openai.OPENAI)
register(chat.OPENAI_CHAT)
register(anthropic.ANTHROPIC)
register(gemini.GEMINI)
register(chat.OPENROUTER)
register(chat.DEEPSEEK)
register(local.LOCAL)
register(chat.OPENAI_COMPATIBLE)


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


def output_limit(model: object) -> int | None:
    """The most output tokens ``model`` (``PROVIDER:MODEL``) gives per request, from its
    provider's capability data (None: unknown, or an odd saved model id)."""
    provider, _, name = model.partition(":") if isinstance(model, str) else ("",) * 3
    profile = PROVIDERS.get(provider.strip().lower())
    try:
        return profile.capabilities(name.strip()).max_output if profile and name.strip() else None
    except Exception:  # an odd saved model id: the limit is simply unknown
        return None
