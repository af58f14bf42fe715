"""One HTTP path for every provider: httpx streaming, retries, error mapping, SSE/NDJSON framing.

Retries happen only before the first byte of a body has been read, so a retried request can never
duplicate text the user already saw.
"""

from __future__ import annotations

import asyncio
import codecs
import email.utils
import functools
import html
import json
import os
import random
import re
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

RETRY_STATUSES = frozenset({429, 502, 503, 504, 529})  # 529: Anthropic "overloaded_error"
MAX_RETRY_WAIT = 30.0  # seconds; a longer Retry-After is reported instead of slept through
CLOSED = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
"""What httpx raises when the server closes the connection (a reset, a hang-up) before it
answers: retried like a refused connection, as nothing of the answer arrived."""
WEB_PAGES = ("text/html", "application/xhtml+xml")
MAX_LINE = 16 * 2**20
"""Bytes one line of a stream may hold: a frame carries a token or two, and the longest a
server sends (the Responses API's last event, the whole output again) stays far below this."""


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


Frame = tuple[str, str | None]
"""One framed payload, ``(data, event)``: an SSE event's data with its ``event:`` name, or one
NDJSON line with ``None``. A plain tuple, as one is made per token."""


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
    sleep: Callable[[float], Any] = anyio.sleep

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
        """Send the request; the :class:`Sending` says when the server has it, then gives the
        2xx streaming response. Errors become ProviderError."""
        async with httpx.AsyncClient(
            timeout=self._timeout(),
            trust_env=False,  # not .netrc nor SSL_* variables: only the proxy, chosen here
            proxy=proxy_for(request.url),
            verify=ssl_context(),
        ) as client:
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
                tls = _tls_error(exc)
                if tls is not None:  # the same certificate comes back: a retry cannot help
                    raise ProviderError(self.scrub(_untrusted(request.url, tls))) from None
                if attempt <= self.retries:
                    await self.sleep(self._backoff(attempt))
                    continue
                raise ProviderError(self._unreachable(request.url, exc)) from None
            except httpx.TimeoutException:
                raise ProviderError(self._timed_out(request.url, first=True)) from None
            except httpx.HTTPError as exc:
                raise ProviderError(
                    self.scrub(f"The request to {_origin(request.url)} failed: {exc}.")
                ) from None
            status = response.status_code
            if 200 <= status < 300 and status != 204 and not _web_page(response):
                return response
            body = await _read_bounded(response)
            await response.aclose()
            if status < 400:
                raise ProviderError(self.scrub(_not_a_stream(response, body)), status=status)
            wait = _retry_after(response.headers.get("retry-after"))
            retryable = status in RETRY_STATUSES and attempt <= self.retries
            if retryable and (wait is None or wait <= MAX_RETRY_WAIT):
                await self.sleep(self._backoff(attempt) if wait is None else wait)
                continue
            raise ProviderError(self.scrub(_status_error(response, body, wait)), status=status)

    def _backoff(self, attempt: int) -> float:
        return self.backoff * (2 ** (attempt - 1)) * (0.75 + random.random() / 2)

    def _unreachable(self, url: str, exc: Exception) -> str:
        if isinstance(exc, CLOSED):
            return self.scrub(
                f"{_origin(url)} closed the connection before it answered, {self.retries + 1} "
                "times: check the server's log (it may have crashed on the request, or a proxy "
                "refused it), then run it again."
            )
        hint = f"; {self.start_hint}" if self.start_hint else ""
        return self.scrub(f"Could not connect to {_origin(url)} (is the server running?){hint}.")

    def _timed_out(self, url: str, *, first: bool) -> str:
        if first:
            what = (
                f"No data from {_origin(url)} for {self.wait():g} s, the wait for the first byte; "
                "the server may be overloaded or still loading the model"
            )
        else:
            what = (
                f"No data from {_origin(url)} for {self.wait():g} s, the wait between bytes "
                "once the answer began; what arrived is kept in the trace"
            )
        return self.scrub(f"{what}: try again, or pass a larger timeout= (--timeout).")

    def scrub(self, text: str) -> str:
        """``text`` without the secrets, raw or as libraries quote them (repr, bytes repr,
        percent-encoded)."""
        for secret in self.secrets:
            if not secret:
                continue
            forms = {secret, repr(secret)[1:-1], repr(secret.encode())[2:-1], quote(secret, "")}
            for form in sorted(forms, key=len, reverse=True):
                text = text.replace(form, "[redacted]")
        return text

    async def frames(self, response: httpx.Response, framing: str) -> AsyncIterator[list[Frame]]:
        """Yield the frames of each network read, as a list; network failures mid-stream become
        ProviderError. The framing is the ``Framer``'s, sync and in one pass per read; a read
        that holds many frames (a fast server, a buffering proxy) costs one async step."""
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
                    f"The connection to {_origin(url)} dropped mid-stream ({type(exc).__name__}); "
                    "what arrived is kept in the trace: run the cell again to retry."
                )
            ) from None


