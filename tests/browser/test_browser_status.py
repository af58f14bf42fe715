"""What a person watching JupyterLab reads while ``%%think`` waits and streams: the kernel reads
Busy for as long as a model streams (the first cell after a kernel start, a dropdown re-run, a
Continue), and Idle once it is over; while a local server loads the model, the widget says so
(not "connecting…").

Shares ``test_browser``'s Lab, wire server and page; screenshots land in
``test-artifacts/browser/``.
"""

from __future__ import annotations

import threading

import wire_fixtures as wf
from playwright.sync_api import expect
from test_browser import (
    BROWSER,
    CHAT,
    CONTINUE,
    cell,
    live,
    open_notebook,
    recorded,
    run_all,
    set_theme,
    shot,
    start_recording,
    stream,
    think_notebook,
    wait_cell_done,
    wait_state,
)
from wire_server import Reply

pytestmark = BROWSER  # (a real Lab and chromium, as test_browser)

KERNEL = "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"


def kernel_status_while(page, start: str, end: str) -> list[str]:
    """Wait until the widget state ``start`` holds, then until ``end`` (JS conditions over
    ``s``, as ``wait_state`` takes); every kernel status the page had from one to the other:
    the one at ``start``, each change, and the one at ``end``. (Both mid-stream: the widget
    shows the end of a stream a little after the kernel is done with it.)"""
    wait_state(page, start)
    page.evaluate(
        f"""() => {{ const k = {KERNEL};
        window.__kernelSeen = [k.status];
        window.__kernelWatch = (_, status) => window.__kernelSeen.push(status);
        k.statusChanged.connect(window.__kernelWatch); }}"""
    )
    wait_state(page, end)
    return page.evaluate(
        f"""() => {{ const k = {KERNEL};
        k.statusChanged.disconnect(window.__kernelWatch);
        return [...window.__kernelSeen, k.status]; }}"""
    )


def indicator(page):
    """The notebook toolbar's kernel indicator (the circle), as busy or idle as the kernel."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator")


def test_kernel_reads_busy_while_a_stream_runs(page, lab, wire):
    paced = {"pause": 0.03}
    stalled = wf.chat_sse("Thinking slowly about the sky " * 6, "never reached", done=False)
    wire.route(
        "POST",
        CHAT,
        stream("Sunlight holds every colour. " * 12, "The sky is **blue**.", **paced),
        Reply.sse(stalled, stall_after=20, stall=60, **paced),
        stream("Picking up: the ocean reflects it. " * 12, "It is **blue**.", **paced),
    )
    think_notebook(lab, wire, "busy.ipynb")
    open_notebook(page, "busy.ipynb")  # a new kernel: its first %%think follows
    run_all(page)
    # (JupyterLab asks for a subshell for widget comms when the first widget appears: its
    # idle came mid-stream)
    seen = kernel_status_while(page, "s.reasoning.length > 0", "s.reasoning.length > 150")
    assert set(seen) == {"busy"}, f"first cell after a kernel start: {seen}"
    wait_cell_done(page)
    expect(indicator(page)).to_have_attribute("data-status", "idle")

    # A re-run from the dropdown streams after its comm message was handled.
    live(page).locator(".reasoning-nb-header select").select_option("high")
    seen = kernel_status_while(
        page, "s.runs.length === 2 && s.reasoning.length > 0", "s.reasoning.length > 80"
    )
    assert set(seen) == {"busy"}, f"dropdown re-run: {seen}"
    expect(indicator(page)).to_have_attribute("data-status", "busy")
    shot(page, "status-01-rerun-busy")
    live(page).locator(".reasoning-nb-header button", has_text="Stop").click()
    wait_state(page, "s.status.startsWith('stopped')")
    expect(indicator(page)).to_have_attribute("data-status", "idle")

    # Continue streams the same way.
    live(page).locator(".reasoning-nb-steer").locator(CONTINUE).click()
    seen = kernel_status_while(
        page, "s.runs.length === 3 && s.reasoning.length > 0", "s.reasoning.length > 150"
    )
    assert set(seen) == {"busy"}, f"Continue: {seen}"
    wait_state(page, "s.runs.length === 3 && s.status.startsWith('done')")
    expect(indicator(page)).to_have_attribute("data-status", "idle")
    page.wait_for_function(f"() => {KERNEL}.status === 'idle'")
    assert not page.errors, page.errors


def test_a_cold_model_load_reads_as_loading_the_model(page, lab, wire):
    release = threading.Event()

    def loading(_recorded) -> Reply:  # the server has the request, and loads the model...
        release.wait(60)
        # ...then answers, and reads the prompt before its first token
        return stream("Sunlight holds every colour. " * 4, "Blue.", delay_after_headers=1.0)

    wire.route("POST", CHAT, loading)
    think_notebook(lab, wire, "loading.ipynb")
    open_notebook(page, "loading.ipynb")
    start_recording(page)
    run_all(page)
    try:
        wait_state(page, "s.status.startsWith('loading model… · ')")
        shot(page, "status-02-loading-model-light", cell(page))
        set_theme(page, "JupyterLab Dark")
        shot(page, "status-02-loading-model-dark", cell(page))
    finally:
        set_theme(page, "JupyterLab Light")
        release.set()
    wait_state(page, "s.status.startsWith('waiting for the first token… · ')")
    shot(page, "status-03-first-token", cell(page))
    wait_cell_done(page)
    phases = []
    for s in recorded(page):
        phase = s["status"].split(" · ")[0]
        if not phases or phases[-1] != phase:
            phases.append(phase)
    assert phases[phases.index("loading model…") :][:3] == [
        "loading model…",
        "waiting for the first token…",
        "thinking…",
    ], phases
    assert set(phases[: phases.index("loading model…")]) <= {"", "connecting…"}, phases
    print(f"\n[browser] the status line read: {phases}")
    assert phases[-1] == "done", phases
    assert not page.errors, page.errors
