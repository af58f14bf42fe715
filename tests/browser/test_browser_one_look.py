"""One run, one look: a run's code has the same colours, its reasoning the same fold label and
its controls the same places, live, ended, picked again in the run selector and reopened with no
kernel; and nothing under the pointer moves when the answer starts.

Shares ``test_browser``'s Lab, wire server and page; screenshots land in
``test-artifacts/browser/`` (``one-look-<stage>-<theme>.png``).
"""

from __future__ import annotations

import threading
from itertools import pairwise

import wire_fixtures as wf
from playwright.sync_api import expect
from test_browser import (
    BROWSER,
    CHAT,
    LONG,
    SUMMARY,
    cell,
    close_all,
    ended,
    live,
    open_notebook,
    pane_title,
    run_all,
    save,
    set_theme,
    shot,
    static,
    think_notebook,
    wait_cell_done,
    wait_for_lab,
    wait_state,
)
from wire_server import Reply

pytestmark = BROWSER

REASONING = "\n\n".join(
    f"Step {i}: light of wavelength $\\lambda$ scatters as $I \\propto \\lambda^{{-4}}$, so the "
    "shorter waves dominate what reaches us from overhead."
    for i in range(30)
)
CODE = (
    "import math\n"
    "class Sky:\n"
    "    def ratio(self, red=700, blue=450.0):\n"
    "        # red vs blue\n"
    "        if red > blue and not self.night:\n"
    "            return (red / blue) ** 4 + math.pi * 0\n"
    "        return None\n"
    "print('blue', Sky().ratio(), True)\n"
)
ANSWER = (
    f"The sky is **blue** because of Rayleigh scattering.\n\n```python\n{CODE}```\n\n"
    "At sunset the light crosses more air, and the sky turns red."
)
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

CHARS = """(pre) => {  // every visible character of a code block, with how it is drawn
  const out = [];
  const walk = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const c = getComputedStyle(n.parentElement);
    for (const ch of n.textContent)
      if (ch.trim()) out.push([ch, c.color, c.fontWeight, c.fontStyle].join(' '));
  }
  return out;
}"""
WATCH = """() => {  // where the controls are at every painted frame, while cell 1 runs
  window.__frames = [];
  const box = (e) => { if (!e || !e.offsetParent) return null;
    const r = e.getBoundingClientRect(); return [Math.round(r.x), Math.round(r.y)]; };
  const frame = () => {
    const p = window.__rn.parts(1);
    if (p) {
      const q = (css) => box(p.root.querySelector(css));
      window.__frames.push({status: p.status ? p.status.textContent : '',
        stop: q('.reasoning-nb-header .jupyter-button'), preset: q('.reasoning-nb-header select'),
        toggle: q('.reasoning-nb-pane-toggle')});
    }
    if (window.__frames.length < 20000) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}"""


def colours(tab, pre, stage: str) -> dict[str, list[str]]:
    """The code's characters as drawn in Light and Dark, with a screenshot of each."""
    seen = {}
    for name, theme in THEMES.items():
        set_theme(tab, theme)
        seen[name] = pre.evaluate(CHARS)
        shot(tab, f"one-look-{stage}-{name}", cell(tab))
    set_theme(tab, THEMES["light"])
    return seen


def moved(frames: list[dict], key: str) -> int:
    spots = [f[key] for f in frames if f[key]]
    assert spots, f"no {key} seen"
    return max(abs(a - b) for spot in spots for a, b in zip(spot, spots[0], strict=True))


