"""The package's face: exactly the names spec/api.md promises, and a light import."""

from __future__ import annotations

from fresh_python import network_stack_after, printed

import reasoning_nb

CONTRACT = {
    "think",
    "astream",
    "Trace",
    "ReasoningDelta",
    "TextDelta",
    "Done",
    "ReasoningNBError",
    "ConfigError",
    "ProviderError",
    "load_ipython_extension",
}
EXTRA_EVENTS = {"Usage", "Notice", "Waiting", "Finish", "Reclassify", "ProviderState"}
EXTRA_TOOLS = {"stats", "sweep", "search", "diverge"}  # analytics; a sweep; search, diverge


def test_stats_is_the_function():
    code = (
        "import reasoning_nb; from reasoning_nb.views.stats import TraceStats; "
        "print(callable(reasoning_nb.stats), type(reasoning_nb.stats([])) is TraceStats)"
    )
    assert printed(code) == "True True"


def test_diverge_is_the_function_and_loads_no_network_stack():
    code = (
        "import sys, reasoning_nb; from reasoning_nb import Trace; "
        "a, b = Trace(reasoning='We add. It is 4.'), Trace(reasoning='We add. It is 5.'); "
        "p = reasoning_nb.diverge(a, b); "
        "print(p.parts_at, 'They part here' in p._repr_html_(), 'httpx' in sys.modules)"
    )
    assert printed(code) == "1 True False"


def test_sweep_is_the_function_and_loads_nothing_heavy():
    code = (
        "import sys, reasoning_nb; s = reasoning_nb.sweep; "
        "print(callable(s), s.__name__, 'httpx' in sys.modules, 'pandas' in sys.modules)"
    )
    assert printed(code) == "True reasoning_nb.sweep False False"


def test_search_is_the_function_and_loads_nothing_heavy():
    code = (
        "import sys, reasoning_nb; s = reasoning_nb.search; "
        "print(callable(s), s.__module__, 'httpx' in sys.modules, 'pandas' in sys.modules)"
    )
    assert printed(code) == "True reasoning_nb.views.search False False"


def test_all_is_the_contract_plus_the_other_events_and_stats():
    assert set(reasoning_nb.__all__) == CONTRACT | EXTRA_EVENTS | EXTRA_TOOLS
    for name in reasoning_nb.__all__:
        assert getattr(reasoning_nb, name) is not None


def test_errors_form_the_documented_tree():
    assert issubclass(reasoning_nb.ConfigError, reasoning_nb.ReasoningNBError)
    assert issubclass(reasoning_nb.ProviderError, reasoning_nb.ReasoningNBError)
    assert not issubclass(reasoning_nb.ConfigError, reasoning_nb.ProviderError)


def test_exporters_import_without_the_network_stack():
    # JupyterLab's export menu imports every exporter; a heavy or failing import breaks it.
    assert network_stack_after("reasoning_nb.export.exporters") == "[]"
