"""%%think --compare: variants run concurrently, side by side; every trace saved."""

from __future__ import annotations

import itertools
import json
import re
import threading

import comm
import pytest
import wire_fixtures as wf
from comm.base_comm import BaseComm
from fresh_python import network_stack_after
from shell_cell import think_cell
from test_export_safety import live_html, live_markdown
from test_widget import FakeClock, Wire, markdown_of, max_per_window
from wire_server import Reply

from reasoning_nb import Trace
from reasoning_nb.core.events import ReasoningDelta, TextDelta
from reasoning_nb.core.schema import METADATA_KEY, VARIANTS_KEY, saved_variants
from reasoning_nb.errors import ConfigError
from reasoning_nb.notebook.compare import CompareWidget, parse_variants
from reasoning_nb.notebook.host import WIDGET_VIEW
from reasoning_nb.views import compare as compare_view
from reasoning_nb.views.compare import answer_diff, bundle, label
from reasoning_nb.views.diverge_view import TITLE as PARTING_TITLE
from reasoning_nb.views.live_markdown import live_markdown as inert_markdown
from reasoning_nb.views.trace_labels import notes

CHAT = "/v1/chat/completions"


def by_effort(pause: float = 0.0):
    """A hook: the reply depends on the request's reasoning_effort."""

    def hook(rec):
        effort = rec.json.get("reasoning_effort", "auto")
        answer = f"Answer at {effort}.\nShared line.\nAnd another.\n"
        answer += f"<script>alert({effort!r})</script>"
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
    saved = saved_variants(output.metadata)
    assert [t["request"]["reasoning_effort"] for t in saved] == ["low", "high"]
    assert output.metadata[VARIANTS_KEY] == saved[1:]  # each trace saved once
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
    saved = saved_variants(cap.outputs[-1].metadata)
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
    assert message in cap.error and len(cap.error.splitlines()) == 1  # the cell fails, one line
    assert "Traceback" not in cap.stdout + cap.stderr
    assert not cap.outputs


def test_parse_variants_labels():
    variants = parse_variants("off,max", {"model": "llamacpp:m", "preset": "auto"}, "Q")
    assert [v.label for v in variants] == ["off · llamacpp:m", "max · llamacpp:m"]
    with pytest.raises(ConfigError):
        parse_variants("low,high", {"model": "llamacpp:m", "budget_tokens": -1}, "Q")


def test_three_way_compare_runs_concurrently(ip, wire_server):
    """The server answers none of the three requests until all three are in (a barrier):
    variants run one after another would never get past the first. (No wall-clock ratio: on
    a loaded machine three runs can cost more than twice one, concurrent or not.)"""
    frames = wf.chat_sse("a b c d e", "f g h i j")
    arrived = threading.Barrier(3, timeout=20)  # (a deadline to wait for, not a measurement)

    def all_three_in(_rec):
        arrived.wait()  # BrokenBarrierError -> a 500 and a hook error the fixture reports
        return Reply.sse(frames, pause=0.01)

    wire_server.route("POST", CHAT, all_three_in)
    line = f"--model llamacpp:m --base-url {wire_server.url} --compare low,medium,high"
    cap = think_cell(ip, line, "Q")
    assert [t["status"] for t in saved_variants(cap.outputs[-1].metadata)] == ["complete"] * 3
    efforts = sorted(b["reasoning_effort"] for b in wire_server.bodies(CHAT))
    assert efforts == ["high", "low", "medium"] and not arrived.broken


# -- the live columns, on a fake clock -------------------------------------------------------


@pytest.fixture
def wire(monkeypatch):
    """Every comm message, with the fake time it left at (see ``test_widget``)."""
    rec = Wire(FakeClock())

    class RecordingComm(BaseComm):
        def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
            rec.msgs.append((rec.clock.t, msg_type, self.comm_id, data or {}))

    monkeypatch.setattr(comm, "create_comm", lambda **kw: RecordingComm(**kw))
    return rec


def test_a_columns_status_follows_its_phase_at_once(wire):
    """The status line refreshes every STATUS_EVERY s, but a new phase shows on the next tick:
    a column does not read "connecting…" over its streaming reasoning."""
    view = CompareWidget(["low", "high"], hide_reasoning=False, fold_on_answer=True,
                         max_rate=25.0, clock=wire.clock)  # fmt: skip
    traces = [Trace(model="m", preset=p, clock=wire.clock).start() for p in ("low", "high")]
    for i, trace in enumerate(traces):
        view.start(i, trace)
    assert view.statuses[1].value.startswith("connecting…")
    wire.clock.t += 0.5
    view.tick()  # (the budget refills)
    event = ReasoningDelta("Thinking about the sky.")
    traces[1].fold(event)
    view.on_event(1, event)
    wire.clock.t += 0.1
    view.tick()
    assert view.statuses[1].value.startswith("thinking…")
    assert view.statuses[0].value.startswith("connecting…")


