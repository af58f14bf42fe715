"""A ``--compare`` column run again with another preset, in a real IPython kernel (issue
24.6): its preset stays under its title once the compare ended; changing it asks the server
once more, for that column alone, and the static output is made again with the new run in
that column and the others kept."""

from __future__ import annotations

import time

import pytest
from test_compare import CHAT, by_effort

from reasoning_nb.core.presets import PRESETS
from reasoning_nb.core.schema import METADATA_KEY, saved_variants

pytestmark = pytest.mark.kernel


def preset_of(state: dict) -> str:
    return state["_options_labels"][state["index"]]


def next_static(kernel, timeout: float = 30) -> dict:
    """The metadata of the next static output the kernel shows or updates."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kernel.kc.get_iopub_msg(timeout=timeout)
        kernel._track(msg)
        if msg["msg_type"] in ("display_data", "update_display_data"):
            meta = msg["content"].get("metadata", {})
            if METADATA_KEY in meta:
                return meta
    raise AssertionError("the column's re-run never updated the static output")


def test_a_columns_preset_runs_that_column_alone_again(kernel, wire_server):
    wire_server.route("POST", CHAT, by_effort())
    line = f"--model llamacpp:m --base-url {wire_server.url} --compare low,high"
    kernel.run(f"%%think {line}\nWhy blue?")
    assert len(wire_server.requests_to(CHAT)) == 2
    dropdowns = [c for c, s in kernel.comms.items() if s.get("_model_name") == "DropdownModel"]
    states = [kernel.comms[c] for c in dropdowns]
    assert [preset_of(s) for s in states] == ["low", "high"]
    assert not any(s["disabled"] for s in states)  # (enabled once the compare ended)

    kernel.set_state(dropdowns[1], index=list(PRESETS).index("medium"))
    saved = saved_variants(next_static(kernel))
    sent = wire_server.bodies(CHAT)
    assert len(sent) == 3 and sent[-1]["reasoning_effort"] == "medium"  # that column alone
    assert [t["preset"] for t in saved] == ["low", "medium"]
    assert saved[0]["answer"].startswith("Answer at low.")  # the other column kept
    assert saved[1]["answer"].startswith("Answer at medium.")
    assert kernel.value("[t.preset for t in _compare]") == str(["low", "medium"])
