"""The wire formats of 2026 (issue 25), items 1, 8 and 10, over a real socket: vLLM's two names
for reasoning and its ``repetition`` finish, Qwen 3.5–3.8's ``preserve_thinking`` under
``--chat``, and Gemma 4's inline channel tags. Each test names the source of the shape it
serves."""

from __future__ import annotations

from typing import Any

import jinja2
import pytest
import wire_fixtures as wf
from provider_harness import Provider
from shell_cell import think_cell as cell
from wire_server import Reply

from reasoning_nb import ReasoningDelta, TextDelta
from reasoning_nb.core import rescue
from reasoning_nb.core.loops import LOOP_NOTICE
from reasoning_nb.core.tokens import estimate
from reasoning_nb.notebook.runners import METADATA_KEY
from reasoning_nb.store import db as store

pytestmark = pytest.mark.usefixtures("no_provider_env")

PATH = "/v1/chat/completions"
REASONING = "17 × 20 = 340, and 17 × 3 = 51; “340 + 51” is 391. Café ☕."
ANSWER = "It is **391**."
VLLM = Provider("vllm:Qwen/Qwen3.6-27B", PATH)


def chunk(delta: dict, finish: str | None = None, **choice: Any) -> str:
    """One ``chat.completion.chunk`` as vLLM streams it."""
    body = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish, **choice}
    obj = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return wf.sse({**obj, "choices": [body]})


def stream(reasoning: list[dict], answer: str, finish: str = "stop", **choice: Any) -> list[str]:
    """Reasoning deltas as given, then the answer's, the finish chunk and ``[DONE]``."""
    deltas = [*reasoning, *({"content": p} for p in wf.tokens(answer))]
    deltas[0] = {"role": "assistant", **deltas[0]}
    return [*(chunk(d) for d in deltas), chunk({}, finish, **choice), wf.SSE_DONE]


# -- item 1: `reasoning` or `reasoning_content`, shown once ------------------------------------

PIECES = wf.tokens(REASONING)


def both(text: str, other: str | None, i: int) -> dict:
    """Both names, ``text`` under one of them and ``other`` under the other, by turns."""
    named, unnamed = ("reasoning", "reasoning_content")[:: 1 if i % 2 else -1]
    return {named: text, unnamed: other}


FIELDS = {
    # vLLM since PR #27752 (merged 2025-11), and the only name since PR #33402 (2026-01-30)
    "reasoning": [{"reasoning": p} for p in PIECES],
    # vLLM before #27752; llama.cpp, DeepSeek and mlx servers still
    "reasoning_content": [{"reasoning_content": p} for p in PIECES],
    # #27752 kept the old name as an alias: both names, the same text
    "both-same-text": [{"reasoning": p, "reasoning_content": p} for p in PIECES],
    # one of the two empty, or null, turn about
    "both-one-empty": [both(p, "", i) for i, p in enumerate(PIECES)],
    "both-one-null": [both(p, None, i) for i, p in enumerate(PIECES)],
}


@pytest.mark.parametrize("chunking", ["random", "bytes"])
@pytest.mark.parametrize("shape", list(FIELDS))
def test_vllm_reasoning_under_either_name_is_shown_once(wire_server, shape, chunking):
    """Sources: vllm-project/vllm PR #27752 (``reasoning_content`` -> ``reasoning``, alias kept),
    PR #33402 (alias removed), RFC #27755; spec/wire-formats.md §0 and §4. Every byte split
    (``bytes``) and random ones: the reasoning comes out exactly once, the answer clean."""
    frames = stream(FIELDS[shape], ANSWER)
    wire_server.route("POST", PATH, Reply.sse(frames, chunking=chunking, seed=5, max_piece=9))
    events = VLLM.events(wire_server)
    trace = events[-1].trace
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == REASONING
    assert (trace.reasoning, trace.answer) == (REASONING, ANSWER)
    assert (trace.status, trace.finish_reason, trace.warnings) == ("complete", "stop", [])


# -- item 1: finish_reason "repetition" -------------------------------------------------------

