"""Fixtures of the sweep tests: a fresh cache and log database, a fake clock that concurrent
sleepers share, and a server that answers a sweep's runs over a real socket, each by its prompt,
counting the requests it holds at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import anyio
import pytest
import wire_fixtures as wf
from wire_server import Reply

CHAT = "/v1/chat/completions"


@pytest.fixture(autouse=True)
def _fresh_db(monkeypatch, tmp_path):
    from reasoning_nb.store import db as store

    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))
    monkeypatch.delenv("REASONING_NB_LOG", raising=False)
    monkeypatch.delenv("REASONING_NB_MODEL", raising=False)


class SharedClock:
    """Fake time for runs that wait side by side: a sleep moves time on to its own end, so two
    runs sleeping 7 s at once take 7 s, not 14 (the conftest's ``FakeClock`` adds them up)."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t = max(self.t, self.t + seconds)
        await anyio.sleep(0)


@pytest.fixture
def shared_clock() -> SharedClock:
    return SharedClock()


class Answers:
    """A hook for ``wire_server.route``: each run's answer is made from its prompt ("Q3" is
    answered "A3"). It notes each request's prompt and fake time (``asked``), counts the
    requests it holds at once (``most``), refuses the first requests as ``refuse`` says (a
    status and a Retry-After), and with ``hold(n)`` holds each request until n are held (a
    group of n at a time, then a moment longer: a request past the limit would be counted).
    """

    def __init__(self, clock: SharedClock | None = None) -> None:
        self.clock = clock
        self.reasoning = "Let me think."
        self.frames: Callable[[str, str], list[str]] = wf.llamacpp_sse
        self.lock = threading.Lock()
        self.group: threading.Barrier | None = None
        self.going = self.most = 0
        self.refusals: list[tuple[int, float | None]] = []
        self.asked: list[tuple[str, float | None]] = []

    def refuse(self, status: int = 429, retry_after: float | None = None, times: int = 1):
        self.refusals += [(status, retry_after)] * times

    def hold(self, runs: int) -> None:
        self.group = threading.Barrier(runs)

    def prompts(self) -> list[str]:
        return [prompt for prompt, _ in self.asked]

    def __call__(self, rec) -> Reply:
        prompt = rec.json["messages"][-1]["content"]
        with self.lock:
            self.asked.append((prompt, self.clock and self.clock.now()))
            if self.refusals:
                status, wait = self.refusals.pop(0)
                return Reply.json({"error": {"message": "slow down"}}, status, retry_after=wait)
            self.going += 1
            self.most = max(self.most, self.going)
        if self.group is not None:
            self.group.wait(timeout=20)
            time.sleep(0.05)
        with self.lock:
            self.going -= 1
        return Reply.sse(self.frames(self.reasoning, prompt.replace("Q", "A")))


@pytest.fixture
def answers(wire_server, shared_clock) -> Answers:
    hook = Answers(shared_clock)
    wire_server.route("POST", CHAT, hook)
    return hook