def test_columns_share_one_budget_finals_included(wire):
    """Four columns stream at once, ticked as the runner ticks them (every 1/rate s), and end
    within the same second. On the fake clock no window of one second carries more updates
    than the rate (starts, final renders and the summary included: one bucket pays for all),
    every column's text moves at least every 1.5 s while it streams (a column whose flush
    needed more than the others' used to wait for the whole stream), and each ends exactly
    rendered."""
    rate, clock, labels = 25.0, wire.clock, ["low", "medium", "high", "max"]
    view = CompareWidget(
        labels, hide_reasoning=False, fold_on_answer=True, max_rate=rate, clock=clock
    )
    start = len(wire.msgs)
    traces, streams = [], []
    for i, preset in enumerate(labels):
        traces.append(Trace(model="m", preset=preset, clock=clock).start())
        view.start(i, traces[-1])
        reasoning = " ".join(f"r{i}.{k}" for k in range(3_000 + 60 * i))
        answer = "\n\n".join(" ".join(f"a{i}.{k}.{j}" for j in range(12)) for k in range(150))
        streams.append(
            [ReasoningDelta(reasoning[j : j + 7]) for j in range(0, len(reasoning), 7)]
            + [TextDelta(answer[j : j + 7]) for j in range(0, len(answer), 7)]
        )
    ended: dict[int, float] = {}
    next_tick = 0.0
    while len(ended) < len(labels):  # each column a delta a millisecond, for about 5.5 s
        for i, trace in enumerate(traces):
            if streams[i]:
                event = streams[i].pop(0)
                trace.fold(event)
                view.on_event(i, event)
            elif i not in ended:
                view.finish(i, trace.finish())
                ended[i] = clock.t
        clock.t += 0.001
        if clock.t >= next_tick:
            view.tick()
            next_tick += 1 / rate
    assert max(ended.values()) - min(ended.values()) < 1.0  # (all four end within a second)
    while view.finals_pending:
        clock.t += 1 / rate
        view.tick()

    ups = wire.updates(start)
    assert max_per_window([t for t, _, _ in ups]) <= rate
    for i, trace in enumerate(traces):
        mine = (f"r{i}.", f"a{i}.")  # the words of this column's text
        moved = [
            t for t, _, s in ups if t < ended[i] and any(w in str(markdown_of(s)) for w in mine)
        ]
        waits = [b - a for a, b in itertools.pairwise([0.0, *moved, ended[i]])]
        assert max(waits) <= 1.5, (labels[i], moved)  # every column moves while it streams
        column = view.views[i]
        assert wire.shown(column.answer.box) == inert_markdown(trace.answer)
        assert wire.shown(column.reasoning.box) == inert_markdown(trace.reasoning, breaks=True)


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
    a.answer, b.answer = "x\ny\nz <b>1</b>", "x\ny\nz <img src=x onerror=y>"
    assert "+z <img src=x onerror=y>" in answer_diff([a, b])
    page = bundle([a, b])["text/html"]
    assert "<ins>+z &lt;img src=x onerror=y&gt;\n</ins>" in page and live_html(page) == []


def test_a_columns_fold_label_leaves_its_title_to_say_the_preset_and_model():
    """Issue 24.6: a column's title says ``high · ollama:deepseek-r1``; its fold's label and its
    footer do not again, in the saved cell and in the exports; a single run's footer still does."""
    traces = [Trace(model="ollama:deepseek-r1", preset=p, prompt="Q") for p in ("low", "high")]
    for t in traces:
        t.reasoning, t.answer = "Some thought.", "A."
        t.timing["reasoning_ms"] = 20_100
        t.finish()
    for page in (compare_view.cell_bundle(traces)["text/html"], bundle(traces)["text/html"]):
        folds = re.findall(r"<summary[^>]*>([^<]*)</summary>", page)
        folds = [f for f in folds if not f.startswith(PARTING_TITLE)]  # (not a column's)
        assert folds == ["Thought for 20.1 s · ≈3 tokens"] * 2, folds
        footers = re.findall(r'class="reasoning-nb-meta"[^>]*>([^<]*)<', page)
        assert footers and not [f for f in footers if "deepseek" in f or "preset" in f], footers
        titles = re.findall(r'<h4 style="([^"]*)" title="([^"]*)">', page)
        assert [t for _, t in titles] == ["low · ollama:deepseek-r1", "high · ollama:deepseek-r1"]
        assert all("white-space:nowrap" in style for style, _ in titles)  # one line each
    assert "ollama:deepseek-r1 · preset high" in notes(traces[1])[0]