SHORT_LOOP = "Wait, check 17 × 3 again. " * 4  # under this package's own loop check (240 chars)
LONG_LOOP = "So 17 × 23: take 17 × 20 = 340, add 17 × 3 = 51, which gives 391 in the end. " * 6
STOPPED = {"stop_reason": "repetition_detected"}  # vLLM v1/core/sched/utils.py: check_stop


def repeating(reasoning: str, answer: str = "") -> list[str]:
    return stream([{"reasoning": p} for p in wf.tokens(reasoning)], answer, "repetition", **STOPPED)


@pytest.fixture
def own_db(tmp_path, monkeypatch):
    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))


def test_repetition_before_any_answer_is_the_loop_with_answer_now(wire_server, own_db):
    """Source: vllm-project/vllm PR #35451 (``SamplingParams.repetition_detection``): the
    scheduler's ``check_stop`` sets ``FINISHED_REPETITION``, whose finish reason is
    ``FinishReason.REPETITION``, sent as ``"repetition"`` (litellm PR #27101 saw it unmapped).
    The run is cut short, says it looped, offers Answer now, and is never replayed from cache."""
    wire_server.route("POST", PATH, Reply.sse(repeating(SHORT_LOOP), chunking="random", seed=2))
    trace = VLLM.run(wire_server, cache=True)
    assert (trace.reasoning.strip(), trace.answer) == (SHORT_LOOP.strip(), "")
    assert (trace.status, trace.finish_reason) == ("truncated", "repetition")
    [warning] = trace.warnings
    assert warning.startswith(f"{LOOP_NOTICE}: the server stopped it (finish reason 'repetition')")
    assert warning.endswith(f"before any answer: {rescue.TRY}")
    assert rescue.lost_answer(trace)  # what offers Answer now under the run
    VLLM.run(wire_server, cache=True)  # a cut run is never served again
    assert len(wire_server.requests_to(PATH)) == 2


def test_repetition_in_the_answer_says_so(wire_server):
    """Source: as above; vLLM's detector reads every output token, so the answer can loop too."""
    frames = repeating(REASONING, "391. " * 12)
    wire_server.route("POST", PATH, Reply.sse(frames))
    trace = VLLM.run(wire_server)
    assert (trace.status, trace.finish_reason) == ("truncated", "repetition")
    assert trace.warnings == [
        "The answer repeats itself: the server stopped it (finish reason 'repetition')."
    ]
    assert not rescue.lost_answer(trace)


def test_repetition_after_this_packages_own_loop_notice_is_said_once(wire_server):
    """Source: as above. A loop long enough for ``core.loops`` is named once, while it streams;
    the server's stop then only adds that it stopped there."""
    wire_server.route("POST", PATH, Reply.sse(repeating(LONG_LOOP)))
    trace = VLLM.run(wire_server)
    assert [w.startswith(LOOP_NOTICE) for w in trace.warnings] == [True, False]
    assert trace.warnings[1] == (
        "The server stopped the run at that loop (finish reason 'repetition'), before any "
        f"answer: {rescue.TRY}"
    )


# -- item 8: --chat --history -> chat_template_kwargs.preserve_thinking ------------------------

FIRST, SECOND = "What is 17 × 23?", "And 18 × 23?"
LOCAL = {
    # vLLM reads past reasoning as `reasoning` only (vllm#38488; chat_utils.py), and passes the
    # template both names (PR #33635); `preserve_thinking` goes to the template as is.
    "vllm": ("reasoning", ("preserve_thinking",), wf.vllm_sse(REASONING, ANSWER)),
    # llama.cpp reads `reasoning_content` (PR #18994); `preserve_reasoning` (PR #25105) sets
    # every template's spelling, `preserve_thinking` reaches Qwen's on older builds.
    "llamacpp": (
        "reasoning_content",
        ("preserve_reasoning", "preserve_thinking"),
        wf.llamacpp_sse(REASONING, ANSWER),
    ),
}


def two_turns(ip, server, first: str, second: str, frames, flags: str = "") -> tuple:
    """Two cells of one chat, to ``first`` then ``second`` (model ids): the two request bodies
    and the second cell's saved trace."""
    server.route("POST", PATH, Reply.sse(frames, chunking="random", seed=3))
    base = f"--base-url {server.url} --chat qwen {flags}"
    assert cell(ip, f"--model {first} {base}", FIRST).error == ""
    cap = cell(ip, f"--model {second} {base}", SECOND)
    assert cap.error == ""
    return *server.bodies(PATH), cap.outputs[-1].metadata[METADATA_KEY]


