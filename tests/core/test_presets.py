"""The preset table (spec/presets.md) as the request fields each flavor gets."""

from __future__ import annotations

import pytest

from reasoning_nb.core.capabilities import Capabilities
from reasoning_nb.core.presets import (
    PRESETS,
    ReasoningPlan,
    Row,
    bucket,
    check,
    merge,
    nearest,
)
from reasoning_nb.errors import ConfigError
from reasoning_nb.providers.catalog import PROVIDERS, parse_model


def plan(flavor, preset, budget_tokens, caps, **options):
    """The resolver, by the row of the provider's profile."""
    return PROVIDERS[flavor].plan(preset, budget_tokens, caps, **options)


UNKNOWN = Capabilities(model="some-model")
HYBRID = Capabilities(reasoning=True, can_disable=True, model="qwen3:8b")
GPT_OSS = Capabilities(
    reasoning=True, efforts=("low", "medium", "high"), can_disable=False, model="gpt-oss:20b"
)
NO_THINK = {"chat_template_kwargs": {"enable_thinking": False}}

# presets.md, local rows: preset -> (fields, warns?)
LOCAL_TABLE = {
    "ollama": {
        "auto": ({}, False),
        "off": ({"think": False}, False),
        "low": ({"think": "low"}, False),
        "medium": ({"think": "medium"}, False),
        "high": ({"think": "high"}, False),
        "max": ({"think": "max"}, False),
    },
    "llamacpp": {
        "auto": ({}, False),
        "off": ({**NO_THINK, "reasoning_effort": "none"}, False),
        "low": ({"reasoning_effort": "low"}, False),
        "medium": ({"reasoning_effort": "medium"}, False),
        "high": ({"reasoning_effort": "high"}, False),
        "max": ({"reasoning_effort": "high"}, True),
    },
    "lmstudio": {
        "auto": ({}, False),
        "off": ({"reasoning_effort": "none"}, False),
        "low": ({"reasoning_effort": "low"}, False),
        "medium": ({"reasoning_effort": "medium"}, False),
        "high": ({"reasoning_effort": "high"}, False),
        "max": ({"reasoning_effort": "high"}, True),
    },
    "vllm": {
        "auto": ({}, False),
        "off": (NO_THINK, False),
        "low": ({"reasoning_effort": "low"}, False),
        "medium": ({"reasoning_effort": "medium"}, False),
        "high": ({"reasoning_effort": "high"}, False),
        "max": ({"reasoning_effort": "high"}, True),
    },
    "openai-compatible": {
        "auto": ({}, False),
        "off": ({**NO_THINK, "reasoning_effort": "none"}, False),
        "low": ({"reasoning_effort": "low"}, False),
        "medium": ({"reasoning_effort": "medium"}, False),
        "high": ({"reasoning_effort": "high"}, False),
        "max": ({"reasoning_effort": "high"}, True),
    },
}


@pytest.mark.parametrize("caps", [UNKNOWN, HYBRID], ids=["unknown", "hybrid"])
@pytest.mark.parametrize(("flavor", "preset"), [(f, p) for f in LOCAL_TABLE for p in PRESETS])
def test_local_rows_match_the_table(flavor, preset, caps):
    fields, warns = LOCAL_TABLE[flavor][preset]
    result = plan(flavor, preset, None, caps)
    assert result.fields == fields
    assert bool(result.warnings) == warns
    if warns:
        assert "'max'" in result.warnings[0] and "'high'" in result.warnings[0]


def test_every_local_flavor_in_the_catalog_has_a_row():
    for info in PROVIDERS.values():
        assert isinstance(info.row(UNKNOWN), Row)
        plan(info.id, "high", None, UNKNOWN)  # never raises for a catalog flavor


