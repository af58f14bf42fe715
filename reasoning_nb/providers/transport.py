"""One HTTP path for every provider: httpx streaming and retries (the frames are cut by
``framing``, what a failed answer says is worded by ``http_errors``).

Retries happen only before the first byte of a body has been read, so a retried request can never
duplicate text the user already saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
import random
import ssl
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import anyio
import httpx

from ..errors import ConfigError, ProviderError
from .address import on_this_machine
from .framing import Frame, Framer
from .http_errors import (
    not_a_stream,
    origin,
    retry_after,
    status_error,
    tls_error,
    untrusted,
    web_page,
)

RETRY_STATUSES = frozenset({429, 502, 503, 504, 529})  # 529: Anthropic "overloaded_error"
MAX_RETRY_WAIT = 30.0  # seconds; a longer Retry-After is reported instead of slept through
CLOSED = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
"""What httpx raises when the server closes the connection (a reset, a hang-up) before it
answers: retried like a refused connection, as nothing of the answer arrived."""


LOCAL_WAIT = 600.0
"""Seconds a local server may stay silent, before its answer and between bytes: it may load the
model first (Ollama allows a load 5 minutes) and read a long prompt on a CPU, which llama.cpp
does after it has sent its headers, so the wait between bytes must allow for it too."""
HOSTED_WAIT = 300.0
"""Seconds a hosted API may stay silent: a queue, or reasoning it does not stream (an o-series
model through Chat Completions sends nothing while it thinks); past that it is stuck."""

CA_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")


def ssl_context() -> ssl.SSLContext:
    """The TLS context for every client: it trusts the CA bundle that ``SSL_CERT_FILE`` names
    and the folder ``SSL_CERT_DIR`` names, else certifi's. The variables are read at each call,
    as a notebook may set them after a first failure; each setting's context is built once
    (that costs ~30 ms)."""
    return _ssl_context(*(os.environ.get(name) or None for name in CA_VARIABLES))


@functools.cache
def _ssl_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    if cafile is None and capath is None:
        return httpx.create_ssl_context(trust_env=False)  # certifi's bundle
    try:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    except (OSError, ssl.SSLError) as exc:  # only a file is read now: a folder is read on use
        raise ConfigError(
            f"SSL_CERT_FILE names {cafile}, which could not be read as CA certificates "
            f"({getattr(exc, 'strerror', None) or exc}): point it at a PEM file, or unset it."
        ) from None


@dataclass
class HttpRequest:
    url: str
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "POST"
    framing: str = "sse"
    """``sse`` or ``ndjson``."""


_SHARED: contextvars.ContextVar[dict[tuple, httpx.AsyncClient] | None] = contextvars.ContextVar(
    "reasoning_nb_shared_clients", default=None
)


@asynccontextmanager
async def shared_clients() -> AsyncIterator[None]:
    """Within it, requests with the same proxy, waits and TLS settings share one client, so its
    connections are kept alive from one run to the next (a sweep's runs to one server: no new
    connection, nor TLS handshake, per run). Closed on the way out."""
    clients: dict[tuple, httpx.AsyncClient] = {}
    token = _SHARED.set(clients)
    try:
        yield
    finally:
        _SHARED.reset(token)
        with anyio.CancelScope(shield=True):
            for client in clients.values():
                await client.aclose()


@dataclass(frozen=True)
class Clock:
    """Tests pass a fake one, so that a retry's wait is asserted, not slept through."""

    now: Callable[[], float] = time.time
    """For a Retry-After date and the hour to try again."""
    sleep: Callable[[float], Awaitable[Any]] = anyio.sleep


