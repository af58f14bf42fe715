"""Reasoning that repeats itself: a cheap incremental check on the live stream."""

from __future__ import annotations

LOOP_NOTICE = "The reasoning repeats itself"
"""The start of the ``Notice`` a run yields (once) when its reasoning loops; views match it."""
