"""Math-rich reasoning streamed from a fake Ollama into a real JupyterLab, in tokens of at most 4
characters in both shapes a tokenizer emits (`` word`` and ``axis.\\n\\n``), at about 45 tokens a
second: while the model thinks, every finished paragraph in the live pane shows its math typeset
and its prose as prose, one paragraph per paragraph of the text (issue 22, item 0).

Uses the Lab, wire server and page of ``test_browser`` (same fixtures, same helpers).
"""

from __future__ import annotations

import re

import pytest
import wire_fixtures as wf
from test_browser import (
    BROWSER,
    LONG,
    cell,
    ended,
    open_notebook,
    pane_title,
    run_all,
    set_theme,
    shot,
    wait_cell_done,
    wait_state,
    write_notebook,
)
from wire_server import Reply

from reasoning_nb.views.live_markdown import live_markdown, math_spans

pytestmark = BROWSER

REASONING = "\n\n".join(
    [
        "Start with the path the light takes through the air on its way down to us. For a "
        r"plane-parallel atmosphere the optical depth along a slanted path is "
        r"$\tau(\lambda) = \tau_0(\lambda) \sec\theta$ for zenith angle $\theta$, and the light "
        r"that gets through is $I(\lambda) = I_0(\lambda) \, e^{-\tau_0(\lambda) \sec\theta}$, "
        r"where \( \tau_0 = \int_0^\infty \kappa(z) \, \rho(z) \, dz \) is the depth straight "
        r"up and \( \kappa \propto \lambda^{-4} \) for Rayleigh scattering. Near the horizon "
        r"$\sec\theta \to \infty$ in this model, so the ratio "
        r"$I_b / I_r = \exp\big( -(\tau_b - \tau_r) \sec\theta \big)$ falls fast there.",
        "$$\n\\tau(\\lambda) \\propto \\lambda^{-4} \\, \\sec\\theta\n$$",
        r"At the horizon itself, $\Theta = 90^\circ$, the plane-parallel model breaks down, "
        r"since $\sec\theta = 1 / \cos\theta$ has no bound there. A curved atmosphere gives "
        r"an air mass of about \( X(90^\circ) \approx 38 \), and with "
        r"\( \tau_b - \tau_r \approx 0.14 - 0.03 = 0.11 \) per air mass the blue is dimmed by "
        r"$e^{-0.11 \times 38} \approx 0.015$ relative to red, while overhead it is only "
        r"$e^{-0.11} \approx 0.9$. So the sky near the horizon looks paler.",
        r"\[ \frac{I_{blue}}{I_{red}} = e^{-(\tau_b - \tau_r)\sec\theta} \]",
        "So the answer has two parts: Rayleigh scattering, with "
        r"\( \beta(\lambda) = \beta_0 \, (\lambda_0 / \lambda)^4 \), makes the sky blue, and "
        r"the long path near the horizon, with $\tau$ growing like $\sec\theta$ up to "
        r"$X \approx 38$, makes it paler there. Both follow from one law applied over "
        r"different lengths of air, $\tau = \beta \, L$ with $L = H \sec\theta$ for a "
        "scale height H, and the colours of sunrise and sunset come from the same reasoning.",
    ]
)
ANSWER = "The sky is blue because air scatters short wavelengths most."
STALL = r"$\tau(\lambda) = "
"""Where the model pauses (its first formula, past the live tail's limit)."""


def tokens(text: str, shape: str) -> list[str]:
    """``text`` in tokens of at most 4 characters: each word with the whitespace before it
    (`` word``) or after it (``axis.\\n\\n``)."""
    words = re.findall(r"\s*\S+|\s+" if shape == "before" else r"\S+\s*|\s+", text)
    return [w[i : i + 4] for w in words for i in range(0, len(w), 4)]


def paragraphs(text: str) -> list[str]:
    """The text a reader sees in each paragraph of ``text`` rendered whole, a math span as
    ``@``."""
    out = []
    for block in text.split("\n\n"):
        markdown, pos, seen = live_markdown(block, breaks=True), 0, []
        for a, b in math_spans(markdown):
            seen.append(markdown[pos:a] + "@")
            pos = b
        seen.append(markdown[pos:])
        out.append(" ".join("".join(seen).split()))
    return out