class Sending:
    """A request on its way. It is sent from a task of its own, so that its sender can say when
    the server has it (``delivered``), long before it answers (``response``): a local server
    may load the model first."""

    def __init__(self, send: Callable[[Callable[[], None]], Awaitable[httpx.Response]]) -> None:
        """``send(delivered)`` sends, and calls ``delivered()`` once the server has the request."""
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
        """Stop the sending if it still runs; close the response if there is one."""
        task = self._task
        task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait({task})
            if not task.cancelled() and task.exception() is None:
                await task.result().aclose()


class Framer:
    """A response body's bytes in, its frames out: ``feed()`` each read, ``close()`` at the end.

    Lines end at ``\n``, ``\r\n`` and ``\r`` only: ``aiter_lines()`` also splits on U+2028,
    U+2029 and U+0085, which JSON allows raw inside strings (llama.cpp and vLLM send them so),
    and a frame cut there is no longer JSON. The bytes go through an incremental decoder, so a
    multi-byte character that the network cut in two waits for its end; a trailing ``\r`` waits
    too, as the next read may start with its ``\n``. (JSON escapes ``\r`` in strings, so a raw
    one only ends a line.)

    SSE: ``data:`` lines are joined until a blank line; ``:`` lines are comments.
    """

    def __init__(self, framing: str, max_line: int = MAX_LINE) -> None:
        self._sse = framing == "sse"
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._max_line = max_line
        self._rest = ""  # the unfinished line, or its start when _pieces hold the rest
        self._pieces: list[str] = []
        self._held = 0  # the bytes in _pieces
        self._data: list[str] = []  # SSE: the data lines of the event being read
        self._event: str | None = None

    def feed(self, chunk: bytes) -> list[Frame]:
        return self._frames(self.lines(chunk))

    def close(self) -> list[Frame]:
        """The frames left at the end of the body: a last line without its line end, a last
        event without its blank line."""
        lines = self.lines(b"", final=True)
        return self._frames([*lines, ""] if self._sse else lines)

    def lines(self, chunk: bytes, *, final: bool = False) -> list[str]:
        """The lines that ``chunk`` completes; the unfinished one waits for the next read, or
        is the last line if the body ends here (``final``)."""
        text = self._decode(chunk, final)
        if "\n" not in text and "\r" not in text and not final and not self._rest.endswith("\r"):
            # No line ends here: the piece waits and is joined once, when its line ends, so a
            # long line costs its length, not its length times its reads.
            self._pieces.append(text)
            self._held += len(chunk)
            if self._held > self._max_line:
                self._too_long()
            return []
        if self._pieces:
            text = "".join((self._rest, *self._pieces, text))
            self._pieces.clear()
            self._held = 0
        else:
            text = self._rest + text
        if "\r" in text:
            held = "\r" if text.endswith("\r") and not final else ""
            text = text.removesuffix(held).replace("\r\n", "\n").replace("\r", "\n") + held
        lines = text.split("\n")
        self._rest = lines.pop()  # "" after a line end
        if final and self._rest:
            lines.append(self._rest)
            self._rest = ""
        return lines

    def _too_long(self) -> None:
        raise ProviderError(
            f"The server sent a line of over {self._max_line // 2**20} MiB without a line end, "
            "far longer than any frame of a model stream; what arrived before it is kept in the "
            "trace: check that the base URL points at a model server."
        )

    def _frames(self, lines: list[str]) -> list[Frame]:
        if not self._sse:
            return [(line, None) for line in lines if line.strip()]
        frames: list[Frame] = []
        data = self._data
        for line in lines:
            if line.startswith("data: "):  # the common case first: this runs once per token
                data.append(line[6:])
            elif not line:
                if data:
                    frames.append((data[0] if len(data) == 1 else "\n".join(data), self._event))
                    data.clear()
                self._event = None
            elif line.startswith("data:"):
                data.append(line[5:])
            elif line.startswith("event:"):
                self._event = line[6:].strip()
            # anything else: a ":" keep-alive comment (llama.cpp ping, OpenRouter PROCESSING),
            # or a field this client does not use (id:, retry:)
        return frames


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


def server_message(body: bytes | str | dict) -> str:
    """The server's own error text from the usual JSON error shapes, else the raw text."""
    if isinstance(body, (bytes, str)):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            body = json.loads(text)
        except ValueError:
            return " ".join(text.split())[:500]
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, str):
            return err
        if isinstance(err, dict):
            for key in ("message", "msg", "detail", "error"):
                if isinstance(err.get(key), str):
                    return err[key]
        if isinstance(body.get("message"), str):
            return body["message"]
        return json.dumps(body)[:500]
    return str(body)[:500]


RETRY_AFTER_LIMIT = 7 * 24 * 3600.0
"""A longer Retry-After (``inf``, ``1e20``) says nothing a user can act on: read as none."""


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if seconds <= RETRY_AFTER_LIMIT else None


