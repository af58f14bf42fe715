"""What a run says before its first token (issue 13, item 9): a cold model load must not read as
a network problem. Over a real socket, a server that holds its answer makes the run say
``loading model…`` (Ollama, llama.cpp, LM Studio) or ``waiting for the first token…`` (the
others) while it holds it; a server that cannot be reached never does. Then how the live widget
(fake clock) and the terminal show it."""

from __future__ import annotations

import html
import io
import re
import threading

import pytest
import wire_fixtures as wf
from test_faults import CHAT, OLLAMA, PROMPT
from test_widget import feed, make_widget, new_trace, wire  # noqa: F401 - `wire` is a fixture
from wire_server import Reply

from reasoning_nb import ProviderError, ReasoningDelta, TextDelta, Waiting, astream
from reasoning_nb.views.terminal import TerminalView

pytestmark = pytest.mark.usefixtures("no_provider_env", "fresh_discovery")
LOADING, FIRST_TOKEN = "loading model…", "waiting for the first token…"
# (Ollama: the wire server has no /api/ps unless a test routes one, so its models read as not
# in memory, as an older Ollama's do.)


class Holding:
    """A reply the server holds back, as a model load does, until the client said it waits."""

    def __init__(self, reply: Reply) -> None:
        self.reply, self.release, self.answered = reply, threading.Event(), threading.Event()

    def __call__(self, _recorded) -> Reply:
        self.release.wait(10)
        self.answered.set()
        return self.reply


async def said(model: str, base_url: str, holding: Holding | None = None, **kw) -> list:
    """The run's events up to its first text, as ``(kind, text, answered)``: ``answered`` tells
    whether the server had answered when the event came; a ``Waiting`` lets the server go on."""
    seen = []
    async for event in astream(PROMPT, model=model, base_url=base_url, **kw):
        answered = holding is not None and holding.answered.is_set()
        seen.append((event.kind, event.text if isinstance(event, Waiting) else "", answered))
        if isinstance(event, Waiting) and holding is not None:
            holding.release.set()
        if isinstance(event, (ReasoningDelta, TextDelta)):
            break
    return seen


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("model", "path", "reply"),
    [
        ("ollama:qwen3", OLLAMA, Reply.ndjson(wf.ollama_chat("Hmm.", "391"))),
        ("llamacpp:m", CHAT, Reply.sse(wf.llamacpp_sse("Hmm.", "391"))),
        ("lmstudio:m", CHAT, Reply.sse(wf.llamacpp_sse("Hmm.", "391"))),
    ],
)
async def test_a_server_that_loads_models_reads_loading_while_it_holds_the_request(
    wire_server, model, path, reply
):
    holding = Holding(reply)
    wire_server.route("POST", path, holding)
    seen = await said(model, wire_server.url, holding)
    assert seen == [
        ("waiting", LOADING, False),  # said while the server held its answer
        ("waiting", FIRST_TOKEN, True),  # it answers: the model is loaded
        ("reasoning", "", True),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("running", "first"),
    [
        (["qwen3:latest"], FIRST_TOKEN),  # in memory: the wait is the prompt, not a load
        (["qwen3"], FIRST_TOKEN),  # (a name may leave out the default tag)
        (["deepseek-r1:latest"], LOADING),  # another model in memory: this one loads
        ([], LOADING),
    ],
)
async def test_ollama_says_loading_only_for_a_model_not_in_memory(wire_server, running, first):
    """Ollama answers its headers with the first token, so while a warm model reads a long
    prompt the request is held as during a load: its /api/ps tells the two apart."""
    holding = Holding(Reply.ndjson(wf.ollama_chat("Hmm.", "391")))
    wire_server.route("POST", OLLAMA, holding)
    ps = {"models": [{"name": name, "model": name, "size": 1} for name in running]}
    wire_server.route("GET", "/api/ps", Reply.json(ps))
    seen = await said("ollama:qwen3", wire_server.url, holding)
    assert seen[0] == ("waiting", first, False)
    assert seen[-1] == ("reasoning", "", True)
    assert len(seen) == (2 if first == FIRST_TOKEN else 3)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("model", "options"), [("vllm:m", {}), ("deepseek:deepseek-reasoner", {"api_key": "sk-t"})]
)
async def test_other_servers_read_waiting_for_the_first_token(wire_server, model, options):
    holding = Holding(Reply.sse(wf.chat_sse("Hmm.", "391")))
    wire_server.route("POST", CHAT, holding)
    seen = await said(model, wire_server.url, holding, **options)
    assert seen == [("waiting", FIRST_TOKEN, False), ("reasoning", "", True)]


@pytest.mark.anyio
async def test_a_server_that_cannot_be_reached_is_still_connecting(fast_backoff, closed_port):
    seen = []
    with pytest.raises(ProviderError, match="Could not connect"):
        async for event in astream(
            PROMPT, model="ollama:qwen3", base_url=f"http://127.0.0.1:{closed_port}"
        ):
            seen.append(event.kind)
    assert "waiting" not in seen


def status_text(widget) -> str:
    # (strip: the subject's line is kept, blank, while a run lasts)
    return html.unescape(re.sub(r"<[^>]*>", "", widget.status.value)).strip()


def test_the_live_status_says_loading_model_with_its_time(wire):  # noqa: F811
    w = make_widget(wire)
    trace = new_trace(wire)
    w.start_run(trace)
    assert status_text(w) == "connecting… · <0.1 s"
    wire.clock.t += 0.2  # the server has the request: it loads the model (the page counts on)
    w.on_event(Waiting(LOADING))
    assert status_text(w) == "loading model… · 0.2 s"
    wire.clock.t += 8.9
    w.on_event(Waiting(FIRST_TOKEN))
    assert status_text(w) == "waiting for the first token… · 9.1 s"
    wire.clock.t += 0.5
    feed(w, trace, [ReasoningDelta("hmm " * 10)])
    assert status_text(w).startswith("thinking… · 9.6 s")


def test_the_terminal_shows_the_wait_on_one_line_that_gives_way_to_the_text():
    out = io.StringIO()
    view = TerminalView(out, color=True)
    view.on_event(Waiting(LOADING))
    view.on_event(Waiting(FIRST_TOKEN))
    view.on_event(ReasoningDelta("Hmm."))
    shown = out.getvalue()
    assert shown.startswith(f"\r\x1b[K\x1b[2m{LOADING}\x1b[0m\r\x1b[K\x1b[2m{FIRST_TOKEN}")
    assert shown.endswith(f"{FIRST_TOKEN}\x1b[0m\r\x1b[K\x1b[2mThinking…\nHmm.")
    plain = io.StringIO()  # not a terminal (a log, a notebook's stdout): nothing to erase
    view = TerminalView(plain, color=False)
    view.on_event(Waiting(LOADING))
    view.on_event(ReasoningDelta("Hmm."))
    assert plain.getvalue() == "Thinking…\nHmm."
