"""Plain JSON requests to a batch service: no streams here, but the same care as the one HTTP
path (``providers.transport``): the environment's proxy, the TLS context, retries that honour
``Retry-After`` on the injected clock (a GET on any passing failure, a POST only where the
service surely did not take it), and every message scrubbed of the key."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from ...errors import ProviderError
from ...providers.http_errors import origin, retry_after, status_error
from ...providers.transport import RETRY_STATUSES, Clock, Transport, proxy_for, ssl_context

REFUSED = frozenset({429, 503, 529})
"""What a POST is sent again on: the service said it did not take the request on. A POST that
failed any other way may have created a batch, so it is never sent twice (two batches bill
twice)."""
MAYBE_CREATED = (
    " The batch may have been created all the same: look for it in the provider's dashboard "
    "before running the sweep again."
)
TIMEOUT = 120.0
"""Seconds for one request: an upload of a large file, or a large results file, takes a while."""


@dataclass
class Client:
    headers: dict[str, str]
    """The protocol's own (``build_request``'s): its key header and API version."""
    secrets: tuple[str, ...] = ()
    clock: Clock = field(default_factory=Clock)
    retries: int = 3

    def scrub(self, text: str) -> str:
        return Transport(secrets=self.secrets).scrub(text)

    async def json(self, method: str, url: str, **options: Any) -> dict[str, Any]:
        response = await self.send(method, url, **options)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ProviderError(
                f"{origin(url)} answered {method} {_path(url)} with something other than a JSON "
                "object: check that the base URL points at the provider's API."
            )
        return data

    async def send(self, method: str, url: str, **options: Any) -> httpx.Response:
        """The 2xx response, its body read; a ProviderError (scrubbed) for anything else."""
        async with self._client(url) as client:
            response = await self._send(client, method, url, options)
            await response.aread()
            return response

    async def lines(self, url: str) -> AsyncIterator[dict[str, Any]]:
        """The JSON objects of a JSONL file, a line at a time: a results file of 10,000 runs
        is never held whole."""
        async with self._client(url) as client:
            response = await self._send(client, "GET", url, {"headers": {"accept": "*/*"}})
            try:
                async for line in response.aiter_lines():
                    if line.strip():
                        yield _line(line, url)
            except httpx.HTTPError as exc:
                raise ProviderError(
                    f"The download from {origin(url)} broke off ({type(exc).__name__}): resume "
                    "the sweep to fetch the results again."
                ) from None
            finally:
                await response.aclose()

    def _client(self, url: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            timeout=TIMEOUT, trust_env=False, proxy=proxy_for(url), verify=ssl_context()
        )

    async def _send(
        self, client: httpx.AsyncClient, method: str, url: str, options: dict[str, Any]
    ) -> httpx.Response:
        """The 2xx response, its body not read yet; retried as the module says."""
        headers = {**self.headers, **options.pop("headers", {})}
        attempt = 0
        while True:
            attempt += 1
            try:
                built = client.build_request(method, url, headers=headers, **options)
                response = await client.send(built, stream=True)
            except httpx.HTTPError as exc:
                unsent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
                if (unsent or method == "GET") and attempt <= self.retries:
                    await self.clock.sleep(2.0**attempt)
                    continue
                raise ProviderError(self.scrub(_unreachable(method, url, exc, unsent))) from None
            if 200 <= response.status_code < 300:
                return response
            await response.aread()
            await response.aclose()
            status = response.status_code
            wait = retry_after(response.headers.get("retry-after"), self.clock.now())
            again = RETRY_STATUSES if method == "GET" else REFUSED
            if status in again and attempt <= self.retries:
                await self.clock.sleep(2.0**attempt if wait is None else wait)
                continue
            message = status_error(response, response.content, wait, self.clock.now())
            if method != "GET" and status >= 500 and status not in REFUSED:
                message += MAYBE_CREATED
            raise ProviderError(self.scrub(message), status=status)


def _unreachable(method: str, url: str, exc: Exception, unsent: bool) -> str:
    said = f"Could not reach {origin(url)} ({type(exc).__name__})"
    if unsent or method == "GET":
        return f"{said}: check the network, then resume the sweep."
    return f"{said} once it had the request.{MAYBE_CREATED}"


def _path(url: str) -> str:
    return httpx.URL(url).path


def _line(text: str, url: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ProviderError(
            f"{origin(url)} sent a results line that is not a JSON object ({text[:60]!r}): check "
            "that the base URL points at the provider's API."
        )
    return data
