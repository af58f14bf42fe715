"""What makes two requests the same: two cache keys, neither of which ever holds an API key.

The *entry* key is what the server would receive: provider, address, model and the exact request
body (history and system prompt are in its messages). The *ask* key is what the user asked,
known before any I/O (model discovery, starting the embedded server, capability probes): a
recorded run maps it to its entry key, so a replay by ask key makes no request at all.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..config import configured_model

VERSION = 2
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


def address_of(base_url: str | None) -> str | None:
    """A normalised base URL (``address.base_url_for``, the one the request URL is built from)
    as a key holds it: scheme, host, port and path, for two gateways or per-model URLs on one
    host are two servers. Credentials stay out: ``user:password@`` is dropped, as the API key
    is (who asks does not change the answer, and a new password must still replay). A query,
    where a ``?key=`` would be, never gets here: the normalised base URL has none."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def entry_key(provider: str, address: str | None, model: str, body: Any, sample: int = 0) -> str:
    """The key of a recorded run: everything the request depends on, never the key. ``sample``:
    the same request asked again on purpose (a prompt repeated in a sweep) is a run of its own."""
    parts = {"provider": provider, "address": address, "model": model, "body": body}
    return _digest("entry", _sampled(parts, sample))


def ask_key(
    *,
    model: str | None,
    address: str | None,
    messages: list[dict[str, Any]],
    options: dict[str, Any],
    sample: int = 0,
) -> str:
    """The key of what the user asked; ``model=None`` stands for the default model as
    configured (``config.configured_model``), else whatever discovery found
    when the run was recorded."""
    model = model or configured_model()[0]  # read per call: the session default can change
    parts = {"model": model, "address": address, "messages": messages, "options": options}
    return _digest("ask", _sampled(parts, sample))


def _sampled(parts: dict[str, Any], sample: int) -> dict[str, Any]:
    """The first sample's key is the key of the run asked once (keys from before stay valid)."""
    return {**parts, "sample": sample} if sample else parts
