"""Anthropic's Message Batches (anthropic-sdk-python 2026-08: ``types/messages/
batch_create_params.py``, ``message_batch.py``, ``message_batch_individual_response.py`` and
the four ``message_batch_*_result.py``).

Submit: ``POST /v1/messages/batches`` ``{"requests": [{"custom_id", "params"}]}``, ``params``
being a Messages request body (not streamed). Poll: ``GET /v1/messages/batches/{id}``:
``processing_status`` (``in_progress``, ``canceling``, ``ended``) and ``request_counts``
``{processing, succeeded, errored, canceled, expired}`` (the last four stay zero until the whole
batch ends). Collect: the JSONL at ``results_url`` (set once it ended), a line ``{"custom_id",
"result": {"type": "succeeded", "message"} | {"type": "errored", "error": {"type": "error",
"error": {"type", "message"}}} | {"type": "canceled"} | {"type": "expired"}}``, in no
particular order. The key goes only to the API's own address: a ``results_url`` elsewhere is
not followed, the documented ``/results`` path under the base URL is read instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote, urlsplit

from ...errors import ProviderError
from ...providers.anthropic import messages_url
from ...providers.http_errors import server_message
from .http import Client
from .service import Outcome, Status, count

NOT_RUN = {
    "canceled": ("cancelled", "the batch was cancelled before this request ran"),
    "expired": ("error", "the batch expired (24 hours) before this request ran"),
}


class MessageBatches:
    name = "Anthropic's Message Batches"
    limit = 100_000  # requests in one batch (and 256 MB)

    def __init__(self, base_url: str, client: Client):
        self.root = f"{messages_url(base_url)}/batches"
        self.client = client

    async def submit(self, lines: list[tuple[str, dict[str, Any]]], sweep_id: str) -> str:
        requests = [{"custom_id": cid, "params": body} for cid, body in lines]
        batch = await self.client.json("POST", self.root, json={"requests": requests})
        value = batch.get("id")
        if not isinstance(value, str) or not value:
            raise ProviderError(
                "Anthropic answered without a batch id: check that the base URL points at "
                "Anthropic's API."
            )
        return value

    async def status(self, batch_id: str) -> Status:
        batch = await self.client.json("GET", f"{self.root}/{quote(batch_id, safe='')}")
        state = str(batch.get("processing_status") or "unknown")
        counts = batch.get("request_counts") or {}
        done = sum(count(counts.get(k)) for k in ("succeeded", "errored", "canceled", "expired"))
        url = batch.get("results_url")
        return Status(
            state=state,
            ended=state == "ended",
            done=done,
            failed=count(counts.get("errored")) + count(counts.get("expired")),
            results=(url,) if isinstance(url, str) and url else (),
        )

    async def results(self, batch_id: str, status: Status) -> AsyncIterator[Outcome]:
        url = f"{self.root}/{quote(batch_id, safe='')}/results"
        if status.results and _origin(status.results[0]) == _origin(self.root):
            url = status.results[0]
        async for line in self.client.lines(url):
            yield _outcome(line)


def _outcome(line: dict[str, Any]) -> Outcome:
    cid = str(line.get("custom_id"))
    result = line.get("result") or {}
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        return Outcome(cid, body=result["message"])
    if kind in NOT_RUN:
        status, why = NOT_RUN[kind]
        return Outcome(cid, error=f"Anthropic did not run it: {why}.", status=status)
    if kind == "errored":
        response = result.get("error") or {}
        error = response.get("error") if isinstance(response, dict) else None
        what = f" ({error['type']})" if isinstance(error, dict) and error.get("type") else ""
        said = server_message(response) if isinstance(response, dict) else "no message"
        return Outcome(cid, error=f"Anthropic could not run it: {said}{what}.")
    return Outcome(cid, error=f"Anthropic sent a result of an unknown type {kind!r}.")


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port
