"""Loop detection (``core.loops``): the detector alone, its false positives over every reasoning
text the tests hold, and a run over a real socket that loops (a notice, once; ``stop_on_loop``
ends it early), also when replayed and in a real kernel."""

from __future__ import annotations

import ast
import json
import random
from pathlib import Path

import anyio
import pytest
import test_widget
import wire_fixtures as wf
from kernel_session import saved_trace
from wire_server import Reply

from reasoning_nb import Done, Notice, ReasoningDelta, astream, think
from reasoning_nb.core.loops import HISTORY, LOOP_NOTICE, MIN_CHARS, STEP, LoopWatch
from reasoning_nb.store import db as store

TESTS = Path(__file__).parents[1]
PATH = "/v1/chat/completions"
MODEL = "llamacpp:m"

INTRO = (
    "Okay, the user wants the area of a ring with radii 3 and 5. The area is the big disc minus "
    "the small one, so pi times 25 minus pi times 9. "
)
PARAGRAPH = (
    "Wait, let me check the outer radius again: the ring goes from 3 to 5, so the outer disc has "
    "radius 5 and area 25 pi, and the inner disc has radius 3 and area 9 pi. The difference is "
    "16 pi. But is the question about the ring or about the disc? Let me re-read it once more. "
)
SHORT_LOOP = INTRO + "the " * 400  # period 4
LONG_LOOP = INTRO + PARAGRAPH * 8  # period ~300


def watch_all(text: str, step: int = 5) -> LoopWatch:
    watch = LoopWatch()
    fired = sum(watch.feed(text[i : i + step]) for i in range(0, len(text), step))
    assert fired == (1 if watch.detected else 0)  # True once, never again
    return watch


# -- the detector ----------------------------------------------------------------------------


def test_a_short_period_loop_fires_soon_after_it_starts():
    watch = watch_all(SHORT_LOOP)
    assert watch.detected
    assert len(INTRO) + MIN_CHARS <= watch.at_chars <= len(INTRO) + MIN_CHARS + 8 + STEP
    assert watch.describe().startswith(LOOP_NOTICE)
    assert watch.describe().endswith("before).")  # saved with the trace: no live-only advice
    assert "stopped" in watch.describe(stopped=True)


def test_a_paragraph_said_again_fires_on_its_third_copy_not_before():
    assert not watch_all(INTRO + PARAGRAPH * 2).detected  # quoting once is no loop
    watch = watch_all(LONG_LOOP)
    assert watch.detected
    start = len(INTRO)
    assert start + 2 * len(PARAGRAPH) < watch.at_chars <= start + 3 * len(PARAGRAPH) + STEP


@pytest.mark.parametrize("step", [1, 3, 17, 1000])
def test_where_the_deltas_split_never_matters(step):
    assert watch_all(LONG_LOOP, step).at_chars == watch_all(LONG_LOOP).at_chars
    assert watch_all(SHORT_LOOP.upper(), step).at_chars == watch_all(SHORT_LOOP).at_chars


def test_whitespace_and_case_do_not_hide_a_loop():
    text = INTRO + "".join(
        PARAGRAPH.replace(" ", "\n " if i % 2 else "  ").upper() if i % 3 else PARAGRAPH
        for i in range(6)
    )
    assert watch_all(text).detected


def test_memory_stays_bounded_on_a_long_stream():
    reasoning, _ = wf.many_chunks_texts(100_000)  # ~340 KB, never repeating
    watch = LoopWatch()
    for i in range(0, len(reasoning), 7):
        watch.feed(reasoning[i : i + 7])
    assert not watch.detected
    assert len(watch._text) <= HISTORY


# -- false positives over every reasoning text the tests hold --------------------------------