def test_one_run_looks_the_same_live_ended_picked_and_reopened(page, lab, wire):
    frames = wf.chat_sse(REASONING, ANSWER, usage=True)
    fence = max(i for i, f in enumerate(frames) if "```" in f)  # the code block's end
    looked = threading.Event()  # (held after the code block until it was read live)
    wire.route(
        "POST",
        CHAT,
        Reply.sse(frames, pause=0.01, stall_after=fence + 4, stall=LONG / 1000, resume=looked),
        Reply.sse(wf.chat_sse("A second look.", ANSWER, usage=True), pause=0.005),
    )
    path = think_notebook(lab, wire, "one_look.ipynb")
    open_notebook(page, "one_look.ipynb")
    set_theme(page, THEMES["light"])
    page.evaluate(WATCH)
    run_all(page)

    # Live: the answer streams (held after its code block)
    widget = live(page)
    code = widget.locator(".reasoning-nb-answer pre").first
    expect(code).to_contain_text("print('blue'", timeout=LONG)
    wait_state(page, "!s.twin && s.status.startsWith('answering')")
    live_title = pane_title(widget).inner_text().strip()
    assert SUMMARY.match(live_title), live_title
    # (b) nothing under the pointer moved while the run streamed, the answer's start included
    watched = page.evaluate("() => { const f = window.__frames; window.__frames = []; return f; }")
    running = [f for f in watched if f["stop"] and f["status"].startswith(("thinking", "answer"))]
    start = next(i for i, f in enumerate(running) if f["status"].startswith("answering"))
    assert start > 60
    running = running[start - 60 :]  # (about a second of thinking, then the answer)
    assert running[0]["status"].startswith("thinking") and len(running) > 60
    for key in ("stop", "preset", "toggle"):
        spots = [(f[key], f["status"][:30]) for f in running]
        changes = [b for a, b in pairwise(spots) if a[0] != b[0]]
        assert moved(running, key) <= 3, (key, spots[0], changes[:8])
    seen = {"live": colours(page, code, "live")}
    assert "print('blue'" in code.inner_text()  # (still live: held until now)
    looked.set()

    # Ended: the static output below shows the run
    wait_state(page, "s.status.startsWith('done') && s.twin")
    wait_cell_done(page)
    twin = ended(page)
    seen["ended"] = colours(page, twin.locator(".reasoning-nb-answer pre").first, "ended")
    ended_title = pane_title(twin).inner_text().strip()

    # Picked again: a second run, then the first one picked in the run selector
    widget.locator(".reasoning-nb-header select").select_option("high")
    wait_state(page, "s.runs.length === 2 && !s.running && s.twin && s.status.startsWith('done')")
    second_title = pane_title(twin).inner_text().strip()  # (the run the notebook saves)
    pin = widget.locator(".reasoning-nb-steer .jupyter-button", has_text="Pin")
    pin_at = pin.bounding_box()
    widget.locator(".reasoning-nb-runs button").first.click()
    wait_state(page, "!s.twin")
    expect(widget.locator(".reasoning-nb-answer pre")).to_contain_text("print('blue'")
    picked_title = pane_title(widget).inner_text().strip()
    seen["picked"] = colours(page, widget.locator(".reasoning-nb-answer pre").first, "picked")
    moved_pin = pin.bounding_box()
    assert abs(moved_pin["y"] - pin_at["y"]) <= 3, (pin_at, moved_pin)  # Pin stays put
    widget.locator(".reasoning-nb-runs button").nth(1).click()
    wait_state(page, "s.twin")
    save(page)

    # Reopened: the kernel gone, the page reloaded; the static output shows the last run
    close_all(page)
    lab.shutdown_all_kernels()
    page.goto(lab.url(f"lab/tree/{path.name}"))
    wait_for_lab(page)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        f" return w && w.context && w.context.path === '{path.name}'; }}"
    )
    saved = static(page).locator(".reasoning-nb-export>.reasoning-nb-answer pre").first
    expect(saved).to_contain_text("print('blue'", timeout=LONG)
    seen["reopened"] = colours(page, saved, "reopened")
    reopened_title = pane_title(static(page)).inner_text().strip()

    # (a) the same colours, weights and slants for every character of the code, in both themes
    for stage in ("ended", "picked", "reopened"):
        for theme in THEMES:
            assert seen[stage][theme] == seen["live"][theme], (stage, theme)
    assert len(set(seen["live"]["light"])) >= 6  # (coloured: keywords, strings, numbers...)
    assert seen["live"]["light"] != seen["live"]["dark"]  # (by the theme)
    # (c) one fold label: live, ended, picked again and reopened
    assert SUMMARY.match(ended_title), ended_title
    assert ended_title.split(" · ")[0] == live_title.split(" · ")[0]  # (its time: the same)
    assert picked_title == ended_title
    assert reopened_title == second_title and SUMMARY.match(second_title), reopened_title
