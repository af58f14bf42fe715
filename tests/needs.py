"""What a test needs from the machine: skip where it is missing, except in CI, whose job is to
prove that path (``.ci/run`` sets ``CI=true`` and installs and builds everything)."""

from __future__ import annotations

import os

import pytest

IN_CI = bool(os.environ.get("CI"))


def unavailable(reason: str) -> None:
    """Skip this test here; in CI, fail it."""
    if IN_CI:
        pytest.fail(f"{reason} (CI must run this test)", pytrace=False)
    pytest.skip(reason)


def requires(present: bool, reason: str) -> pytest.MarkDecorator:
    """A skip mark outside CI; in CI the test runs and fails on what is missing."""
    return pytest.mark.skipif(not present and not IN_CI, reason=reason)