def test_the_diff_is_a_line_diff_only_where_the_answers_share_half_their_lines():
    """Answers that share fewer than half their (non-blank) lines get one line instead of a
    diff that would hold both again (they are side by side above it); identical ones, too."""
    base = [f"line {k}" for k in range(10)]
    traces = []
    for preset, lines in (("low", base), ("medium", base[:5] + ["changed"] * 5),
                          ("high", base[:4] + ["changed"] * 6), ("max", base)):  # fmt: skip
        trace = Trace(model="m", preset=preset, prompt="Q")
        trace.answer = "\n\n".join(lines)  # (blank lines do not count as shared)
        traces.append(trace.finish())
    low_medium, low_high, low_max = answer_diff(traces).split("\n\n")
    assert low_medium.startswith("--- low · m\n+++ medium · m") and "+changed" in low_medium
    assert low_high == (
        "(the answers of low · m and high · m share 4 of 10 lines: "
        "too few for a line diff, read them side by side)"
    )
    assert low_max == "(the answers of low · m and max · m are the same)"
    page = bundle(traces)["text/html"]
    assert page.count("<ins>+changed\n</ins>") == 5 and "share 4 of 10 lines" in page
    for trace in traces:
        trace.answer = ""  # (stopped while they thought)
    assert answer_diff(traces[:2]) == "(neither low · m nor medium · m answered)"


def test_a_cell_saves_the_diff_where_it_is_short_and_the_exports_always():
    """A long diff would break a cell's size budget: the cell says where to see it."""
    lines = [f"line {k} of the answer" for k in range(80)]
    traces = []
    for preset, changed in (("low", 0), ("high", 30)):
        trace = Trace(model="m", preset=preset, prompt="Q")
        trace.reasoning = "r " * 3_000
        trace.answer = "\n".join(line + " (high)" * (k < changed) for k, line in enumerate(lines))
        traces.append(trace.finish())
    assert "<ins>" in bundle(traces)["text/html"]  # (30 of 80 lines: a line diff)
    page = compare_view.cell_bundle(traces)["text/html"]
    assert "<ins>" not in page and "too long to save in the notebook" in page
    traces[1].answer = traces[1].answer.replace(" (high)", "", 29)  # one line changed
    page = compare_view.cell_bundle(traces)["text/html"]
    assert "<ins>+line 29 of the answer (high)</ins>" in page.replace("\n", "")


def test_labels_come_from_the_traces():
    """One rule for the live columns, the saved output and old outputs alike."""
    assert label(Trace(model="ollama:q", preset="high")) == "high · ollama:q"
    assert label(Trace(preset="low")) == "low · (default model)"
    long = label(Trace(model="m\n<b>\u202e" + "x" * 500, preset="p"))
    assert "\n" not in long and "\u202e" not in long and len(long) <= 120


def test_exports_render_compare_outputs_without_the_network_stack():
    modules = ("reasoning_nb.export.preprocessor", "reasoning_nb.views.compare")
    assert network_stack_after(*modules) == "[]"


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
    heads, output = nb.cells[1].outputs  # the columns' titles and presets; the static output
    assert WIDGET_VIEW in heads.data and METADATA_KEY not in heads.metadata
    assert METADATA_KEY in output.metadata and WIDGET_VIEW not in output.data
    saved = saved_variants(output.metadata)
    assert [t["preset"] for t in saved] == ["low", "high"]
    assert all(t["status"] == "complete" for t in saved)
    assert saved[0]["answer"].startswith("Answer at low.")
    page = output.data["text/html"]
    assert "&lt;script&gt;" in page and "<ins>+&lt;script&gt;alert(&#x27;high&#x27;)" in page
    assert page.count("Answer at high.") == 2  # its column, and the diff
    assert "reasoning-nb-compare-columns" in page and "reasoning-nb-compare-table" in page
    assert nb.cells[2].outputs[0]["text"].strip() == "2 True ['complete', 'complete']"