@pytest.mark.parametrize("history", ["", "--history reasoning", "--history answer"])
@pytest.mark.parametrize("provider", list(LOCAL))
def test_chat_history_choice_is_the_templates_keep_reasoning_switch(
    ip, wire_server, provider, history
):
    """Sources: the Qwen3.6 chat template keeps an earlier turn's reasoning only when
    ``preserve_thinking`` is true, Qwen3.8's unless it is false (both read the message's
    ``reasoning_content``); vLLM and llama.cpp as in ``LOCAL``. ``--history reasoning`` (the
    default) sends the reasoning back and the switch on; ``answer`` neither, and the switch off."""
    field, switches, frames = LOCAL[provider]
    model = f"{provider}:Qwen/Qwen3.6-27B"
    first, second, saved = two_turns(ip, wire_server, model, model, frames, history)
    kept = history != "--history answer"
    turn = {"role": "assistant", "content": ANSWER} | ({field: REASONING} if kept else {})
    asked = [{"role": "user", "content": FIRST}, turn, {"role": "user", "content": SECOND}]
    assert second["messages"] == asked
    assert second["chat_template_kwargs"] == dict.fromkeys(switches, kept)
    assert "chat_template_kwargs" not in first  # a first turn has nothing to keep
    assert saved["request"]["chat_template_kwargs"] == dict.fromkeys(switches, kept)
    sent = len(FIRST) + len(ANSWER) + (len(REASONING) if kept else 0)
    assert saved["request"]["history_tokens"] == estimate(sent)
    assert not [w for w in saved["warnings"] if "answers only" in w]


def test_the_switch_joins_the_presets_template_kwargs(ip, wire_server):
    """Source: as above; preset ``off`` is ``chat_template_kwargs.enable_thinking: false``
    (spec/presets.md), and the switch is merged into it, not over it."""
    model = "vllm:Qwen/Qwen3.6-27B"
    _, second, _ = two_turns(ip, wire_server, model, model, LOCAL["vllm"][2], "--preset off")
    assert second["chat_template_kwargs"] == {"enable_thinking": False, "preserve_thinking": True}


def test_reasoning_goes_back_only_to_the_model_that_wrote_it(ip, wire_server):
    """Source: as above. A chat that moves from Qwen 3.6 to 3.8 sends the answer only, and tells
    3.8's template (which keeps reasoning by default) to drop the empty block."""
    old, new = "vllm:Qwen/Qwen3.6-27B", "vllm:Qwen/Qwen3.8-27B"
    _, second, _ = two_turns(ip, wire_server, old, new, LOCAL["vllm"][2])
    assert second["messages"][1] == {"role": "assistant", "content": ANSWER}
    assert second["chat_template_kwargs"] == {"preserve_thinking": False}


@pytest.mark.parametrize("provider", list(LOCAL))
def test_gpt_oss_gets_the_answers_only_and_the_switch_off(ip, wire_server, provider):
    """Source: OpenAI's harmony guide (``core.history.FINAL_DROPS_REASONING``): a turn that ended
    in a final answer loses its reasoning, on vLLM and llama.cpp too, so the switch says so."""
    _, switches, frames = LOCAL[provider]
    model = f"{provider}:openai/gpt-oss-20b"
    _, second, _ = two_turns(ip, wire_server, model, model, frames, "--history reasoning")
    assert second["messages"][1] == {"role": "assistant", "content": ANSWER}
    assert second["chat_template_kwargs"] == dict.fromkeys(switches, False)


# What the two template generations do with an earlier assistant turn (the gates as the
# Qwen3.6-35B-A3B and Qwen3.8-27B chat_template.jinja state them; the rest is a sketch).
GATES = {
    "qwen3.6": "preserve_thinking is defined and preserve_thinking is true",
    "qwen3.8": "preserve_thinking is undefined or preserve_thinking is true",
}
SKETCH = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'assistant' and (GATE) %}<think>\n{{ m.reasoning_content or '' }}\n"
    "</think>\n\n{% endif %}{{ m.content }}<|im_end|>\n{% endfor %}"
)


