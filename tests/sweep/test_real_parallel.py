"""A sweep against a real ``llama-server`` with four slots (issue 26, item 5).

The evidence that requests overlapped is the server's own: its log writes one line when a slot
takes a task (``launch_slot_: id 2 | task 7 | processing task``) and one when it lets it go
(``release: ... stop processing``), in the order its one decode loop did them. Replaying those
lines gives how many slots held a task at once, with no clock of ours involved. The same sweep
at concurrency 1 is the control: there the count must stay at 1, so the measure can fail.
SmolLM2's text varies between builds, so the frame is checked for its shape (rows, statuses,
what each preset sent, tokens), not for answers.
"""

from __future__ import annotations

import re
import time
from functools import partial
from pathlib import Path

import anyio
import pytest
from needs import unavailable

from reasoning_nb.errors import ConfigError
from reasoning_nb.llama_server import choice as llama_choice
from reasoning_nb.llama_server.process import LlamaServer
from reasoning_nb.store import db as store
from reasoning_nb.sweep.engine import asweep
from reasoning_nb.sweep.rows import COLUMNS

MODEL = "llamacpp:smollm2"
SLOTS = 4
PROMPTS = [
    "What is the capital of France?",
    "Name a primary colour.",
    "How many legs has a spider?",
]
PRESETS = ["off", "low"]
SENT = {
    "off": {"chat_template_kwargs": {"enable_thinking": False}, "reasoning_effort": "none"},
    "low": {"reasoning_effort": "low"},
}
# temperature 0 and a small cap keep each request short on 2 cores, yet long enough (a score of
# decode steps) that four requests sent together are decoded together
SAMPLING = {"temperature": 0, "max_tokens": 24}

TAKEN = re.compile(r"launch_slot_: id +(\d+) \| task (\d+) \| processing task")
LET_GO = re.compile(r"release: id +(\d+) \| task (\d+) \| stop processing")


def slots_at_once(log: str) -> tuple[int, set[int]]:
    """From llama-server's log lines: the most slots that held a task at the same time, and
    which slots took tasks at all."""
    busy: set[int] = set()
    used: set[int] = set()
    most = 0
    for line in log.splitlines():
        if taken := TAKEN.search(line):
            busy.add(int(taken[1]))
            used.add(int(taken[1]))
            most = max(most, len(busy))
        elif let_go := LET_GO.search(line):
            busy.discard(int(let_go[1]))
    return most, used


def test_the_log_reading_counts_overlap():
    """Guard for the reading itself, on lines as b11434 writes them."""
    log = "\n".join(
        [
            "0.00.36 I slot launch_slot_: id  3 | task 0 | processing task, is_child = 0",
            "0.00.42 I slot      release: id  3 | task 0 | stop processing: n_tokens = 14",
            "0.00.45 I slot launch_slot_: id  0 | task 2 | processing task, is_child = 0",
            "0.00.46 I slot launch_slot_: id  1 | task 3 | processing task, is_child = 0",
            "0.00.50 I slot      release: id  0 | task 2 | stop processing: n_tokens = 40",
            "0.00.51 I slot launch_slot_: id  0 | task 5 | processing task, is_child = 0",
            "0.00.52 I slot      release: id  1 | task 3 | stop processing: n_tokens = 40",
        ]
    )
    assert slots_at_once(log) == (2, {0, 1, 3})
    assert slots_at_once("\n".join(log.splitlines()[:2])) == (1, {3})


def test_the_server_is_asked_for_its_slots():
    """``parallel`` reaches the command line; left out, the server keeps its own default."""

    def args(parallel: int | None) -> list[str]:
        server = LlamaServer(binary=Path("llama-server"), model=Path("m.gguf"), parallel=parallel)
        server.stop()  # never started: this only removes its log file
        return server.args

    with_slots = args(SLOTS)
    assert with_slots[with_slots.index("--parallel") + 1] == str(SLOTS)
    assert "--parallel" not in args(None)