@pytest.mark.kernel
def test_widget_traffic_is_bounded_across_four_columns_finals_included(wire_server):
    """Four columns in a real kernel: every variant completes and the text goes out live,
    under the one budget the ticker paces. (That no second carries more than the rate, finals
    included, and that every column moves, is asserted on a fake clock:
    ``test_columns_share_one_budget_finals_included``.)"""
    from kernel_session import KernelSession, updates

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
        msgs = kernel.run(f"%%think {line}\nLong one", 120)
        assert kernel.value("[t.status for t in _compare]") == str(["complete"] * 4)
    finally:
        kernel.close()
    ups = updates(msgs)
    [end] = [i for i, m in enumerate(msgs) if METADATA_KEY in m["content"].get("metadata", {})]
    assert not [m for m in updates(msgs[end:]) if m["content"]["data"]["state"].get("outputs")]
    # (the static output shows the text: the columns only closed theirs)
    live = [m for m in ups if m["content"]["data"]["state"].get("outputs")]
    sent = sorted(m["header"]["date"].timestamp() for m in ups)
    print(f"4 columns: {len(ups)} updates, {len(live)} of text, "
          f"peak {max_per_window(sent)}/s by the kernel's clock (rate {rate:g}/s)")  # fmt: skip
    # The columns were live: text went out in many updates before the static output took
    # their place. The rate, and that every column moves, are asserted on a fake clock
    # (test_columns_share_one_budget...): timestamps taken by a kernel on a loaded machine
    # bunch up.
    assert len(live) >= 20


def slow_hook(_rec) -> Reply:
    frames = wf.chat_sse("thinking slowly " * 5, "never finished", done=False)
    return Reply.sse(frames, stall_after=8, stall=600)


@pytest.mark.kernel
def test_stop_button_stops_every_variant(wire_server):
    from kernel_session import KernelSession

    wire_server.route("POST", CHAT, slow_hook)
    kernel = KernelSession()
    thinking: set[str] = set()

    def both_thinking(msg) -> bool:
        if msg["msg_type"] == "comm_msg":
            state = msg["content"]["data"].get("state", {})
            if "thinking slowly" in json.dumps(state):
                thinking.add(msg["content"]["comm_id"])
        return len(thinking) >= 2  # a text widget of each column

    try:
        kernel.run("%load_ext reasoning_nb")
        line = f"--model llamacpp:m --base-url {wire_server.url} --compare low,high"
        msg_id = kernel.kc.execute(f"%%think {line}\nQ")
        msgs = kernel.collect(msg_id, 30, until=both_thinking)
        button = kernel.find("ButtonModel", description="Stop")
        kernel.click(button)
        msgs += kernel.collect(msg_id, 60)  # each stream stalls for 10 min: only Stop ends them
        statuses = kernel.value("[t.status for t in _compare]")
        reasoning = kernel.value("[t.reasoning[:15] for t in _compare]")
    finally:
        kernel.close()
    assert not [m for m in msgs if m["msg_type"] == "error"]
    live, saved = [m for m in msgs if m["msg_type"] == "display_data"]  # static below live
    assert WIDGET_VIEW in live["content"]["data"] and WIDGET_VIEW not in saved["content"]["data"]
    variants = saved_variants(saved["content"]["metadata"])
    assert [t["status"] for t in variants] == ["cancelled", "cancelled"]
    assert all(t["reasoning"].startswith("thinking slowly") for t in variants)  # partial, kept
    assert statuses == str(["cancelled"] * 2)
    assert reasoning == str(["thinking slowly"] * 2)
    assert kernel.comms[button]["disabled"] is True  # clicked: "Stopping…"
    closed = {m["content"]["comm_id"] for m in msgs if m["msg_type"] == "comm_close"}
    left = {c: kernel.comms[c].get("_model_name") for c in kernel.comms.keys() - closed}
    # every column's view closed, once ended: its title and preset stay, with no text
    assert "OutputModel" not in left.values(), left
    assert "thinking slowly" not in json.dumps([kernel.comms[c] for c in left])
    presets = [kernel.comms[c] for c in left if left[c] == "DropdownModel"]
    assert sorted(p["_options_labels"][p["index"]] for p in presets) == ["high", "low"]


def test_a_failed_variant_fails_the_cell_and_every_trace_is_kept(ip, wire_server):
    def hook(rec):
        if rec.json.get("reasoning_effort") == "high":
            return Reply.json({"error": {"message": "effort high is not allowed"}}, 400)
        return Reply.sse(wf.chat_sse("fine", "Answer at low."))

    wire_server.route("POST", CHAT, hook)
    cap = think_cell(ip, f"--model llamacpp:m --base-url {wire_server.url} --compare low,high", "Q")
    assert cap.error.startswith("%%think failed: ") and "effort high is not allowed" in cap.error
    assert len(cap.error.splitlines()) == 1
    saved = saved_variants(cap.outputs[-1].metadata)
    assert [t["status"] for t in saved] == ["complete", "error"]
