"""Ollama: its native ``/api/chat`` and ``think`` field, ``OLLAMA_HOST``, and its probes."""

from __future__ import annotations

from ...core.presets import LEVEL, Row
from ..probes import ollama_loaded, ollama_models, ollama_show
from ..profile import Probes, Profile

OLLAMA = Profile(
    "ollama",
    "ollama",
    "http://127.0.0.1:11434",
    # Local servers: `auto` sends nothing. /api/show's `thinking.values` (probes.ollama_show)
    # narrow the levels per model; a model with booleans only is switched on.
    Row(
        effort={"think": LEVEL},
        vocab=("low", "medium", "high", "max"),
        off={"think": False},
        on={"think": True},
    ),
    base_url_env="OLLAMA_HOST",
    name="Ollama",
    key_envs=("OLLAMA_API_KEY",),
    local=True,
    loads_models=True,
    start_hint="start it with `ollama serve`",
    # Ollama's own reading of OLLAMA_HOST (its envconfig.Host): no scheme means http, no
    # port 11434, no host 127.0.0.1. OLLAMA_API_KEY is an ollama.com key.
    bare_host_port=11434,
    key_homes=("https://ollama.com",),
    # Ollama's cloud list names models the way a local Ollama does (``gpt-oss:20b``), so it is
    # a good hint for local names too.
    snapshot_id="ollama-cloud",
    probes=Probes(ollama_models, show=ollama_show, loaded=ollama_loaded),
    # Its /v1 maps only `reasoning_effort` (or `reasoning.effort`) to `think` and reads no
    # budget field (ollama openai/openai.go, FromChatRequest), and has no /api/show levels.
    openai_path="/v1",
)
