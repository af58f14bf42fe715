"""notebooks/quickstart.ipynb runs headless on the embedded default, so it can never rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from needs import unavailable

from reasoning_nb.core.schema import VARIANTS_KEY, saved_variants
from reasoning_nb.llama_server.process import INSTALL_HINT
from reasoning_nb.providers import discovery

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "quickstart.ipynb"
pytestmark = [pytest.mark.real_server, pytest.mark.kernel]


def test_quickstart_executes_on_the_embedded_default(monkeypatch):
    if not discovery.embedded_installed():
        unavailable(f"the embedded demo's model is not installed ({INSTALL_HINT})")
    monkeypatch.delenv("REASONING_NB_MODEL", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False).execute(
        cwd=str(NOTEBOOK.parent)
    )
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    traces = [
        o.metadata["reasoning_nb"] for o in outputs if "reasoning_nb" in o.get("metadata", {})
    ]
    assert len(traces) == 6  # every %%think cell saved its trace (compare: its first variant)
    assert {t["model"] for t in traces} == {"local:smollm2"}  # the default, with no --model
    failed = [
        {
            k: t.get(k)
            for k in (
                "prompt",
                "preset",
                "status",
                "finish_reason",
                "answer",
                "usage",
                "request",
                "warnings",
                "error",
            )
        }
        | {"end": t["reasoning"][-200:]}
        for t in traces
        if t["status"] != "complete" or not t["answer"]
    ]  # fmt: skip  (printed whole: a rare demo failure must say what it was)
    assert not failed, "\n".join(map(repr, failed))
    by_preset = {t["preset"]: t for t in traces}
    assert by_preset["high"]["reasoning"] and by_preset["off"]["reasoning"] == ""
    assert all(any("demo" in w for w in t["warnings"]) for t in traces)  # labelled honestly
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    tables = [o.get("data", {}) for o in outputs]  # %think --list: a table, its text beside it
    listed = [d["text/plain"] for d in tables if "reasoning-nb-list" in d.get("text/html", "")]
    assert "Default model: local:smollm2" in "".join(listed)
    assert "answer:" in printed and "{'reasoning': " in printed
    [compared] = [
        saved_variants(o.metadata) for o in outputs if VARIANTS_KEY in o.get("metadata", {})
    ]
    assert [(t["preset"], t["status"]) for t in compared] == [
        ("low", "complete"),
        ("high", "complete"),
    ]
    assert len(compared[1]["reasoning"]) > len(compared[0]["reasoning"])  # high thinks longer
    [table] = [o for o in outputs if "reasoning-nb-stats" in o.get("data", {}).get("text/html", "")]
    runs = [line for line in table.data["text/plain"].splitlines() if line.startswith("#")]
    assert len(runs) == 7 and all("local:smollm2" in r for r in runs)  # every run of the session
