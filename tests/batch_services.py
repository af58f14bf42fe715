"""OpenAI's Batch API and Anthropic's Message Batches on a ``WireServer``, for the batch tests.

Each speaks its service's wire format as the SDK types describe it (openai-python
``types/batch.py``, anthropic-sdk-python ``types/messages/message_batch*.py``): the requests
arrive as the client sends them (a multipart JSONL upload; a JSON ``requests`` list), the batch
moves one state per poll, and the results come back as JSONL in an order of the server's own
(reversed), so only ``custom_id`` can match them. ``answer(body)`` makes each request's result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from wire_server import Recorded, Reply, WireServer

Answer = Callable[[dict[str, Any]], Any]


def _jsonl(lines: list[dict[str, Any]]) -> Reply:
    text = "".join(json.dumps(line) + "\n" for line in reversed(lines))
    return Reply(text, content_type="application/binary")


def multipart(rec: Recorded) -> dict[str, tuple[str | None, bytes]]:
    """The form fields of a multipart request: name -> (file name, content)."""
    head = f"Content-Type: {rec.headers['content-type']}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + rec.body_bytes)
    return {
        part.get_param("name", header="content-disposition"): (
            part.get_filename(),
            part.get_payload(decode=True),
        )
        for part in message.iter_parts()
    }


class OpenAIBatches:
    """``answer(body)`` gives a response body (HTTP 200), ``(status, error body)`` for a request
    the API refused, or the ``error.code`` of a request the batch never ran (``batch_expired``)."""

    BATCH = "batch_abc123"

    def __init__(
        self,
        server: WireServer,
        answer: Answer,
        states: tuple[str, ...] = ("validating", "in_progress", "finalizing", "completed"),
        errors: list[dict[str, Any]] | None = None,
    ):
        self.server, self.answer, self.states = server, answer, list(states)
        self.errors = errors
        self.lines: list[dict[str, Any]] = []
        self.polls = 0
        server.route("POST", "/v1/files", self._upload)
        server.route("POST", "/v1/batches", self._create)
        server.route("GET", f"/v1/batches/{self.BATCH}", self._status)
        server.route("GET", "/v1/files/file-out/content", lambda rec: _jsonl(self._out(True)))
        server.route("GET", "/v1/files/file-err/content", lambda rec: _jsonl(self._out(False)))

    def _upload(self, rec: Recorded) -> dict[str, Any]:
        form = multipart(rec)
        name, data = form["file"]
        self.purpose = form["purpose"][1].decode()
        self.lines = [json.loads(line) for line in data.decode().splitlines() if line]
        return {
            "id": "file-in",
            "object": "file",
            "bytes": len(data),
            "created_at": 0,
            "filename": name,
            "purpose": self.purpose,
            "status": "processed",
        }

    def _create(self, rec: Recorded) -> dict[str, Any]:
        return self._batch("validating")

    def _status(self, rec: Recorded) -> dict[str, Any]:
        self.polls += 1
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        return self._batch(state)

    def _batch(self, state: str) -> dict[str, Any]:
        ended = state in ("completed", "expired", "cancelled")
        out = self._out(True)
        batch = {
            "id": self.BATCH,
            "object": "batch",
            "endpoint": "/v1/responses",
            "input_file_id": "file-in",
            "completion_window": "24h",
            "created_at": 0,
            "status": state,
            "request_counts": {
                "total": len(self.lines),
                "completed": len(out) if ended else (1 if state == "in_progress" else 0),
                "failed": len(self.lines) - len(out) if ended else 0,
            },
            "output_file_id": "file-out" if ended else None,
            "error_file_id": "file-err" if ended else None,
        }
        if state == "failed":
            batch["errors"] = {"object": "list", "data": self.errors or []}
        return batch

    def _results(self) -> list[dict[str, Any]]:
        results = []
        for n, line in enumerate(self.lines):
            got = self.answer(line["body"])
            base = {"id": f"batch_req_{n}", "custom_id": line["custom_id"], "error": None}
            if isinstance(got, str):
                results.append(
                    base | {"response": None, "error": {"code": got, "message": f"{got} happened"}}
                )
            elif isinstance(got, tuple):
                status, body = got
                # an HTTP error is a response of its status; "error" is for the rest
                results.append(
                    base
                    | {"response": {"status_code": status, "request_id": f"req_{n}", "body": body}}
                )
            else:
                results.append(
                    base | {"response": {"status_code": 200, "request_id": f"req_{n}", "body": got}}
                )
        return results

    def _out(self, succeeded: bool) -> list[dict[str, Any]]:
        """The output file's lines, or the error file's: a refused request, one never run."""
        return [r for r in self._results() if _succeeded(r) == succeeded]


def _succeeded(result: dict[str, Any]) -> bool:
    return result["error"] is None and result["response"]["status_code"] == 200


class MessageBatches:
    """``answer(params)`` gives a Message (succeeded), or a ``result`` dict of another type
    (``{"type": "errored", "error": ...}``, ``{"type": "expired"}``)."""

    BATCH = "msgbatch_01abc"

    def __init__(
        self,
        server: WireServer,
        answer: Answer,
        states: tuple[str, ...] = ("in_progress", "in_progress", "ended"),
        results_url: str | None = None,
    ):
        self.server, self.answer, self.states = server, answer, list(states)
        self.results_url = results_url or server.url_for(
            f"/v1/messages/batches/{self.BATCH}/results"
        )
        self.requests: list[dict[str, Any]] = []
        root = "/v1/messages/batches"
        server.route("POST", root, self._create)
        server.route("GET", f"{root}/{self.BATCH}", self._status)
        server.route("GET", f"{root}/{self.BATCH}/results", self._results)

    def _create(self, rec: Recorded) -> dict[str, Any]:
        self.requests = rec.json["requests"]
        return self._batch("in_progress")

    def _status(self, rec: Recorded) -> dict[str, Any]:
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        return self._batch(state)

    def _outcomes(self) -> list[dict[str, Any]]:
        out = []
        for request in self.requests:
            got = self.answer(request["params"])
            result = got if got.get("type") != "message" else {"type": "succeeded", "message": got}
            out.append({"custom_id": request["custom_id"], "result": result})
        return out

    def _batch(self, state: str) -> dict[str, Any]:
        ended = state == "ended"
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if ended:
            for outcome in self._outcomes():
                counts[outcome["result"]["type"]] += 1
        else:
            counts["processing"] = len(self.requests)
        return {
            "id": self.BATCH,
            "type": "message_batch",
            "processing_status": state,
            "request_counts": counts,
            "created_at": "2026-11-27T18:00:00Z",
            "expires_at": "2026-11-28T18:00:00Z",
            "ended_at": None,
            "results_url": self.results_url if ended else None,
        }

    def _results(self, rec: Recorded) -> Reply:
        return _jsonl(self._outcomes())


def responses_body(text: str, summary: str, reasoning_tokens: int, *, refusal: bool = False):
    """A Responses API response, not streamed: a reasoning item with its summary, then the
    message (``refusal``: a refusal part instead of the text)."""
    part = (
        {"type": "refusal", "refusal": text}
        if refusal
        else {"type": "output_text", "text": text, "annotations": []}
    )
    return {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-5",
        "output": [
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": summary}],
            },
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [part],
            },
        ],
        "usage": {
            "input_tokens": 20,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reasoning_tokens + 5,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": reasoning_tokens + 25,
        },
    }


def message_body(text: str, thinking: str, output_tokens: int, *, redacted: bool = False):
    """A Messages API Message, not streamed: a thinking block (signed), perhaps a redacted one,
    then the text."""
    blocks: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": thinking, "signature": "sig-1"}
    ]
    if redacted:
        blocks.append({"type": "redacted_thinking", "data": "opaque"})
    blocks.append({"type": "text", "text": text})
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": blocks,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 30,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
