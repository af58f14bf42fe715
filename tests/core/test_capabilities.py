"""The capability registry: shipped snapshot, family rules, server facts, user overrides."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from reasoning_nb.core import capabilities
from reasoning_nb.core.capabilities import Capabilities, clear_overrides, override
from reasoning_nb.errors import ConfigError
from reasoning_nb.providers.catalog import PROVIDERS


def lookup(provider, model, discovered=None):
    """The layers, from the sources the provider's profile names."""
    return PROVIDERS[provider].capabilities(model, discovered)


@pytest.fixture(autouse=True)
def _no_overrides():
    clear_overrides()
    yield
    clear_overrides()


def test_shipped_json_loads_and_carries_its_license():
    data_dir = resources.files("reasoning_nb").joinpath("data")
    data = json.loads(data_dir.joinpath("capabilities.json").read_text("utf-8"))
    assert len(data["source_commit"]) == 40
    assert "models.dev" in data["source"]
    assert "MODELS-DEV-LICENSE" in data["license"]
    assert {"openai", "anthropic", "google", "ollama-cloud"} <= set(data["providers"])
    notice = data_dir.joinpath("MODELS-DEV-LICENSE").read_text("utf-8")
    assert "MIT License" in notice and "Copyright (c) 2025 models.dev" in notice
    assert "Permission is hereby granted" in notice


def test_snapshot_hosted_models():
    gpt51 = lookup("openai", "gpt-5.1")
    assert gpt51.reasoning is True
    assert gpt51.efforts == ("none", "low", "medium", "high")
    assert gpt51.can_disable is True and gpt51.temperature is False
    assert gpt51.max_output == 128000 and gpt51.sources == ("snapshot",)
    sonnet = lookup("anthropic", "claude-sonnet-4-5")
    assert sonnet.budget_min == 1024 and sonnet.efforts is None
    assert sonnet.can_disable is None  # no toggle in the data is not "cannot"
    pro = lookup("gemini", "models/gemini-2.5-pro")
    assert (pro.budget_min, pro.budget_max) == (128, 32768)
    assert pro.reasoning is True  # partial entry: options alone imply reasoning
    assert lookup("openai", "gpt-4o").reasoning is False


def test_snapshot_name_variants():
    assert lookup("openai", "gpt-5.1-2025-11-13").efforts == ("none", "low", "medium", "high")
    assert lookup("ollama", "gpt-oss:120b-cloud").max_output == 32768
    assert lookup("lmstudio", "gpt-oss-20b").efforts == ("low", "medium", "high")
    unknown = lookup("openai", "gpt-99")
    assert unknown.reasoning is None and unknown.sources == ()
    assert unknown.model == "gpt-99"


# (name, expected fields) on realistic local names
FAMILY_CASES = [
    ("qwen3:0.6b", {"reasoning": True, "can_disable": True, "preopened": False}),
    ("hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M", {"reasoning": True, "can_disable": True}),
    ("Qwen/Qwen3-8B", {"family": "qwen3", "can_disable": True}),
    ("qwen3:30b-a3b-thinking-2507-q4_K_M", {"can_disable": False, "preopened": True}),
    ("unsloth/Qwen3-30B-A3B-Thinking-2507-GGUF", {"can_disable": False, "preopened": True}),
    ("qwen3:30b-a3b-instruct-2507-q4_K_M", {"reasoning": False}),
    ("qwen3-coder:30b", {"reasoning": False}),
    ("qwen3.5:9b", {"reasoning": True, "preopened": True, "can_disable": True}),
    ("deepseek-r1:7b", {"reasoning": True, "preopened": True, "family": "deepseek-r1"}),
    ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", {"family": "deepseek-r1", "preopened": True}),
    ("/models/DeepSeek-R1-Distill-Qwen-1.5B-Q4_K_M.gguf", {"family": "deepseek-r1"}),
    ("qwq:32b", {"can_disable": False, "preopened": True}),
    ("gpt-oss:20b", {"efforts": ("low", "medium", "high"), "can_disable": False}),
    ("openai/gpt-oss-20b", {"family": "gpt-oss"}),
    ("bartowski/openai_gpt-oss-20b-GGUF", {"family": "gpt-oss"}),
    ("magistral:24b", {"reasoning": True, "family": "magistral"}),
    ("phi4-reasoning:14b", {"family": "phi4-reasoning", "can_disable": False}),
    ("phi4-mini-reasoning:3.8b", {"family": "phi4-mini-reasoning"}),
    ("granite3.3:8b", {"reasoning": True, "can_disable": True}),
    ("ibm-granite/granite-3.2-8b-instruct", {"family": "granite"}),
    ("deepseek-v3.1:671b", {"can_disable": True, "family": "deepseek"}),
    ("cogito:14b", {"reasoning": True, "can_disable": True}),
    ("exaone-deep:7.8b", {"reasoning": True, "preopened": True}),
    ("HuggingFaceTB/SmolLM3-3B", {"family": "smollm3"}),
    ("zai-org/GLM-4.5-Air", {"family": "glm", "can_disable": True}),
    ("THUDM/GLM-Z1-9B-0414", {"family": "glm-z1", "can_disable": False}),
    ("gemma4:e4b", {"family": "gemma4"}),
    ("some-org/MyModel-Reasoning-7B", {"reasoning": True}),
]


