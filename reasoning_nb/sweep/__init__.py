"""Sweeps: one prompt set across presets and models, as rows of a table (issue 26).

    import reasoning_nb
    frame = reasoning_nb.sweep(["What is 17 x 23?", ...], models=["ollama:qwen3"],
                               presets=["low", "high"])

This package is itself callable: ``reasoning_nb.sweep(...)`` is ``engine.sweep``, and
``reasoning_nb.sweep.asweep`` its async form. Its parts load on first use, so importing it
costs nothing (nbconvert imports ``reasoning_nb``).
"""

from __future__ import annotations

import sys
import types
from typing import Any

_LAZY = {
    "asweep": "engine",
    "Engine": "engine",
    "Sweep": "result",
    "Rows": "result",
    "Progress": "progress",
    "Row": "rows",
    "frame": "rows",
}


class _Callable(types.ModuleType):
    def __call__(self, prompts: Any, **options: Any) -> Any:
        from .engine import sweep

        return sweep(prompts, **options)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _Callable
