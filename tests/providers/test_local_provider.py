"""``local:`` — the embedded demo server: started on first use, reused, shaped by a grammar,
and gone when the process (the kernel) ends."""

from __future__ import annotations

import os
import re
import time

import anyio
import pytest
from kernel_session import KernelSession
from needs import unavailable

from reasoning_nb import ConfigError, Waiting, astream, think
from reasoning_nb.llama_server.process import INSTALL_HINT
from reasoning_nb.providers import discovery, local

pytestmark = pytest.mark.real_server


@pytest.fixture(scope="module", autouse=True)
def embedded():
    if not discovery.embedded_installed():
        unavailable(f"the embedded demo's model is not installed ({INSTALL_HINT})")
    try:
        local.server()
    except ConfigError as exc:  # nothing runs here, and nothing was built
        unavailable(str(exc))
    yield
    local.stop()


def test_auto_shows_reasoning_then_answer_and_says_it_is_a_demo():
    trace = think("Why is the sky blue?", model="local:smollm2")
    assert trace.status == "complete"
    assert trace.reasoning.strip() and trace.answer.strip()
    assert "<think>" not in trace.answer and "</think>" not in trace.answer
    assert any("demo" in w for w in trace.warnings)
    assert f"think ::= {local.TEXT}{{8,200}}" in trace.request["grammar"]  # auto = medium


def test_presets_set_the_think_length_and_off_switches_it_off():
    low = think("Name a colour.", model="local:smollm2", preset="low")
    high = think("Name a colour.", model="local:smollm2", preset="high")
    off = think("Name a colour.", model="local:smollm2", preset="off")
    assert 0 < len(low.reasoning) <= 60 < len(high.reasoning) <= 500
    assert off.reasoning == "" and off.answer.strip()
    assert off.request["chat_template_kwargs"] == {"enable_thinking": False}
    budget = think("Name a colour.", model="local:smollm2", budget_tokens=10)
    assert f"think ::= {local.TEXT}{{8,40}}" in budget.request["grammar"]


def _longest_text(grammar: str) -> int:
    """The most characters a grammar of literals, classes and ``{m,n}`` repeats can produce."""
    rules = [line.split("::=", 1)[1] for line in grammar.splitlines()]
    body = " ".join(rules)
    repeats = sum(int(most) for most in re.findall(r"\]\{\d+,(\d+)\}", body))
    single = len(re.findall(r"\](?!\{)", body))
    quoted = re.findall(r'"(.*?)"', body)
    literals = sum(len(text.encode().decode("unicode_escape")) for text in quoted)
    return repeats + single + literals


@pytest.mark.parametrize("preset", ["off", "low", "medium", "high", "max"])
def test_the_token_cap_never_cuts_off_the_grammar(preset):
    # Text of digits is one token a character: a cap of half the grammar's text truncated it.
    trace = think("Write the digits 0 to 9, ten times.", model="local:smollm2", preset=preset)
    assert trace.request["max_tokens"] > _longest_text(trace.request["grammar"])
    assert trace.status == "complete"
    assert trace.answer.strip() and trace.answer == trace.answer.lstrip()  # opens with text


@pytest.mark.parametrize("preset", ["off", "low"])
def test_text_that_would_take_byte_tokens_is_kept_out(preset):
    """Emoji and Chinese characters can take several tokens each, so the cap could cut such an
    answer off: the grammar keeps the demo's text to ASCII (this prompt ended truncated 9 times
    in 16 before)."""
    prompt = "Write five emoji ☕🚀🌍 and the Chinese characters 你好世界."
    for _ in range(3):
        trace = think(prompt, model="local:smollm2", preset=preset)
        assert trace.status == "complete" and trace.answer.strip()
        assert (trace.reasoning + trace.answer).isascii()


def test_one_server_is_reused():
    first = local.server()
    think("Hi", model="local:smollm2", preset="low")
    assert local.server() is first and first.running


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is gone for our purposes
        return stat.read().split()[2] != "Z"


@pytest.mark.kernel
@pytest.mark.parametrize("now", [False, True], ids=["shutdown", "kill"])
def test_server_is_gone_after_the_kernel_shuts_down(now):
    kernel = KernelSession()
    try:
        kernel.run("%load_ext reasoning_nb")
        kernel.run("%%think --model local:smollm2 --preset low\nHi")
        pid = int(
            kernel.value(
                "__import__('reasoning_nb.providers.local').providers.local._server.process.pid"
            )
        )
        assert _alive(pid)
    finally:
        kernel.kc.stop_channels()
        kernel.km.shutdown_kernel(now=now)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the embedded llama-server outlived its kernel"


def test_a_proxy_in_the_environment_never_sees_the_loopback_server(monkeypatch):
    """Behind a corporate proxy the health probe went to the proxy and spun for 60 s."""
    local.stop()
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # discard port: nothing answers
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    server = local.server()
    assert server.running
    trace = think("Hi", model="local:smollm2", preset="low")
    assert trace.status == "complete"


def test_a_first_run_reads_loading_model_while_the_server_starts():
    async def waits() -> list[tuple[str, bool]]:
        said = []
        async for event in astream("Hi", model="local:smollm2", preset="low"):
            if isinstance(event, Waiting):
                said.append((event.text, local.started()))
        return said

    local.stop()
    assert anyio.run(waits) == [("loading model…", False), ("waiting for the first token…", True)]
    assert anyio.run(waits) == [("waiting for the first token…", True)]  # it runs: no load