@pytest.fixture(scope="module")
def server():
    """The embedded llama-server (the binary ``local:`` picks here), with ``--parallel 4``."""
    try:
        server, _ = llama_choice.start(reasoning_format="deepseek", parallel=SLOTS)
    except ConfigError as exc:  # the model is not installed, or nothing runs here unbuilt
        unavailable(str(exc))
    yield server
    server.stop()


def sweep_on(server, concurrency: int, db: Path):
    """Run the sweep with a run log and replay cache of its own (``db``: a replayed run would
    never reach the server); return it with the server's log lines written while it ran."""
    log = Path(server.log.name)
    start = log.stat().st_size
    run = partial(
        asweep,
        PROMPTS,
        models=[MODEL],
        presets=PRESETS,
        concurrency=concurrency,
        base_url=server.url,
        **SAMPLING,
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(store.DB_ENV, str(db))
        result = anyio.run(run)
    return result, written_since(log, start, releases=len(result.rows))


@pytest.fixture(scope="module")
def swept(server, tmp_path_factory):
    """The sweep at four runs at once, and the server's log of it (two tests read it)."""
    return sweep_on(server, SLOTS, tmp_path_factory.mktemp("swept") / "cache.sqlite3")


def written_since(log: Path, start: int, releases: int, wait: float = 10.0) -> str:
    """The log from byte ``start``, once it holds ``releases`` releases: the server writes its
    log from a thread of its own, so the last lines may land just after the last response."""
    deadline = time.monotonic() + wait
    while True:
        with log.open("rb") as lines:
            lines.seek(start)
            text = lines.read().decode(errors="replace")
        if len(LET_GO.findall(text)) >= releases or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


@pytest.mark.real_server
def test_concurrent_requests_share_the_slots(swept):
    result, log = swept
    most, used = slots_at_once(log)
    assert most >= 2, f"the server never held two tasks at once:\n{log[-3000:]}"
    assert most <= SLOTS and len(used) >= 2
    assert len(TAKEN.findall(log)) == len(PROMPTS) * len(PRESETS)  # one task per row, no retry
    assert len(result.rows) == len(PROMPTS) * len(PRESETS)


@pytest.mark.real_server
def test_one_at_a_time_never_overlaps(server, tmp_path):
    """The control: the same sweep at concurrency 1 keeps one slot busy at a time."""
    _, log = sweep_on(server, 1, tmp_path / "cache.sqlite3")
    assert len(TAKEN.findall(log)) == len(PROMPTS) * len(PRESETS)
    assert slots_at_once(log)[0] == 1


@pytest.mark.real_server
def test_the_frame_has_one_right_row_per_prompt_and_preset(swept):
    result, _ = swept
    frame = result.frame()
    assert list(frame.columns) == list(COLUMNS)
    assert len(frame) == len(PROMPTS) * len(PRESETS)
    cells = {(row.prompt_id, row.preset) for row in frame.itertuples()}
    assert cells == {(i, p) for i in range(len(PROMPTS)) for p in PRESETS}
    assert frame["sweep_id"].nunique() == 1 and frame["sweep_id"].iloc[0] == result.sweep_id
    for row in frame.itertuples():
        assert row.prompt == PROMPTS[row.prompt_id]
        assert (row.model, row.sent) == (MODEL, SENT[row.preset])
        assert row.status in ("complete", "truncated"), (row.status, row.error)
        assert row.error is None and not row.cached
        assert row.input_tokens > 0
        assert 0 < row.output_tokens <= SAMPLING["max_tokens"]
        assert row.cost_usd is None  # a local model has no price
        assert row.total_ms >= row.first_token_ms > 0
    off = frame[frame["preset"] == "off"]
    assert (off["reasoning"] == "").all()  # the template's thinking switched off
    assert (off["answer"].str.strip() != "").all()
    progress = result.progress
    assert (progress.total, progress.done, progress.failed) == (len(frame), len(frame), 0)
    assert progress.output_tokens == frame["output_tokens"].sum()