def test_plan_reports_effort_and_returns_fresh_dicts():
    first = plan("llamacpp", "off", None, UNKNOWN)
    assert first.effort == "none" and first.budget_tokens is None
    first.fields["chat_template_kwargs"]["enable_thinking"] = True
    assert plan("llamacpp", "off", None, UNKNOWN).fields["chat_template_kwargs"] == {
        "enable_thinking": False
    }
    assert plan("ollama", "medium", None, UNKNOWN).effort == "medium"
    assert plan("ollama", "auto", None, UNKNOWN) == ReasoningPlan({}, (), None, None)


# gpt-oss cannot switch reasoning off and has no "max".
@pytest.mark.parametrize(
    ("flavor", "preset", "fields", "warning_has"),
    [
        ("ollama", "off", {"think": "low"}, "cannot switch reasoning off"),
        ("ollama", "max", {"think": "high"}, "'max'"),
        ("ollama", "high", {"think": "high"}, None),
        ("llamacpp", "off", {"reasoning_effort": "low"}, "cannot switch reasoning off"),
        ("vllm", "off", {"reasoning_effort": "low"}, "cannot switch reasoning off"),
        ("lmstudio", "off", {"reasoning_effort": "low"}, "cannot switch reasoning off"),
        ("lmstudio", "low", {"reasoning_effort": "low"}, None),
    ],
)
def test_gpt_oss(flavor, preset, fields, warning_has):
    result = plan(flavor, preset, None, GPT_OSS)
    assert result.fields == fields
    if warning_has is None:
        assert result.warnings == ()
    else:
        assert len(result.warnings) == 1
        assert warning_has in result.warnings[0] and "gpt-oss:20b" in result.warnings[0]
        assert f"'{fields.popitem()[1]}'" in result.warnings[0]


def test_cannot_disable_without_known_efforts_sends_nothing():
    qwq = Capabilities(reasoning=True, can_disable=False, model="qwq")
    result = plan("ollama", "off", None, qwq)
    assert result.fields == {}
    assert "cannot switch reasoning off" in result.warnings[0]


@pytest.mark.parametrize("preset", ["low", "medium", "high", "max"])
@pytest.mark.parametrize("flavor", sorted(LOCAL_TABLE))
def test_model_without_reasoning_gets_nothing_and_a_warning(flavor, preset):
    caps = Capabilities(reasoning=False, model="llama3.2")
    result = plan(flavor, preset, None, caps)
    assert result.fields == {}
    (warning,) = result.warnings
    assert "llama3.2" in warning and "does not support reasoning controls" in warning


@pytest.mark.parametrize("preset", ["auto", "off"])
def test_model_without_reasoning_auto_and_off_are_quiet(preset):
    result = plan("ollama", preset, None, Capabilities(reasoning=False))
    assert result == ReasoningPlan({}, (), None, None)


# --- budgets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "level"),
    [
        (1, "low"),
        (2047, "low"),
        (2048, "medium"),
        (8191, "medium"),
        (8192, "high"),
        (16383, "high"),
        (16384, "max"),
        (10**6, "max"),
    ],
)
def test_bucket_thresholds(n, level):
    assert bucket(n) == level


@pytest.mark.parametrize("preset", PRESETS)
def test_llamacpp_and_vllm_send_the_budget_itself(preset):
    for flavor, key in (("llamacpp", "thinking_budget_tokens"), ("vllm", "thinking_token_budget")):
        result = plan(flavor, preset, 3000, HYBRID)
        assert result.fields == {key: 3000}
        assert result.budget_tokens == 3000 and result.effort is None
        assert bool(result.warnings) == (preset == "off")  # budget overrides off, says so


@pytest.mark.parametrize(
    ("flavor", "n", "fields"),
    [
        ("ollama", 500, {"think": "low"}),
        ("ollama", 20000, {"think": "max"}),
        ("lmstudio", 9000, {"reasoning_effort": "high"}),
        ("openai-compatible", 4096, {"reasoning_effort": "medium"}),
    ],
)
def test_budget_buckets_to_a_level_with_a_warning(flavor, n, fields):
    result = plan(flavor, "auto", n, HYBRID)
    assert result.fields == fields
    assert result.budget_tokens is None
    assert f"budget_tokens={n}" in result.warnings[0]
    assert repr(result.effort) in result.warnings[0]


