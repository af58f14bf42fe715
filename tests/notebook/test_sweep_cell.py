"""``%think --sweep`` and ``%%think --sweep`` in the in-process shell (the text path): what a
cell asks for reaches the engine as models x presets, and every mistake is one line, before
any request."""

from __future__ import annotations

import pytest
import wire_fixtures as wf
from IPython.utils.capture import capture_output
from shell_cell import think_cell
from wire_server import Reply

from reasoning_nb.notebook.sweep_result import SWEEP_KEY

CHAT = "/v1/chat/completions"


def line_magic(ip, line: str):
    with capture_output() as cap:
        result = ip.run_cell(f"%think {line}")
    failed = result.error_before_exec or result.error_in_exec
    cap.error = "\n".join(failed._render_traceback_()) if failed else ""
    return cap


@pytest.mark.parametrize(
    ("line", "body", "said"),
    [
        ("--presets low,high", "", "%think: --presets is for --sweep; add --sweep to the line."),
        ("--sweep", None, "--sweep needs a FILE (CSV or JSONL) in the line form"),
        ("--sweep", "  \n\n", "the cell has no prompts: write one prompt per line"),
        ("--sweep q.csv", "Why?", "--sweep q.csv reads its prompts from the file: empty the cell"),
        ("--sweep --compare low,high", "Why?", "--sweep does not take --compare"),
        ("--sweep --chat c", "Why?", "--sweep does not take --chat"),
        ("--sweep --presets low,low", "Why?", "--presets lists an item twice: 'low,low'."),
        ("--sweep --presets low,,high", "Why?", "--presets takes comma-separated items"),
        ("--sweep --presets low,hgih", "Why?", "hgih"),
        ("--sweep --model llamacpp:m,nowhere", "Why?", "nowhere"),
        ("--sweep --margin -1", "Why?", "--margin must be a finite number at least 0, not -1.0."),
        ("--margin 0.1", None, "%think: --margin is for --sweep; add --sweep to the line."),
    ],
)
def test_mistakes_are_one_line_before_any_request(ip, wire_server, line, body, said):
    line = f"{line} --base-url {wire_server.url}"
    if "--model" not in line:
        line += " --model llamacpp:m"
    cap = line_magic(ip, line) if body is None or not line.startswith("--sweep") else None
    if cap is None:
        cap = think_cell(ip, line, body)
    assert said in cap.error
    assert len(cap.error.splitlines()) == 1
    assert wire_server.requests == []


@pytest.fixture
def fresh_db(monkeypatch, tmp_path):
    from reasoning_nb.store import db as store

    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))
    monkeypatch.delenv("REASONING_NB_LOG", raising=False)


def by_prompt(rec):
    """The answer names the prompt and the effort asked."""
    prompt, effort = rec.json["messages"][-1]["content"], rec.json.get("reasoning_effort")
    return Reply.sse(wf.chat_sse(f"thinking {effort} " * 3, f"{prompt.upper()} at {effort}"))