def reasoning_texts() -> dict[str, str]:
    """Every string of 40+ characters written in the tests (reasoning, answers and more), the
    golden notebooks' saved texts, and the generated texts
    the widget tests stream (100 KB of paragraphs, with and without code; 50 KB mixed texts)."""
    texts: dict[str, str] = {}
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts[f"{path.name}:{node.lineno}"] = node.value

    def strings(value, where):
        if isinstance(value, dict):
            for key, item in value.items():
                if key not in ("text/html", "state"):  # markup and widget state, not prose
                    strings(item, f"{where}/{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                strings(item, f"{where}[{i}]")
        elif isinstance(value, str):
            texts[where] = value

    for path in sorted((TESTS / "export" / "golden").glob("*.json")):
        strings(json.loads(path.read_text()), path.name)
    for seed in range(3):
        for lines in (False, True):
            for code in (False, True):
                text = test_widget.paragraphs(random.Random(seed), 100_000, lines, code)
                texts[f"paragraphs({seed}, {lines}, {code})"] = text
        texts[f"synthetic_text({seed})"] = test_widget.synthetic_text(
            random.Random(seed), 50_000, " ".join(test_widget.XSS)
        )
    texts["many_chunks_texts"] = wf.many_chunks_texts(25_000)[0]
    return {k: v for k, v in texts.items() if len(v) >= 40}


def test_no_false_positive_on_any_reasoning_text_the_tests_hold():
    texts = reasoning_texts()
    rng = random.Random(7)
    fired = []
    for name, text in texts.items():
        watch, i = LoopWatch(), 0
        while i < len(text) and not watch.detected:
            step = rng.randint(1, 12)
            watch.feed(text[i : i + step])
            i += step
        if watch.detected:
            fired.append((name, watch.describe()))
    chars = sum(map(len, texts.values()))
    print(f"\nloop detector: {len(fired)} false positives over {len(texts)} texts, {chars:,} chars")
    assert len(texts) > 500 and chars > 1_000_000  # the corpus is really there
    assert fired == []


# -- runs over a real socket -----------------------------------------------------------------


@pytest.fixture(autouse=True)
def db(tmp_path, monkeypatch):
    """A cache database of the test's own, and no model from the environment."""
    for name in ("LLAMACPP_API_KEY", "REASONING_NB_MODEL", "REASONING_NB_LOG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))


def serve(server, reasoning: str, **kw) -> int:
    pieces = wf.tokens(reasoning)
    server.route("POST", PATH, Reply.sse(wf.chat_sse(pieces, "The ring has area 16 pi."), **kw))
    return len(pieces)


def collect(server, **kw) -> list:
    async def main():
        return [e async for e in astream("Ring area?", model=MODEL, base_url=server.url, **kw)]

    return anyio.run(main)


def loop_notices(events) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and e.text.startswith(LOOP_NOTICE)]


@pytest.mark.parametrize("reasoning", [SHORT_LOOP, LONG_LOOP], ids=["short", "paragraph"])
def test_a_looping_stream_gets_one_notice_and_runs_on(wire_server, reasoning):
    serve(wire_server, reasoning)
    events = collect(wire_server)
    assert len(loop_notices(events)) == 1
    trace = events[-1].trace
    assert trace.status == "complete" and trace.answer == "The ring has area 16 pi."
    assert [w for w in trace.warnings if w.startswith(LOOP_NOTICE)] == loop_notices(events)
    notice = next(i for i, e in enumerate(events) if e in [Notice(loop_notices(events)[0])])
    assert any(isinstance(e, ReasoningDelta) for e in events[notice + 1 :])  # it went on


def test_a_stream_that_does_not_loop_gets_no_notice(wire_server):
    serve(wire_server, INTRO + PARAGRAPH * 2)
    assert loop_notices(collect(wire_server)) == []


@pytest.mark.parametrize("reasoning", [SHORT_LOOP, LONG_LOOP], ids=["short", "paragraph"])
def test_stop_on_loop_ends_the_run_early_keeping_what_arrived(wire_server, reasoning):
    served = serve(wire_server, reasoning + PARAGRAPH * 30, pause=0.002)
    events = collect(wire_server, stop_on_loop=True)
    deltas = [e for e in events if isinstance(e, ReasoningDelta)]
    trace = events[-1].trace
    assert isinstance(events[-1], Done) and trace.status == "cancelled"
    assert len(deltas) < served / 2 and trace.answer == ""
    assert trace.reasoning and reasoning.startswith(trace.reasoning)
    (notice,) = loop_notices(events)
    assert "stopped" in notice and notice in trace.warnings
    assert wire_server.last.wait() == "client_closed"  # the response was closed, not drained


def test_a_replay_shows_the_recorded_notice_once(wire_server):
    serve(wire_server, LONG_LOOP)
    first = collect(wire_server, cache=True)
    again = collect(wire_server, cache=True)
    assert again[-1].trace.replay is not None and len(wire_server.requests_to(PATH)) == 1
    assert loop_notices(again) == loop_notices(first) and len(loop_notices(again)) == 1
    stopped = collect(wire_server, cache=True, stop_on_loop=True)  # stops where the loop was
    trace = stopped[-1].trace
    assert trace.status == "cancelled" and len(trace.reasoning) < len(first[-1].trace.reasoning)
    assert len(loop_notices(stopped)) == 1 and len(wire_server.requests_to(PATH)) == 1


def test_think_takes_stop_on_loop(wire_server):
    serve(wire_server, LONG_LOOP + PARAGRAPH * 30)
    trace = think("Ring area?", model=MODEL, base_url=wire_server.url, stop_on_loop=True)
    assert trace.status == "cancelled" and any(w.startswith(LOOP_NOTICE) for w in trace.warnings)


# -- a real kernel ---------------------------------------------------------------------------


def test_a_think_cell_in_a_real_kernel_warns_and_stops_when_configured(kernel, wire_server):
    serve(wire_server, LONG_LOOP + PARAGRAPH * 30, pause=0.002)
    cell = f"%%think --model {MODEL} --base-url {wire_server.url}\nRing area?"
    saved = saved_trace(kernel.run(cell, 60))
    assert saved["status"] == "complete"
    assert len([w for w in saved["warnings"] if w.startswith(LOOP_NOTICE)]) == 1
    kernel.run("%config ThinkMagics.stop_on_loop = True")
    assert kernel.value("get_ipython().magics_manager.registry['ThinkMagics'].stop_on_loop") == (
        "True"
    )
    stopped = saved_trace(kernel.run(cell.replace("area?", "area, again?"), 60))
    assert stopped["status"] == "cancelled" and "stopped" in stopped["warnings"][-1]
    assert 0 < len(stopped["reasoning"]) < len(saved["reasoning"]) / 2