def test_budget_bucketed_to_max_on_llamacpp_style_row_is_clamped_twice():
    result = plan("lmstudio", "auto", 20000, HYBRID)
    assert result.fields == {"reasoning_effort": "high"}
    assert len(result.warnings) == 2 and "'max'" in result.warnings[1]


def test_budget_clamped_to_model_range():
    caps = Capabilities(reasoning=True, budget_min=1024, budget_max=8000, model="m")
    low = plan("llamacpp", "auto", 100, caps)
    assert low.fields == {"thinking_budget_tokens": 1024}
    assert "100" in low.warnings[0] and "1024" in low.warnings[0]
    high = plan("vllm", "auto", 9000, caps)
    assert high.fields == {"thinking_token_budget": 8000}
    assert "9000" in high.warnings[0] and "8000" in high.warnings[0]


# --- clamping to what the model accepts -----------------------------------------------------


def test_effort_clamped_to_model_efforts_with_both_values_named():
    caps = Capabilities(reasoning=True, efforts=("low", "high"), model="m")
    result = plan("ollama", "medium", None, caps)
    assert result.fields == {"think": "high"}  # ties go to the stronger level
    assert "'medium'" in result.warnings[0] and "'high'" in result.warnings[0]
    assert plan("ollama", "low", None, caps).warnings == ()


def test_nearest():
    assert nearest("none", ("minimal", "low", "medium", "high")) == "minimal"
    assert nearest("none", ("low", "medium", "high")) == "low"
    assert nearest("xhigh", ("low", "medium", "high")) == "high"
    assert nearest("medium", ("low", "high")) == "high"
    assert nearest("max", ("high", "max")) == "max"


# --- hosted rows (no protocol yet), from the snapshot -----------------------------------------


def test_openai_responses_row():
    gpt51 = Capabilities(
        reasoning=True, efforts=("none", "low", "medium", "high"), can_disable=True, model="gpt-5.1"
    )
    include = {"include": ["reasoning.encrypted_content"]}  # the reasoning items, for --chat
    assert (
        plan("openai", "auto", None, gpt51).fields == {"reasoning": {"summary": "auto"}} | include
    )
    assert (
        plan("openai", "off", None, gpt51).fields
        == {"reasoning": {"summary": "auto", "effort": "none"}} | include
    )
    top = plan("openai", "max", None, gpt51)
    assert top.fields["reasoning"]["effort"] == "high"
    assert "'xhigh'" in top.warnings[0] and "'high'" in top.warnings[0]
    gpt52 = Capabilities(reasoning=True, efforts=("none", "low", "medium", "high", "xhigh"))
    assert plan("openai", "max", None, gpt52).fields["reasoning"]["effort"] == "xhigh"
    gpt5 = Capabilities(reasoning=True, efforts=("minimal", "low", "medium", "high"))
    off = plan("openai", "off", None, gpt5)
    assert off.fields["reasoning"]["effort"] == "minimal" and "off" in off.warnings[0]


def test_anthropic_rows():
    manual = Capabilities(
        reasoning=True, budget_min=1024, max_output=32000, model="claude-opus-4-1"
    )
    assert plan("anthropic", "off", None, manual).fields == {}
    high = plan("anthropic", "high", None, manual)
    assert high.fields["thinking"] == {"type": "enabled", "budget_tokens": 16000}
    assert high.fields["max_tokens"] > 16000
    top = plan("anthropic", "max", None, manual)
    assert top.fields["thinking"]["budget_tokens"] == 31999
    assert top.fields["max_tokens"] == 32000
    small = plan("anthropic", "auto", 500, manual)
    assert small.fields["thinking"]["budget_tokens"] == 1024 and "1024" in small.warnings[0]
    kept = plan("anthropic", "low", None, manual, max_tokens=30000)
    assert "max_tokens" not in kept.fields
    efforts = ("low", "medium", "high", "max")
    adaptive = Capabilities(reasoning=True, efforts=efforts, budget_min=1024)  # 4.6: summarizes
    assert plan("anthropic", "max", None, adaptive).fields == {
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "max"},
    }
    hidden = Capabilities(reasoning=True, efforts=("low", "medium", "high", "xhigh", "max"))
    assert plan("anthropic", "max", None, hidden).fields == {  # 4.7+: omitted unless asked
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "max"},
    }


