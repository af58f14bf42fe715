"""Loop detection on real loops: SmolLM2 (the embedded demo's model) on its real llama-server,
asked without the demo's grammar, at temperature 0 and with its end token ignored (so it cannot
stop before it repeats: where it stops on its own differs from one CPU's arithmetic to
another's), repeats itself within a few hundred tokens. Prints how long after the loop starts
the notice comes (characters and tokens)."""

from __future__ import annotations

import re

import httpx
import pytest
from needs import unavailable

from reasoning_nb import think
from reasoning_nb.core.loops import LOOP_NOTICE, WINDOW
from reasoning_nb.errors import ConfigError
from reasoning_nb.llama_server import choice as llama_choice
from reasoning_nb.llama_server.process import INSTALL_HINT
from reasoning_nb.providers import discovery

pytestmark = pytest.mark.real_server

# Prompts SmolLM2-135M loops on at temperature 0 (measured: a sentence, then a paragraph pair)
PROMPTS = ("Write a long story about a cat.", "Why is the sky blue?")


@pytest.fixture(scope="module")
def server_url():
    if not discovery.embedded_installed():
        unavailable(f"the embedded demo's model is not installed ({INSTALL_HINT})")
    try:  # the binary local: picks, with the end-of-text token banned
        server, _choice = llama_choice.start(extra_args=("--ignore-eos",))
    except ConfigError as exc:  # nothing runs here, and nothing was built
        unavailable(str(exc))
    yield server.url
    server.stop()


def loop_start(text: str) -> int:
    """Where the loop's first copy begins, in normalised text that ends inside the loop: the
    stretch of windows at the end seen before starts at ``r``; its window's first copy is where
    the repeating began."""
    first: dict[str, int] = {}
    run_start = None
    for end in range(WINDOW, len(text) + 1):
        window = text[end - WINDOW : end]
        if window in first:
            run_start = end - WINDOW if run_start is None else run_start
        else:
            first[window], run_start = end - WINDOW, None
    assert run_start is not None, "the text does not end in a repeat"
    return first[text[run_start : run_start + WINDOW]]


def test_real_smollm2_loops_are_caught_soon_and_stopped(server_url):
    delays = []
    for prompt in PROMPTS:
        trace = think(
            prompt,
            model="llamacpp:smollm2",
            base_url=server_url,
            temperature=0,
            max_tokens=1_500,
            stop_on_loop=True,
        )
        assert trace.status == "cancelled", f"no loop found in {trace.reasoning!r}"
        assert any(w.startswith(LOOP_NOTICE) for w in trace.warnings)
        text = re.sub(r"\s+", " ", trace.reasoning.lower())
        start = loop_start(text)
        chars = len(text) - start
        tokens = httpx.post(f"{server_url}/tokenize", json={"content": trace.reasoning}).json()
        per_char = len(tokens["tokens"]) / len(trace.reasoning)
        delays.append((prompt, start, len(text), chars, round(chars * per_char)))
    for prompt, start, at, chars, tokens in delays:
        print(
            f"\nloop in {prompt!r}: starts at char {start}, caught at {at}: "
            f"{chars} chars (~{tokens} tokens) after it began"
        )
        assert chars <= 2_000  # a third copy of a paragraph of up to ~600 chars
