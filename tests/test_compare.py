"""%%think --compare: variants run concurrently, side by side; every trace saved."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import wire_fixtures as wf
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output
from test_export_safety import live_html, live_markdown
from wire_server import Reply

from reasoning_nb import Trace
from reasoning_nb.compare_view import answer_diff, bundle, label
from reasoning_nb.errors import ConfigError
from reasoning_nb.export.schema import COMPARE_KEY, METADATA_KEY
from reasoning_nb.notebook.compare import parse_variants

CHAT = "/v1/chat/completions"


@pytest.fixture
def ip():
    shell = start_ipython() or get_ipython()
    shell.run_line_magic("load_ext", "reasoning_nb")
    magics = shell.magics_manager.registry["ThinkMagics"]
    magics.widget = "never"
    yield shell
    magics.session.clear()
    magics.chats.clear()
    magics.widget = "auto"
    shell.user_ns.pop("_think", None)
    shell.user_ns.pop("_compare", None)


def think_cell(ip, line: str, body: str):
    with capture_output() as cap:
        ip.run_cell_magic("think", line, body)
    return cap


def by_effort(pause: float = 0.0):
    """A hook: the reply depends on the request's reasoning_effort."""

    def hook(rec):
        effort = rec.json.get("reasoning_effort", "auto")
        answer = f"Answer at {effort}.\nShared line.\n<script>alert({effort!r})</script>"
        frames = wf.chat_sse(f"thinking {effort} " * 3, answer)
        return Reply.sse(frames, pause=pause)

    return hook


def test_text_path_runs_both_and_saves_every_trace(ip, wire_server):
    wire_server.route("POST", CHAT, by_effort())
    cap = think_cell(
        ip, f"--model llamacpp:m --base-url {wire_server.url} --compare low,high", "Why?"
    )
    efforts = sorted(b["reasoning_effort"] for b in wire_server.bodies(CHAT))
    assert efforts == ["high", "low"]
    assert "== low · llamacpp:m ==" in cap.stdout and "== high · llamacpp:m ==" in cap.stdout
    [output] = cap.outputs  # exactly one output carries the trace
    saved = output.metadata[COMPARE_KEY]
    assert [t["request"]["reasoning_effort"] for t in saved] == ["low", "high"]
    assert output.metadata[METADATA_KEY] == saved[0]
    assert saved[1]["answer"].startswith("Answer at high.")
    page = output.data["text/html"]
    assert "reasoning-nb-compare-table" in page and "reasoning tokens" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "-Answer at low." in page and "+Answer at high." in page  # the diff
    assert "| variant |" in output.data["text/markdown"]
    assert "answer diff" in output.data["text/plain"]
    assert isinstance(ip.user_ns["_think"], Trace)
    assert [t.preset for t in ip.user_ns["_compare"]] == ["low", "high"]
    assert ip.user_ns["_think"] is ip.user_ns["_compare"][0]


def test_models_compare_uses_the_cells_preset(ip, wire_server):
    wire_server.route("POST", CHAT, by_effort())
    line = f"--base-url {wire_server.url} -p medium --compare llamacpp:a,llamacpp:b"
    cap = think_cell(ip, line, "Q")
    saved = cap.outputs[-1].metadata[COMPARE_KEY]
    assert [t["model"] for t in saved] == ["llamacpp:a", "llamacpp:b"]
    assert {b["reasoning_effort"] for b in wire_server.bodies(CHAT)} == {"medium"}
    assert "(the answers of" in cap.outputs[-1].data["text/plain"]  # same answers


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("low", "two or more"),
        ("low,,high", "two or more"),
        ("low,extreme", "neither a preset"),
        ("low,nope:x", "Unknown provider 'nope'"),
        ("low,low", "twice"),
    ],
)
def test_bad_compare_is_one_clear_line(ip, spec, message):
    cap = think_cell(ip, f"--model llamacpp:m --compare {spec}", "Q")
    assert message in cap.stderr and "Traceback" not in cap.stderr
    assert len(cap.stderr.strip().splitlines()) == 1
    assert not cap.outputs


