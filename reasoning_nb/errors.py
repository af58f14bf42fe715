"""The error tree.

    ReasoningNBError            anything this package raises on purpose
    ├── ConfigError             misuse: bad model id, unknown provider, bad preset or budget,
    │                           missing API key (the message names the env var)
    └── ProviderError           the world failed: HTTP error status, no connection, timeout,
                                dropped or malformed stream, in-band error. ``.status`` is the
                                HTTP status (None without one); ``.trace`` keeps what arrived.

Messages are one sentence that says what to do next, and never contain an API key.
"""

from __future__ import annotations

from typing import Any


class ReasoningNBError(Exception):
    """Base class of every error reasoning_nb raises on purpose."""


class ConfigError(ReasoningNBError, ValueError):
    """The call or the configuration is wrong; fix the input and call again."""


class ProviderError(ReasoningNBError):
    """The server failed or answered with an error."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        trace: Any = None,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after
        """Seconds the server asked to wait (``Retry-After``) before asking again, if it said."""
        self.trace = trace
        """The ``Trace`` of what arrived before the failure, or None (not named as a type: every
        module imports this one, so it imports none of theirs)."""
