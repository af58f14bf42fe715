"""Controls with no kernel behind them: once the kernel is shut down, restarted or dead, a
``%%think`` widget's controls neither change nor send, and the output says why; a saved notebook
reopens with no error in the browser console (no live view is saved without its widget).

Shares ``test_browser``'s Lab, wire server and page; screenshots land in
``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import nbformat
import pytest
import wire_fixtures as wf
from playwright.sync_api import expect
from test_browser import (
    BROWSER,
    CHAT,
    LONG,
    cell,
    close_all,
    live,
    open_notebook,
    run_all,
    save,
    set_theme,
    shot,
    static,
    stream,
    think_notebook,
    wait_cell_done,
    wait_for_lab,
    wait_state,
    write_notebook,
)
from wire_server import Reply

from reasoning_nb.core.schema import METADATA_KEY, WIDGET_STATE, WIDGET_VIEW
from reasoning_nb.notebook.assets import DEAD

pytestmark = BROWSER  # (a real Lab and chromium, as test_browser)

SESSION = "window.jupyterapp.shell.currentWidget.sessionContext"
# Each way a kernel goes, as a person makes it go: Kernel › Shut Down Kernel; Kernel › Restart
# Kernel (what its dialog runs once accepted); a kernel that dies (its nanny restarts it).
GO = {
    "shutdown": "() => window.jupyterapp.commands.execute('kernelmenu:shutdown')",
    "restart": f"() => {SESSION}.restartKernel()",
    "death": None,  # see kill_kernel
}
GONE_AFTER = {  # the kernel status once it went (and came back, for a restart or a death)
    "shutdown": f"() => !{SESSION}.session",
    "restart": f"() => {SESSION}.session?.kernel?.status === 'idle'",
    "death": f"() => {SESSION}.session?.kernel?.status === 'idle'",
}
SYNC_ERROR = "Could not send widget sync message"


def kill_kernel(page) -> None:
    """The kernel of the notebook on screen dies (SIGKILL, by its id in its command line)."""
    kernel_id = page.evaluate(f"() => {SESSION}.session.kernel.id")
    pids = [
        int(proc.name)
        for proc in Path("/proc").iterdir()
        if proc.name.isdigit() and kernel_id in _cmdline(proc)
    ]
    assert len(pids) == 1, pids
    os.kill(pids[0], signal.SIGKILL)


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def go(page, how: str) -> None:
    """Make the kernel go, ``how``; wait until the page knows."""
    if how == "death":
        kill_kernel(page)
    else:
        page.evaluate(GO[how])
    page.wait_for_function(GONE_AFTER[how], timeout=LONG)
    if how == "death":
        dismiss_dialogs(page)


def dismiss_dialogs(page) -> None:
    """Close what Lab says about a kernel that died ("Kernel Restarting", with an OK button)."""
    dialog = page.locator(".jp-Dialog")
    dialog.first.wait_for()
    dialog.locator(".jp-mod-accept").first.click()
    expect(dialog).to_have_count(0)


def listen(page) -> list[dict[str, str]]:
    """Every console message of the page (or of every page of a browser context) from now on
    (``unlisten`` stops it)."""
    seen: list[dict[str, str]] = []

    def on_console(msg) -> None:
        seen.append({"type": msg.type, "text": msg.text})

    page.on("console", on_console)
    page.__listener = on_console
    return seen


def unlisten(page) -> None:
    page.remove_listener("console", page.__listener)


def note(locator, pseudo: str) -> str:
    """The text a pseudo-element of the first match shows ("" if none shows)."""
    return locator.first.evaluate(
        """(e, pseudo) => { const s = getComputedStyle(e, pseudo);
        return s.display === 'none' || s.content === 'none' ? '' : JSON.parse(s.content); }""",
        pseudo,
    )


def change_preset(page, value: str) -> None:
    """Change the preset dropdown as ipywidgets hears a person do it (a ``change`` event): a
    disabled or hidden select cannot be picked from, so this is the most a page could send."""
    live(page).locator(".reasoning-nb-header select").evaluate(
        "(s, value) => { s.value = value; s.dispatchEvent(new Event('change', {bubbles: true})); }",
        value,
    )


def started(page, lab, wire, name: str, reply: Reply) -> None:
    """``name``, a notebook of one ``%%think`` cell answered by ``reply``, open and running."""
    wire.route("POST", CHAT, reply)
    think_notebook(lab, wire, name)
    open_notebook(page, name)
    run_all(page)


@pytest.mark.parametrize("how", ["shutdown", "restart", "death"])
def test_controls_go_dead_with_the_kernel(page, lab, wire, how):
    reply = stream("A quick look: Rayleigh scattering.", "Blue **scatters**.")
    started(page, lab, wire, f"dead-{how}.ipynb", reply)
    wait_cell_done(page)
    wait_state(page, "s.status.startsWith('done') && s.twin")
    select = live(page).locator(".reasoning-nb-header select")
    expect(select).to_be_enabled()
    assert note(static(page), "::before") == ""  # (while the kernel lives, no note)
    messages = listen(page)
    try:
        go(page, how)
        # The widget, with no kernel behind it, is hidden as in a reopened notebook; its run
        # shows whole in the static output below, which says why there are no controls.
        expect(live(page)).to_be_hidden()
        expect(static(page).locator(".reasoning-nb-answer strong")).to_be_visible()
        assert note(static(page), "::before") == DEAD
        expect(select).to_be_disabled()
        change_preset(page, "high")
        page.wait_for_timeout(500)  # (a message would be sent at once)
    finally:
        unlisten(page)
    assert len(wire.requests_to(CHAT)) == 1, "a dead control started a run"
    assert not [m for m in messages if SYNC_ERROR in m["text"]], messages
    if how == "shutdown":
        for theme in ("JupyterLab Dark", "JupyterLab Light"):
            set_theme(page, theme)
            shot(page, f"dead-{how}-{theme.split()[-1].lower()}", cell(page))
    assert not page.errors, page.errors


def test_a_kernel_that_dies_mid_stream_leaves_a_widget_that_says_so(page, lab, wire):
    """No static output yet: the widget itself stays, its controls disabled, and says why."""
    frames = wf.chat_sse("Thinking slowly about the sky " * 6, "never reached", done=False)
    stalled = Reply.sse(frames, pause=0.02, stall_after=20, stall=60)
    started(page, lab, wire, "dead-mid-stream.ipynb", stalled)
    wait_state(page, "s.reasoning.includes('Thinking slowly')")
    messages = listen(page)
    try:
        go(page, "death")
        root = live(page)
        expect(root).to_be_visible()
        expect(root).to_have_class(re.compile("jupyter-widgets-disconnected"))
        assert note(root, "::after") == DEAD
        expect(root).to_have_attribute("title", DEAD)
        select = root.locator(".reasoning-nb-header select")
        expect(select).to_be_disabled()
        expect(root.get_by_role("button", name="Stop")).to_be_hidden()
        for theme in ("JupyterLab Dark", "JupyterLab Light"):
            set_theme(page, theme)
            shot(page, f"dead-mid-stream-{theme.split()[-1].lower()}", cell(page))
        change_preset(page, "high")
        page.wait_for_timeout(500)
    finally:
        unlisten(page)
    assert len(wire.requests_to(CHAT)) == 1
    assert not [m for m in messages if SYNC_ERROR in m["text"]], messages


# Error-level console messages of Lab itself on opening a notebook, unrelated to the package
# (each with why it is not ours): none seen on Lab 4.6.
LAB_OWN: tuple[str, ...] = ()


def _without_widget_state(nb) -> None:
    """What a Lab with its default ``saveState: false`` saves: no widget state; trusted."""
    from nbformat.sign import NotebookNotary

    nb.metadata.pop("widgets", None)
    NotebookNotary().sign(nb)


def _untrusted(nb) -> None:
    """A copy from elsewhere (a clone, a download): not trusted here."""
    from nbformat.sign import NotebookNotary

    NotebookNotary().unsign(nb)


REOPENED = {"as-saved": None, "default-lab": _without_widget_state, "untrusted": _untrusted}


@pytest.mark.parametrize("saved_as", list(REOPENED))
def test_a_reopened_notebook_logs_no_error(page, lab, wire, saved_as):
    """Saved by Lab (this Lab saves widget state; by default Lab does not), reopened with no
    kernel: each run shows in its static output, and the console holds no error (a saved live
    view, missing its widget, logged "widget model not found" once per cell)."""
    name = f"reopen-{saved_as}.ipynb"
    prompts = ("Why is the sky blue?", "Why is the sea blue?", "Why are sunsets red?")
    wire.route("POST", CHAT, *(stream(f"Reasoning {k}.", f"Answer **{k}**.") for k in range(4)))
    url = wire.url
    path = write_notebook(
        lab,
        name,
        "%load_ext reasoning_nb",
        *(f"%%think --model llamacpp:m --base-url {url} --preset low\n{p}" for p in prompts),
    )
    open_notebook(page, name)
    run_all(page)
    for index in (1, 2, 3):
        wait_cell_done(page, index)
        wait_state(page, "s.status.startsWith('done') && s.twin", index)
    # A re-run from the dropdown: a cell with two runs (its static output folds the first).
    live(page, 3).locator(".reasoning-nb-header select").select_option("high")
    wait_state(page, "s.runs.length === 2 && !s.running && s.twin", 3)
    expect(live(page)).to_be_visible()  # (the live view still shows while the kernel lives)
    save(page)
    expect(live(page)).to_be_visible()  # (...and after a save)

    saved = nbformat.read(path, as_version=4)
    for c in saved.cells[1:]:
        assert [METADATA_KEY in o.get("metadata", {}) for o in c.outputs] == [True], c.outputs
        assert not [o for o in c.outputs if WIDGET_VIEW in o.get("data", {})], c.outputs
    # No model of a live view is saved: no root, no loader (the models a live view left
    # behind, reached by none, are kept: an unreferenced model may be a user's jslink).
    state = saved.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for model_id, model in state.items():
        assert "reasoning-nb-live" not in model["state"].get("_dom_classes", []), model_id
        assert model["model_name"] != "AnyModel", model_id
    if change := REOPENED[saved_as]:
        change(saved)
        nbformat.write(saved, path)

    close_all(page)
    lab.shutdown_all_kernels()
    page.goto("about:blank")  # (the page that ran the cells logs its own going, not the reopen)
    messages = listen(page)
    try:
        page.goto(lab.url(f"lab/tree/{name}"))
        wait_for_lab(page)
        page.wait_for_function(
            "(name) => { const w = window.jupyterapp.shell.currentWidget;"
            " return w && w.context && w.context.path === name; }",
            arg=name,
        )
        page.evaluate("() => window.jupyterapp.shell.currentWidget.context.ready")
        for index in (1, 2, 3):
            expect(static(page, index).locator(".reasoning-nb-answer strong").first).to_be_visible()
        trusted = page.evaluate("() => window.__rn.panel().content.widgets[1].model.trusted")
        assert trusted == (saved_as != "untrusted")
        page.wait_for_timeout(3000)  # (Lab gives up on a missing widget model after 2 s)
    finally:
        unlisten(page)
    errors = [
        m for m in messages
        if m["type"] == "error" and not any(own in m["text"] for own in LAB_OWN)
    ]  # fmt: skip
    assert not errors, json.dumps(errors, indent=1)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    for theme in ("JupyterLab Dark", "JupyterLab Light"):
        set_theme(page, theme)
        shot(page, f"reopened-{saved_as}-{theme.split()[-1].lower()}", cell(page, 3))


def test_a_save_keeps_no_model_that_names_a_model_it_left_out(browser_page):
    """The save filter (``static/session.js``), run by the page's own script engine on a
    notebook whose dropped live view shares a model with a model nothing reaches: that model
    goes too, since restored it would fail with "widget model not found" (CI saw one such error
    per cell, untrusted, under load); a model that names only kept models stays."""
    from reasoning_nb.notebook.assets import assets

    blank = browser_page.context.new_page()  # (a blank page of its own: Lab's stays as it is)
    blank.add_script_tag(content=assets()["js"] + "\nwindow.__lean = lean;", type="module")
    blank.wait_for_function("() => typeof window.__lean === 'function'")
    view = {"output_type": "display_data", "data": {WIDGET_VIEW: {"model_id": "view"}}}
    static_output = {"output_type": "display_data", "data": {}, "metadata": {METADATA_KEY: {}}}

    def model(*refs: str) -> dict:
        return {"model_name": "M", "state": {"children": [f"IPY_MODEL_{r}" for r in refs]}}

    state = {
        "view": model("layout"),
        "layout": model(),
        "orphan": model("layout"),  # left behind by an earlier view, sharing its layout
        "leans": model("orphan"),  # names the orphan: goes with it
        "user": model("kept"),  # a user's widget and its own model
        "kept": model(),
    }
    nb = {
        "cells": [{"cell_type": "code", "outputs": [view, static_output]}],
        "metadata": {"widgets": {WIDGET_STATE: {"state": state}}},
    }
    saved = blank.evaluate("(nb) => window.__lean(nb)", nb)
    blank.close()
    assert saved["cells"][0]["outputs"] == [static_output]
    assert sorted(saved["metadata"]["widgets"][WIDGET_STATE]["state"]) == ["kept", "user"]
