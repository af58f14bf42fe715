"""reasoning_nb: reasoning ("thinking") models, first-class in Jupyter.

    from reasoning_nb import think
    trace = think("Why is the sky blue?", model="ollama:qwen3", preset="high")
    trace.reasoning, trace.answer

In a notebook: ``%load_ext reasoning_nb`` then ``%%think --model ollama:qwen3 --preset high``.
"""

from .core.events import (
    Done,
    Finish,
    Notice,
    ProviderState,
    ReasoningDelta,
    Reclassify,
    TextDelta,
    Usage,
    Waiting,
)
from .core.trace import Trace
from .errors import ConfigError, ProviderError, ReasoningNBError

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "Done",
    "Finish",
    "Notice",
    "ProviderError",
    "ProviderState",
    "ReasoningDelta",
    "ReasoningNBError",
    "Reclassify",
    "TextDelta",
    "Trace",
    "Usage",
    "Waiting",
    "astream",
    "diverge",
    "load_ipython_extension",
    "search",
    "stats",
    "sweep",
    "think",
]


def __getattr__(name: str):
    # think/astream pull in httpx and anyio; importing reasoning_nb.export (which nbconvert and
    # JupyterLab's export menu do) must not, so they load on first use.
    if name in ("think", "astream"):
        from . import api

        return getattr(api, name)
    if name == "sweep":  # the package, which is callable: reasoning_nb.sweep(prompts, ...)
        from importlib import import_module  # (not "from . import": that asks this hook again)

        return import_module(f"{__name__}.sweep")
    if name == "diverge":
        from .views.diverge_view import diverge

        return diverge
    if name == "stats":
        from .views.stats import stats

        return stats
    if name == "search":
        from .views.search import search

        return search
    raise AttributeError(f"module 'reasoning_nb' has no attribute {name!r}")


def _markdown(trace: Trace) -> str:
    from .views.render import to_markdown  # (markdown-it loads on a trace's first display)

    return to_markdown(trace)


Trace.markdown_view = _markdown  # the core knows no views: the package joins them


def load_ipython_extension(ipython):  # pragma: no cover - exercised by the kernel tests
    """``%load_ext reasoning_nb``: register ``%%think`` / ``%think``."""
    from .notebook.magic import load_ipython_extension as load

    load(ipython)
