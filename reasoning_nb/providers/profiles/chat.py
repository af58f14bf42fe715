"""The providers that speak Chat Completions: local servers (llama.cpp, LM Studio, vLLM, any
OpenAI-compatible one) and hosted ones (OpenAI's chat endpoint, OpenRouter, DeepSeek)."""

from __future__ import annotations

from typing import Any

from ...core.history import TEXT, Replay
from ...core.presets import BUDGET, LEVEL, Row
from ..probes import openai_models
from ..profile import EndReasoning, Probes, Profile
from .openai import levels_row

NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}
OFF = {**NO_THINKING, "reasoning_effort": "none"}  # both of the servers' spellings of off
_SERVER = Probes(openai_models)
_RATE_LIMIT = (
    "The provider's rate limit or quota stopped the request (check the account's limits if it "
    "goes on): {message}"
)


def local_row(off: dict, vocab: tuple[str, ...] = ("low", "medium", "high"), **more: Any) -> Row:
    """How local servers spell a level (``reasoning_effort``); ``auto`` sends nothing."""
    return Row(effort={"reasoning_effort": LEVEL}, vocab=vocab, off=off, **more)


def local_server(
    id: str, base_url: str | None, row: Row, start_hint: str, own_key: str = "", **more: Any
) -> Profile:
    """A server on this machine that speaks Chat Completions (and lists its models, unless
    ``probes=None``); ``own_key``: the variable of the key it was started with, sent to any
    address of it."""
    more.setdefault("probes", _SERVER)
    if own_key:
        more.update(key_envs=(own_key,), own_server_key=True)
    return Profile(id, "openai_chat", base_url, row, local=True, start_hint=start_hint, **more)


LLAMACPP_CONTROL = EndReasoning(
    "/chat/completions/control", {"reasoning_control": True}, {"action": "reasoning_end"}
)
"""llama.cpp's end of the reasoning of a running stream (PR #23971; b11434 has it). Older builds
ignore the arm, and their 404 to the control leaves Answer now to ask again."""

LLAMACPP = local_server(
    "llamacpp",
    "http://127.0.0.1:8080/v1",
    # `thinking_budget_tokens`: the name every build with a per-request budget reads; newer ones
    # (b9982+) read `reasoning_budget_tokens` first and keep this one as its alias (b11434:
    # tools/server/server-common.cpp), so one name serves old and new servers alike.
    local_row(OFF, budget={"thinking_budget_tokens": BUDGET}),
    "start it with `llama-server -m MODEL.gguf --jinja --port 8080`",
    own_key="LLAMACPP_API_KEY",
    loads_models=True,  # in router mode (--models-dir)
    end_reasoning=LLAMACPP_CONTROL,
    # Past reasoning as `reasoning_content` (PR #18994); `preserve_reasoning` (PR #25105) sets
    # every template's spelling, `preserve_thinking` reaches Qwen's on builds before it.
    replay=Replay(TEXT, "reasoning_content", str),
    keeps_reasoning=("preserve_reasoning", "preserve_thinking"),
    resume="completion",  # its template renders the prompt, /completion goes on (resume.py)
)

LMSTUDIO = local_server(
    "lmstudio",
    "http://127.0.0.1:1234/v1",
    local_row({"reasoning_effort": "none"}),
    "start LM Studio's server (Developer tab, or `lms server start`)",
    loads_models=True,  # just in time, by default
    snapshot_id="lmstudio",
)

VLLM = local_server(
    "vllm",
    "http://127.0.0.1:8000/v1",
    local_row(NO_THINKING, budget={"thinking_token_budget": BUDGET}),
    "start it with `vllm serve MODEL --reasoning-parser PARSER`",
    own_key="VLLM_API_KEY",
    # It reads past reasoning as `reasoning` only (#38488) and hands the template both names.
    replay=Replay(TEXT, "reasoning", str),
    keeps_reasoning=("preserve_thinking",),
    resume="final_message",  # continue_final_message (resume.py)
)

OPENAI_COMPATIBLE = local_server(
    "openai-compatible",
    None,
    # As llamacpp without `thinking_budget_tokens`, which only llama.cpp reads.
    local_row(OFF),
    "start your OpenAI-compatible server or fix `base_url`",
    key_envs=("OPENAI_API_KEY",),
    probes=None,
)

# Hosted: completion_tokens includes completion_tokens_details.reasoning_tokens (cost rules).

# The same API as `openai` through Chat Completions, for users who ask for it: reasoning text
# is not returned there, only its token count.
OPENAI_CHAT = Profile(
    "openai-chat",
    "openai_chat",
    "https://api.openai.com/v1",
    levels_row({"reasoning_effort": LEVEL}),
    base_url_env="OPENAI_BASE_URL",
    key_envs=("OPENAI_API_KEY",),
    snapshot_id="openai",
    hints={429: _RATE_LIMIT},
    # o-series reject max_tokens; the cap includes the reasoning
    tokens_field="max_completion_tokens",
    reasoning_text=False,
    sampling_on_reasoning=False,
)


def _details_text(detail: dict[str, Any]) -> str:
    if detail.get("type") in ("reasoning.text", "reasoning.summary"):
        return str(detail.get("text") or detail.get("summary") or "")
    return ""


OPENROUTER = Profile(
    "openrouter",
    "openai_chat",
    "https://openrouter.ai/api/v1",
    levels_row({"reasoning": {"effort": LEVEL}}, budget={"reasoning": {"max_tokens": BUDGET}}),
    key_envs=("OPENROUTER_API_KEY",),
    snapshot_id="openrouter",
    # The merged ``reasoning_details``, unmodified and in order (Claude / Gemini 3 / DeepSeek
    # upstreams need them for continuity).
    replay=Replay("reasoning_details", "reasoning_details", _details_text),
    hints={
        402: (
            "OpenRouter cannot bill this request ({message:.160}): add credits at "
            "openrouter.ai/settings/credits, or lower max_tokens."
        ),
        429: _RATE_LIMIT,
    },
)

DEEPSEEK_EFFORTS = ("low", "high", "max")
"""api-docs.deepseek.com/guides/thinking_mode (2026): V4 took high/max at launch, now low too."""
DEEPSEEK = Profile(
    "deepseek",
    "openai_chat",
    "https://api.deepseek.com",
    # Thinking is on when unset (V4), so `auto` sends nothing. The server maps other efforts
    # (medium -> high), so a preset it has no level for is sent as its nearest, with a warning.
    Row(
        effort={"thinking": {"type": "enabled"}, "reasoning_effort": LEVEL},
        vocab=DEEPSEEK_EFFORTS,
        off={"thinking": {"type": "disabled"}},
    ),
    efforts=DEEPSEEK_EFFORTS,
    key_envs=("DEEPSEEK_API_KEY",),
    snapshot_id="deepseek",
    hints={
        402: (
            "DeepSeek reports an empty balance ({message:.160}): top up at platform.deepseek.com."
        ),
        429: _RATE_LIMIT,
    },
    thinking_ignores_temperature=True,
)
