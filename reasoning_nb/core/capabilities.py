"""What a model can do about reasoning, from four layers; later layers win field by field.

1. ``snapshot``: the shipped models.dev data (``reasoning_nb/data/capabilities.json``, MIT,
   rebuilt by ``tools/build_capabilities.py``, of the day :func:`snapshot_as_of` says), looked
   up under the models.dev provider id the provider's profile names.
2. ``family``: rules on local model names (``qwen3:0.6b``), for local providers only: hosted
   servers separate reasoning themselves.
3. ``server``: facts the provider layer discovered at run time (Ollama ``/api/show``).
4. ``override``: what the user said with :func:`override`.

The registry only decides which control fields are sent; reasoning that arrives is always shown.
Reading the shipped JSON is the one bit of I/O here (package data, read once).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields, replace
from fnmatch import fnmatchcase
from functools import cache
from importlib import resources
from typing import Any

from ..errors import ConfigError


@dataclass(frozen=True)
class Capabilities:
    """Reasoning facts about one model; ``None`` means unknown."""

    reasoning: bool | None = None
    efforts: tuple[str, ...] | None = None
    """Effort / level values the model accepts (``("low", "medium", "high")``)."""
    budget_min: int | None = None
    """Smallest thinking-token budget accepted (Anthropic 1024; Gemini 2.5 Pro 128)."""
    budget_max: int | None = None
    can_disable: bool | None = None
    """Whether reasoning can be switched off (False: gpt-oss, QwQ, Qwen3-Thinking-2507)."""
    preopened: bool = False
    """The chat template pre-opens the reasoning block, so output starts mid-thought."""
    max_output: int | None = None
    """Reasoning included."""
    temperature: bool | None = None
    family: str | None = None
    model: str = ""
    """As looked up (for warnings)."""
    sources: tuple[str, ...] = ()
    """Layers that contributed: ``snapshot``, ``family``, ``server``, ``override``."""


FIELDS = frozenset(f.name for f in fields(Capabilities)) - {"model", "sources"}

_EFFORTS3 = ("low", "medium", "high")
_THINK_ON = {"reasoning": True}
_TOGGLE = {"reasoning": True, "can_disable": True}
_ALWAYS = {"reasoning": True, "can_disable": False}

# Family rules for local names, first match wins, so specific rows come first. Each regex is
# searched case-insensitively in the last path segment (Ollama tag included, since tags like
# ``qwen3:30b-a3b-thinking-2507`` carry the variant), starting at a word boundary.
# Pre-opened templates (output has only ``</think>``): wire-formats §10.
FAMILY_RULES: tuple[tuple[str, dict[str, Any]], ...] = (
    (r"gpt-oss", {**_ALWAYS, "efforts": _EFFORTS3, "family": "gpt-oss"}),
    # R1 (since the 2025 template update, and R1-0528) and its distills put <think>\n in the
    # prompt; Ollama's newer deepseek-r1 templates can switch thinking off.
    (r"deepseek-r1", {**_TOGGLE, "preopened": True, "family": "deepseek-r1"}),
    (r"deepseek-v(3\.[12]|4)", {**_TOGGLE, "family": "deepseek"}),  # `thinking` template kwarg
    (r"qwq", {**_ALWAYS, "preopened": True, "family": "qwq"}),
    (r"qwen3[-.\w:]*thinking", {**_ALWAYS, "preopened": True, "family": "qwen3-thinking"}),
    # Instruct-2507 and Coder do not think (LM Studio calls the instruct one `qwen3-30b-a3b-2507`).
    (r"qwen3[-.\w:]*(instruct|coder|2507)", {"reasoning": False, "family": "qwen3"}),
    (r"qwen3\.\d", {**_TOGGLE, "preopened": True, "family": "qwen3.5"}),
    (r"qwen3", {**_TOGGLE, "family": "qwen3"}),
    (r"magistral", {**_THINK_ON, "family": "magistral"}),
    (r"phi-?4-mini-(flash-)?reasoning", {**_ALWAYS, "family": "phi4-mini-reasoning"}),
    (r"phi-?4-reasoning", {**_ALWAYS, "family": "phi4-reasoning"}),
    (r"granite-?3\.[23]", {**_TOGGLE, "family": "granite"}),  # `thinking` template kwarg
    (r"cogito", {**_TOGGLE, "family": "cogito"}),
    (r"exaone-deep", {**_ALWAYS, "preopened": True, "family": "exaone-deep"}),  # <thought>
    (r"smollm3", {**_TOGGLE, "family": "smollm3"}),
    (r"glm-?z1", {**_ALWAYS, "family": "glm-z1"}),
    (r"glm-?(4\.[5-9]|[5-9])", {**_TOGGLE, "family": "glm"}),
    (r"gemma-?4", {**_TOGGLE, "family": "gemma4"}),  # `enable_thinking` template kwarg
    (r"command-r7b", {**_THINK_ON, "family": "command-r7b"}),
    (r"minimax-m[12]", {**_ALWAYS, "family": "minimax"}),
    (r"kimi-k2[-.\w]*thinking", {**_ALWAYS, "family": "kimi-thinking"}),
    (r"nemotron-(3|nano-\d+b-v2)|nemotron-super-49b-v1\.5", {**_TOGGLE, "family": "nemotron"}),
    (r"olmo-?3[-.\w:]*think", {**_ALWAYS, "family": "olmo-3-think"}),
    (r"openthinker", {**_ALWAYS, "family": "openthinker"}),
    # Generic names last: a fine-tune called *-thinking / *-reasoning most likely reasons.
    (r"\S*(thinking|reasoning|reasoner)", {**_THINK_ON}),
)
_COMPILED = tuple(
    (re.compile(r"(?<![a-z0-9])" + pattern, re.IGNORECASE), facts)
    for pattern, facts in FAMILY_RULES
)

_overrides: list[tuple[str, dict[str, Any]]] = []


def lookup(
    provider_id: str,
    model: str,
    discovered: dict | None = None,
    *,
    snapshot_id: str | None = None,
    family: bool = True,
) -> Capabilities:
    """What ``model`` can do: snapshot < family < server < override. ``snapshot_id``: its
    models.dev provider (None: not listed); ``family``: whether the local-name rules apply."""
    caps = Capabilities(model=model)
    caps = _apply(caps, "snapshot", _snapshot_facts(snapshot_id, model))
    if family:
        caps = _apply(caps, "family", family_facts(model))
    caps = _apply(caps, "server", _clean(discovered or {}, strict=False))
    full = f"{provider_id}:{model}".lower()
    for pattern, facts in _overrides:
        if fnmatchcase(full, pattern) or fnmatchcase(model.lower(), pattern):
            caps = _apply(caps, "override", facts)
    return caps


def override(pattern: str, **facts: Any) -> None:
    """Tell the registry what a model can do; ``pattern`` globs ``provider:model`` or ``model``.

    >>> override("llamacpp:*", reasoning=True, preopened=True)
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise ConfigError("override() needs a pattern like 'ollama:qwen3*' or 'my-model'.")
    _overrides.append((pattern.strip().lower(), _clean(facts, strict=True)))