def test_a_cell_of_prompts_runs_each_with_each_preset_once(ip, wire_server, fresh_db):
    wire_server.route("POST", CHAT, by_prompt)
    line = f"--sweep --model llamacpp:m --base-url {wire_server.url} --presets low,high"
    cap = think_cell(ip, line, "q1\n\n  q2  \nq3 <b>bold</b>\n")
    assert cap.error == ""
    sent = sorted(
        (b["messages"][-1]["content"], b["reasoning_effort"]) for b in wire_server.bodies(CHAT)
    )
    assert sent == sorted((q, e) for q in ("q1", "q2", "q3 <b>bold</b>") for e in ("low", "high"))
    sweep = ip.user_ns.pop("_sweep")
    assert [(r.prompt_id, r.preset) for r in sweep.rows] == [
        (p, e) for p in range(3) for e in ("low", "high")
    ]
    assert sweep.rows[5].answer == "Q3 <B>BOLD</B> at high"
    # the bar printed as it went (no carriage returns in a kernel's stdout), then the result
    assert "\r" not in cap.stdout and cap.stdout.splitlines()[-1].startswith("[####")
    assert "6/6 done" in cap.stdout
    [output] = cap.outputs
    saved = output.metadata[SWEEP_KEY]
    assert saved["sweep_id"] == sweep.sweep_id and saved["progress"]["done"] == 6
    html = output.data["text/html"]
    assert "<b>bold" not in html and "q3 &lt;b&gt;bold&lt;/b&gt;" in html
    assert html.split("<details", 1)[1].count("<tr>") == 7  # every run, under the analysis
    assert "mean grade" in html and "low" in html.split("<details", 1)[0]
    assert "6/6 done" in output.data["text/plain"]

    again = think_cell(ip, line, "q1\n\n  q2  \nq3 <b>bold</b>\n")  # resumes: all replayed
    assert again.error == "" and len(wire_server.requests) == 6
    assert "6 from the cache" in again.stdout
    ip.user_ns.pop("_sweep")


def test_the_line_form_reads_a_file_and_grades_its_expected_column(
    ip, wire_server, fresh_db, tmp_path
):
    wire_server.route("POST", CHAT, by_prompt)
    path = tmp_path / "qs.csv"
    path.write_text("prompt,expected\nq1,Q1 AT LOW\nq2,nothing like it\n")
    line = f"--sweep {path} --model llamacpp:m --base-url {wire_server.url} --presets low"
    cap = line_magic(ip, line)
    assert cap.error == ""
    sweep = ip.user_ns.pop("_sweep")
    assert [r.grade for r in sweep.rows] == [1.0, 0.0]
    assert "2/2 done" in cap.outputs[0].data["text/plain"]


def test_every_run_failing_fails_the_cell_with_the_first_error(
    ip, closed_port, fresh_db, fast_backoff
):
    line = f"--sweep --model llamacpp:m --base-url http://127.0.0.1:{closed_port}"
    cap = think_cell(ip, line, "q1\nq2")
    assert cap.error.startswith("%%think --sweep: every run failed; the first: ")
    assert len(cap.error.splitlines()) == 1
    assert "2 failed" in cap.outputs[0].data["text/plain"]  # the result shows them all the same
    ip.user_ns.pop("_sweep")


def test_the_result_recommends_a_preset_and_flags_one_that_changed_nothing(
    ip, wire_server, fresh_db, tmp_path
):
    """A server whose `high` thinks no more than `medium`, and whose `low` answers wrong: the
    cell's result recommends `medium` and says `high` had no effect."""

    def hook(rec):
        effort = rec.json.get("reasoning_effort")
        steps = {"low": 20, "medium": 200, "high": 200}[effort]
        answer = "No" if effort == "low" else "Yes"
        return Reply.sse(wf.chat_sse("Let me check this step. " * steps, answer, usage=True))

    wire_server.route("POST", CHAT, hook)
    path = tmp_path / "qs.jsonl"
    path.write_text("".join(f'{{"prompt": "q{i}", "expected": "Yes"}}\n' for i in range(4)))
    line = (
        f"--sweep {path} --model llamacpp:m --base-url {wire_server.url} "
        "--presets low,medium,high --margin 0.1"
    )
    cap = line_magic(ip, line)
    assert cap.error == ""
    ip.user_ns.pop("_sweep")
    text = cap.outputs[0].data["text/plain"]
    assert "Recommended" in text and "medium" in text.split("Recommended", 1)[1].splitlines()[1]
    assert "No effect: llamacpp:m · high" in text
    assert "within 0.1 of the best grade" in text
    html = cap.outputs[0].data["text/html"]
    assert 'class="reasoning-nb-sweep-plot"' in html  # the plot, as an image
    assert cap.outputs[0].metadata[SWEEP_KEY]["margin"] == 0.1
