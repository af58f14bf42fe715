"""The sweep's progress in words (``sweep.bar.figures``) and the terminal bar: what it says,
and how often a terminal or a log hears it (a fake clock: never the wall clock)."""

from __future__ import annotations

import io

import pytest

from reasoning_nb.sweep.bar import TerminalBar, figures, line
from reasoning_nb.sweep.engine import asweep
from reasoning_nb.sweep.progress import Progress


def progress(**changes) -> Progress:
    return Progress(**{"total": 200, **changes})


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_figures_say_every_part_and_leave_out_what_is_naught():
    p = progress(
        done=37, running=4, failed=1, cached=3, input_tokens=12_000, output_tokens=39_200,
        reasoning_tokens=38_000, usd=0.4213, elapsed_s=65, eta_s=250,
    )  # fmt: skip
    assert line(p) == (
        "37/200 done · 4 running · 1 failed · 3 from the cache · 51.2k tokens (38.0k reasoning)"
        " · $0.42 · 1m 05s · ETA 4m 10s"
    )
    quiet = dict(figures(progress(done=2, elapsed_s=3)))
    assert set(quiet) == {"done", "tokens", "spend", "elapsed", "eta"}
    assert quiet["eta"] == "ETA …" and quiet["spend"] == "$0.00"  # (no ETA known yet)


def test_a_finished_or_stopped_sweep_has_no_eta_and_says_why_it_stopped():
    ended = dict(figures(progress(done=200, elapsed_s=10, eta_s=0)))
    assert "eta" not in ended
    capped = dict(figures(progress(done=50, usd=0.004, stopped="max_usd", eta_s=9)))
    assert capped["stopped"] == "stopped: the spend cap was reached" and "eta" not in capped
    assert capped["spend"] == "$0.0040"


def test_the_batch_state_is_shown_inert():
    """The state comes from the batch service: no control character reaches a terminal."""
    shown = dict(figures(progress(batch_state="in_progress\x1b]52;c;x\x07")))
    assert shown["batch"] == "batch: in_progress]52;c;x"


def test_a_terminal_redraws_in_place_at_most_every_interval():
    now = [0.0]
    out = Tty()
    bar = TerminalBar(out, clock=lambda: now[0], interval=0.2)
    assert bar.redraw
    for done in range(1, 100):  # 99 changes within 0.99 s
        now[0] = done * 0.01
        bar(progress(done=done))
    redraws = out.getvalue().count("\r\x1b[K")
    assert 4 <= redraws <= 6 and "\n" not in out.getvalue()
    bar(progress(done=200, elapsed_s=2))
    bar(progress(done=200, elapsed_s=3))  # (after the end: nothing more)
    final = out.getvalue().rsplit("\r\x1b[K", 1)[1]
    assert final == "[########################] 200/200 done · 0 tokens · $0.00 · 2s\n"


def test_a_log_gets_a_line_per_tenth_and_on_a_new_batch_state():
    out = io.StringIO()
    bar = TerminalBar(out)
    assert not bar.redraw
    for done in range(200):
        bar(progress(done=done))
    bar(progress(done=199, batch_state="finalizing"))
    bar(progress(done=200))
    lines = out.getvalue().splitlines()
    assert len(lines) == 12  # 0%, 10%, ..., 90%, the batch's new state, the end
    assert "\r" not in out.getvalue()
    assert lines[1].startswith("[##.") and "20/200 done" in lines[1]
    assert "batch: finalizing" in lines[-2] and lines[-1].startswith("[####")


@pytest.mark.anyio
async def test_the_bar_follows_a_real_sweep_to_its_end(wire_server, answers):
    """Plain Python: the bar is the engine's ``on_progress``; its last line is the end."""
    out = io.StringIO()
    await asweep(
        ["Q1", "Q2", "Q3"], models=["llamacpp:m"], presets=["low", "high"],
        base_url=wire_server.url, on_progress=TerminalBar(out),
    )  # fmt: skip
    lines = out.getvalue().splitlines()
    assert lines[-1].startswith("[########################] 6/6 done · ")
    assert len(lines) <= 11  # a line per tenth at most, and the end