def clear_overrides() -> None:
    """Forget every :func:`override`."""
    _overrides.clear()


def family_facts(model: str) -> dict[str, Any]:
    """The family rule's facts for a local model name (empty when no rule matches)."""
    name = model.strip().rstrip("/").rsplit("/", 1)[-1]
    for regex, facts in _COMPILED:
        if regex.search(name):
            return dict(facts)
    return {}


@cache
def snapshot() -> dict[str, Any]:
    text = resources.files("reasoning_nb").joinpath("data/capabilities.json").read_text("utf-8")
    return json.loads(text)


def snapshot_as_of() -> str:
    """The day the shipped models.dev data was taken (YYYY-MM-DD): how old its facts are."""
    return snapshot()["as_of"]


def _snapshot_facts(provider: str | None, model: str) -> dict[str, Any]:
    table = snapshot()["providers"].get(provider or "", {})
    entry = _find(table, model)
    if entry is None:
        return {}
    facts: dict[str, Any] = {
        key: entry[key]
        for key in ("reasoning", "budget_min", "budget_max", "max_output", "temperature", "family")
        if key in entry
    }
    if "efforts" in entry:
        facts["efforts"] = tuple(entry["efforts"])
    # Only a positive sign is trusted: Anthropic has no toggle but thinking is opt-in anyway.
    if entry.get("toggle") or "none" in entry.get("efforts", ()):
        facts["can_disable"] = True
    return facts


def _find(table: dict[str, Any], model: str) -> dict | None:
    name = model.strip()
    lowered = {key.lower(): value for key, value in table.items()}
    candidates = [name.lower()]
    if name.lower().startswith("models/"):  # Gemini's own spelling
        candidates.append(name[len("models/") :].lower())
    for cand in list(candidates):
        candidates.append(re.sub(r"[-:](cloud|latest)$", "", cand))  # Ollama cloud / :latest
        candidates.append(re.sub(r"-(\d{8}|\d{4}-\d{2}-\d{2})$", "", cand))  # dated snapshots
    for cand in candidates:
        if cand in lowered:
            return lowered[cand]
    if "/" not in name:  # LM Studio / OpenRouter ids carry an org prefix we may not have
        hits = [v for k, v in lowered.items() if k.rsplit("/", 1)[-1] == name.lower()]
        if len(hits) == 1:
            return hits[0]
    return None


def _clean(facts: dict[str, Any], *, strict: bool) -> dict[str, Any]:
    unknown = set(facts) - FIELDS
    if unknown and strict:
        raise ConfigError(
            f"Unknown capability field(s) {', '.join(sorted(unknown))}; "
            f"use: {', '.join(sorted(FIELDS))}."
        )
    out = {k: v for k, v in facts.items() if k in FIELDS and v is not None}
    if "efforts" in out:
        out["efforts"] = tuple(str(e).lower() for e in out["efforts"])
    return out


def _apply(caps: Capabilities, source: str, facts: dict[str, Any]) -> Capabilities:
    facts = {k: v for k, v in facts.items() if k in FIELDS and v is not None}
    if not facts:
        return caps
    return replace(caps, **facts, sources=(*caps.sources, source))
