"""What makes two requests the same: two cache keys, neither of which ever holds an API key.

The *entry* key is what the server would receive: provider, host, model and the exact request
body (history and system prompt are in its messages). The *ask* key is what the user asked,
known before any I/O (model discovery, starting the embedded server, capability probes): a
recorded run maps it to its entry key, so a replay by ask key makes no request at all.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any
from urllib.parse import urlsplit

VERSION = 1
"""Bumped when what a key covers changes, so old entries simply stop matching."""


def _digest(kind: str, parts: dict[str, Any]) -> str:
    text = json.dumps(
        {"v": VERSION, "kind": kind, **parts},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def host_of(base_url: str | None) -> str | None:
    """``scheme://host:port`` only: a path or query may carry a secret (``?key=``)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}"


def entry_key(provider: str, host: str | None, model: str, body: Any) -> str:
    """The key of a recorded run: everything the request depends on, never the key."""
    return _digest("entry", {"provider": provider, "host": host, "model": model, "body": body})


def ask_key(
    *,
    model: str | None,
    host: str | None,
    messages: list[dict[str, Any]],
    options: dict[str, Any],
) -> str:
    """The key of what the user asked; ``model=None`` stands for the default model as
    configured (REASONING_NB_MODEL, then the session default), else whatever discovery found
    when the run was recorded."""
    from ..config import defaults  # the session default can change between calls

    model = model or os.environ.get("REASONING_NB_MODEL") or defaults.model
    return _digest("ask", {"model": model, "host": host, "messages": messages, "options": options})
