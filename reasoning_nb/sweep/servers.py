"""One gate per provider and server: how many of a sweep's runs it takes at once, and the
back-off every run to it shares.

A 429 (or a ``Retry-After``) from a server is its word about the whole sweep, not one request:
the gate holds every run to that server until the wait is over, the run that heard it included.
Runs wait on the gate through the ``sleep`` they are given, which is also where the transport
waits its own retries, so one 429 slows all of them at once instead of each finding out alone.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..errors import ConfigError
from ..providers import catalog
from ..providers.address import base_url_for
from ..providers.protocols import protocol_module
from ..store.keys import address_of

LOCAL_RUNS = 4
"""Runs at once on a local server by default: a GPU box's vLLM takes many, a laptop's Ollama
queues them (it answers them in turn, so more would only wait there)."""
HOSTED_RUNS = 8
"""Runs at once on a hosted API by default: well under the usual rate limits of a paid tier."""


def server_of(model: str, base_url: str | None) -> tuple[str, bool]:
    """The provider and server a model's runs go to (``"ollama @ http://host:11434"``), and
    whether it is local."""
    info = catalog.parse_model(model).provider
    if base_url is None and protocol_module(info.protocol).SERVER is not None:
        return f"{info.id} @ embedded", True
    try:
        address = address_of(base_url_for(info, base_url))
    except ConfigError:  # no address yet (discovery decides): one server per provider
        address = "default"
    return f"{info.id} @ {address}", info.local


def limit_of(concurrency: int | Mapping[str, int] | None, server: str, local: bool) -> int:
    """Runs at once for ``server``: ``concurrency`` as a number for every server, or a mapping
    by provider id (``{"openai": 16}``) or server; the defaults above otherwise."""
    if isinstance(concurrency, Mapping):
        provider = server.split(" @ ", 1)[0]
        concurrency = concurrency.get(server, concurrency.get(provider))
    if concurrency is None:
        return LOCAL_RUNS if local else HOSTED_RUNS
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(
            f"concurrency must be a whole number of runs at once, at least 1, not {concurrency!r}."
        )
    return concurrency


class Gate:
    """One server's gate: ``runs`` at once, and the moment before which none may start."""

    def __init__(
        self,
        server: str,
        runs: int,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[Any]],
    ) -> None:
        self.server, self.runs = server, runs
        self._clock, self._sleep = clock, sleep
        self._open_at = -math.inf
        self.waits: list[float] = []
        """Every back-off asked of this gate, in seconds (what the server said, or ours)."""

    def hold(self, seconds: float) -> None:
        """No run starts (or retries) before ``seconds`` from now."""
        self.waits.append(seconds)
        self._open_at = max(self._open_at, self._clock() + seconds)

    async def wait(self) -> None:
        """Until the gate is open: several runs waiting sleep once each, to the same moment."""
        while (left := self._open_at - self._clock()) > 0:
            await self._sleep(left)

    async def back_off(self, seconds: float) -> None:
        """The ``sleep`` a run is given: a wait the transport asks for holds the whole gate."""
        self.hold(seconds)
        await self.wait()
