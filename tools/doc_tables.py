"""The docs' tables generated from the code (tests/test_docs.py checks they are current).

python tools/doc_tables.py    # rewrite the tables between their markers in docs/
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from reasoning_nb.core import presets
from reasoning_nb.notebook.magic import FLAGS
from reasoning_nb.providers.catalog import PROVIDERS

# One row per provider flavour; hosted flavours whose row depends on the model get an example.
EXAMPLES = [
    ("ollama", "ollama", "qwen3"),
    ("ollama", "ollama", "gpt-oss:20b"),
    ("llamacpp", "llamacpp", "default"),
    ("lmstudio", "lmstudio", "qwen3-8b"),
    ("vllm", "vllm", "Qwen/Qwen3-8B"),
    ("openai-compatible", "openai-compatible", "any"),
    ("openai", "openai", "gpt-5.1"),
    ("anthropic", "anthropic", "claude-sonnet-4-5"),
    ("anthropic", "anthropic", "claude-opus-4-7"),
    ("anthropic", "anthropic", "claude-mythos-preview"),
    ("gemini", "gemini", "gemini-2.5-flash"),
    ("gemini", "gemini", "gemini-3-pro-preview"),
    ("openrouter", "openrouter", "anthropic/claude-sonnet-4.5"),
    ("deepseek", "deepseek", "deepseek-v4-pro"),
]
COLUMNS = ("off", "low", "medium", "high", "max")


def _cell(plan: presets.ReasoningPlan) -> str:
    text = json.dumps(plan.fields, separators=(",", ":")) if plan.fields else "—"
    text = text.replace("|", "\\|")
    return f"`{text}`" + (" ⚠" if plan.warnings else "")


def preset_table() -> str:
    lines = [
        "| model | " + " | ".join(COLUMNS) + " | `--budget 4096` |",
        "| --- " * (len(COLUMNS) + 2) + "|",
    ]
    for provider, _flavor, model in EXAMPLES:
        profile = PROVIDERS[provider]
        caps = profile.capabilities(model)
        cells = [_cell(profile.plan(p, None, caps)) for p in COLUMNS]
        cells.append(_cell(profile.plan("auto", 4096, caps)))
        lines.append(f"| `{provider}:{model}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def flag_table() -> str:
    """The flags of ``%%think``, from their one declaration (``reasoning_nb.options``)."""
    return "\n".join(["| flag | meaning |", "| --- | --- |", *(flag.row() for flag in FLAGS)])


DOCS = Path(__file__).resolve().parent.parent / "docs"
TABLES = {"preset-table": ("providers.md", preset_table), "flag-table": ("notebook.md", flag_table)}


def block(text: str, name: str) -> re.Match | None:
    """The table between ``<!-- name:start -->`` and ``<!-- name:end -->``."""
    return re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)


if __name__ == "__main__":
    for name, (page, table) in TABLES.items():
        path = DOCS / page
        text = path.read_text()
        found = block(text, name)
        assert found, f"docs/{page} lost its {name} markers"
        path.write_text(text[: found.start(1)] + table() + text[found.end(1) :])
