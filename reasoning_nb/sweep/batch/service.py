"""What the runner needs of a batch service, whichever it is: submit, a status, the results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Status:
    state: str
    """The service's own word (``validating``, ``in_progress``, ``ended``...): the progress
    view's ``batch_state``."""
    ended: bool
    """Its results can be collected (all, or what ran before it expired or was cancelled)."""
    done: int = 0
    """Requests finished so far, where the service counts them while it runs."""
    failed: int = 0
    problem: str | None = None
    """Why the batch as a whole failed (its requests then have no result of their own)."""
    results: tuple[str, ...] = ()
    """Where its results are (file ids, a URL), as the service names them."""


@dataclass(frozen=True)
class Outcome:
    """One request's result: ``body`` (the response, as its API returns it) or ``error``."""

    custom_id: str
    body: dict[str, Any] | None = None
    error: str | None = None
    status: str = "error"
    """For a request with no body: ``error``, or ``cancelled`` (the batch never ran it)."""


class Service(Protocol):
    name: str
    limit: int
    """The most requests one batch may hold."""

    async def submit(self, lines: list[tuple[str, dict[str, Any]]], sweep_id: str) -> str:
        """Send the requests (custom_id, body); the batch id, once the service accepted it."""
        ...

    async def status(self, batch_id: str) -> Status: ...

    def results(self, batch_id: str, status: Status) -> AsyncIterator[Outcome]: ...


def count(value: Any) -> int:
    """A service's request count; 0 for anything that is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
