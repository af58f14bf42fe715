"""The sweep's live view: the engine may tell of every token, the page hears a few updates a
second (a recording comm and a fake clock), the last state at once, and nothing it shows can
inject markup."""

from __future__ import annotations

import comm
import pytest
from comm.base_comm import BaseComm

from reasoning_nb.notebook.sweep_view import MAX_RATE, SweepWidget, figures_html
from reasoning_nb.sweep.progress import Progress


def progress(**changes) -> Progress:
    return Progress(**{"total": 100, **changes})


class Clock:
    t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def sent(monkeypatch):
    """Every update the widgets send: (comm id, state)."""
    out: list[tuple[str, dict]] = []

    class RecordingComm(BaseComm):
        def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
            if msg_type == "comm_msg" and (data or {}).get("method") == "update":
                out.append((self.comm_id, data["state"]))

    monkeypatch.setattr(comm, "create_comm", lambda **kw: RecordingComm(**kw))
    return out


def test_every_token_told_a_few_updates_a_second_sent(sent):
    clock = Clock()
    view = SweepWidget(clock=clock)
    for i in range(1, 2001):  # 2,000 changes over 10 s: a token each
        clock.t = i * 0.005
        view.update(progress(done=i // 20, running=4, output_tokens=i))
        view.tick()
        if i % 8 == 0:  # the runner ticks every 40 ms
            view.tick()
    assert MAX_RATE * 10 / 2 * 0.8 <= len(sent) <= MAX_RATE * 10 + 2
    figures = [s["value"] for cid, s in sent if cid == view.figures.model_id]
    assert "2.0k tokens" in figures[-1] or "1.9k tokens" in figures[-1]
    view.update(progress(done=100, output_tokens=2000, elapsed_s=10))
    before = len(sent)
    view.finish()  # at once, whatever the budget says
    last = dict(sent[before:])
    assert last[view.bar.model_id]["value"] == 100
    assert last[view.bar.model_id]["bar_style"] == "success"
    assert "100/100 done" in last[view.figures.model_id]["value"]
    assert view.stop_button.disabled


def test_nothing_new_nothing_sent(sent):
    clock = Clock()
    view = SweepWidget(clock=clock)
    view.update(progress(done=1))
    assert view.tick() == 2
    clock.t = 5
    assert view.tick() == 0 and len(sent) == 2


def test_a_failed_run_turns_the_bar_red_and_stop_asks_once(sent):
    stops = []
    view = SweepWidget(clock=Clock(), on_stop=lambda: stops.append(1))
    view.update(progress(done=3, failed=1))
    view.tick()
    assert view.bar.bar_style == "danger" and "<b>1 failed</b>" in view.figures.value
    view.stop_button.click()
    assert stops == [1] and view.stop_button.disabled
    assert view.stop_button.description == "Stopping…"


def test_figures_are_escaped():
    shown = figures_html(progress(batch_state="<img src=x onerror=alert(1)>"))
    assert "<img" not in shown and "&lt;img src=x" in shown