def vllm_prompt(gate: str, body: dict) -> str:
    """The prompt vLLM renders from ``body``: each message's ``reasoning`` reaches the template as
    ``reasoning_content`` too (PR #33635), ``chat_template_kwargs`` as template variables."""
    template = jinja2.Environment().from_string(SKETCH.replace("GATE", gate))
    messages = [m | {"reasoning_content": m.get("reasoning")} for m in body["messages"]]
    return template.render(messages=messages, **body.get("chat_template_kwargs", {}))


@pytest.mark.parametrize("gate", list(GATES))
@pytest.mark.parametrize("history", ["--history reasoning", "--history answer"])
def test_both_template_generations_render_what_history_asks(ip, wire_server, gate, history):
    """Sources: the gates above (Qwen3.6 opt-in, Qwen3.8 opt-out; an empty ``<think>`` block for
    a turn sent without reasoning is QwenLM/Qwen3.6#131's complaint), vLLM as in ``LOCAL``.
    Whatever a template does by default, the prompt holds the earlier reasoning exactly when
    ``--history reasoning`` asks for it, and never an empty block."""
    model = "vllm:Qwen/Qwen3.6-27B"
    _, second, _ = two_turns(ip, wire_server, model, model, LOCAL["vllm"][2], history)
    prompt = vllm_prompt(GATES[gate], second)
    kept = history.endswith("reasoning")
    assert prompt.count(REASONING) == (1 if kept else 0)
    assert prompt.count("<think>") == (1 if kept else 0)


# -- item 10: Gemma 4's inline channel tags -----------------------------------------------------

GEMMA_REASONING = "Add: 2 + 2 = 4 ☕, “four”."
GEMMA_ANSWER = "The answer is **4**."
GEMMA = f"<|channel>thought\n{GEMMA_REASONING}<channel|>{GEMMA_ANSWER}"


def gemma_frames(pieces: list[str]) -> list[str]:
    return stream([{"content": p} for p in pieces if p], "")


def gemma_run(server, model: str) -> tuple[str, str, list[str]]:
    """The reasoning and answer as they streamed (the label's newline never shows, not even
    live), and the warnings; the trace holds the same texts."""
    events = Provider(model, PATH).events(server)
    trace = events[-1].trace
    kinds = (ReasoningDelta, TextDelta)
    streamed = ["".join(e.text for e in events if type(e) is kind) for kind in kinds]
    assert (trace.reasoning, trace.answer) == tuple(streamed)
    return *streamed, trace.warnings


def test_gemma4_channel_tags_split_anywhere(wire_server):
    """Source: vllm-project/vllm vllm/reasoning/gemma4_reasoning_parser.py (the model writes
    ``<|channel>thought\\n…<channel|>`` and the answer; ``thought\\n`` is a label, not reasoning)
    and spec/wire-formats.md's tag table. With no reasoning parser (llama.cpp
    ``--reasoning-format none``, vLLM with ``skip_special_tokens: false``) the tags stay in
    ``content``: cut into two deltas at every character, the trace comes back exact."""
    for at in range(len(GEMMA) + 1):
        wire_server.route("POST", PATH, Reply.sse(gemma_frames([GEMMA[:at], GEMMA[at:]])))
        got = gemma_run(wire_server, "llamacpp:gemma-4-26b-a4b-it")
        assert got == (GEMMA_REASONING, GEMMA_ANSWER, []), at


def test_gemma4_one_character_per_delta_and_per_byte(wire_server):
    """Source: as above; every character its own delta, and every byte of the body its own
    write on the socket (the UTF-8 of ``☕`` and ``“”`` split too)."""
    frames = gemma_frames(list(GEMMA))
    wire_server.route("POST", PATH, Reply.sse(frames, chunking="bytes"))
    got = gemma_run(wire_server, "vllm:google/gemma-4-31B-it")
    assert got == (GEMMA_REASONING, GEMMA_ANSWER, [])
