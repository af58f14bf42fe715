"""The clients users would pick instead of ``think()``, each reading the same stream to its end.

Used by ``benchmarks/stream.py --peers``. Each reader takes the server's base URL and returns how
many content pieces it saw, so a reader that silently dropped frames would show. A peer that is
not installed is skipped with a note (``pip install -r benchmarks/requirements.txt``).
"""

from __future__ import annotations

import importlib.util
import json
import os

import httpx

BODY = {"model": "bench", "messages": [{"role": "user", "content": "go"}], "stream": True}


def sync_floor(base: str, framing: str) -> int:
    """Plain sync httpx ``iter_lines`` + ``json.loads``: the least any client must do."""
    path = "/api/chat" if framing == "ndjson" else "/v1/chat/completions"
    lines = 0
    with (
        httpx.Client(timeout=60, trust_env=False) as client,
        client.stream("POST", base + path, json=BODY) as response,
    ):
        for line in response.iter_lines():
            if framing == "sse":
                if not line.startswith("data:") or line.endswith("[DONE]"):
                    continue
                line = line[5:]
            if line.strip():
                json.loads(line)
                lines += 1
    return lines


def ollama_client(base: str, framing: str) -> int:
    import ollama

    pieces = 0
    for part in ollama.Client(host=base).chat(
        model="qwen3", messages=BODY["messages"], stream=True, think=True
    ):
        message = part.message
        pieces += bool(message.thinking) + bool(message.content)
    return pieces


def openai_sdk(base: str, framing: str) -> int:
    import openai

    client = openai.OpenAI(base_url=base + "/v1", api_key="bench", max_retries=0)
    pieces = 0
    for chunk in client.chat.completions.create(
        model="bench", messages=BODY["messages"], stream=True
    ):
        for choice in chunk.choices:
            delta = choice.delta
            extra = getattr(delta, "model_extra", None) or {}
            pieces += bool(delta.content) + bool(extra.get("reasoning_content"))
    return pieces


def litellm_client(base: str, framing: str) -> int:
    # Its bundled price table, not a download at import (which retries for seconds offline).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    pieces = 0
    for chunk in litellm.completion(
        model="openai/bench", api_base=base + "/v1", api_key="bench",
        messages=BODY["messages"], stream=True,
    ):  # fmt: skip
        for choice in chunk.choices:
            delta = choice.delta
            pieces += bool(delta.content) + bool(getattr(delta, "reasoning_content", None))
    return pieces


# name -> (module that must be installed, the framings it speaks, reader)
PEERS = {
    "ollama client": ("ollama", ("ndjson",), ollama_client),
    "openai SDK": ("openai", ("sse",), openai_sdk),
    "LiteLLM": ("litellm", ("sse",), litellm_client),
}


def available(framing: str) -> tuple[dict, list[str]]:
    """The peers for ``framing`` that are installed, and notes for those that are not."""
    found, missing = {}, []
    for name, (module, framings, reader) in PEERS.items():
        if framing not in framings:
            continue
        if importlib.util.find_spec(module) is None:
            missing.append(f"{name} not installed (pip install -r benchmarks/requirements.txt)")
        else:
            found[name] = reader
    return found, missing