def test_parse_variants_labels():
    variants = parse_variants("off,max", {"model": "llamacpp:m", "preset": "auto"}, "Q")
    assert [v.label for v in variants] == ["off · llamacpp:m", "max · llamacpp:m"]
    with pytest.raises(ConfigError):
        parse_variants("low,high", {"model": "llamacpp:m", "budget_tokens": -1}, "Q")


def test_three_way_compare_runs_concurrently(ip, wire_server):
    frames = wf.chat_sse("a b c d e", "f g h i j")
    pause = 1.0 / len(frames)  # about one second a run
    wire_server.route("POST", CHAT, Reply.sse(frames, pause=pause))
    base = f"--model llamacpp:m --base-url {wire_server.url}"
    t0 = time.monotonic()
    think_cell(ip, base, "Q")
    single = time.monotonic() - t0
    t0 = time.monotonic()
    cap = think_cell(ip, f"{base} --compare low,medium,high", "Q")
    three = time.monotonic() - t0
    ratio = three / single
    print(f"3-way compare {three:.2f} s, single run {single:.2f} s, ratio {ratio:.2f}")
    assert [t["status"] for t in cap.outputs[-1].metadata[COMPARE_KEY]] == ["complete"] * 3
    assert single > 0.8
    assert ratio < 2.0


def test_static_bundle_escapes_labels_and_diff():
    a = Trace(model="llamacpp:m", preset="<i>low</i>", prompt="Q")
    b = Trace(model="llamacpp:m", preset="high", prompt="Q")
    a.answer, b.answer = "x <b>1</b>", "x <img src=x onerror=y>"
    for t in (a, b):
        t.finish()
    for mode in ("collapsible", "inline", "strip"):
        data = bundle([a, b], mode)
        assert "<i>low</i>" not in data["text/html"] and "&lt;i&gt;low" in data["text/html"]
        assert "<img" not in data["text/html"] and live_html(data["text/html"]) == []
        assert "#### &lt;i&gt;low" in data["text/markdown"]
        assert live_markdown(data["text/markdown"]) == []
    assert "+x <img src=x onerror=y>" in answer_diff([a, b])


def test_labels_come_from_the_traces():
    """One rule for the live columns, the saved output and old outputs alike."""
    assert label(Trace(model="ollama:q", preset="high")) == "high · ollama:q"
    assert label(Trace(preset="low")) == "low · (default model)"
    long = label(Trace(model="m\n<b>\u202e" + "x" * 500, preset="p"))
    assert "\n" not in long and "\u202e" not in long and len(long) <= 120


