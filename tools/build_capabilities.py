"""Build ``reasoning_nb/data/capabilities.json`` from the models.dev reasoning snapshot.

Usage (from the repo root)::

    python tools/build_capabilities.py [PATH/TO/models-dev-reasoning.json]

The default input is ``../shared/data/models-dev-reasoning.json``. Only the providers that
the provider profiles name (``snapshot_id`` in ``reasoning_nb/providers/profiles``), and only
the fields ``reasoning_nb.core.capabilities`` reads, are kept; the output has one model per
line so a refresh reads well as a diff. The models.dev license travels with
it as ``reasoning_nb/data/MODELS-DEV-LICENSE`` (MIT asks for the notice to be kept).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT = ROOT.parent / "shared" / "data" / "models-dev-reasoning.json"
OUT_DIR = ROOT / "reasoning_nb" / "data"

# models.dev provider ids that our provider profiles name (their ``snapshot_id``).
KEEP_PROVIDERS = (
    "anthropic",
    "deepseek",
    "google",
    "lmstudio",
    "ollama-cloud",
    "openai",
    "openrouter",
)


def slim(entry: dict) -> dict:
    """The fields we use from one models.dev entry; absent facts stay absent (unknown)."""
    out: dict = {}
    options = entry.get("reasoning_options") or []
    reasoning = entry.get("reasoning")
    if reasoning is None and options:
        # Partial entries carry only reasoning_options; having options means it reasons.
        reasoning = True
    if reasoning is not None:
        out["reasoning"] = bool(reasoning)
    for option in options:
        kind = option.get("type")
        if kind == "effort" and option.get("values"):
            out["efforts"] = list(option["values"])
        elif kind == "budget_tokens":
            if option.get("min") is not None:
                out["budget_min"] = int(option["min"])
            if option.get("max") is not None:
                out["budget_max"] = int(option["max"])
        elif kind == "toggle":
            out["toggle"] = True
    output = (entry.get("limit") or {}).get("output")
    if isinstance(output, int) and output > 0:
        out["max_output"] = output
    if entry.get("temperature") is not None:
        out["temperature"] = bool(entry["temperature"])
    if entry.get("family"):
        out["family"] = entry["family"]
    return out


def build(source: dict) -> dict:
    providers = {}
    for provider in KEEP_PROVIDERS:
        models = source["providers"].get(provider, {})
        slimmed = {model: slim(entry) for model, entry in sorted(models.items())}
        providers[provider] = {model: entry for model, entry in slimmed.items() if entry}
    return {
        "source": source.get("source", "models.dev"),
        "source_commit": source.get("source_commit"),
        "license": "MIT License, Copyright (c) 2025 models.dev; see MODELS-DEV-LICENSE",
        "generated_by": "tools/build_capabilities.py",
        "providers": providers,
    }


def dumps(data: dict) -> str:
    """JSON with one model per line."""
    head = {k: v for k, v in data.items() if k != "providers"}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    lines.append('  "providers": {')
    providers = list(data["providers"].items())
    for p_index, (provider, models) in enumerate(providers):
        lines.append(f"    {json.dumps(provider)}: {{")
        items = list(models.items())
        for m_index, (model, entry) in enumerate(items):
            comma = "," if m_index < len(items) - 1 else ""
            lines.append(f"      {json.dumps(model)}: {json.dumps(entry, sort_keys=True)}{comma}")
        lines.append("    }" + ("," if p_index < len(providers) - 1 else ""))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", type=Path, default=DEFAULT_INPUT)
    args = parser.parse_args(argv)
    source = json.loads(args.input.read_text(encoding="utf-8"))
    data = build(source)
    text = dumps(data)
    assert json.loads(text) == data
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "capabilities.json").write_text(text, encoding="utf-8")
    license_file = args.input.parent / "models-dev-LICENSE"
    shutil.copyfile(license_file, OUT_DIR / "MODELS-DEV-LICENSE")
    count = sum(len(models) for models in data["providers"].values())
    print(f"wrote {count} models from {args.input} to {OUT_DIR}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
