"""``%%think --chat NAME --history reasoning|answer``: what the second request of a chat carries,
per provider, over real sockets (the in-process shell's text path), and the history's size in
the trace and the live status line."""

from __future__ import annotations

import pytest
import wire_fixtures as wf
from shell_cell import think_cell as cell
from wire_server import Reply

from reasoning_nb.core.history import size
from reasoning_nb.core.tokens import estimate
from reasoning_nb.core.trace import Trace
from reasoning_nb.notebook.run_view import RunView
from reasoning_nb.notebook.runners import METADATA_KEY
from reasoning_nb.providers.catalog import PROVIDERS

REASONING = "First 17 × 20 = 340, then 17 × 3 = 51; café ☕."
ANSWER = "It is **391**."
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
FIRST, SECOND = "What is 17 × 23?", "And 18 × 23?"
HISTORY_TOKENS = estimate(len(FIRST) + len(ANSWER))  # the answer only
WITH_REASONING = estimate(len(FIRST) + len(ANSWER) + len(REASONING))


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    """The hosted providers' key, named for the wire server (their own keys go only to their own
    hosts)."""
    monkeypatch.setenv("WIRE_TEST_KEY", "sk-test")
    monkeypatch.delenv("REASONING_NB_MODEL", raising=False)


def two_turns(ip, server, model: str, path: str, frames: list[str], history: str) -> dict:
    """Two cells of one chat; the second request's body and the second cell's saved trace."""
    server.route("POST", path, Reply.sse(frames, chunking="random", seed=4), Reply.sse(frames))
    flags = f"--model {model} --base-url {server.url} --api-key-env WIRE_TEST_KEY --preset high"
    flags += f" --chat demo {history}"
    assert cell(ip, flags, FIRST).error == ""
    cap = cell(ip, flags, SECOND)
    assert cap.error == ""
    first, second = server.bodies(path)
    return {"body": second, "saved": cap.outputs[-1].metadata[METADATA_KEY], "first": first}


ANTHROPIC = wf.anthropic_sse(REASONING, ANSWER, signature=SIGNATURE)


@pytest.mark.parametrize("history", ["", "--history reasoning"])
def test_anthropic_gets_its_signed_thinking_back(ip, wire_server, history):
    got = two_turns(
        ip, wire_server, "anthropic:claude-sonnet-4-5", "/v1/messages", ANTHROPIC, history
    )
    turn = got["body"]["messages"][1]
    assert turn["role"] == "assistant"
    thinking = [b for b in turn["content"] if b["type"] == "thinking"]
    assert [(b["thinking"], b["signature"]) for b in thinking] == [(REASONING, SIGNATURE)]
    assert got["saved"]["request"]["history_tokens"] == WITH_REASONING
    assert got["saved"]["request"]["history_turns"] == 1
    assert "history_tokens" not in got["first"] and got["saved"]["warnings"] == []


def test_anthropic_answer_only(ip, wire_server):
    model = "anthropic:claude-sonnet-4-5"
    got = two_turns(ip, wire_server, model, "/v1/messages", ANTHROPIC, "--history answer")
    assert got["body"]["messages"] == [
        {"role": "user", "content": FIRST},
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": SECOND},
    ]
    assert SIGNATURE not in str(got["body"])
    assert got["saved"]["request"]["history_tokens"] == HISTORY_TOKENS


@pytest.mark.parametrize("history", ["--history reasoning", "--history answer"])
def test_gemini(ip, wire_server, history):
    path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    frames = wf.gemini_sse(REASONING, ANSWER, signature_on="final")
    got = two_turns(ip, wire_server, "gemini:gemini-2.5-flash", path, frames, history)
    parts = got["body"]["contents"][1]["parts"]
    if history.endswith("reasoning"):
        assert {"text": REASONING, "thought": True} in parts
        assert parts[-1] == {"text": "", "thoughtSignature": "CiQBVKhc7test"}
        assert got["saved"]["request"]["history_tokens"] == WITH_REASONING
    else:
        assert parts == [{"text": ANSWER}]
        assert got["saved"]["request"]["history_tokens"] == HISTORY_TOKENS


@pytest.mark.parametrize("history", ["--history reasoning", "--history answer"])
def test_openrouter(ip, wire_server, history):
    frames = wf.openrouter_sse(REASONING, ANSWER)
    model = "openrouter:anthropic/claude-sonnet-4.5"
    got = two_turns(ip, wire_server, model, "/v1/chat/completions", frames, history)
    turn = got["body"]["messages"][1]
    assert turn["content"] == ANSWER and "replay_model" not in turn
    if history.endswith("reasoning"):
        assert "".join(d.get("text", "") for d in turn["reasoning_details"]) == REASONING
    else:
        assert turn == {"role": "assistant", "content": ANSWER}


@pytest.mark.parametrize("history", ["--history reasoning", "--history answer"])
def test_openai_gets_its_encrypted_reasoning_items_back(ip, wire_server, history):
    """The reasoning item, encrypted content and summary as they came, before its answer
    (tests/providers/test_wire_2026_h5.py has the sources); ``answer``: the answer only."""
    frames = wf.responses_sse(REASONING, ANSWER, encrypted="gAAAAB-opaque")
    got = two_turns(ip, wire_server, "openai:gpt-5.1", "/v1/responses", frames, history)
    items = [m for m in got["body"]["input"] if m.get("type") == "reasoning"]
    if history.endswith("reasoning"):
        assert [(i["encrypted_content"], i["summary"][0]["text"]) for i in items] == [
            ("gAAAAB-opaque", REASONING)
        ]
        assert got["saved"]["request"]["history_tokens"] == WITH_REASONING
    else:
        assert items == [] and got["saved"]["request"]["history_tokens"] == HISTORY_TOKENS
    assert got["body"]["input"][-2:] == [
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": SECOND},
    ]
    assert got["saved"]["warnings"] == []