@dataclass
class Transport:
    timeout: float | None = None
    """Seconds to wait for the first byte and between bytes (None: the defaults above)."""
    local: bool = True
    """The server runs on the user's side (it may load the model first): the longer first wait."""
    connect_timeout: float = 10.0
    retries: int = 3
    backoff: float = 0.5
    secrets: tuple[str, ...] = ()
    """Strings to scrub from any message (the API key)."""
    start_hint: str = ""
    clock: Clock = Clock()

    def wait(self) -> float:
        """Seconds a server may stay silent: for its answer to begin, then between bytes."""
        if self.timeout is not None:
            return float(self.timeout)
        return LOCAL_WAIT if self.local else HOSTED_WAIT

    def _timeout(self) -> httpx.Timeout:
        wait = self.wait()
        return httpx.Timeout(
            connect=min(self.connect_timeout, wait), read=wait, write=wait, pool=wait
        )

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[Sending]:
        """The :class:`Sending` says when the server has the request, then gives the 2xx
        streaming response."""
        settings = {
            "timeout": self._timeout(),
            "trust_env": False,  # not .netrc nor SSL_* variables: only the proxy, chosen here
            "proxy": proxy_for(request.url),
            "verify": ssl_context(),
        }
        shared = _SHARED.get()
        async with contextlib.AsyncExitStack() as stack:
            if shared is None:
                client = await stack.enter_async_context(httpx.AsyncClient(**settings))
            else:
                key = (settings["proxy"], self.wait(), self.connect_timeout, id(settings["verify"]))
                client = shared.get(key) or shared.setdefault(key, httpx.AsyncClient(**settings))
            sending = Sending(lambda delivered: self._send_with_retries(client, request, delivered))
            try:
                yield sending
            finally:
                await sending.aclose()

    async def _send_with_retries(
        self, client: httpx.AsyncClient, request: HttpRequest, delivered: Callable[[], object]
    ) -> httpx.Response:
        headers = {
            "accept": "application/x-ndjson" if request.framing == "ndjson" else "text/event-stream"
        }
        headers.update(request.headers)

        async def trace(event: str, _info: dict[str, Any]) -> None:
            # httpcore's steps of one request (not of each read): the request is written, the
            # response is awaited.
            if event.endswith(".receive_response_headers.started"):
                delivered()

        attempt = 0
        while True:
            attempt += 1
            try:
                built = client.build_request(
                    request.method,
                    request.url,
                    json=request.body,
                    headers=headers,
                    extensions={"trace": trace},
                )
                response = await client.send(built, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout, *CLOSED) as exc:
                tls = tls_error(exc)
                if tls is not None:  # the same certificate comes back: a retry cannot help
                    raise ProviderError(self.scrub(untrusted(request.url, tls))) from None
                if attempt <= self.retries:
                    await self.clock.sleep(self._backoff(attempt))
                    continue
                raise ProviderError(self._unreachable(request.url, exc)) from None
            except httpx.TimeoutException:
                raise ProviderError(self._timed_out(request.url, first=True)) from None
            except httpx.HTTPError as exc:
                raise ProviderError(
                    self.scrub(f"The request to {origin(request.url)} failed: {exc}.")
                ) from None
            status = response.status_code
            if 200 <= status < 300 and status != 204 and not web_page(response):
                return response
            body = await _read_bounded(response)
            await response.aclose()
            if status < 400:
                raise ProviderError(self.scrub(not_a_stream(response, body)), status=status)
            now = self.clock.now()
            wait = retry_after(response.headers.get("retry-after"), now)
            retryable = status in RETRY_STATUSES and attempt <= self.retries
            if retryable and (wait is None or wait <= MAX_RETRY_WAIT):
                await self.clock.sleep(self._backoff(attempt) if wait is None else wait)
                continue
            message = self.scrub(status_error(response, body, wait, now))
            raise ProviderError(message, status=status, retry_after=wait)

    def _backoff(self, attempt: int) -> float:
        return self.backoff * (2 ** (attempt - 1)) * (0.75 + random.random() / 2)

    def _unreachable(self, url: str, exc: Exception) -> str:
        if isinstance(exc, CLOSED):
            return self.scrub(
                f"{origin(url)} closed the connection before it answered, {self.retries + 1} "
                "times: check the server's log (it may have crashed on the request, or a proxy "
                "refused it), then run it again."
            )
        hint = f"; {self.start_hint}" if self.start_hint else ""
        return self.scrub(f"Could not connect to {origin(url)} (is the server running?){hint}.")

    def _timed_out(self, url: str, *, first: bool) -> str:
        if first:
            what = (
                f"No data from {origin(url)} for {self.wait():g} s, the wait for the first byte; "
                "the server may be overloaded or still loading the model"
            )
        else:
            what = (
                f"No data from {origin(url)} for {self.wait():g} s, the wait between bytes "
                "once the answer began; what arrived is kept in the trace"
            )
        return self.scrub(f"{what}: try again, or pass a larger timeout= (--timeout).")

    def scrub(self, text: str) -> str:
        """``text`` without the secrets, raw or quoted (repr, bytes repr, percent-encoded)."""
        for secret in self.secrets:
            if not secret:
                continue
            forms = {secret, repr(secret)[1:-1], repr(secret.encode())[2:-1], quote(secret, "")}
            for form in sorted(forms, key=len, reverse=True):
                text = text.replace(form, "[redacted]")
        return text

    async def frames(self, response: httpx.Response, framing: str) -> AsyncIterator[list[Frame]]:
        """The frames of each network read, as a list: a read that holds many frames (a fast
        server, a buffering proxy) costs one async step."""
        url = str(response.request.url)
        framer = Framer(framing)
        # A body sent as is (streams usually are) skips httpx's decoding layer: one async step
        # less per read.
        encoded = "content-encoding" in response.headers
        try:
            async for chunk in response.aiter_bytes() if encoded else response.aiter_raw():
                frames = framer.feed(chunk)
                if frames:
                    yield frames
            frames = framer.close()
            if frames:
                yield frames
        except httpx.TimeoutException:
            raise ProviderError(self._timed_out(url, first=False)) from None
        except httpx.HTTPError as exc:
            raise ProviderError(
                self.scrub(
                    f"The connection to {origin(url)} dropped mid-stream ({type(exc).__name__}); "
                    "what arrived is kept in the trace: run the cell again to retry."
                )
            ) from None