def test_gemini_rows():
    pro25 = Capabilities(reasoning=True, budget_min=128, budget_max=32768, model="gemini-2.5-pro")
    off = plan("gemini", "off", None, pro25)
    assert off.fields["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 128,
    }
    assert "128" in off.warnings[0]
    top = plan("gemini", "max", None, pro25).fields["generationConfig"]["thinkingConfig"]
    assert top["thinkingBudget"] == 32768
    flash3 = Capabilities(reasoning=True, efforts=("minimal", "low", "medium", "high"))
    lowest = plan("gemini", "off", None, flash3)
    assert lowest.fields["generationConfig"]["thinkingConfig"]["thinkingLevel"] == "minimal"
    assert "cannot switch reasoning off" in lowest.warnings[0]
    assert plan("gemini", "auto", None, flash3).fields == {
        "generationConfig": {"thinkingConfig": {"includeThoughts": True}}
    }


def test_openrouter_and_deepseek_rows():
    assert plan("openrouter", "auto", 5000, UNKNOWN).fields == {"reasoning": {"max_tokens": 5000}}
    assert plan("openrouter", "max", None, UNKNOWN).fields == {"reasoning": {"effort": "xhigh"}}
    assert plan("deepseek", "low", None, UNKNOWN).fields == {
        "thinking": {"type": "enabled"},
        "reasoning_effort": "low",
    }
    medium = plan("deepseek", "medium", None, UNKNOWN)
    assert medium.fields["reasoning_effort"] == "high" and "'medium'" in medium.warnings[0]
    assert plan("deepseek", "off", None, UNKNOWN).fields == {"thinking": {"type": "disabled"}}


# --- check() and merge() ---------------------------------------------------------------------


def test_check_normalises():
    assert check("HIGH ", None) == ("high", None)
    assert check(None, 2048) == ("auto", 2048)


@pytest.mark.parametrize("preset", ["hgih", "", 3, "xhigh"])
def test_check_rejects_unknown_presets_and_lists_the_valid_ones(preset):
    with pytest.raises(ConfigError) as info:
        check(preset, None)
    assert "auto, off, low, medium, high, max" in str(info.value)


@pytest.mark.parametrize("budget", [0, -5, "abc", "4096", True, 2.5])
def test_check_rejects_bad_budgets(budget):
    with pytest.raises(ConfigError) as info:
        check("auto", budget)
    assert "budget_tokens must be a positive whole number" in str(info.value)
    assert repr(budget) in str(info.value)


def test_plan_validates_too():
    with pytest.raises(ConfigError):
        plan("ollama", "turbo", None, UNKNOWN)
    with pytest.raises(ConfigError, match="provider"):  # no profile, so no row
        parse_model("carrier-pigeon:m")


def test_merge_is_deep_and_in_place():
    body = {"model": "m", "chat_template_kwargs": {"foo": 1}, "options": {"a": 1}}
    fields = {"chat_template_kwargs": {"enable_thinking": False}, "options": 3}
    out = merge(body, fields)
    assert out is body
    assert body == {
        "model": "m",
        "chat_template_kwargs": {"foo": 1, "enable_thinking": False},
        "options": 3,
    }
    fields["chat_template_kwargs"]["enable_thinking"] = True
    assert body["chat_template_kwargs"]["enable_thinking"] is False  # no aliasing
