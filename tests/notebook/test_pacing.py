"""The pacer alone, on a fake clock: leading edge, pacing, window cap, byte budget."""

from __future__ import annotations

import random

import pytest
from test_widget import max_per_window

from reasoning_nb.notebook.pacing import Pacer


class FakeClock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_leading_edge_sends_at_once_then_paces():
    clock = FakeClock(100.0)
    th = Pacer(25, clock)
    assert th.ready()  # nothing sent yet: the first change goes out now
    th.sent(1)
    clock.t += 0.039
    assert not th.ready()
    clock.t += 0.001
    assert th.ready()  # 1 / 25 s later


def test_pacing_charges_every_message_of_a_flush():
    clock = FakeClock()
    th = Pacer(25, clock)
    th.sent(3)  # a flush that touched three widgets
    clock.t = 0.119
    assert not th.ready()
    clock.t = 0.12
    assert th.ready()


def test_quiet_spell_makes_the_next_change_leading_again():
    clock = FakeClock()
    th = Pacer(10, clock)
    th.sent(1)
    assert not th.ready()
    clock.t = 5.0
    assert th.ready()


def test_sending_nothing_does_not_delay():
    clock = FakeClock()
    th = Pacer(25, clock)
    th.sent(0)
    assert th.ready()


@pytest.mark.parametrize("reserve", [0, 4])
def test_greedy_sender_never_exceeds_the_window_cap(reserve):
    clock, rng = FakeClock(), random.Random(7)
    th = Pacer(25, clock, reserve=reserve)
    times: list[float] = []
    for step in range(20_000):  # 20 s, asking every millisecond with flushes of 1-4 messages
        clock.t = step * 0.001
        cost = rng.randint(1, 4)
        if th.ready(cost):
            times += [clock.t] * cost
            th.sent(cost)
    assert max_per_window(times) <= 25 - reserve
    assert len(times) >= 20 * (25 - reserve) * 0.8  # and it does not starve either


def test_noted_messages_fill_the_window_without_pacing():
    clock = FakeClock()
    th = Pacer(5, clock)
    th.note(4)
    assert th.ready(1) and not th.ready(2)  # no pacing delay, but the window is nearly full
    th.sent(1)
    clock.t = 0.9
    assert th.room() == 0
    clock.t = 1.0001
    assert th.room() == 5


def test_bad_rate():
    with pytest.raises(ValueError):
        Pacer(0)


# -- the byte budget ---------------------------------------------------------------------------


def test_no_byte_ratio_means_no_byte_limit():
    clock = FakeClock()
    th = Pacer(25, clock)
    th.sent(1, nbytes=10**9)
    clock.t = 1.0
    assert th.affords(10**9) and th.ready(nbytes=10**9)


def test_byte_budget_is_slack_plus_ratio_times_text():
    clock = FakeClock()
    th = Pacer(25, clock, byte_ratio=8, byte_slack=1_000)
    assert th.ready(nbytes=1_000) and not th.ready(nbytes=1_001)  # only the slack at first
    th.sent(1, nbytes=900)
    clock.t = 1.0  # time alone earns nothing...
    assert not th.ready(nbytes=200)
    th.earn(25)  # ...text does: 8 bytes a byte
    assert th.ready(nbytes=300) and not th.ready(nbytes=301)
    th.note(2, nbytes=300)  # unpaced messages are charged too
    assert th.spent == 1_200 and not th.affords(1)
    th.earn(1)
    assert th.affords(8)


def test_pacing_and_bytes_both_hold_a_flush_back():
    clock = FakeClock()
    th = Pacer(25, clock, byte_ratio=10, byte_slack=0)
    th.earn(100)
    th.sent(1, nbytes=500)
    clock.t = 0.01
    assert th.affords(500) and not th.ready(nbytes=500)  # bytes would do, pacing says wait
    clock.t = 0.04
    assert th.ready(nbytes=500) and not th.ready(nbytes=501)


def test_left_and_earned():
    th = Pacer(25, FakeClock(), byte_ratio=10, byte_slack=500)
    th.earn(40)
    th.sent(1, nbytes=300)
    assert th.earned == 40 and th.left() == 500 + 400 - 300
    assert Pacer(25, FakeClock()).left() == float("inf")  # no byte budget


def test_a_slow_stream_earns_bytes_by_the_second_too():
    """Each update wraps its text in ~100 bytes: a per-second allowance, from the first text on,
    lets a slow stream update every second or so."""
    clock = FakeClock(50.0)
    th = Pacer(25, clock, byte_ratio=4, byte_slack=0, byte_rate=100)
    clock.t = 60.0  # no text yet: time earns nothing
    assert th.left() == 0
    th.earn(10)
    assert th.left() == 40
    clock.t = 62.5
    assert th.left() == 40 + 250 and th.ready(nbytes=290) and not th.ready(nbytes=291)


def test_a_burst_lets_a_late_caller_catch_up_at_the_same_rate():
    """With ``burst``, a caller that comes late may send that many ahead of their turn (a token
    bucket of that size); a flush dearer than the burst waits until the whole burst is free."""
    clock = FakeClock()
    th = Pacer(20, clock, burst=5)
    th.sent(10)  # (unpaced at once, say: the paced ones repay them)
    clock.t = 0.29
    assert not th.ready(1)
    clock.t = 0.30  # 0.5 s of debt, less the burst's 0.2 s
    assert th.ready(1) and not th.ready(2)
    clock.t = 0.5
    assert th.ready(5) and th.ready(9)  # (dearer than the burst: once it is all free)
    times: list[float] = []
    for step in range(250):  # 10 s, asking every 40 ms, flushes of 1-4 messages
        clock.t = 1 + step * 0.04
        if th.ready(cost := 1 + step % 4):
            times += [clock.t] * cost
            th.sent(cost)
    assert max_per_window(times) <= 20
