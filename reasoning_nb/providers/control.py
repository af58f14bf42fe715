"""Ending a running stream's reasoning on request: Answer now with no second request.

llama.cpp (PR #23971, in b11434) takes ``POST /v1/chat/completions/control`` with
``{"id": <the stream's completion id>, "action": "reasoning_end"}`` for a request sent with
``reasoning_control: true``: the server closes the think block and the model answers from the
reasoning so far, in the same stream. ``/props`` does not say whether a server has the route
(and the embedded build reports ``build_info: "b0-unknown"``), so the control itself is the
probe: every request of a profile that names the endpoint (``Profile.end_reasoning``) is armed,
which older builds ignore as they ignore any field they do not know, and Answer now sends the
control; a 404 (no route) or ``{"success": false}`` leaves the caller to re-ask
(``core.rescue``). No request is spent asking beforehand.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from .profile import EndReasoning
from .transport import ssl_context

CONTROL_TIMEOUT = 10.0
NOTICE = "Answer now: the server ended the reasoning here, and the answer follows in this same run."


async def end(
    control: EndReasoning,
    base_url: str,
    completion_id: str,
    model: str,
    headers: Mapping[str, str],
) -> bool:
    """Ask the server to end the stream ``completion_id``'s reasoning now; whether it did (a
    server without the route, one that refused, or no answer: False)."""
    try:
        async with httpx.AsyncClient(
            timeout=CONTROL_TIMEOUT, trust_env=False, verify=ssl_context()
        ) as client:
            response = await client.post(
                f"{base_url}{control.path}",
                json=control.body(completion_id, model),
                headers=dict(headers),
            )
            answer = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return False
    return isinstance(answer, dict) and answer.get("success") is True
