"""Session defaults shared by ``think()`` and the magic (``%think --model ... --preset ...``),
and where the package writes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

CACHE_DIR_ENV = "REASONING_NB_CACHE_DIR"
MODEL_ENV = "REASONING_NB_MODEL"


def cache_dir() -> Path:
    """The one folder everything the package writes goes under (the replay cache and run log,
    llama-server builds): ``$REASONING_NB_CACHE_DIR``, else the platform's user cache."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("reasoning_nb"))


def check_cache_max_mb(value: object) -> float:
    """A size cap in MB: a number >= 0; ``inf`` means no cap."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigError(
            f"cache_max_mb must be a number of MB >= 0 (float('inf') for no cap), not {value!r}."
        )
    return float(value)


@dataclass
class Defaults:
    model: str | None = None
    """Used when a call names no model (after the REASONING_NB_MODEL env var)."""
    cache_max_mb: float = 200.0
    """Size cap of the replay cache; least recently used entries go first
    (``c.ThinkMagics.cache_max_mb``); ``inf`` for none."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "cache_max_mb":  # checked when set: a bad cap must not fail a paid-for run
            value = check_cache_max_mb(value)
        super().__setattr__(name, value)


defaults = Defaults()


def configured_model(setting: str | None = None) -> tuple[str | None, str]:
    """``(model, why)`` for a call that names no model, in the one order every caller follows;
    ``(None, "")`` leaves it to discovery (a local server's model, then the embedded demo)."""
    for model, why in (
        (os.environ.get(MODEL_ENV), f"from {MODEL_ENV}"),
        (setting, "the configured default (c.ThinkMagics.default_model)"),
        (defaults.model, "the session default (%think --model / configuration)"),
    ):
        if model:
            return model, why
    return None, ""