@pytest.mark.parametrize(("name", "expected"), FAMILY_CASES)
def test_family_rules(name, expected):
    caps = lookup("llamacpp", name)
    assert "family" in caps.sources
    for key, value in expected.items():
        assert getattr(caps, key) == value, key


@pytest.mark.parametrize(
    "name", ["llama3.2:3b", "gemma3:4b", "SmolLM2-135M-Instruct.Q4_1.gguf", "mistral:7b", "default"]
)
def test_no_family_rule_means_unknown(name):
    caps = lookup("llamacpp", name)
    assert caps.reasoning is None and caps.sources == ()


def test_family_rules_are_for_local_providers_only():
    caps = lookup("openrouter", "qwen/qwen3-235b-a22b-thinking-2507")
    assert "family" not in caps.sources and caps.preopened is False


def test_layers_later_wins_field_by_field():
    # LM Studio's snapshot says reasoning and max_output; the family rule adds gpt-oss facts.
    caps = lookup("lmstudio", "openai/gpt-oss-20b")
    assert caps.sources == ("snapshot", "family")
    assert caps.max_output == 32768 and caps.can_disable is False
    served = lookup("ollama", "qwen3:8b", {"reasoning": False, "bogus": 1, "efforts": None})
    assert served.reasoning is False  # the server knows best
    assert served.can_disable is True  # a field the server did not mention stays
    assert served.sources == ("family", "server")


def test_override_precedence_and_patterns():
    override("ollama:qwen3*", can_disable=False)
    override("qwen3:8b", efforts=["low", "high"])
    caps = lookup("ollama", "qwen3:8b", {"can_disable": True})
    assert caps.can_disable is False  # override beats the server
    assert caps.efforts == ("low", "high")
    assert caps.sources == ("family", "server", "override", "override")
    assert lookup("llamacpp", "qwen3:8b").efforts == ("low", "high")  # model-only pattern
    assert lookup("llamacpp", "qwen3:4b").can_disable is True  # provider-scoped pattern
    override("OLLAMA:QWEN3:8B", can_disable=True)  # later overrides win; case-insensitive
    assert lookup("ollama", "qwen3:8b").can_disable is True
    clear_overrides()
    assert lookup("ollama", "qwen3:8b").efforts is None


def test_override_rejects_unknown_fields_and_empty_patterns():
    with pytest.raises(ConfigError, match="thinks"):
        override("x", thinks=True)
    with pytest.raises(ConfigError):
        override("  ", reasoning=True)


def test_capabilities_is_frozen():
    caps = Capabilities()
    with pytest.raises(AttributeError):
        caps.reasoning = True  # type: ignore[misc]
    assert {"reasoning", "efforts", "preopened", "budget_min"} <= capabilities.FIELDS
