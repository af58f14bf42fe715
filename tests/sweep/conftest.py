"""Fixtures of the sweep tests: a fresh cache and log database, and a server that answers a
sweep's runs over a real socket, each by its prompt, counting the requests it holds at once."""

from __future__ import annotations

import threading

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


class Answers:
    """A hook for ``wire_server.route``: each run's answer is made from its prompt ("Q3" is
    answered "A3"), its reasoning from the effort asked; it counts the requests in flight
    (``most`` at once) and may refuse some first (``refuse``: status and Retry-After)."""

    def __init__(self, pause: float = 0.0, reasoning: str = "Let me think.") -> None:
        self.pause, self.reasoning = pause, reasoning
        self.lock = threading.Lock()
        self.going = self.most = self.served = 0
        self.refusals: list[tuple[int, float | None]] = []
        self.asked: list[str] = []

    def refuse(self, status: int = 429, retry_after: float | None = None, times: int = 1):
        self.refusals += [(status, retry_after)] * times

    def __call__(self, rec) -> Reply:
        prompt = rec.json["messages"][-1]["content"]
        with self.lock:
            self.asked.append(prompt)
            if self.refusals:
                status, wait = self.refusals.pop(0)
                return Reply.json({"error": {"message": "slow down"}}, status, retry_after=wait)
            self.going += 1
            self.most = max(self.most, self.going)
        threading.Thread(target=self._done, args=(rec,), daemon=True).start()
        answer = prompt.replace("Q", "A")
        frames = wf.llamacpp_sse(self.reasoning, answer)
        return Reply.sse(frames, delay_before_headers=self.pause)

    def _done(self, rec) -> None:
        rec.finished.wait(30)
        with self.lock:
            self.going -= 1
            self.served += 1


@pytest.fixture
def answers(wire_server) -> Answers:
    hook = Answers()
    wire_server.route("POST", CHAT, hook)
    return hook
