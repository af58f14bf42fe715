"""The package's face: exactly the names spec/api.md promises, and a light import."""

from __future__ import annotations

import subprocess
import sys

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
EXTRA_EVENTS = {"Usage", "Notice", "Finish", "Reclassify", "ProviderState"}


def test_all_is_the_contract_plus_the_other_events():
    assert set(reasoning_nb.__all__) == CONTRACT | EXTRA_EVENTS
    for name in reasoning_nb.__all__:
        assert getattr(reasoning_nb, name) is not None


def test_errors_form_the_documented_tree():
    assert issubclass(reasoning_nb.ConfigError, reasoning_nb.ReasoningNBError)
    assert issubclass(reasoning_nb.ProviderError, reasoning_nb.ReasoningNBError)
    assert not issubclass(reasoning_nb.ConfigError, reasoning_nb.ProviderError)


def test_exporters_import_without_the_network_stack():
    # JupyterLab's export menu imports every exporter; a heavy or failing import breaks it.
    code = (
        "import sys, reasoning_nb.export.exporters; "
        "print(sorted(m for m in ('httpx', 'anyio', 'ipywidgets') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