def _status_error(response: httpx.Response, body: bytes, wait: float | None) -> str:
    """The message for an error status: the server's own text (a web page's title, not its
    markup), and when to try again if the server said (Retry-After)."""
    status = response.status_code
    if _web_page(response, body):
        text = _web_page_message(response, body)
    else:
        text = server_message(body) or f"HTTP {status}"
    if wait is not None and wait >= 1:
        return f"{text} (HTTP {status}; try again {_retry_time(wait)})"
    if status == 429:
        return f"{text} (HTTP 429; wait a little, then try again)"
    return text


def _retry_time(seconds: float) -> str:
    """``in 2 min, after 14:05``: how long, and until when on the local clock."""
    if seconds < 120:
        span = f"{seconds:.0f} s"
    elif seconds < 2 * 3600:
        span = f"{-(-seconds // 60):.0f} min"
    else:
        span = f"{seconds / 3600:.1f} h"
    at = time.localtime(time.time() + seconds)
    clock = time.strftime("%H:%M" if seconds < 20 * 3600 else "%Y-%m-%d %H:%M", at)
    return f"in {span}, after {clock}"


def _not_a_stream(response: httpx.Response, body: bytes) -> str:
    """Why a 2xx or 3xx answer is not the stream asked for: a redirect (never followed: the key
    must not go to another host), no content, or a web page."""
    where, status = _origin(str(response.url)), response.status_code
    answered = f"{where} answered {status} {response.reason_phrase}".rstrip()
    if 300 <= status < 400:
        location = response.headers.get("location", "")[:200] or "no Location given"
        return (
            f"{answered}, a redirect to {location}, not a model stream; the request and its key "
            "were not sent there: if that is the model server, use it as the base URL."
        )
    if status == 204:
        return f"{answered}, an empty reply, not a model stream: check the base URL."
    return _web_page_message(response, body)


def _web_page(response: httpx.Response, body: bytes = b"") -> bool:
    """A web page by its content type, or (an error's body) by its first tag."""
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind in WEB_PAGES or body.lstrip()[:5].lower() in (b"<!doc", b"<html")


def _web_page_message(response: httpx.Response, body: bytes) -> str:
    """A web page where a model stream belongs: a web interface or a login page (status 200),
    or a proxy's error page; its title or text in one line, never its markup."""
    status = response.status_code
    page = _page_text(body)
    titled = f" ({page})" if page else ""
    if status < 300:
        where = _origin(str(response.url))
        kind = response.headers.get("content-type", "").split(";")[0].strip()
        return (
            f"{where} answered with a web page{titled}, {kind}, not a model stream: point the "
            "base URL at the model server's API (with /v1 for OpenAI-compatible servers), not "
            "at a web interface or a login page."
        )
    fix = "check that the model server behind it runs" if status >= 500 else "check the base URL"
    return (
        f"HTTP {status} with a web page{titled}, from a proxy or web server rather than the "
        f"model server: {fix}."
    )


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
_UNSHOWN = re.compile(rb"<(script|style)[^>]*>.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(rb"<[^>]*>")


def _page_text(page: bytes, limit: int = 100) -> str:
    """A web page in one line: its title, else its text without markup."""
    found = _TITLE.search(page)
    text = found.group(1) if found else _TAG.sub(b" ", _UNSHOWN.sub(b" ", page))
    line = " ".join(html.unescape(text.decode("utf-8", "replace")).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _tls_error(exc: BaseException) -> ssl.SSLError | None:
    """The TLS failure behind a connection error, if that is what it was."""
    seen = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _untrusted(url: str, error: ssl.SSLError) -> str:
    where = _origin(url)
    if isinstance(error, ssl.SSLCertVerificationError):
        why = error.verify_message or error.reason or "not verified"
        bundle = os.environ.get("SSL_CERT_FILE")
        using = f" (SSL_CERT_FILE names {bundle}, which does not hold it)" if bundle else ""
        return (
            f"The TLS certificate of {where} is not trusted ({why}){using}: if it is your own "
            "server's or your network's (a company proxy), set SSL_CERT_FILE to a PEM file of "
            "the CA certificates that issued it, then run it again."
        )
    why = error.reason or str(error)
    return (
        f"The TLS handshake with {where} failed ({why}): check that the server speaks HTTPS on "
        "that port, or use http:// if it does not."
    )


def proxy_for(url: str) -> str | None:
    """The environment's proxy for a remote URL (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY), never for
    loopback: a local server is reached directly even behind a corporate proxy."""
    host = urlsplit(url).hostname or ""
    if on_this_machine(url) or urllib.request.proxy_bypass(host):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(urlsplit(url).scheme) or proxies.get("all")


def _origin(url: str) -> str:
    parts = httpx.URL(url)
    return f"{parts.scheme}://{parts.host}{f':{parts.port}' if parts.port else ''}{parts.path}"
