"""OpenAI's Batch API over ``/v1/responses`` (openai-python 2026-08: ``types/batch.py``,
``batch_create_params.py``, ``file_object.py``; the request and output line shapes of the API
reference's "request input" and "request output" objects).

Submit: the requests as a JSONL file, a line ``{"custom_id", "method": "POST", "url":
"/v1/responses", "body"}``, uploaded to ``POST /files`` (multipart, ``purpose=batch``), then
``POST /batches`` ``{"input_file_id", "endpoint": "/v1/responses", "completion_window": "24h"}``.
Poll: ``GET /batches/{id}``: ``status`` (``validating``, ``in_progress``, ``finalizing``, then
``completed``, ``failed``, ``expired`` or ``cancelled``; ``cancelling`` between), and
``request_counts`` ``{total, completed, failed}`` as it runs. Collect: ``GET /files/{id}/content``
of ``output_file_id`` (requests that ran) and ``error_file_id`` (those that failed, and those an
expired or cancelled batch never ran: ``error.code`` ``batch_expired`` / ``batch_cancelled``).
Each output line is ``{"id", "custom_id", "response": {"status_code", "request_id", "body"},
"error"}``; lines come in no particular order.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from ...errors import ProviderError
from ...providers.http_errors import server_message
from .http import Client
from .service import Outcome, Status, count

ENDPOINT = "/v1/responses"
ENDED = ("completed", "failed", "expired", "cancelled")
NOT_RUN = {  # error.code -> (the row's status, why)
    "batch_expired": ("error", "the batch expired (24 hours) before this request ran"),
    "batch_cancelled": ("cancelled", "the batch was cancelled before this request ran"),
}


class OpenAIBatches:
    name = "OpenAI's Batch API"
    limit = 50_000  # requests in one input file (and 200 MB: far past a sweep's prompts)

    def __init__(self, base_url: str, client: Client):
        self.base, self.client = base_url.rstrip("/"), client

    async def submit(self, lines: list[tuple[str, dict[str, Any]]], sweep_id: str) -> str:
        data = "".join(
            json.dumps({"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": body}) + "\n"
            for cid, body in lines
        ).encode()
        uploaded = await self.client.json(
            "POST",
            f"{self.base}/files",
            data={"purpose": "batch"},
            files={"file": (f"sweep-{sweep_id}.jsonl", data, "application/jsonl")},
        )
        batch = await self.client.json(
            "POST",
            f"{self.base}/batches",
            json={
                "input_file_id": _id(uploaded, "file"),
                "endpoint": ENDPOINT,
                "completion_window": "24h",
                "metadata": {"sweep_id": sweep_id[:512]},  # (values hold 512 characters)
            },
        )
        return _id(batch, "batch")

    async def status(self, batch_id: str) -> Status:
        batch = await self.client.json("GET", f"{self.base}/batches/{quote(batch_id, safe='')}")
        state = str(batch.get("status") or "unknown")
        counts = batch.get("request_counts") or {}
        problem = None
        if state == "failed":  # the file was refused: the errors name its lines
            errors = (batch.get("errors") or {}).get("data") or []
            said = "; ".join(_batch_error(e) for e in errors if isinstance(e, dict))
            problem = f"OpenAI refused the batch {batch_id}: {said or 'no reason was given'}."
        files = tuple(
            str(batch[key]) for key in ("output_file_id", "error_file_id") if batch.get(key)
        )
        return Status(
            state=state,
            ended=state in ENDED,
            done=count(counts.get("completed")) + count(counts.get("failed")),
            failed=count(counts.get("failed")),
            problem=problem,
            results=files,
        )

    async def results(self, batch_id: str, status: Status) -> AsyncIterator[Outcome]:
        for file_id in status.results:
            url = f"{self.base}/files/{quote(file_id, safe='')}/content"
            async for line in self.client.lines(url):
                yield _outcome(line)


def _outcome(line: dict[str, Any]) -> Outcome:
    cid = str(line.get("custom_id"))
    error = line.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message") or code or "no message"
        if code in NOT_RUN:
            status, why = NOT_RUN[code]
            return Outcome(cid, error=f"OpenAI did not run it: {why}.", status=status)
        return Outcome(cid, error=f"OpenAI could not run it: {message} ({code}).")
    response = line.get("response") or {}
    status, body = response.get("status_code"), response.get("body")
    if status == 200 and isinstance(body, dict):
        return Outcome(cid, body=body)
    said = server_message(body) if isinstance(body, dict | str) else "no body"
    return Outcome(cid, error=f"OpenAI answered this request with HTTP {status}: {said}.")


def _batch_error(error: dict[str, Any]) -> str:
    line = f" (line {error['line']})" if isinstance(error.get("line"), int) else ""
    return f"{error.get('message') or error.get('code') or 'an error'}{line}"


def _id(obj: dict[str, Any], what: str) -> str:
    value = obj.get("id")
    if not isinstance(value, str) or not value:
        raise ProviderError(
            f"OpenAI answered without a {what} id: check that the base URL points at OpenAI's API."
        )
    return value
