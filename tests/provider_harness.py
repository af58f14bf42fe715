"""One provider under test over a real socket: the ``wire_server`` answers on the provider's
path, and the harness runs a model against it through the public ``think`` / ``astream``.

A test module names its provider once (``Provider(model, path, key)``) and then calls
``run(wire_server, ...)`` for the trace or ``events(wire_server, ...)`` for every event."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio
import wire_fixtures as wf
from wire_server import Reply, WireServer

from reasoning_nb import Done, ReasoningDelta, Reclassify, TextDelta, astream, think
from reasoning_nb.core.trace import Trace
from reasoning_nb.run import Run

PROMPT = "What is 17 × 23?"
CHAT = "/v1/chat/completions"


def serve_chat(server: WireServer, *answers: tuple[str, str]) -> None:
    """Answer the next Chat Completions requests with one (reasoning, answer) each, in order;
    the last one repeats."""
    server.route("POST", CHAT, *(Reply.sse(wf.chat_sse(*answer)) for answer in answers))


def n_tokens(*texts: str) -> int:
    """The tokens ``wire_fixtures`` cuts these texts into: the usage a stream of them reports."""
    return sum(len(wf.tokens(t)) for t in texts)


def usage(input_tokens=None, output_tokens=None, reasoning_tokens=None) -> dict:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "reasoning_tokens": reasoning_tokens,
    }


@dataclass(frozen=True)
class Provider:
    """How a test module reaches its provider: the default model, the path its requests go to,
    and the key sent when a test does not pass ``api_key`` itself (None: none is sent)."""

    model: str
    path: str
    key: str | None = None
    prompt: str = PROMPT
    framing: str = "sse"
    """How its streams are framed: ``sse`` or ``ndjson`` (Ollama)."""

    def options(self, server: WireServer, model: str | None, kw: dict[str, Any]) -> dict:
        if self.key is not None:
            kw.setdefault("api_key", self.key)
        return {"model": model or self.model, "base_url": server.url, **kw}

    def run(self, server: WireServer, model: str | None = None, **kw: Any) -> Trace:
        """The trace of one ``think`` call."""
        return think(self.prompt, **self.options(server, model, kw))

    def events(self, server: WireServer, model: str | None = None, **kw: Any) -> list:
        """Every event of one ``astream`` call, ``Done`` last."""
        options = self.options(server, model, kw)

        async def main() -> list:
            return [e async for e in astream(self.prompt, **options)]

        return anyio.run(main)

    def run_with(self, server: WireServer, model: str | None = None, **kw: Any) -> Trace:
        """The trace of a ``Run`` made with options ``think`` does not take (``history``)."""
        options = self.options(server, model, kw)

        async def main() -> Trace:
            return [e async for e in Run(self.prompt, **options).events()][-1].trace

        return anyio.run(main)

    def sent(self, server: WireServer, frames: list[str], model: str, preset: str, budget):
        """Serve ``frames`` and run ``model`` once with ``preset`` and ``budget``: the trace, and
        the JSON body the server received."""
        self.serve(server, frames)
        trace = self.run(server, model, preset=preset, budget_tokens=budget)
        return trace, server.last.json

    def check_shape(self, server: WireServer, frames, seed, max_piece, expected, state, **kw):
        """Stream ``frames`` cut at random (seeded) places: one Done, a complete trace holding
        exactly ``expected`` (reasoning, answer, usage), ``state`` kept to replay (see
        ``check_state``), and one request that left no key in the trace. Returns the events."""
        self.serve(server, frames, seed, max_piece)
        events = self.events(server, **kw)
        trace = check_complete(check_one_done(events), *expected)
        check_state(events, trace, self.model.split(":")[0], state)
        self.check_one_request(server, trace)
        return events

    def check_one_request(self, server: WireServer, trace: Trace) -> None:
        """One request went to the provider's path, and its key is nowhere in the trace."""
        assert len(server.requests_to(self.path)) == 1
        if self.key is not None:
            assert self.key not in json.dumps(trace.to_dict())

    def serve(
        self,
        server: WireServer,
        frames: list[str],
        seed: int = 1,
        max_piece: int = 48,
        *,
        path: str | None = None,
    ) -> None:
        """Answer the next request with ``frames``, cut at random (seeded) places."""
        framed = Reply.ndjson if self.framing == "ndjson" else Reply.sse
        reply = framed(frames, chunking="random", seed=seed, max_piece=max_piece)
        server.route("POST", path or self.path, reply)


def check_complete(trace: Trace, reasoning: str, answer: str, expected_usage: dict) -> Trace:
    """The run completed and stopped without a warning, holding exactly these texts and counts."""
    assert (trace.reasoning, trace.answer) == (reasoning, answer)
    assert trace.usage == expected_usage
    assert (trace.status, trace.finish_reason, trace.warnings) == ("complete", "stop", [])
    return trace


def check_one_done(events: list) -> Trace:
    """The stream ends with its one Done: the trace."""
    assert isinstance(events[-1], Done) and not any(isinstance(e, Done) for e in events[:-1])
    return events[-1].trace


def check_state(events: list, trace: Trace, name: str, state: dict | None) -> None:
    """The trace keeps ``state`` to replay under the provider's ``name``; None: nothing to
    replay, and no reasoning streamed."""
    if state is None:
        assert trace.provider_state == {}
        assert not any(isinstance(e, ReasoningDelta) for e in events)
    else:
        assert trace.provider_state[name] == state


def check_warning(trace: Trace, warning: str | None) -> None:
    """No warning when ``warning`` is None, else exactly one, that says it."""
    if warning is None:
        assert trace.warnings == []
    else:
        assert len(trace.warnings) == 1 and warning in trace.warnings[0]


def check_length_limit(
    provider: Provider, server: WireServer, frames: list[str], seed: int, texts: tuple[str, str]
) -> None:
    """A stream that stops at the token limit keeps its ``texts`` (reasoning, answer), and
    reads as truncated."""
    provider.serve(server, frames, seed)
    trace = provider.run(server)
    assert (trace.reasoning, trace.answer) == texts
    assert trace.status == "truncated" and trace.finish_reason == "length"


def check_reasoning_first(events: list) -> None:
    """All reasoning streamed before the first piece of the answer."""
    kinds = [type(e) for e in events]
    last_reasoning = max(i for i, k in enumerate(kinds) if k is ReasoningDelta)
    assert last_reasoning < kinds.index(TextDelta), "reasoning must come before the answer"


def check_events(
    events: list, reasoning: str, answer: str, *, tags: tuple[str, ...], single_block: bool = True
) -> Trace:
    """The stream ends with one Done; its trace holds exactly ``reasoning`` and ``answer``, with
    none of ``tags``; in a single block, all reasoning streams before the answer. Returns the
    trace."""
    trace = check_one_done(events)
    assert trace.reasoning == reasoning
    assert trace.answer == answer
    for tag in tags:
        assert tag not in trace.answer and tag not in trace.reasoning
    kinds = [type(e) for e in events]
    if single_block:
        assert Reclassify not in kinds
        check_reasoning_first(events)
    return trace