@pytest.mark.parametrize("history", ["--history reasoning", "--history answer"])
def test_deepseek_gets_the_answers_only(ip, wire_server, history):
    """DeepSeek's reasoning_content must not be sent back: it reads the answer, and
    ``reasoning`` says so."""
    model, path = "deepseek:deepseek-reasoner", "/v1/chat/completions"
    got = two_turns(ip, wire_server, model, path, wf.deepseek_sse(REASONING, ANSWER), history)
    body = got["body"]
    turns = body.get("input") or body["messages"]
    assert REASONING not in str(body) and ANSWER in str(turns)
    assert got["saved"]["request"]["history_tokens"] == HISTORY_TOKENS
    notices = [w for w in got["saved"]["warnings"] if "answers only" in w]
    assert len(notices) == (1 if history.endswith("reasoning") else 0)


@pytest.mark.parametrize("history", ["--history reasoning", "--history answer", ""])
def test_local_server_gets_the_answer_only_with_one_notice(ip, wire_server, history):
    """LM Studio (vLLM and llama.cpp take the reasoning back: test_wire_2026_h1.py)."""
    frames = wf.lmstudio_sse(REASONING, ANSWER)
    got = two_turns(ip, wire_server, "lmstudio:m", "/v1/chat/completions", frames, history)
    assert got["body"]["messages"][1] == {"role": "assistant", "content": ANSWER}
    notices = [w for w in got["saved"]["warnings"] if "answers only" in w]
    assert len(notices) == (1 if history.endswith("reasoning") else 0)
    assert got["saved"]["request"]["history_tokens"] == HISTORY_TOKENS
    if history:  # a third turn: the notice was said once
        wire_server.route("POST", "/v1/chat/completions", Reply.sse(frames))
        flags = f"--model lmstudio:m --base-url {wire_server.url} --chat demo {history}"
        cap = cell(ip, flags, "Once more?")
        third = cap.outputs[-1].metadata[METADATA_KEY]
        assert not [w for w in third["warnings"] if "answers only" in w]
        assert third["request"]["history_turns"] == 2


def test_configured_default_and_misuse(ip, wire_server):
    ip.magics_manager.registry["ThinkMagics"].chat_history = "answer"
    got = two_turns(ip, wire_server, "anthropic:claude-sonnet-4-5", "/v1/messages", ANTHROPIC, "")
    assert got["body"]["messages"][1] == {"role": "assistant", "content": ANSWER}
    cap = cell(ip, "--model llamacpp:m --history answer", "Hi")
    assert "--history is for --chat" in cap.error
    assert cell(ip, "--chat x --history both", "Hi").error.count("invalid choice") == 1


# -- the history's size ----------------------------------------------------------------------------


def test_size_counts_text_the_model_reads_not_signatures():
    blocks = [
        {"type": "thinking", "thinking": "abcd" * 10, "signature": "S" * 400},
        {"type": "redacted_thinking", "data": "D" * 400},
        {"type": "text", "text": "ANSWER"},
    ]
    history = [
        {"role": "user", "content": "q" * 8},
        {"role": "assistant", "content": "ANSWER", "blocks": blocks, "replay_model": "m"},
    ]
    assert size(history, "m", PROVIDERS["anthropic"]) == {
        "history_turns": 1,
        "history_tokens": estimate(8 + 6 + 40),
    }
    # another model gets the answer text only, so only that is counted
    assert size(history, "other", PROVIDERS["anthropic"]) == {
        "history_turns": 1,
        "history_tokens": estimate(14),
    }


def test_status_line_shows_the_history_tokens():
    trace = Trace(model="llamacpp:m", clock=lambda: 0.0)
    view = RunView(trace, 1, 0.0, hide_reasoning=False)
    assert "history" not in view.status_html(1.0)
    trace.request = {"history_turns": 3, "history_tokens": 1240}
    assert "history: ≈1,240 tokens from 3 turns" in view.status_html(2.0)
    trace.request = {"history_turns": 1, "history_tokens": 7}
    assert "history: ≈7 tokens from 1 turn<" in view.status_html(2.0) + "<"


# -- a real kernel ---------------------------------------------------------------------------------


@pytest.mark.kernel
def test_two_chat_cells_in_a_real_kernel(wire_server):
    import nbformat
    from nbclient import NotebookClient

    path = "/v1/messages"  # the kernel inherits WIRE_TEST_KEY
    wire_server.route("POST", path, Reply.sse(ANTHROPIC), Reply.sse(ANTHROPIC))
    flags = f"--model anthropic:claude-sonnet-4-5 --base-url {wire_server.url} -p high --chat demo"
    flags += " --api-key-env WIRE_TEST_KEY"
    nb = nbformat.v4.new_notebook()
    sources = ("%load_ext reasoning_nb", f"%%think {flags}\n{FIRST}", f"%%think {flags}\n{SECOND}")
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()

    first, second = wire_server.bodies(path)
    assert len(first["messages"]) == 1
    turn = second["messages"][1]
    assert [b["signature"] for b in turn["content"] if b["type"] == "thinking"] == [SIGNATURE]
    [saved] = [
        o.metadata[METADATA_KEY]
        for o in nb.cells[2].outputs
        if METADATA_KEY in o.get("metadata", {})
    ]
    assert saved["request"]["history_tokens"] == WITH_REASONING
    assert saved["request"]["history_turns"] == 1