LEFTOVER_S = 0.05
"""How long a stream its parser has finished may take to end its body. Servers end it right
after their last event: read to its end, the response hands its connection back to the pool,
for the next run of a sweep or a compare (no new connection, nor TLS handshake). A body that
goes on is closed with its connection, as before."""
LEFTOVER_READS = 16


async def drain(batches: AsyncIterator[list[Frame]]) -> None:
    """Read and drop what is left of a finished stream, briefly (``LEFTOVER_S``)."""
    with anyio.move_on_after(LEFTOVER_S):
        reads = 0
        try:
            async for _ in batches:
                reads += 1
                if reads == LEFTOVER_READS:
                    return
        except ProviderError:  # (everything the run needed has arrived)
            return


class Sending:
    """A request on its way. It is sent from a task of its own, so that its sender can say when
    the server has it (``delivered``), long before it answers (``response``): a local server
    may load the model first."""

    def __init__(self, send: Callable[[Callable[[], None]], Awaitable[httpx.Response]]) -> None:
        self._delivered = asyncio.Event()
        self._task = asyncio.ensure_future(send(self._delivered.set))

    async def delivered(self) -> bool:
        """Wait until the server has the request (True), or has answered, or the sending failed
        (False: ``response()`` tells which)."""
        told = asyncio.ensure_future(self._delivered.wait())
        try:
            await asyncio.wait({self._task, told}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            told.cancel()
        return not self._task.done()

    async def response(self) -> httpx.Response:
        """The 2xx streaming response, once its headers are in; or the ProviderError."""
        return await self._task  # (cancelling the caller cancels the sending)

    async def aclose(self) -> None:
        task = self._task
        task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait({task})
            if not task.cancelled() and task.exception() is None:
                await task.result().aclose()


async def _read_bounded(response: httpx.Response, limit: int = 64 * 1024) -> bytes:
    chunks, size = [], 0
    try:
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
    except httpx.HTTPError:
        pass
    return b"".join(chunks)[:limit]


def proxy_for(url: str) -> str | None:
    """The environment's proxy for a remote URL (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY), never for
    loopback: a local server is reached directly even behind a corporate proxy."""
    host = urlsplit(url).hostname or ""
    if on_this_machine(url) or urllib.request.proxy_bypass(host):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(urlsplit(url).scheme) or proxies.get("all")
