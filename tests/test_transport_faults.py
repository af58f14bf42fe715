"""Answers that are not a model stream, over real sockets: a redirect, a 204, a web page, an
nginx error page, a long Retry-After, a reset before any byte, an untrusted TLS certificate, one
endless line, and a server that goes silent before or after its first byte.

Each must end as one ``ProviderError`` that names what happened and what to do, never as an
empty ``truncated`` run; only what nothing of the answer has reached is retried.
"""

from __future__ import annotations

import pytest
import wire_fixtures as wf
from scaling import assert_linear
from wire_server import Reply

from reasoning_nb import ProviderError, think
from reasoning_nb.config import defaults
from reasoning_nb.providers.transport import Framer, Transport

CHAT = "/v1/chat/completions"
OLLAMA = "/api/chat"
KEY = "sk-test-0123456789-secret"
REASONING, ANSWER = "17 × 23 = 340 + 51 = 391.", "391"

# model -> the path its request goes to (base_url = the wire server)
STREAMING = {
    "llamacpp:qwen3": CHAT,
    "vllm:qwen3": CHAT,
    "openai-compatible:qwen3": CHAT,
    "openai:gpt-5.1": "/v1/responses",
    "anthropic:claude-sonnet-4-5": "/v1/messages",
    "gemini:gemini-2.5-flash": "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    "ollama:qwen3": OLLAMA,
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("REASONING_NB_MODEL", "OLLAMA_HOST", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(defaults, "model", None)
    monkeypatch.setattr(Transport, "_backoff", lambda self, attempt: 0.001)


def ask(server, model: str = "llamacpp:qwen3", **kw):
    return think("What is 17 × 23?", model=model, base_url=server.url, api_key=KEY, **kw)


def failure(server, model: str = "llamacpp:qwen3", **kw) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        ask(server, model, **kw)
    err = info.value
    assert KEY not in err.message and "\n" not in err.message
    return err


# -- 15: one endless line --------------------------------------------------------------------------


def test_one_long_line_is_read_in_linear_time():
    piece = b"x" * 4096

    def read_one_line(pieces: int) -> None:
        framer = Framer("ndjson")
        for _ in range(pieces):
            assert framer.feed(piece) == []
        [(line, _event)] = framer.feed(b"\n")
        assert len(line) == pieces * len(piece)

    assert_linear(read_one_line, 256)


def test_a_line_past_the_frame_cap_ends_the_run_keeping_what_arrived(wire_server):
    frames = wf.ollama_chat(REASONING, ANSWER)[:-2]  # the reasoning, then a runaway line
    frames.append('{"message": {"content": "' + "x" * 17 * 2**20)  # the cap is 16 MiB
    wire_server.route(
        "POST", OLLAMA, Reply.ndjson(frames, chunking="random", seed=1, max_piece=65536)
    )
    err = failure(wire_server, "ollama:qwen3")
    assert "MiB without a line end" in err.message
    assert err.trace is not None and err.trace.reasoning == REASONING
