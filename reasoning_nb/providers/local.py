"""``local:``: the embedded demo server (``llama-server`` + SmolLM2-135M from PyPI).

One server per process (per kernel), started on first use on a free loopback port, reused by
every later call, and stopped when the process ends — even on SIGKILL, through the kernel's
parent-death signal. It speaks Chat Completions; what differs is how reasoning is shaped.

A run that goes on from a point in the reasoning (``providers/resume.py``) is a raw completion of
the rendered prompt and the prefix, under the same grammar: the rest of the think block, the
closing tag, the answer.

SmolLM2 is not a reasoning model, and with a plain token budget it often stops inside the think
block, leaving no answer. A GBNF grammar shapes the output instead: a think block of a length
set by the preset, the closing tag, then a bounded answer. The thinking is therefore shaped by
the server, not reasoned; the UI and docs/providers.md say so.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio

from ..core.tokens import CHARS_PER_TOKEN
from ..llama_server import choice as llama_choice
from ..llama_server.process import LlamaServer
from . import openai_chat, resume
from .base import EmbeddedServer, RequestContext
from .transport import HttpRequest

FRAMING = openai_chat.FRAMING
# Sent by this module, not the preset table: show them in the trace.
REASONING_KEYS = ("grammar", "max_tokens")
Parser = openai_chat.Parser
explain = openai_chat.explain
fallback = openai_chat.fallback

THINK_CHARS = {"low": 60, "medium": 200, "high": 500, "max": 1000}
ANSWER_CHARS = 400
CLOSE = "</think>\n\n"

# The thread that starts the server must outlive it: the parent-death signal fires when the
# creating *thread* exits, so servers are started from this long-lived worker.
_keeper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reasoning-nb-local")
_lock = threading.Lock()
_server: LlamaServer | None = None
_choice: llama_choice.Choice | None = None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    # (a private hook of the host, libc.so.6; checked on Linux 6.18, glibc 2.36: test_host)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def server() -> LlamaServer:
    """The running embedded server, started if needed (blocking; ~0.3–3 s the first time)."""
    global _server, _choice
    with _lock:
        if _server is None or not _server.running:
            start = llama_choice.start
            _server, _choice = _keeper.submit(start, preexec_fn=_die_with_parent).result()
        return _server


def describe() -> str:
    """Which ``llama-server`` ``local:`` runs and why; probes when none has started yet."""
    with _lock:
        if _server is not None and _server.running and _choice is not None:
            return str(_choice)
    return str(_keeper.submit(llama_choice.choose, preexec_fn=_die_with_parent).result())


def started() -> bool:
    """Whether the embedded server runs; else ``ensure_server`` starts it and loads its model."""
    return _server is not None and _server.running


async def ensure_server() -> str:
    """The base URL of the embedded server, starting it without blocking the event loop."""
    running = await anyio.to_thread.run_sync(server)
    return f"{running.url}/v1"


SERVER = EmbeddedServer(started, ensure_server)


def stop() -> None:
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None


TEXT = r"[\t\n\x20-\x3B\x3D-\x7E]"
"""A character of the demo's text: printable ASCII but ``<``, a tab or a newline. ASCII, so a
token holds at least one character and ``max_tokens`` can bound the text (an emoji or a Chinese
character may take several byte tokens: such answers were cut off as truncated)."""
VISIBLE = r"[\x21-\x3B\x3D-\x7E]"


def grammar(think_chars: int | None) -> str:
    """GBNF for ``<think>`` text of up to ``think_chars`` characters, then the answer.

    The answer opens with a visible character: an answer of only blank lines is no answer.
    """
    answer = f"answer ::= {VISIBLE} {TEXT}{{0,{ANSWER_CHARS - 1}}}"
    if think_chars is None:  # off: the template already closed the think block
        return f"root ::= answer\n{answer}"
    close = CLOSE.replace("\n", "\\n")
    return f'root ::= think "{close}" answer\nthink ::= {TEXT}{{8,{think_chars}}}\n{answer}'


def max_tokens(think_chars: int | None) -> int:
    """A cap the grammar always ends before, so a demo run is never cut off as truncated.

    A token of the grammar's ASCII text holds at least one character, so the grammar's longest
    text in characters, plus the end token, bounds its tokens. Text of digits, one token each,
    comes close: half that cap cut such runs off.
    """
    return (think_chars or 0) + len(CLOSE) + ANSWER_CHARS + 1


def build_request(ctx: RequestContext) -> HttpRequest:
    request = openai_chat.build_request(ctx)
    body: dict[str, Any] = request.body or {}
    plan = ctx.plan
    if plan.effort == "none":
        chars = None
    elif plan.budget_tokens is not None:
        chars = max(8, min(4000, plan.budget_tokens * CHARS_PER_TOKEN))
    else:
        chars = THINK_CHARS.get(plan.effort or "medium", THINK_CHARS["medium"])
    body["grammar"] = grammar(chars)
    body.pop("thinking_budget_tokens", None)  # the grammar bounds the block instead
    body.pop("reasoning_effort", None)
    body.setdefault(resume.tokens_field(request), max_tokens(chars))
    return request