WATCH = """(i) => {
  // Every 100 ms while the run streams: the paragraphs its finished blocks show (the Outputs
  // before the live tail, frozen for a second: MathJax typesets a block just after it renders),
  // each math span as '@', a piece cut by force run on from the one before.
  window.__math = {snaps: [], cont: 0};
  const born = new WeakMap();
  const timer = setInterval(() => {
    const p = window.__rn.parts(i);
    if (p && p.twin) { clearInterval(timer); return; }
    const thoughts = p && p.pane && p.pane.querySelector('.reasoning-nb-thoughts');
    if (!thoughts) return;
    const now = performance.now();
    const outs = [...thoughts.querySelectorAll('.widget-output')];
    outs.forEach((o) => { if (!born.has(o)) born.set(o, now); });
    const blocks = [];
    let cont = 0;
    for (const out of outs.slice(0, -1)) {
      if (now - born.get(out) < 1000) break;
      const md = out.querySelector('.jp-RenderedMarkdown');
      if (!md) continue;
      const texts = [...md.children].map((e) => {
        const c = e.cloneNode(true);
        c.querySelectorAll('mjx-container').forEach((m) => m.replaceWith('@'));
        return c.textContent.replace(/\\s+/g, ' ').trim();
      });
      if (out.classList.contains('reasoning-nb-cont') && blocks.length && texts.length) {
        blocks[blocks.length - 1] += ' ' + texts.shift();
        cont += 1;
      }
      blocks.push(...texts);
    }
    window.__math.cont = Math.max(window.__math.cont, cont);
    const last = window.__math.snaps[window.__math.snaps.length - 1];
    if (blocks.length && JSON.stringify(blocks) !== JSON.stringify(last))
      window.__math.snaps.push(blocks);
  }, 100);
}"""


@pytest.mark.parametrize(
    "shape, theme", [("before", "JupyterLab Light"), ("after", "JupyterLab Dark")]
)
def test_math_reasoning_streams_as_a_markdown_cell_shows_it(page, lab, wire, shape, theme):
    """In the live pane while thinking, each finished paragraph shows what a markdown cell
    shows for it: its math typeset (no raw ``$`` or ``\\(``), its prose as prose (no "for
    zenith angle" typeset as math), one paragraph each (none run into the next)."""
    want = paragraphs(REASONING)
    think = tokens(REASONING, shape)
    frames = wf.ollama_chat(think, tokens(ANSWER, shape), model="qwen3")
    # The model pauses for a second inside a formula, with the paragraph past the tail's limit:
    # the live view shows all it has, and a cut where it ends would split the formula.
    inside = REASONING.index(STALL) + len(STALL)
    stall_after = next(k + 1 for k in range(len(think)) if len("".join(think[: k + 1])) >= inside)
    wire.route("POST", "/api/show", wf.ollama_show(("completion", "thinking")))
    reply = Reply.ndjson(frames, pause=1 / 45, stall_after=stall_after, stall=1.0)
    wire.route("POST", "/api/chat", reply)
    name = f"live-math-{shape}.ipynb"
    write_notebook(
        lab,
        name,
        f"%load_ext reasoning_nb\n%think --base-url {wire.url}",
        "%%think --model ollama:qwen3 --preset low\nWhy is the sky paler near the horizon?",
    )
    look = theme.split()[-1].lower()
    try:
        set_theme(page, theme)
        open_notebook(page, name)
        page.evaluate(WATCH, 1)
        run_all(page)
        wait_state(page, "s.reasoning.includes('the sky near the horizon looks paler')")
        page.wait_for_timeout(1800)  # (the paragraph before has frozen and been typeset)
        shot(page, f"16-live-math-{shape}-{look}", cell(page))
        wait_cell_done(page)
        watched = page.evaluate("() => window.__math")
    finally:
        set_theme(page, "JupyterLab Light")
    snaps = watched["snaps"]
    assert snaps and max(map(len, snaps)) >= 3, snaps  # (it saw finished paragraphs)
    assert watched["cont"] >= 1, watched  # (and pieces of a paragraph cut by force)
    for blocks in snaps:
        *whole, last = blocks
        assert whole == want[: len(whole)], (blocks, want)
        assert want[len(whole)].startswith(last), (last, want[len(whole)])
        assert not any(re.search(r"[$]|\\[a-zA-Z(\[]", b) for b in blocks), blocks
    pane_title(ended(page)).click()  # (the run ended: its twin shows it, folded)
    spans = sum(p.count("@") for p in want)
    page.wait_for_function(f"() => window.__rn.state(1).math >= {spans}", timeout=LONG)
    assert not page.errors, page.errors
    print(f"\n[browser] {shape}: {len(snaps)} views of the finished paragraphs, all as a cell")
