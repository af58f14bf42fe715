"""Shared pytest fixtures. Helper modules next to this file (``wire_server``, ``wire_fixtures``)
import by bare name: pytest puts this directory on ``sys.path`` (no ``__init__.py`` here)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from wire_server import WireServer


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A scripted HTTP/1.1 server on 127.0.0.1 (see ``wire_server.py``), stopped after the test."""
    with WireServer() as server:
        yield server
    # a hook that raised was answered with a 500; make sure the test hears about it
    assert not server.errors, f"wire_server hook errors: {server.errors!r}"