def test_exports_render_compare_outputs_without_the_network_stack():
    code = (
        "import sys, reasoning_nb.export.preprocessor, reasoning_nb.compare_view; "
        "print(sorted(m for m in ('httpx', 'anyio', 'ipywidgets') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.kernel
def test_widget_path_in_a_real_kernel_saves_every_trace(wire_server):
    import nbformat
    from nbclient import NotebookClient

    wire_server.route("POST", CHAT, by_effort(pause=0.02))
    nb = nbformat.v4.new_notebook()
    sources = (
        "%load_ext reasoning_nb",
        f"%%think --model llamacpp:m --base-url {wire_server.url} --compare low,high\nWhy?",
        "print(len(_compare), _think is _compare[0], [t.status for t in _compare])",
    )
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    NotebookClient(nb, timeout=60, kernel_name="python3", record_timing=False).execute()
    outputs = nb.cells[1].outputs
    traced = [o for o in outputs if METADATA_KEY in o.get("metadata", {})]
    [output] = traced  # exactly one output carries the trace
    live = outputs[0]
    assert "application/vnd.jupyter.widget-view+json" in live.data
    saved = output.metadata[COMPARE_KEY]
    assert [t["preset"] for t in saved] == ["low", "high"]
    assert all(t["status"] == "complete" for t in saved)
    assert saved[0]["answer"].startswith("Answer at low.")
    assert "reasoning-nb-static" in output.data["text/html"]
    assert "&lt;script&gt;" in output.data["text/html"]
    assert nb.cells[2].outputs[0]["text"].strip() == "2 True ['complete', 'complete']"
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    dumped = str(state)
    assert "Answer at high." in dumped and "reasoning-nb-compare-table" in dumped


@pytest.mark.kernel
def test_widget_traffic_is_bounded_across_four_columns_finals_included(wire_server):
    """One budget for all columns, their final renders too: four variants that end within the
    same second stay under the rate (finals wait for the bucket, not only the live text)."""
    from kernel_session import KernelSession, max_per_window, updates

    frames = wf.many_chunks(6_000, "chat")
    wire_server.route(
        "POST",
        CHAT,
        lambda _rec: Reply.sse(frames, chunking="random", seed=5, max_piece=1024, pause=0.003),
    )
    kernel = KernelSession()
    try:
        kernel.run("%load_ext reasoning_nb")
        rate = float(kernel.value("get_ipython().magics_manager.registry['ThinkMagics']"
                                  ".max_updates_per_second"))  # fmt: skip
        line = f"--model llamacpp:m --base-url {wire_server.url} --compare low,medium,high,max"
        t0 = time.monotonic()
        msgs = kernel.run(f"%%think {line}\nLong one", 120)
        took = time.monotonic() - t0
        assert kernel.value("[t.status for t in _compare]") == str(["complete"] * 4)
    finally:
        kernel.close()
    sent = sorted(m["header"]["date"].timestamp() for m in updates(msgs))
    peak = max_per_window(sent)
    print(f"4 columns: {len(sent)} updates in {took:.1f} s, peak {peak}/s (rate {rate:g}/s)")
    assert len(sent) > 5 * took  # the columns really were live
    assert peak <= rate + 5  # the start of four columns and the summary are the slack


def slow_hook(_rec) -> Reply:
    frames = wf.chat_sse("thinking slowly " * 5, "never finished", done=False)
    return Reply.sse(frames, stall_after=8, stall=30)


@pytest.mark.kernel
def test_stop_button_stops_every_variant(wire_server):
    from kernel_session import KernelSession

    wire_server.route("POST", CHAT, slow_hook)
    kernel = KernelSession()
    thinking: set[str] = set()

    def both_thinking(msg) -> bool:
        if msg["msg_type"] == "comm_msg":
            state = msg["content"]["data"].get("state", {})
            if any(isinstance(v, str) and "thinking slowly" in v for v in state.values()):
                thinking.add(msg["content"]["comm_id"])
        return len(thinking) >= 2  # a text widget of each column

    try:
        kernel.run("%load_ext reasoning_nb")
        line = f"--model llamacpp:m --base-url {wire_server.url} --compare low,high"
        msg_id = kernel.kc.execute(f"%%think {line}\nQ")
        kernel.collect(msg_id, 30, until=both_thinking)
        button = kernel.find("ButtonModel", description="Stop")
        t0 = time.monotonic()
        kernel.click(button)
        msgs = kernel.collect(msg_id, 30)
        took = time.monotonic() - t0
        statuses = kernel.value("[t.status for t in _compare]")
        reasoning = kernel.value("[t.reasoning[:15] for t in _compare]")
    finally:
        kernel.close()
    assert took < 5  # each stream stalls for 30 s: only Stop ends them this soon
    assert not [m for m in msgs if m["msg_type"] == "error"]
    [saved] = [
        m["content"]["metadata"][COMPARE_KEY]
        for m in msgs
        if m["msg_type"] == "display_data" and COMPARE_KEY in m["content"]["metadata"]
    ]
    assert [t["status"] for t in saved] == ["cancelled", "cancelled"]
    assert all(t["reasoning"].startswith("thinking slowly") for t in saved)  # partial, kept
    assert statuses == str(["cancelled"] * 2)
    assert reasoning == str(["thinking slowly"] * 2)
    state = kernel.comms[button]
    assert state["disabled"] is True  # clicked: "Stopping…"
    layout = state["layout"].removeprefix("IPY_MODEL_")
    assert kernel.comms[layout]["display"] == "none"  # and gone once all ended
